//! Several instances behind one load balancer share what is not stateless through
//! Redis (a real `redis-server`): one rate limit for all of them, persisted queries
//! registered on one and found on the other; and when Redis goes away each keeps
//! answering on its own.

use crate::{post, serve};
use grafton_server::Running;
use grafton_testkit::Redis;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// Admin is limited to 10 requests a minute, so one client can spend it all.
const LIMITED: &str = "
api_limits:
  rate_limit:
    per_role:
      admin: {max_reqs_per_min: 10}
";

fn database() -> String {
    let url = grafton_testkit::fresh_database("instances");
    grafton_testkit::psql(&url, crate::FIXTURE.as_bytes());
    url
}

async fn instance(url: &str, redis: Option<&Redis>, config: &str) -> Running {
    let config = serde_norway::from_str(config).expect("config");
    serve(url, |o| {
        o.config = config;
        o.redis_url = redis.map(Redis::url);
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_share_one_rate_limit() {
    let redis = Redis::start();
    let url = database();
    let a = instance(&url, Some(&redis), LIMITED).await;
    let b = instance(&url, Some(&redis), LIMITED).await;
    let client = reqwest::Client::new();
    let mut allowed = 0;
    // 16 requests alternate between the instances: alone, each would allow its 8.
    for i in 0..16 {
        let server = if i % 2 == 0 { &a } else { &b };
        let (status, body) = post(&client, server, "{ notes_by_pk(id: 1) { id } }").await;
        match status {
            200 => allowed += 1,
            429 => assert_eq!(body["errors"][0]["extensions"]["code"], "rate-limited"),
            other => panic!("{other}: {body}"),
        }
    }
    // One request comes back every 6 s: at most one more on a slow run.
    assert!(
        (10..=11).contains(&allowed),
        "{allowed} allowed across both, of 10 a minute"
    );
    a.stop().await;
    b.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_persisted_query_registered_on_one_instance_is_found_on_another() {
    let redis = Redis::start();
    let url = database();
    let a = instance(&url, Some(&redis), "{}").await;
    let b = instance(&url, Some(&redis), "{}").await;
    let alone = instance(&url, None, "{}").await;
    let client = reqwest::Client::new();
    let query = "{ notes_by_pk(id: 2) { body } }";
    let hash = grafton_engine::trusted::sha256_hex(query);
    let extensions = json!({"persistedQuery": {"version": 1, "sha256Hash": hash}});
    let send = async |server: &Running, body: Value| -> Value {
        let response = client
            .post(server.url())
            .json(&body)
            .send()
            .await
            .expect("answer");
        response.json().await.expect("json")
    };
    let registered = send(&a, json!({"query": query, "extensions": extensions})).await;
    assert_eq!(
        registered["data"]["notes_by_pk"]["body"], "note 2",
        "{registered}"
    );
    let by_hash = send(&b, json!({"extensions": extensions})).await;
    assert_eq!(
        by_hash["data"]["notes_by_pk"]["body"], "note 2",
        "{by_hash}"
    );
    // An instance without Redis never heard of it: the client must send the text.
    let unknown = send(&alone, json!({"extensions": extensions})).await;
    assert_eq!(
        unknown["errors"][0]["extensions"]["code"], "PERSISTED_QUERY_NOT_FOUND",
        "{unknown}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_redis_an_instance_answers_on_its_own() {
    let redis = Redis::start();
    let url = database();
    let a = instance(&url, Some(&redis), LIMITED).await;
    let client = reqwest::Client::new();
    let (status, body) = post(&client, &a, "{ notes_by_pk(id: 1) { id } }").await;
    assert_eq!(status, 200, "{body}");
    drop(redis);
    // Redis is gone: requests neither fail nor stall, and the limit still holds,
    // counted by this instance alone.
    let mut statuses = Vec::new();
    for _ in 0..12 {
        let started = Instant::now();
        let (status, body) = post(&client, &a, "{ notes_by_pk(id: 1) { id } }").await;
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        assert!(status == 200 || status == 429, "{status} {body}");
        statuses.push(status);
    }
    assert!(statuses.contains(&200), "{statuses:?}");
    assert!(
        statuses.contains(&429),
        "the local limit of 10 holds: {statuses:?}"
    );
}
