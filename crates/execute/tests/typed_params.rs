//! PostgreSQL parameters are declared with their real type (so `$1::"int4"` is no
//! per-row input-function call in a generic plan) and still travel as text: every
//! type the translator binds comes back as the value sent, NULL included; enums are
//! declared `text` and cast.

use grafton_execute::{Database, Route, Target};
use grafton_sql::{Param, ParamValue, SqlType, Statement};
use serde_json::{json, Map, Value};

const BUDGET: grafton_execute::Budget = grafton_execute::Budget {
    timeout: std::time::Duration::from_secs(30),
    max_bytes: u64::MAX,
};

fn param(ty: SqlType, list: bool, value: Value) -> Param {
    Param {
        value: ParamValue::Literal(value),
        ty,
        list,
    }
}

async fn json(db: &Database, statement: &Statement) -> Value {
    let text = db
        .query_json(statement, &Map::new(), BUDGET, Route::Primary)
        .await
        .expect("query");
    serde_json::from_str(&text).expect("json")
}

fn plain(sql: &str) -> Statement {
    Statement {
        sql: sql.to_owned(),
        params: Vec::new(),
        compact: false,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_bound_type_round_trips_and_is_declared_with_its_own_type() {
    let url = grafton_testkit::fresh_database("typed_params");
    let target = Target::parse(&url).expect("url");
    // One connection: the statement and the look at pg_prepared_statements share a backend.
    let db = Database::connect(&target, grafton_execute::PoolOptions::new(1))
        .await
        .expect("connect");
    json(&db, &plain("CREATE TYPE mood AS ENUM ('ok', 'sad')")).await;

    let b = SqlType::Builtin;
    let cases: Vec<(Param, &str, Value)> = vec![
        (param(b("int4"), false, json!(7)), "integer", json!(7)),
        (
            param(b("int8"), false, json!(9_007_199_254_740_993i64)),
            "bigint",
            json!(9_007_199_254_740_993i64),
        ),
        (
            param(b("float8"), false, json!(1.5)),
            "double precision",
            json!(1.5),
        ),
        (
            param(b("numeric"), false, json!(12.25)),
            "numeric",
            json!(12.25),
        ),
        (param(b("bool"), false, json!(true)), "boolean", json!(true)),
        (
            param(b("text"), false, json!("it's")),
            "text",
            json!("it's"),
        ),
        (
            param(
                b("uuid"),
                false,
                json!("0b3c8f3e-8c1a-4d8e-9a53-2d9d6f1f0a11"),
            ),
            "uuid",
            json!("0b3c8f3e-8c1a-4d8e-9a53-2d9d6f1f0a11"),
        ),
        (
            param(b("timestamptz"), false, json!("2026-11-24T12:00:00+00:00")),
            "timestamp with time zone",
            json!("2026-11-24T12:00:00+00:00"),
        ),
        (
            param(b("date"), false, json!("2026-11-24")),
            "date",
            json!("2026-11-24"),
        ),
        (
            param(b("interval"), false, json!("1 day")),
            "interval",
            json!("1 day"),
        ),
        (
            param(b("json"), false, json!({"a": [1, "x"]})),
            "json",
            json!({"a": [1, "x"]}),
        ),
        (
            param(b("jsonb"), false, json!("a string")),
            "jsonb",
            json!("a string"),
        ),
        (
            param(b("bytea"), false, json!("\\x4142")),
            "bytea",
            json!("\\x4142"),
        ),
        (
            param(b("int4"), true, json!([1, 2, 3])),
            "integer[]",
            json!([1, 2, 3]),
        ),
        (
            param(b("text"), true, json!(["a", "b\"c"])),
            "text[]",
            json!(["a", "b\"c"]),
        ),
        (param(b("int4"), false, Value::Null), "integer", Value::Null),
        (
            param(
                SqlType::Named {
                    schema: "public".into(),
                    name: "mood".into(),
                },
                false,
                json!("sad"),
            ),
            "text",
            json!("sad"),
        ),
    ];
    // $n::type, as the renderer writes it; the value comes back as JSON.
    let fields: Vec<String> = cases
        .iter()
        .enumerate()
        .map(|(i, (p, _, _))| {
            let ty = match &p.ty {
                SqlType::Builtin(name) => format!("\"{name}\""),
                SqlType::Named { schema, name } => format!("\"{schema}\".\"{name}\""),
                SqlType::Stored(_) | SqlType::Spatial { .. } => {
                    unreachable!("the cases bind rendered types")
                }
            };
            let n = i + 1;
            let list = if p.list { "[]" } else { "" };
            format!("'v{n}', to_json(${n}::{ty}{list})")
        })
        .collect();
    let statement = Statement {
        sql: format!(
            "SELECT json_build_object({}, 'marker', 'typed-params')::text",
            fields.join(", ")
        ),
        params: cases.iter().map(|(p, _, _)| p.clone()).collect(),
        compact: false,
    };
    let got = json(&db, &statement).await;
    for (i, (_, _, want)) in cases.iter().enumerate() {
        let key = format!("v{}", i + 1);
        assert_eq!(&got[&key], want, "{key}: {:?}", cases[i].0);
    }

    let declared = json(
        &db,
        &plain(
            "SELECT json_agg(t::text ORDER BY n)::text FROM pg_prepared_statements,
               unnest(parameter_types) WITH ORDINALITY AS u(t, n)
             WHERE statement LIKE '%''typed-params''%' AND statement NOT LIKE '%pg_prepared%'",
        ),
    )
    .await;
    let want: Vec<&str> = cases.iter().map(|(_, ty, _)| *ty).collect();
    assert_eq!(declared, json!(want));
}
