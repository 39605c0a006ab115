//! `@cached` (Hasura's directive): answers kept per role and per the session
//! variables the role's rules read, Hasura's headers and cache API, and freshness:
//! a write through Grafton, through `psql` with the live triggers installed, and
//! through another instance each drop what read the table written. Every cached
//! answer is compared with the same query run uncached.

use crate::fresh_server::{admin_options, serve};
use grafton_server::Running;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const FIXTURE: &str = "
CREATE TABLE author (id int PRIMARY KEY, name text NOT NULL);
CREATE TABLE article (
  id int PRIMARY KEY,
  author_id int NOT NULL REFERENCES author (id) ON DELETE CASCADE,
  title text NOT NULL,
  published boolean NOT NULL
);
INSERT INTO author VALUES (1, 'Ann'), (2, 'Bob'), (3, 'Cy');
INSERT INTO article VALUES (1, 1, 'A1', true), (2, 1, 'A2', false), (3, 2, 'B1', true),
  (4, 3, 'C1', true);
";

/// `user` reads their own articles (a rule on `x-hasura-user-id`); `reader`
/// reads the published ones (a rule on no session variable).
const METADATA: &str = r#"
- table: {schema: public, name: author}
  array_relationships:
    - {name: articles, using: {foreign_key_constraint_on: {column: author_id, table: article}}}
  select_permissions:
    - role: user
      permission: {columns: [id, name], filter: {}}
- table: {schema: public, name: article}
  select_permissions:
    - role: user
      permission: {columns: [id, title], filter: {author_id: {_eq: X-Hasura-User-Id}}}
    - role: reader
      permission: {columns: [id, title], filter: {published: {_eq: true}}}
"#;

const ARTICLES: &str = "query @cached { article(order_by: {id: asc}) { id title } }";
const UNCACHED: &str = "query { article(order_by: {id: asc}) { id title } }";

/// An answer and the headers it came with.
struct Answer {
    body: Value,
    key: Option<String>,
    family: Option<String>,
    max_age: Option<u64>,
}

async fn ask(server: &Running, headers: &[(&str, &str)], query: &str, variables: Value) -> Answer {
    let mut request = reqwest::Client::new()
        .post(server.url())
        .header("x-hasura-admin-secret", crate::ADMIN_SECRET);
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let response = request
        .json(&json!({"query": query, "variables": variables}))
        .send()
        .await
        .expect("request");
    let header = |name: &str| {
        (response.headers().get(name))
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let (key, family) = (
        header("x-hasura-query-cache-key"),
        header("x-hasura-query-family-cache-key"),
    );
    // `max-age=60, private`
    let max_age = header("cache-control").and_then(|v| {
        let digits = v.strip_prefix("max-age=")?.split(',').next()?;
        digits.trim().parse().ok()
    });
    Answer {
        body: response.json().await.expect("json"),
        key,
        family,
        max_age,
    }
}

/// A mutation as admin: its answer.
async fn write(server: &Running, mutation: &str) -> Value {
    ask(server, &[], mutation, Value::Null).await.body
}

/// The cache API's counters.
async fn counters(server: &Running) -> Value {
    let url = server.url().replace("/v1/graphql", "/pro/cache/metrics");
    (reqwest::Client::new().get(url))
        .header("x-hasura-admin-secret", crate::ADMIN_SECRET)
        .send()
        .await
        .expect("metrics")
        .json()
        .await
        .expect("json")
}

async fn hits(server: &Running) -> u64 {
    counters(server).await["hits"].as_u64().unwrap_or(0)
}

/// Waits until the server keeps answers: its change feed (opened by the first
/// `@cached` request) drops what was kept before it listened, once, when it does.
async fn warm(server: &Running) {
    let query = "query @cached { author_by_pk(id: 1) { id } }";
    let started = Instant::now();
    loop {
        ask(server, &[], query, Value::Null).await;
        let before = hits(server).await;
        ask(server, &[], query, Value::Null).await;
        if hits(server).await > before && started.elapsed() > Duration::from_millis(300) {
            return;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "never kept");
    }
}

fn role<'a>(role: &'a str, user: &'a str) -> [(&'a str, &'a str); 2] {
    [("x-hasura-role", role), ("x-hasura-user-id", user)]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_are_kept_per_role_and_per_the_session_its_rules_read() {
    let (_url, server) = serve("cached_keys", FIXTURE, METADATA).await;
    warm(&server).await;
    // Each caller's cached answer is its uncached one, the second time from the cache.
    let callers: [&[(&str, &str)]; 5] = [
        &[],
        &role("user", "1"),
        &role("user", "2"),
        &role("reader", "1"),
        &role("reader", "2"),
    ];
    let mut keys = Vec::new();
    for (i, headers) in callers.into_iter().enumerate() {
        let plain = ask(&server, headers, UNCACHED, Value::Null).await;
        assert!(plain.key.is_none(), "no @cached, no key");
        let before = hits(&server).await;
        let first = ask(&server, headers, ARTICLES, Value::Null).await;
        let second = ask(&server, headers, ARTICLES, Value::Null).await;
        assert_eq!(first.body, plain.body, "{headers:?}");
        assert_eq!(second.body, plain.body, "{headers:?}");
        // The second reader shares the first's entry: both its reads are hits.
        let expected = if i == 4 { 2 } else { 1 };
        assert_eq!(
            hits(&server).await,
            before + expected,
            "{headers:?}: the second is a hit"
        );
        assert!(
            first.key.is_some() && first.key == second.key,
            "{headers:?}"
        );
        if i != 4 {
            assert_eq!(
                first.max_age,
                Some(60),
                "Hasura's default ttl, whole on a miss"
            );
        }
        assert!(second.max_age.is_some_and(|a| a <= 60));
        keys.push(first.key.unwrap_or_default());
    }
    // Two users whose rule reads x-hasura-user-id never share an entry; two users
    // of a role whose rules read nothing do; roles never do.
    assert_ne!(keys[1], keys[2]);
    assert_eq!(keys[3], keys[4]);
    assert_ne!(keys[0], keys[1]);
    assert_ne!(keys[1], keys[3]);
    let ids = |a: &Answer| a.body["data"]["article"].to_string();
    let (one, two) = (
        ask(&server, &role("user", "1"), ARTICLES, Value::Null).await,
        ask(&server, &role("user", "2"), ARTICLES, Value::Null).await,
    );
    assert_eq!(
        ids(&one),
        r#"[{"id":1,"title":"A1"},{"id":2,"title":"A2"}]"#
    );
    assert_eq!(ids(&two), r#"[{"id":3,"title":"B1"}]"#);

    // Variables are part of the key, in any key order; the family is not.
    let by_id = "query ($w: article_bool_exp) @cached(ttl: 30) { article(where: $w) { id } }";
    let a = ask(
        &server,
        &[],
        by_id,
        json!({"w": {"id": {"_eq": 1}, "published": {"_eq": true}}}),
    )
    .await;
    let b = ask(
        &server,
        &[],
        by_id,
        json!({"w": {"published": {"_eq": true}, "id": {"_eq": 1}}}),
    )
    .await;
    let c = ask(&server, &[], by_id, json!({"w": {"id": {"_eq": 3}}})).await;
    assert_eq!(a.key, b.key);
    assert_ne!(a.key, c.key);
    assert_eq!(a.family, c.family);
    assert_eq!(a.max_age, Some(30));
    assert_eq!(c.body["data"]["article"], json!([{"id": 3}]));

    // refresh: computed again (a miss) and kept.
    let before = counters(&server).await;
    let fresh = "query @cached(refresh: true) { article(order_by: {id: asc}) { id title } }";
    ask(&server, &[], fresh, Value::Null).await;
    let after = counters(&server).await;
    assert_eq!(after["hits"], before["hits"]);

    // ttl: gone once it passes.
    let short = "query @cached(ttl: 1) { author(order_by: {id: asc}) { id } }";
    ask(&server, &[], short, Value::Null).await;
    let kept = hits(&server).await;
    ask(&server, &[], short, Value::Null).await;
    assert_eq!(hits(&server).await, kept + 1);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let expired = ask(&server, &[], short, Value::Null).await;
    assert_eq!(hits(&server).await, kept + 1, "expired: a miss");
    assert_eq!(expired.max_age, Some(1));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_through_grafton_is_seen_by_the_next_read() {
    let (_url, server) = serve("cached_writes", FIXTURE, METADATA).await;
    warm(&server).await;
    let titles = |a: &Answer| a.body["data"]["article"].clone();
    let first = ask(&server, &[], ARTICLES, Value::Null).await;
    ask(&server, &[], ARTICLES, Value::Null).await;
    let written = write(
        &server,
        "mutation { update_article_by_pk(pk_columns: {id: 1}, _set: {title: \"A1 new\"}) { id } }",
    )
    .await;
    assert_eq!(written["data"]["update_article_by_pk"]["id"], 1);
    let after = ask(&server, &[], ARTICLES, Value::Null).await;
    assert_ne!(titles(&after), titles(&first));
    assert_eq!(titles(&after)[0]["title"], "A1 new");
    assert_eq!(
        titles(&after),
        ask(&server, &[], UNCACHED, Value::Null).await.body["data"]["article"]
    );
    // A write to a table no foreign key of the read ones reaches leaves it kept
    // (authors are read; articles refer to authors, not the other way).
    let authors = "query @cached { author(order_by: {id: asc}) { id name } }";
    ask(&server, &[], authors, Value::Null).await;
    let before = hits(&server).await;
    write(
        &server,
        "mutation { update_article_by_pk(pk_columns: {id: 2}, _set: {title: \"A2 new\"}) { id } }",
    )
    .await;
    ask(&server, &[], authors, Value::Null).await;
    assert_eq!(
        hits(&server).await,
        before + 1,
        "an article write keeps authors"
    );
    // A write to authors reaches the articles that refer to them (a cascade
    // could have changed them).
    ask(&server, &[], ARTICLES, Value::Null).await;
    let before = hits(&server).await;
    write(
        &server,
        "mutation { update_author_by_pk(pk_columns: {id: 3}, _set: {name: \"Cyd\"}) { id } }",
    )
    .await;
    ask(&server, &[], ARTICLES, Value::Null).await;
    assert_eq!(
        hits(&server).await,
        before,
        "articles refer to the author written"
    );
    // A delete that cascades to articles makes them stale too.
    write(&server, "mutation { delete_author_by_pk(id: 3) { id } }").await;
    let cascaded = ask(&server, &[], ARTICLES, Value::Null).await;
    let ids: Vec<i64> = (cascaded.body["data"]["article"]
        .as_array()
        .into_iter()
        .flatten())
    .filter_map(|a| a["id"].as_i64())
    .collect();
    assert_eq!(ids, [1, 2, 3], "{}", cascaded.body);
    server.stop().await;
}

/// Reads `query` until its answer is `wanted`; how long that took.
async fn until(server: &Running, query: &str, wanted: &Value) -> Duration {
    let started = Instant::now();
    loop {
        let a = ask(server, &[], query, Value::Null).await;
        if a.body["data"] == *wanted {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "still {} after 5 s",
            a.body
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_of_psql_and_of_another_instance_arrive_through_the_feed() {
    let (url, a) = serve("cached_feed", FIXTURE, METADATA).await;
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_grafton"))
        .args(["live-triggers", "--database-url", &url])
        .output()
        .expect("grafton live-triggers");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    grafton_testkit::psql(&url, &out.stdout);
    // The metadata `serve` wrote, served by a second instance.
    let dir = std::env::temp_dir().join(format!("grafton-cached_feed-{}", std::process::id()));
    let b = grafton_server::start(&grafton_server::ServeOptions {
        config: grafton_schema::hasura::load(&dir).expect("metadata"),
        ..admin_options(&url, Default::default())
    })
    .await
    .expect("second instance");
    let query = "query @cached { article_by_pk(id: 4) { title } }";
    let title = |t: &str| json!({"article_by_pk": {"title": t}});
    warm(&a).await;
    warm(&b).await;
    ask(&a, &[], query, Value::Null).await;
    let before = hits(&a).await;
    let kept = ask(&a, &[], query, Value::Null).await;
    assert_eq!(hits(&a).await, before + 1, "kept before the writes");
    assert_eq!(kept.body["data"], title("C1"));
    grafton_testkit::psql(
        &url,
        b"UPDATE article SET title = 'C1 by psql' WHERE id = 4;",
    );
    let external = until(&a, query, &title("C1 by psql")).await;
    let written = write(
        &b,
        "mutation { update_article_by_pk(pk_columns: {id: 4}, _set: {title: \"C1 by B\"}) { id } }",
    )
    .await;
    assert_eq!(written["data"]["update_article_by_pk"]["id"], 4);
    let other = until(&a, query, &title("C1 by B")).await;
    eprintln!("fresh after a psql write: {external:?}; after B's write: {other:?}");
    b.stop().await;
    a.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cache_api_clears_by_key_family_or_all_for_admin_only() {
    let (_url, server) = serve("cached_api", FIXTURE, METADATA).await;
    warm(&server).await;
    let clear = |query: String, admin: bool| {
        let url = server.url().replace("/v1/graphql", "/pro/cache/clear");
        let mut request = reqwest::Client::new().post(format!("{url}{query}"));
        request = match admin {
            true => request.header("x-hasura-admin-secret", crate::ADMIN_SECRET),
            false => request
                .header("x-hasura-admin-secret", crate::ADMIN_SECRET)
                .header("x-hasura-role", "user")
                .header("x-hasura-user-id", "1"),
        };
        async move {
            let r = request.send().await.expect("clear");
            (r.status().as_u16(), r.json::<Value>().await.expect("json"))
        }
    };
    let by_id = "query ($id: Int!) @cached { article_by_pk(id: $id) { id } }";
    let one = ask(&server, &[], by_id, json!({"id": 1})).await;
    let two = ask(&server, &[], by_id, json!({"id": 2})).await;
    let key = one.key.clone().unwrap_or_default();
    let (status, body) = clear(String::new(), false).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (400, Some("access-denied")),
        "{body}"
    );
    let (status, body) = clear("?key=nothex".into(), true).await;
    assert_eq!(status, 400, "{body}");
    let (status, body) = clear(format!("?key={key}"), true).await;
    assert_eq!(
        (status, &body["result"]["cleared"]),
        (200, &json!(1)),
        "{body}"
    );
    let before = hits(&server).await;
    ask(&server, &[], by_id, json!({"id": 1})).await;
    ask(&server, &[], by_id, json!({"id": 2})).await;
    assert_eq!(hits(&server).await, before + 1, "only key 1 was cleared");
    let family = two.family.unwrap_or_default();
    clear(format!("?family={family}"), true).await;
    ask(&server, &[], by_id, json!({"id": 1})).await;
    ask(&server, &[], by_id, json!({"id": 2})).await;
    assert_eq!(hits(&server).await, before + 1, "the family was cleared");
    clear(String::new(), true).await;
    ask(&server, &[], by_id, json!({"id": 2})).await;
    assert_eq!(hits(&server).await, before + 1, "everything was cleared");
    let m = counters(&server).await;
    assert!(m["entries"].as_u64().is_some_and(|n| n >= 1), "{m}");
    assert!(m["misses"].as_u64().is_some_and(|n| n >= 6), "{m}");
    // The same counters in /metrics.
    let text = crate::common::metrics_text(&server.url(), crate::ADMIN_SECRET).await;
    assert!(text.contains("grafton_response_cache_hits_total"), "{text}");
    assert!(text.contains("grafton_response_cache_bytes"), "{text}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instances_share_answers_through_redis_and_cache_alone_without_it() {
    let redis = grafton_testkit::Redis::start();
    let (url, plain) = serve("cached_redis", FIXTURE, METADATA).await;
    plain.stop().await;
    let dir = std::env::temp_dir().join(format!("grafton-cached_redis-{}", std::process::id()));
    let options = grafton_server::ServeOptions {
        config: grafton_schema::hasura::load(&dir).expect("metadata"),
        redis_url: Some(redis.url()),
        ..admin_options(&url, Default::default())
    };
    let instance = || grafton_server::start(&options);
    let a = instance().await.expect("instance A");
    let b = instance().await.expect("instance B");
    warm(&a).await;
    warm(&b).await;
    let query = "query @cached { article(order_by: {id: asc}) { id title } }";
    // A computes it; B's first read finds it in Redis.
    let first = ask(&a, &[], query, Value::Null).await;
    let before = hits(&b).await;
    let shared = ask(&b, &[], query, Value::Null).await;
    assert_eq!(hits(&b).await, before + 1, "B's first read came from Redis");
    assert_eq!(shared.body, first.body);
    assert_eq!(shared.key, first.key, "the same key on every instance");
    // A write through A is stale for B at its next read.
    write(
        &a,
        "mutation { update_article_by_pk(pk_columns: {id: 3}, _set: {title: \"B1 new\"}) { id } }",
    )
    .await;
    let after = ask(&b, &[], query, Value::Null).await;
    assert_eq!(
        after.body["data"]["article"][2]["title"], "B1 new",
        "{}",
        after.body
    );
    // Redis gone: each instance caches on its own.
    drop(redis);
    let alone = "query @cached { author(order_by: {id: asc}) { id } }";
    for server in [&a, &b] {
        ask(server, &[], alone, Value::Null).await;
        let before = hits(server).await;
        let answer = ask(server, &[], alone, Value::Null).await;
        assert_eq!(hits(server).await, before + 1);
        assert_eq!(answer.body["data"]["author"][0]["id"], 1);
    }
    b.stop().await;
    a.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_sqlite_a_write_through_grafton_is_seen_by_the_next_read() {
    let path = grafton_testkit::sqlite_path("cached_sqlite");
    rusqlite::Connection::open(&path)
        .and_then(|c| {
            c.execute_batch(
                "CREATE TABLE note (id INTEGER PRIMARY KEY, body TEXT NOT NULL);
                 INSERT INTO note VALUES (1, 'one'), (2, 'two');",
            )
        })
        .expect("SQLite file");
    let server = grafton_server::start(&admin_options(
        &path.display().to_string(),
        Default::default(),
    ))
    .await
    .expect("server");
    let query = "query @cached { note(order_by: {id: asc}) { id body } }";
    let first = ask(&server, &[], query, Value::Null).await;
    let before = hits(&server).await;
    let again = ask(&server, &[], query, Value::Null).await;
    assert_eq!(hits(&server).await, before + 1, "kept on SQLite too");
    assert_eq!(again.body, first.body);
    write(
        &server,
        "mutation { update_note_by_pk(pk_columns: {id: 2}, _set: {body: \"deux\"}) { id } }",
    )
    .await;
    let after = ask(&server, &[], query, Value::Null).await;
    assert_eq!(
        after.body["data"]["note"],
        json!([{"id": 1, "body": "one"}, {"id": 2, "body": "deux"}])
    );
    server.stop().await;
}
