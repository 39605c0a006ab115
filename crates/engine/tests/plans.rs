//! Golden plans: what each request compiles to, on both dialects, without a
//! database. Every folder under `tests/plans/<area>/<case>/` holding a
//! `request.graphql` is a case: its `variables.json` (optional) and `session.json`
//! (optional: `{"role": "user", "vars": {…}, "backends": ["postgres"]}`; admin,
//! user id 5 and org id 7, both backends by default) are planned over the shared fixture schema
//! (`schema.sql`, plus `postgres.sql` on PostgreSQL and `sqlite.sql` on SQLite;
//! `config.yaml`), and the
//! pretty-printed SQL, its parameters and the cost are compared with the case's
//! `expected.txt`. `UPDATE_GOLDEN=1 cargo test -p grafton-engine --test plans`
//! writes them instead: review the diff as carefully as code.
//!
//! The PostgreSQL catalog is a fixture too (`postgres_catalog.json`), introspected
//! from a real server loaded with the SQL files by the test that keeps it true;
//! SQLite's is introspected from an in-memory database at each run.

use grafton_catalog::{Backend, Catalog};
use grafton_engine::{EngineError, EngineOptions, GraphqlRequest, Schemas};
use grafton_schema::{Config, Convention};
use grafton_sql::{ParamValue, Statement};
use serde_json::{Map, Value};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/plans")
}

fn updating() -> bool {
    std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Compares `actual` with the file (or writes it when updating); the mismatch, if any.
fn golden(path: &Path, actual: &str) -> Option<String> {
    if updating() {
        std::fs::write(path, actual).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        return None;
    }
    let expected = std::fs::read_to_string(path).unwrap_or_default();
    (expected != actual).then(|| {
        let first = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| expected.lines().count().min(actual.lines().count()));
        format!(
            "{}: differs from line {} (expected {:?}, got {:?})",
            path.display(),
            first + 1,
            expected.lines().nth(first).unwrap_or("<end>"),
            actual.lines().nth(first).unwrap_or("<end>")
        )
    })
}

fn sqlite_catalog() -> Catalog {
    let conn = rusqlite::Connection::open_in_memory().expect("sqlite");
    conn.execute_batch(&read(&fixtures().join("schema.sql")))
        .expect("schema.sql on SQLite");
    conn.execute_batch(&read(&fixtures().join("sqlite.sql")))
        .expect("sqlite.sql on SQLite");
    grafton_catalog::introspect_sqlite(&conn)
        .expect("introspect")
        .catalog
}

fn postgres_catalog() -> Catalog {
    serde_json::from_str(&read(&fixtures().join("postgres_catalog.json")))
        .expect("postgres_catalog.json")
}

/// The config: `config.yaml`, without its PostgreSQL-only parts (functions and
/// computed fields) on SQLite.
fn config(backend: Backend) -> Config {
    let mut yaml: serde_norway::Value =
        serde_norway::from_str(&read(&fixtures().join("config.yaml"))).expect("config.yaml");
    if backend == Backend::Sqlite {
        if let Some(map) = yaml.as_mapping_mut() {
            map.remove("functions");
            for (_, table) in map
                .get_mut("tables")
                .and_then(|t| t.as_mapping_mut())
                .into_iter()
                .flatten()
            {
                let Some(table) = table.as_mapping_mut() else {
                    continue;
                };
                table.remove("computed_fields");
                for (_, role) in table
                    .get_mut("permissions")
                    .and_then(|p| p.as_mapping_mut())
                    .into_iter()
                    .flatten()
                {
                    if let Some(select) = role.get_mut("select").and_then(|s| s.as_mapping_mut()) {
                        select.remove("computed_fields");
                    }
                }
            }
        }
    }
    serde_norway::from_value(yaml).expect("config.yaml is a Grafton config")
}

fn schemas(backend: Backend) -> Schemas {
    let catalog = match backend {
        Backend::Postgres => postgres_catalog(),
        Backend::Sqlite => sqlite_catalog(),
    };
    let options = EngineOptions {
        database_url: String::new(),
        config: config(backend),
        naming: Convention::default(),
        pool_size: 1,
        read_replicas: Vec::new(),
        primary_after_write: std::time::Duration::ZERO,
        schemas: vec!["public".into()],
        redis_url: None,
        strict_graphql: false,
        remote_schema_permissions: false,
        strict_metadata: true,
        limits: grafton_engine::ServerLimits::default(),
    };
    grafton_engine::schemas_from_catalog(&catalog, &options, backend)
        .unwrap_or_else(|e| panic!("the fixture schema builds on {backend:?}: {e}"))
}

fn cases(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read_dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .collect();
    entries.sort();
    for entry in entries {
        if entry.join("request.graphql").is_file() {
            out.push(entry);
        } else {
            cases(&entry, out);
        }
    }
}

fn pretty(sql: &str) -> String {
    let options = sqlformat::FormatOptions {
        indent: sqlformat::Indent::Spaces(2),
        uppercase: Some(true),
        lines_between_queries: 1,
        ..Default::default()
    };
    sqlformat::format(sql, &sqlformat::QueryParams::None, &options)
}

fn describe(statement: &Statement, out: &mut String) {
    out.push_str(&pretty(&statement.sql));
    out.push('\n');
    for (i, p) in statement.params.iter().enumerate() {
        let ty = p.ty.to_string();
        let list = if p.list { "[]" } else { "" };
        let value = match &p.value {
            ParamValue::Variable(name) => format!("${name}"),
            ParamValue::Literal(value) => value.to_string(),
        };
        let _ = writeln!(out, "-- ${}: {ty}{list} = {value}", i + 1);
    }
    // Whether the executor passes its JSON on unscanned (`Statement::compact`).
    if !statement.compact {
        out.push_str("-- JSON compacted by Grafton\n");
    }
}

/// Why a request was refused, with the validation messages when there are some.
fn refusal(e: EngineError) -> String {
    match e {
        EngineError::Validation(errors) => errors
            .iter()
            .map(|e| e.message.clone())
            .collect::<Vec<_>>()
            .join("; "),
        other => other.to_string(),
    }
}

fn plan_text(case: &Path, postgres: &Schemas, sqlite: &Schemas) -> String {
    let query = read(&case.join("request.graphql"));
    let variables: Map<String, Value> = match std::fs::read_to_string(case.join("variables.json")) {
        Ok(text) => serde_json::from_str(&text).expect("variables.json"),
        Err(_) => Map::new(),
    };
    let session: Value = match std::fs::read_to_string(case.join("session.json")) {
        Ok(text) => serde_json::from_str(&text).expect("session.json"),
        Err(_) => Value::Null,
    };
    let role = session["role"].as_str().filter(|r| *r != "admin");
    let vars: Map<String, Value> = match session["vars"].as_object() {
        Some(vars) => vars.clone(),
        None => serde_json::json!({"x-hasura-user-id": "5", "x-hasura-org-id": "7"})
            .as_object()
            .cloned()
            .unwrap_or_default(),
    };
    let backends: Vec<&str> = match session["backends"].as_array() {
        Some(list) => list.iter().filter_map(Value::as_str).collect(),
        None => vec!["postgres", "sqlite"],
    };
    let request = GraphqlRequest {
        query,
        operation_name: None,
        variables,
        persisted_hash: None,
    };
    let mut out = String::new();
    for (name, schemas) in [("postgres", postgres), ("sqlite", sqlite)] {
        if !backends.contains(&name) {
            continue;
        }
        let _ = writeln!(out, "==== {name}, role {}", role.unwrap_or("admin"));
        let explained = schemas
            .planner_for(role, false)
            .map_err(EngineError::from)
            .and_then(|p| p.explain(&request, &vars))
            .map_err(refusal);
        match explained {
            Ok(explained) => {
                let _ = writeln!(out, "-- {}, cost {}", explained.operation, explained.cost);
                if explained
                    .statements
                    .iter()
                    .any(|(w, _)| *w == "transaction")
                {
                    out.push_str(
                        "-- one transaction; each statement is built from the rows the one \
                         before wrote (here a dry run's row of zeros)\n",
                    );
                }
                for (what, statement) in &explained.statements {
                    let _ = writeln!(out, "-- {what}:");
                    describe(statement, &mut out);
                }
            }
            Err(e) => {
                let _ = writeln!(out, "-- refused: {e}");
            }
        }
    }
    out
}

#[test]
fn every_case_plans_as_its_golden_file_says() {
    let (postgres, sqlite) = (schemas(Backend::Postgres), schemas(Backend::Sqlite));
    let mut found = Vec::new();
    cases(&fixtures(), &mut found);
    assert!(found.len() >= 80, "only {} cases", found.len());
    let mismatches: Vec<String> = found
        .iter()
        .filter_map(|case| {
            golden(
                &case.join("expected.txt"),
                &plan_text(case, &postgres, &sqlite),
            )
        })
        .collect();
    assert!(
        mismatches.is_empty(),
        "{} of {} golden plans differ (UPDATE_GOLDEN=1 rewrites them; review the diff):\n{}",
        mismatches.len(),
        found.len(),
        mismatches.join("\n")
    );
}

/// The schemas each role sees, as SDL: what the cases are written against.
#[test]
fn the_fixture_schema_is_as_its_golden_sdl_says() {
    let mut mismatches = Vec::new();
    // Each role on PostgreSQL (the superset); admin's on SQLite too.
    for (name, backend) in [("postgres", Backend::Postgres), ("sqlite", Backend::Sqlite)] {
        let schemas = schemas(backend);
        let roles: &[Option<&str>] = match backend {
            Backend::Postgres => &[None, Some("user"), Some("editor"), Some("user_editor")],
            Backend::Sqlite => &[None],
        };
        for &role in roles {
            let planner = schemas.planner_for(role, false).expect("planner");
            let file = format!("sdl/{name}.{}.graphql", role.unwrap_or("admin"));
            mismatches.extend(golden(&fixtures().join(file), &planner.model().sdl));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

/// `postgres_catalog.json` is what PostgreSQL reports for `schema.sql` and
/// `postgres.sql` (needs the test cluster; `UPDATE_GOLDEN=1` rewrites it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_postgres_catalog_fixture_matches_its_sql() {
    let url = grafton_testkit::fresh_database("golden_plans");
    let mut script = read(&fixtures().join("schema.sql"));
    script.push_str(&read(&fixtures().join("postgres.sql")));
    grafton_testkit::psql(&url, script.as_bytes());
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .expect("connect");
    tokio::spawn(connection);
    let introspected = grafton_catalog::introspect_postgres(&client, &["public".to_owned()])
        .await
        .expect("introspect");
    let json = serde_json::to_string_pretty(&introspected.catalog).expect("json") + "\n";
    let mismatch = golden(&fixtures().join("postgres_catalog.json"), &json);
    assert!(mismatch.is_none(), "{}", mismatch.unwrap_or_default());
}
