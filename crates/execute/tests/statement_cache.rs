//! Many distinct query shapes cannot grow a PostgreSQL backend without bound: one
//! pooled connection keeps at most `STATEMENT_CACHE_SIZE` statements prepared.

use grafton_execute::{Database, Target};
use grafton_sql::Statement;
use serde_json::Map;

fn statement(sql: String) -> Statement {
    Statement {
        sql,
        params: Vec::new(),
    }
}

const BUDGET: grafton_execute::Budget = grafton_execute::Budget {
    timeout: std::time::Duration::from_secs(30),
    max_bytes: u64::MAX,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prepared_statements_stay_bounded() {
    let url = grafton_testkit::fresh_database("stmts");
    let target = Target::parse(&url).expect("url");
    // One connection, so every statement lands on the same backend.
    let db = Database::connect(&target, grafton_execute::PoolOptions::new(1))
        .await
        .expect("connect");
    let none = Map::new();
    for i in 0..300 {
        let json = db
            .query_json(
                &statement(format!("SELECT json_build_object('n', {i})::text")),
                &none,
                BUDGET,
            )
            .await
            .expect("query");
        assert_eq!(json, format!("{{\"n\":{i}}}"));
    }
    let json = db
        .query_json(
            &statement(
                "SELECT json_build_object('n', (SELECT count(*) FROM pg_prepared_statements))::text"
                    .to_owned(),
            ),
            &none,
            BUDGET,
        )
        .await
        .expect("count");
    let n: serde_json::Value = serde_json::from_str(&json).expect("json");
    let n = n["n"].as_u64().expect("count");
    assert!(
        n > 0 && n <= grafton_execute::STATEMENT_CACHE_SIZE as u64,
        "{n} statements prepared on one connection"
    );
}
