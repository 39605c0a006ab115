//! Multiplexed queries: requests of one shape that wait for a connection are
//! answered by one statement. Differential: the same requests sent together while
//! every connection is held, and alone, give the same bytes (role filters and
//! session variables included); a request whose values fail the statement, and
//! one that runs past its time, fail alone.

use crate::fresh_server::serve_with_options;
use grafton_server::{Running, ServeOptions};
use serde_json::{json, Value};
use std::time::Duration;

const FIXTURE: &str = "
CREATE TABLE item (id int PRIMARY KEY, owner int NOT NULL, name text NOT NULL);
INSERT INTO item SELECT i, i % 5, 'item ' || i FROM generate_series(1, 200) i;
-- Holds a connection for `ms` milliseconds.
CREATE FUNCTION slow_items(ms int) RETURNS SETOF item LANGUAGE sql STABLE
  AS $$ SELECT item.* FROM item, pg_sleep(ms / 1000.0) $$;
";

/// `user` reads the items they own (a rule on `x-hasura-user-id`).
const TABLES: &str = r#"
- table: {schema: public, name: item}
  select_permissions:
    - role: user
      permission: {columns: [id, owner, name], filter: {owner: {_eq: X-Hasura-User-Id}}}
"#;
const FUNCTIONS: &str = "- function: {schema: public, name: slow_items}\n";

/// Holds both of the pool's connections for a while.
const HOLD: &str = "query hold { slow_items(args: {ms: 900}, limit: 1) { id } }";

static NONE: Value = Value::Null;

/// A server with two connections, so two slow requests hold them all.
async fn server(prefix: &str) -> Running {
    server_with(prefix, 2, None).await
}

/// A server with `pool_size` connections and `query_concurrency` places for light
/// queries' statements.
async fn server_with(prefix: &str, pool_size: usize, query_concurrency: Option<usize>) -> Running {
    let options = ServeOptions {
        pool_size,
        query_concurrency,
        limits: grafton_engine::ServerLimits {
            request_timeout: Duration::from_secs(3),
            ..Default::default()
        },
        ..ServeOptions::default()
    };
    serve_with_options(prefix, FIXTURE, TABLES, FUNCTIONS, options)
        .await
        .1
}

/// A request's raw answer: status and body text.
async fn ask(server: &Running, user: Option<&str>, query: &str, variables: &Value) -> String {
    let mut request = reqwest::Client::new()
        .post(server.url())
        .header("x-hasura-admin-secret", crate::ADMIN_SECRET);
    if let Some(user) = user {
        request = request
            .header("x-hasura-role", "user")
            .header("x-hasura-user-id", user);
    }
    let response = (request.json(&json!({"query": query, "variables": variables})))
        .send()
        .await
        .expect("request");
    let status = response.status();
    format!(
        "{} {}",
        status.as_u16(),
        response.text().await.expect("body")
    )
}

/// A counter of `/metrics`.
async fn counter(server: &Running, name: &str) -> f64 {
    let text = crate::common::metrics_text(&server.url(), crate::ADMIN_SECRET).await;
    (text.lines())
        .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
        .unwrap_or(0.0)
}

type Request = (Option<String>, &'static str, Value);

/// Each request's answer alone, then all of them sent at once while `holders` slow
/// requests (`hold`) hold every connection (or place); returns both lists.
async fn alone_and_together(
    server: &Running,
    requests: &[Request],
    (holders, hold): (usize, &str),
) -> (Vec<String>, Vec<String>) {
    let mut alone = Vec::new();
    for (user, query, variables) in requests {
        alone.push(ask(server, user.as_deref(), query, variables).await);
    }
    let holders =
        futures_util::future::join_all((0..holders).map(|_| ask(server, None, hold, &NONE)));
    let together = async {
        // Both holders have their connections by now (each sleeps 900 ms).
        tokio::time::sleep(Duration::from_millis(300)).await;
        let asks = requests
            .iter()
            .map(|(u, q, v)| ask(server, u.as_deref(), q, v));
        futures_util::future::join_all(asks).await
    };
    let (held, together) = tokio::join!(holders, together);
    assert!(
        held.iter()
            .all(|h| h.starts_with("200") && h.contains("\"data\"")),
        "{held:?}"
    );
    (alone, together)
}

/// Checks that every request answers data, and the same bytes alone and together;
/// returns the answers and how many requests batches answered.
async fn same_answers_together(server: &Running, requests: &[Request]) -> (Vec<String>, f64) {
    same_answers_held_by(server, requests, (2, HOLD)).await
}

/// [`same_answers_together`] while `holders` slow requests (`hold`) run.
async fn same_answers_held_by(
    server: &Running,
    requests: &[Request],
    holders: (usize, &str),
) -> (Vec<String>, f64) {
    let before = counter(server, "grafton_query_batched_requests_total").await;
    let (alone, together) = alone_and_together(server, requests, holders).await;
    for ((request, alone), together) in requests.iter().zip(&alone).zip(&together) {
        assert!(alone.starts_with("200 {\"data\""), "{request:?}: {alone}");
        assert_eq!(alone, together, "{request:?}");
    }
    // Sent alone, nothing is gathered: what was, was gathered together.
    let batched = counter(server, "grafton_query_batched_requests_total").await - before;
    (alone, batched)
}

/// With fewer places for light queries' statements than connections
/// (`--query-concurrency`), requests that find every place taken are multiplexed
/// though connections are free, and answer the same bytes.
#[tokio::test]
async fn requests_past_the_query_concurrency_are_multiplexed() {
    let server = server_with("mux_places", 4, Some(1)).await;
    const ITEMS: &str = "query items($id_gt: Int!) { item(where: {id: {_gt: $id_gt}}, order_by: {id: asc}, limit: 3) { id owner name } }";
    let requests: Vec<Request> = (0..12)
        .map(|k| (Some((k % 5).to_string()), ITEMS, json!({"id_gt": k * 11})))
        .collect();
    // One slow request holds the one place; three connections stay free.
    let (_, batched) = same_answers_held_by(&server, &requests, (1, HOLD)).await;
    assert!(
        batched >= 10.0,
        "only {batched} requests answered in batches"
    );
}

#[tokio::test]
async fn requests_answered_together_equal_their_answers_alone() {
    let server = server("mux_equal").await;
    const ITEMS: &str = "query items($id_gt: Int!, $limit: Int!) { item(where: {id: {_gt: $id_gt}}, order_by: {id: asc}, limit: $limit) { id owner name } }";
    let mut requests: Vec<Request> = Vec::new();
    for k in 0..6 {
        let variables = json!({"id_gt": k * 17, "limit": 3 + k});
        requests.push((None, ITEMS, variables.clone()));
        for user in 0..5 {
            requests.push((Some(user.to_string()), ITEMS, variables.clone()));
        }
    }
    // A list variable, and a variable left out (null).
    const LIST: &str = "query in($ids: [Int!], $name: String) { item(where: {id: {_in: $ids}, name: {_eq: $name}}, order_by: {id: desc}) { id name } }";
    requests.push((Some("2".into()), LIST, json!({"ids": [2, 7, 12, 13]})));
    requests.push((
        Some("3".into()),
        LIST,
        json!({"ids": [3, 8, 13], "name": "item 8"}),
    ));
    requests.push((Some("3".into()), LIST, json!({"ids": []})));
    let (alone, batched) = same_answers_together(&server, &requests).await;
    assert!(
        batched >= 20.0,
        "only {batched} requests answered in batches"
    );
    // Each user saw their own rows only.
    assert!(alone[1].contains("\"owner\":0") && !alone[1].contains("\"owner\":1"));
}

#[tokio::test]
async fn a_request_failing_its_batch_fails_alone() {
    let server = server("mux_error").await;
    const MATCHING: &str = "query matching($re: String!) { item(where: {name: {_regex: $re}}, order_by: {id: asc}, limit: 3) { id name } }";
    let patterns = ["1$", "2$", "(", "3$", "4$", "5$"];
    let requests: Vec<Request> = (patterns.iter())
        .map(|re| (None, MATCHING, json!({ "re": re })))
        .collect();
    let before = counter(&server, "grafton_query_batch_retries_total").await;
    let (alone, together) = alone_and_together(&server, &requests, (2, HOLD)).await;
    for ((request, alone), together) in requests.iter().zip(&alone).zip(&together) {
        assert_eq!(alone, together, "{request:?}");
    }
    assert!(together[2].contains("data-exception"), "{}", together[2]);
    assert!(together[0].contains("\"item 11\""), "{}", together[0]);
    let retries = counter(&server, "grafton_query_batch_retries_total").await - before;
    assert!(retries >= 1.0, "the failed batch was not split");
}

#[tokio::test]
async fn a_request_past_its_time_in_a_batch_times_out_alone() {
    let server = server("mux_timeout").await;
    const SLOW: &str = "query slow($ms: Int!) { slow_items(args: {ms: $ms}, order_by: {id: asc}, limit: 2) { id } }";
    // 3 s of the 3 s limit: the batch stops at half of it, then each runs alone.
    let delays = [0, 10, 3000, 0, 20];
    let requests: Vec<Request> = (delays.iter())
        .map(|ms| (None, SLOW, json!({ "ms": ms })))
        .collect();
    let holders = futures_util::future::join_all((0..2).map(|_| ask(&server, None, HOLD, &NONE)));
    let together = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let asks = requests
            .iter()
            .map(|(u, q, v)| ask(&server, u.as_deref(), q, v));
        futures_util::future::join_all(asks).await
    };
    let (_, together) = tokio::join!(holders, together);
    let fast = "200 {\"data\":{\"slow_items\":[{\"id\":1},{\"id\":2}]}}";
    for (ms, answer) in delays.iter().zip(&together) {
        match ms {
            3000 => assert!(answer.contains("\"code\":\"timeout\""), "{answer}"),
            _ => assert_eq!(answer, fast),
        }
    }
    let retries = counter(&server, "grafton_query_batch_retries_total").await;
    assert!(retries >= 1.0, "the batch past its time was not split");
}

#[tokio::test]
async fn heavy_queries_are_gathered_in_the_heavy_lane() {
    let server = server("mux_heavy").await;
    // No limit: estimated at 10,000 rows, so heavy (the heavy lane has one place
    // here); the batch takes that one place and one connection.
    const ALL: &str =
        "query all($id_gt: Int!) { item(where: {id: {_gt: $id_gt}}, order_by: {id: asc}) { id } }";
    let requests: Vec<Request> = (0..6)
        .map(|k| (Some((k % 5).to_string()), ALL, json!({"id_gt": 150 + k})))
        .collect();
    let (_, batched) = same_answers_together(&server, &requests).await;
    assert!(
        batched >= 2.0,
        "heavy queries were not gathered ({batched})"
    );
}

/// Heavy queries' statements take at most half the light queries' places, rounded
/// up: with two places, one slow heavy statement fills the heavy lane, so heavy
/// requests that come meanwhile wait and are multiplexed though three connections
/// are free (the lane would have three places without the cap).
#[tokio::test]
async fn heavy_queries_past_half_the_query_concurrency_are_multiplexed() {
    let server = server_with("mux_heavy_places", 4, Some(2)).await;
    // No limit: heavy, as in `heavy_queries_are_gathered_in_the_heavy_lane`.
    const HOLD_HEAVY: &str = "query hold_heavy { slow_items(args: {ms: 900}) { id } }";
    const ALL: &str =
        "query all($id_gt: Int!) { item(where: {id: {_gt: $id_gt}}, order_by: {id: asc}) { id } }";
    let requests: Vec<Request> = (0..6)
        .map(|k| (Some((k % 5).to_string()), ALL, json!({"id_gt": 150 + k})))
        .collect();
    let (_, batched) = same_answers_held_by(&server, &requests, (1, HOLD_HEAVY)).await;
    // Without the cap two would find a place free and run alone.
    let all = requests.len() as f64;
    assert!(
        batched >= all,
        "only {batched} of {all} heavy requests were batched"
    );
}
