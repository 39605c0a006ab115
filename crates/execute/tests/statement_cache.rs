//! Many distinct query shapes cannot grow a PostgreSQL backend without bound: one
//! pooled connection keeps at most `STATEMENT_CACHE_SIZE` statements prepared, and
//! closes the one used longest ago first, so statements in use stay prepared.

use grafton_execute::{Database, Route, Target, STATEMENT_CACHE_SIZE};
use grafton_sql::Statement;
use serde_json::Map;

fn statement(sql: String) -> Statement {
    Statement {
        sql,
        params: Vec::new(),
        compact: false,
    }
}

const BUDGET: grafton_execute::Budget = grafton_execute::Budget {
    timeout: std::time::Duration::from_secs(30),
    max_bytes: u64::MAX,
};

async fn json(db: &Database, sql: &str) -> serde_json::Value {
    let text = db
        .query_json(
            &statement(sql.to_owned()),
            &Map::new(),
            BUDGET,
            Route::Primary,
        )
        .await
        .expect("query");
    serde_json::from_str(&text).expect("json")
}

/// Runs the `i`th distinct statement.
async fn distinct(db: &Database, i: usize) {
    let got = json(db, &format!("SELECT json_build_object('n', {i})::text")).await;
    assert_eq!(got["n"], i);
}

const HOT: &str = "SELECT json_build_object('hot', true)::text";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prepared_statements_stay_bounded_and_the_hot_ones_stay_prepared() {
    let url = grafton_testkit::fresh_database("stmts");
    let target = Target::parse(&url).expect("url");
    // One connection, so every statement lands on the same backend.
    let db = Database::connect(&target, grafton_execute::PoolOptions::new(1))
        .await
        .expect("connect");
    json(&db, HOT).await;
    // Fill the cache, using the hot statement now and then; then go well past it.
    for i in 0..STATEMENT_CACHE_SIZE + 100 {
        distinct(&db, i).await;
        if i % 50 == 0 {
            json(&db, HOT).await;
        }
    }
    let counts = json(
        &db,
        "SELECT json_build_object(
           'n', (SELECT count(*) FROM pg_prepared_statements),
           'hot', (SELECT count(*) FROM pg_prepared_statements
                   WHERE statement = 'SELECT json_build_object(''hot'', true)::text'),
           'hot_first', (SELECT bool_and(h.prepare_time < o.prepare_time)
                         FROM pg_prepared_statements h, pg_prepared_statements o
                         WHERE h.statement = 'SELECT json_build_object(''hot'', true)::text'
                           AND o.statement LIKE 'SELECT json_build_object(''n'', 1%'))::text",
    )
    .await;
    let n = counts["n"].as_u64().expect("count");
    assert!(
        n > 0 && n <= STATEMENT_CACHE_SIZE as u64,
        "{n} statements prepared on one connection"
    );
    // The hot statement was never closed: it is still the one prepared first.
    assert_eq!(counts["hot"], 1, "{counts}");
    assert_eq!(counts["hot_first"], true, "re-prepared: {counts}");
}
