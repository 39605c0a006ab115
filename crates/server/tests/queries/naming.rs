//! The other naming conventions: `graphql-default` (camelCase) and `phrag`
//! (the seed benchmark's dialect), served from the same SQLite file.

use crate::common::*;
use serde_json::{json, Value};
use std::collections::HashMap;

async fn ok(server: Server, query: &str, variables: Value) -> Value {
    let (status, v, raw) = post(server, query, variables).await;
    assert_eq!(status, 200, "{raw}");
    assert!(v.get("errors").is_none(), "{server:?}: {query}\n{raw}");
    v["data"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graphql_default_names() {
    let all = venues();
    let mut sorted = all.clone();
    sorted.sort_by(|a, b| b.postal_code.cmp(&a.postal_code).then(a.id.cmp(&b.id)));
    let top: Vec<Value> = sorted
        .iter()
        .take(3)
        .map(|v| json!({"id": v.id, "postalCode": v.postal_code}))
        .collect();
    let no_building = all.iter().filter(|v| v.building.is_none()).count();
    let first = &meetups()[0];
    let d = ok(
        Server::GraphqlDefault,
        r#"{
          venuesByPk(id: 1) { __typename id postalCode street2 }
          venuesAggregate(where: {building: {_isNull: true}}) { aggregate { count } }
          venues(orderBy: [{postalCode: DESC}, {id: ASC}], limit: 3) { id postalCode }
          meetupsByPk(id: 1) { id venueId startAt venue { id } }
        }"#,
        Value::Null,
    )
    .await;
    assert_eq!(
        d,
        json!({
            "venuesByPk": {"__typename": "Venues", "id": 1, "postalCode": all[0].postal_code, "street2": all[0].street2},
            "venuesAggregate": {"aggregate": {"count": no_building}},
            "venues": top,
            "meetupsByPk": {"id": 1, "venueId": first.venue_id, "startAt": first.start_at, "venue": {"id": first.venue_id}}
        })
    );
    // The Hasura spellings do not exist under this convention.
    let (_, v, _) = post(
        Server::GraphqlDefault,
        "{ venues_by_pk(id: 1) { id } }",
        Value::Null,
    )
    .await;
    assert_eq!(error_code(&v), "validation-failed", "{v}");
    let (_, v, _) = post(
        Server::GraphqlDefault,
        "{ venues(where: {building: {_is_null: true}}) { id } }",
        Value::Null,
    )
    .await;
    assert_eq!(error_code(&v), "validation-failed", "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graphql_default_aggregates_and_type_names() {
    let d = ok(
        Server::GraphqlDefault,
        r#"{
          gadgetsAggregate { aggregate { count varSamp { qty } stddevSamp { qty } } }
          venues(where: {id: {_eq: 1}}) { meetupsAggregate { aggregate { count } } }
          __type(name: "VenuesBoolExp") { name }
        }"#,
        Value::Null,
    )
    .await;
    let count = meetups().iter().filter(|m| m.venue_id == 1).count();
    assert_eq!(
        d,
        json!({
            "gadgetsAggregate": {"aggregate": {"count": 5, "varSamp": {"qty": 4}, "stddevSamp": {"qty": 2}}},
            "venues": [{"meetupsAggregate": {"aggregate": {"count": count}}}],
            "__type": {"name": "VenuesBoolExp"}
        })
    );
}

const PHRAG_VARS: &str = r#"{"limit": 5, "offset": 2, "id_gt": 10}"#;

fn phrag_vars() -> Value {
    serde_json::from_str(PHRAG_VARS).expect("variables")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn phrag_query_venues() {
    let d = ok(
        Server::Phrag,
        "query queryVenues($limit: Int!, $offset: Int!, $id_gt: Int!) { venues(limit: $limit, offset: $offset, where: { id: { gt: $id_gt } }) { id name postal_code } }",
        phrag_vars(),
    )
    .await;
    let expected: Vec<Value> = venues()
        .iter()
        .filter(|v| v.id > 10)
        .skip(2)
        .take(5)
        .map(|v| json!({"id": v.id, "name": v.name, "postal_code": v.postal_code}))
        .collect();
    assert_eq!(d, json!({ "venues": expected }));
    assert_eq!(ids_of(&d["venues"]), [13, 14, 15, 16, 17]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn phrag_query_venue_meetups() {
    let d = ok(
        Server::Phrag,
        "query queryVenueMeetups($limit: Int!, $offset: Int!, $id_gt: Int!) { venues(limit: $limit, offset: $offset, where: { id: { gt: $id_gt } }) { id name postal_code meetups(limit: $limit, sort: { id: desc }) { id title } } }",
        phrag_vars(),
    )
    .await;
    let meetups = meetups();
    let expected: Vec<Value> = venues()
        .iter()
        .filter(|v| v.id > 10)
        .skip(2)
        .take(5)
        .map(|v| {
            let mut ms: Vec<&Meetup> = meetups.iter().filter(|m| m.venue_id == v.id).collect();
            ms.sort_by_key(|m| std::cmp::Reverse(m.id));
            let ms: Vec<Value> = ms
                .iter()
                .take(5)
                .map(|m| json!({"id": m.id, "title": m.title}))
                .collect();
            json!({"id": v.id, "name": v.name, "postal_code": v.postal_code, "meetups": ms})
        })
        .collect();
    assert_eq!(d, json!({ "venues": expected }));
    for venue in d["venues"].as_array().expect("venues") {
        let ids = ids_of(&venue["meetups"]);
        assert!(
            ids.windows(2).all(|w| w[0] > w[1]),
            "sorted by id desc: {ids:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn phrag_query_meetups_with_members() {
    let d = ok(
        Server::Phrag,
        "query queryMeetupsWithMembers($limit: Int!, $offset: Int!, $id_gt: Int!) { meetups(limit: $limit, offset: $offset, where: { id: { gt: $id_gt } }) { id title meetups_members(limit: $limit) { member { id email } } } }",
        phrag_vars(),
    )
    .await;
    let members: HashMap<i64, Member> = members().into_iter().map(|m| (m.id, m)).collect();
    let links = meetups_members();
    let expected: Vec<Value> = meetups()
        .iter()
        .filter(|m| m.id > 10)
        .skip(2)
        .take(5)
        .map(|m| {
            let mut ids: Vec<i64> = links
                .iter()
                .filter(|(meetup, _)| *meetup == m.id)
                .map(|(_, member)| *member)
                .collect();
            ids.sort();
            let mm: Vec<Value> = ids
                .iter()
                .take(5)
                .map(|id| json!({"member": {"id": id, "email": members[id].email}}))
                .collect();
            json!({"id": m.id, "title": m.title, "meetups_members": mm})
        })
        .collect();
    // The links come in no guaranteed order: compare them sorted by member id.
    let mut got = d.clone();
    for meetup in got["meetups"].as_array_mut().expect("meetups") {
        let list = meetup["meetups_members"]
            .as_array_mut()
            .expect("meetups_members");
        list.sort_by_key(|l| l["member"]["id"].as_i64());
    }
    assert_eq!(got, json!({ "meetups": expected }));
    assert_eq!(ids_of(&d["meetups"]), [13, 14, 15, 16, 17]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn phrag_operators() {
    let all = venues();
    let d = ok(
        Server::Phrag,
        r#"{
          ne: venues(where: {id: {lte: 3}, street2: {ne: "Annex 5"}}, sort: {id: asc}) { id }
          nulls: venues_aggregate(where: {building: {null: true}}) { aggregate { count } }
          either: venues(where: {or: [{id: {eq: 1}}, {id: {in: [2, 3]}}], not: {id: {eq: 2}}}) { id }
        }"#,
        Value::Null,
    )
    .await;
    let ne: Vec<i64> = all
        .iter()
        .filter(|v| v.id <= 3 && v.street2.as_deref().is_some_and(|s| s != "Annex 5"))
        .map(|v| v.id)
        .collect();
    let nulls = all.iter().filter(|v| v.building.is_none()).count();
    assert_eq!(
        d,
        json!({
            "ne": ids_json(ne),
            "nulls": {"aggregate": {"count": nulls}},
            "either": [{"id": 1}, {"id": 3}]
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graphql_default_composite_keys_and_column_enums() {
    let all = venues();
    let prefectures: std::collections::BTreeSet<&str> =
        all.iter().map(|v| v.prefecture.as_str()).collect();
    let first_per_prefecture: Vec<Value> = prefectures
        .iter()
        .take(3)
        .map(|p| {
            let id = all.iter().find(|v| v.prefecture == *p).map(|v| v.id);
            json!({"prefecture": p, "id": id})
        })
        .collect();
    let d = ok(
        Server::GraphqlDefault,
        r#"{
          meetupsMembersByPk(meetupId: 1, memberId: 8) { meetupId memberId member { id } }
          venues(distinctOn: [prefecture], orderBy: [{prefecture: ASC}, {id: ASC}], limit: 3) { prefecture id }
          venuesAggregate { aggregate { count(columns: [postalCode], distinct: false) } }
          shelvesByPk(aisle: 1, slot: 1) { boxesAggregate { aggregate { count } } boxes(orderBy: {id: DESC_NULLS_LAST}) { id aisleSlotShelves { label } } }
        }"#,
        Value::Null,
    )
    .await;
    assert_eq!(
        d,
        json!({
            "meetupsMembersByPk": {"meetupId": 1, "memberId": 8, "member": {"id": 8}},
            "venues": first_per_prefecture,
            "venuesAggregate": {"aggregate": {"count": ROWS}},
            "shelvesByPk": {
                "boxesAggregate": {"aggregate": {"count": 2}},
                "boxes": [{"id": 2, "aisleSlotShelves": {"label": "A1"}}, {"id": 1, "aisleSlotShelves": {"label": "A1"}}]
            }
        })
    );
}
