use super::*;

fn cache(max_bytes: u64) -> ResponseCache {
    let metrics = ResponseCacheMetrics::new(&prometheus::Registry::new());
    ResponseCache::new(max_bytes, DEFAULT_MAX_TTL, metrics, None)
}

fn reads(tables: &[&str]) -> Reads {
    Reads::Tables(tables.iter().map(|t| t.to_string()).collect())
}

const TTL: Duration = Duration::from_secs(60);

#[test]
fn a_write_to_a_table_read_drops_the_answer_and_no_other() {
    let c = cache(1 << 20);
    let (a, b, family) = ([1; 16], [2; 16], [9; 16]);
    assert!(c.put(
        a,
        family,
        "A",
        c.snapshot(&reads(&["venues"]), &family),
        TTL
    ));
    assert!(c.put(
        b,
        family,
        "B",
        c.snapshot(&reads(&["meetups"]), &family),
        TTL
    ));
    assert_eq!(c.get(&a).map(|h| h.body.to_string()), Some("A".into()));
    c.written(&["venues".to_string()]);
    assert!(c.get(&a).is_none(), "venues was written");
    assert_eq!(c.get(&b).map(|h| h.body.to_string()), Some("B".into()));
    assert_eq!(c.metrics.invalidations.get(), 1);
}

#[test]
fn an_answer_computed_across_a_write_is_not_kept() {
    let c = cache(1 << 20);
    let family = [9; 16];
    let before = c.snapshot(&reads(&["venues"]), &family);
    c.written(&["venues".to_string()]);
    assert!(!c.put([1; 16], family, "stale", before, TTL));
    assert!(c.get(&[1; 16]).is_none());
}

#[test]
fn a_function_reading_plan_goes_stale_with_any_write() {
    let c = cache(1 << 20);
    let family = [9; 16];
    assert!(c.put([1; 16], family, "F", c.snapshot(&Reads::Any, &family), TTL));
    c.written(&["anything".to_string()]);
    assert!(c.get(&[1; 16]).is_none());
}

#[test]
fn clears_by_key_family_and_everything() {
    let c = cache(1 << 20);
    let (f1, f2) = ([8; 16], [9; 16]);
    let r = reads(&["t"]);
    c.put([1; 16], f1, "1", c.snapshot(&r, &f1), TTL);
    c.put([2; 16], f1, "2", c.snapshot(&r, &f1), TTL);
    c.put([3; 16], f2, "3", c.snapshot(&r, &f2), TTL);
    assert!(c.clear_key(&[1; 16]));
    assert!(c.get(&[1; 16]).is_none());
    c.clear_family(&f1);
    assert!(c.get(&[2; 16]).is_none());
    assert!(c.get(&[3; 16]).is_some());
    c.clear();
    assert!(c.get(&[3; 16]).is_none());
}

#[test]
fn expiry_and_the_ttl_bound() {
    let c = cache(1 << 20);
    let family = [9; 16];
    let r = reads(&["t"]);
    c.put(
        [1; 16],
        family,
        "x",
        c.snapshot(&r, &family),
        Duration::ZERO,
    );
    assert!(c.get(&[1; 16]).is_none(), "a zero ttl keeps nothing");
    c.put([1; 16], family, "x", c.snapshot(&r, &family), TTL);
    let hit = c.get(&[1; 16]).expect("kept");
    assert!(hit.max_age <= TTL && hit.max_age > Duration::from_secs(58));
    assert_eq!(c.ttl(Duration::from_secs(100_000)), DEFAULT_MAX_TTL);
}

#[test]
fn the_byte_bound_holds_under_a_flood_of_keys() {
    let bound = 256 * 1024;
    let c = cache(bound);
    let family = [9; 16];
    let body = "x".repeat(1000);
    for i in 0u32..5_000 {
        let mut key = [0u8; 16];
        key[..4].copy_from_slice(&i.to_le_bytes());
        c.put(key, family, &body, c.snapshot(&reads(&["t"]), &family), TTL);
        assert!(c.usage().1 <= bound, "{} bytes kept", c.usage().1);
    }
    assert!(c.metrics.evictions.get() > 4_000);
    // One answer past a sixteenth of the bound is served, never kept.
    let big = "y".repeat(usize::try_from(bound).unwrap() / 8);
    assert!(!c.put(
        [7; 16],
        family,
        &big,
        c.snapshot(&reads(&["t"]), &family),
        TTL
    ));
}

#[test]
fn keys_read_variables_in_any_order_and_only_the_session_the_plan_binds() {
    use crate::engine::Caller;
    use serde_json::json;
    let caller = |user: &str, team: &str| Caller {
        role: Some("user".into()),
        vars: serde_json::from_value(json!({"x-hasura-user-id": user, "x-hasura-team": team}))
            .unwrap(),
        ..Caller::default()
    };
    let vars = |v: serde_json::Value| serde_json::from_value(v).unwrap();
    let doc = "query @cached { t { id } }";
    let user_only = ["x-hasura-user-id".to_string()];
    let k = |c: &Caller, v: &serde_json::Map<String, serde_json::Value>, s: &[String]| {
        key::key(c, doc, None, v, s, &c.vars, &[0; 16])
    };
    let (ab, ba) = (
        vars(json!({"a": 1, "b": {"x": 1, "y": 2}})),
        vars(json!({"b": {"y": 2, "x": 1}, "a": 1})),
    );
    let ann = caller("1", "red");
    assert_eq!(k(&ann, &ab, &user_only), k(&ann, &ba, &user_only));
    // Another team, same user: the plan binds only the user id.
    assert_eq!(
        k(&ann, &ab, &user_only),
        k(&caller("1", "blue"), &ab, &user_only)
    );
    // Another user: never shared.
    assert_ne!(
        k(&ann, &ab, &user_only),
        k(&caller("2", "red"), &ab, &user_only)
    );
    // No session bound: every user of the role shares it.
    assert_eq!(k(&ann, &ab, &[]), k(&caller("2", "blue"), &ab, &[]));
    // The whole session (a function's session argument): every variable counts.
    let whole = [grafton_ir::SESSION_JSON_VAR.to_string()];
    assert_ne!(k(&ann, &ab, &whole), k(&caller("1", "blue"), &ab, &whole));
    // Another role, or the Relay API, is another planner.
    let admin = Caller {
        role: None,
        ..caller("1", "red")
    };
    assert_ne!(k(&ann, &ab, &[]), k(&admin, &ab, &[]));
    let relay = Caller {
        relay: true,
        ..caller("1", "red")
    };
    assert_ne!(k(&ann, &ab, &[]), k(&relay, &ab, &[]));
    let hex = key::to_hex(&k(&ann, &ab, &[]));
    assert_eq!(key::from_hex(&hex), Some(k(&ann, &ab, &[])));
    assert_eq!(key::from_hex("nope"), None);
    // A session variable bound as a list (`x-hasura-allowed-ids[]`) keys on the
    // list the statement binds.
    let listed = ["x-hasura-allowed-ids[]".to_string()];
    let bound = |ids: serde_json::Value| -> serde_json::Map<String, serde_json::Value> {
        vars(json!({"x-hasura-allowed-ids[]": ids}))
    };
    let one = key::key(
        &ann,
        doc,
        None,
        &ab,
        &listed,
        &bound(json!([1, 2])),
        &[0; 16],
    );
    let other = key::key(&ann, doc, None, &ab, &listed, &bound(json!([3])), &[0; 16]);
    assert_ne!(one, other);
    // Another schema or rules (a reload, another instance's metadata): another key.
    let again = key::key(
        &ann,
        doc,
        None,
        &ab,
        &listed,
        &bound(json!([1, 2])),
        &[1; 16],
    );
    assert_ne!(one, again);
}
