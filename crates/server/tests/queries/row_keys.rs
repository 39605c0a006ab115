//! A list of plain columns is built on PostgreSQL from the rows themselves, each
//! column projected under its response key (translate/src/record.rs). The keys,
//! their order, aliases, the same column twice, casts, and an order key the response
//! reads under an alias or not at all must come out as on SQLite, byte for byte.

use crate::common::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_rows_keep_their_keys_aliases_and_order() {
    let venues = venues();
    let meetups = meetups();
    // 64 bytes: longer than PostgreSQL keeps in an identifier, so that list keeps
    // building its objects one by one, with the same answer.
    let long = format!("k{}", "e".repeat(63));
    let query = format!(
        r#"{{
          renamed: venues(order_by: {{id: desc}}, limit: 3) {{ Ident: id id label: name }}
          long: venues(order_by: {{id: asc}}, limit: 2) {{ {long}: id postal_code }}
          unread: meetups(order_by: [{{venue_id: asc}}, {{id: asc}}], limit: 3) {{ id }}
          typed: meetups(order_by: {{id: asc}}, limit: 2) {{ start_at id }}
        }}"#
    );
    let d = data(&query, serde_json::Value::Null).await;
    let last: Vec<_> = venues.iter().rev().take(3).collect();
    assert_eq!(
        d["renamed"],
        json!(last
            .iter()
            .map(|v| json!({"Ident": v.id, "id": v.id, "label": v.name}))
            .collect::<Vec<_>>())
    );
    assert_eq!(
        d["long"],
        json!(venues[..2]
            .iter()
            .map(|v| json!({ long.as_str(): v.id, "postal_code": v.postal_code }))
            .collect::<Vec<_>>())
    );
    let mut by_venue: Vec<_> = meetups.iter().map(|m| (m.venue_id, m.id)).collect();
    by_venue.sort();
    assert_eq!(
        d["unread"],
        json!(by_venue[..3]
            .iter()
            .map(|(_, id)| json!({"id": id}))
            .collect::<Vec<_>>())
    );
    assert_eq!(d["typed"][1]["id"], meetups[1].id);
    let keys: Vec<_> = d["typed"][0]
        .as_object()
        .expect("an object")
        .keys()
        .cloned()
        .collect();
    assert_eq!(keys, ["start_at", "id"]);
}
