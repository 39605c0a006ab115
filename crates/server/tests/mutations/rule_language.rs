//! The permission-rule language as Hasura's metadata writes it: every form of its
//! permission documentation goes in through `--hasura-metadata`, one role per rule,
//! and each role must see exactly the rows the same rule written as plain SQL finds.
//! Rules Grafton cannot read stop start-up with the table, role and path.

use crate::*;
use serde_json::{json, Value};

/// A rule, the table it guards, and the same condition in SQL (`d` is the row).
struct Case {
    table: &'static str,
    rule: &'static str,
    sql: &'static str,
    /// Operators only PostgreSQL has (SQLite refuses them at start-up).
    postgres_only: bool,
}

const fn doc(rule: &'static str, sql: &'static str) -> Case {
    Case {
        table: "documents",
        rule,
        sql,
        postgres_only: false,
    }
}

const fn pg(table: &'static str, rule: &'static str, sql: &'static str) -> Case {
    Case {
        table,
        rule,
        sql,
        postgres_only: true,
    }
}

/// Session: user 1 of organisation 1, allowed ids {1,4,5}.
const CASES: &[Case] = &[
    doc("{}", "TRUE"),
    doc(r#"{"id": {"_eq": 1}}"#, "d.id = 1"),
    doc(r#"{"id": 2}"#, "d.id = 2"),
    doc(r#"{"owner_id": "X-Hasura-User-Id"}"#, "d.owner_id = 1"),
    doc(
        r#"{"owner_id": {"$eq": "x-hasura-user-id"}}"#,
        "d.owner_id = 1",
    ),
    doc(r#"{"id": {"_ne": 1}}"#, "d.id <> 1"),
    doc(r#"{"id": {"$neq": 1}}"#, "d.id <> 1"),
    doc(
        r#"{"_or": [{"id": 1}, {"id": {"_gt": 4}}]}"#,
        "d.id = 1 OR d.id > 4",
    ),
    doc(
        r#"{"$and": [{"org_id": "X-Hasura-Org-Id"}, {"$not": {"id": {"$in": [1]}}}]}"#,
        "d.org_id = 1 AND NOT d.id IN (1)",
    ),
    doc(r#"{"$or": []}"#, "FALSE"),
    doc(r#"{"_and": []}"#, "TRUE"),
    doc(
        r#"{"id": {"_in": "X-Hasura-Allowed-Ids"}}"#,
        "d.id IN (1, 4, 5)",
    ),
    doc(
        r#"{"id": {"$nin": "X-Hasura-Allowed-Ids"}}"#,
        "d.id NOT IN (1, 4, 5)",
    ),
    doc(
        r#"{"id": {"_gte": 2, "_lte": 4}}"#,
        "d.id >= 2 AND d.id <= 4",
    ),
    doc(r#"{"id": {"$lt": 3}}"#, "d.id < 3"),
    doc(r#"{"title": {"_like": "acme%"}}"#, "d.title LIKE 'acme%'"),
    doc(
        r#"{"title": {"$ilike": "%PLAN"}}"#,
        "lower(d.title) LIKE '%plan'",
    ),
    doc(
        r#"{"title": {"_nlike": "%plan"}}"#,
        "d.title NOT LIKE '%plan'",
    ),
    doc(
        r#"{"title": {"_nilike": "ACME%"}}"#,
        "lower(d.title) NOT LIKE 'acme%'",
    ),
    doc(r#"{"owner_id": {"_is_null": true}}"#, "d.owner_id IS NULL"),
    doc(r#"{"body": {"$is_null": false}}"#, "d.body IS NOT NULL"),
    doc(
        r#"{"owner": {"org_id": {"_eq": "X-Hasura-Org-Id"}}}"#,
        "EXISTS (SELECT 1 FROM users u WHERE u.id = d.owner_id AND u.org_id = 1)",
    ),
    // Through the owner's key only: on PostgreSQL, whose foreign key is enforced,
    // written on documents.owner_id instead of probing users (the ownerless
    // document, inserted by the test, must stay out); under `_not` the probe stays.
    doc(
        r#"{"owner": {"id": {"_eq": "X-Hasura-User-Id"}}}"#,
        "EXISTS (SELECT 1 FROM users u WHERE u.id = d.owner_id AND u.id = 1)",
    ),
    doc(
        r#"{"owner": {"_or": [{"id": {"_gt": 1}}, {"id": {"_is_null": true}}]}}"#,
        "EXISTS (SELECT 1 FROM users u WHERE u.id = d.owner_id AND (u.id > 1 OR u.id IS NULL))",
    ),
    doc(
        r#"{"owner": {"_not": {"id": {"_in": [2, 3]}}}}"#,
        "EXISTS (SELECT 1 FROM users u WHERE u.id = d.owner_id AND NOT u.id IN (2, 3))",
    ),
    doc(
        r#"{"_not": {"owner": {"id": {"_eq": 1}}}}"#,
        "NOT EXISTS (SELECT 1 FROM users u WHERE u.id = d.owner_id AND u.id = 1)",
    ),
    doc(
        r#"{"organisation": {"members": {"id": "X-Hasura-User-Id"}}}"#,
        "EXISTS (SELECT 1 FROM users u WHERE u.org_id = d.org_id AND u.id = 1)",
    ),
    doc(
        r#"{"owner_id": {"_ceq": "org_id"}}"#,
        "d.owner_id = d.org_id",
    ),
    doc(
        r#"{"owner_id": {"$cne": ["org_id"]}}"#,
        "d.owner_id <> d.org_id",
    ),
    doc(
        r#"{"owner_id": {"_cneq": "org_id"}}"#,
        "d.owner_id <> d.org_id",
    ),
    doc(
        r#"{"owner_id": {"_cgt": "org_id"}}"#,
        "d.owner_id > d.org_id",
    ),
    doc(
        r#"{"owner_id": {"_cgte": "org_id"}}"#,
        "d.owner_id >= d.org_id",
    ),
    doc(
        r#"{"owner_id": {"$clt": "org_id"}}"#,
        "d.owner_id < d.org_id",
    ),
    doc(
        r#"{"owner_id": {"_clte": ["$", "id"]}}"#,
        "d.owner_id <= d.id",
    ),
    doc(
        r#"{"owner": {"org_id": {"_ceq": ["$", "org_id"]}}}"#,
        "EXISTS (SELECT 1 FROM users u WHERE u.id = d.owner_id AND u.org_id = d.org_id)",
    ),
    doc(
        r#"{"_exists": {"_table": {"schema": "public", "name": "users"}, "_where": {"id": "X-Hasura-User-Id", "name": "alice"}}}"#,
        "EXISTS (SELECT 1 FROM users u WHERE u.id = 1 AND u.name = 'alice')",
    ),
    doc(
        r#"{"$exists": {"_table": "users", "_where": {"name": "bob"}}, "id": {"_gt": 3}}"#,
        "EXISTS (SELECT 1 FROM users u WHERE u.name = 'bob') AND d.id > 3",
    ),
    doc(
        r#"{"_exists": {"_table": "users", "_where": {"_and": [{"id": {"_eq": "X-Hasura-User-Id"}}, {"org_id": {"_ceq": ["$", "org_id"]}}]}}}"#,
        "EXISTS (SELECT 1 FROM users u WHERE u.id = 1 AND u.org_id = d.org_id)",
    ),
    // Aggregate predicates over an array relationship (Hasura's `<rel>_aggregate`).
    doc(
        r#"{"organisation": {"members_aggregate": {"count": {"predicate": {"_gte": 2}}}}}"#,
        "EXISTS (SELECT 1 FROM organisations o WHERE o.id = d.org_id AND (SELECT count(*) FROM users u WHERE u.org_id = o.id) >= 2)",
    ),
    doc(
        r#"{"organisation": {"members_aggregate": {"count": {"predicate": {"_eq": "X-Hasura-User-Id"}, "filter": {"name": {"_neq": "bob"}}, "arguments": ["name"], "distinct": true}}}}"#,
        "EXISTS (SELECT 1 FROM organisations o WHERE o.id = d.org_id AND (SELECT count(DISTINCT u.name) FROM users u WHERE u.org_id = o.id AND u.name <> 'bob') = 1)",
    ),
    pg(
        "documents",
        r#"{"title": {"_similar": "(acme|bob)%"}}"#,
        "d.title SIMILAR TO '(acme|bob)%'",
    ),
    pg(
        "documents",
        r#"{"title": {"$regex": "^a"}}"#,
        "d.title ~ '^a'",
    ),
    pg(
        "documents",
        r#"{"title": {"_iregex": "^A"}}"#,
        "d.title ~* '^A'",
    ),
    pg(
        "documents",
        r#"{"title": {"_nregex": "plan$"}}"#,
        "d.title !~ 'plan$'",
    ),
    pg(
        "documents",
        r#"{"title": {"$niregex": "PLAN$"}}"#,
        "d.title !~* 'PLAN$'",
    ),
    pg(
        "documents",
        r#"{"title": {"_nsimilar": "%plan"}}"#,
        "d.title NOT SIMILAR TO '%plan'",
    ),
    // jsonb on both backends: the SQL runs on PostgreSQL only, the answer must match on both.
    pg(
        "venues",
        r#"{"extra": {"_contains": {"tags": ["a"]}}}"#,
        r#"d.extra @> '{"tags": ["a"]}'"#,
    ),
    pg(
        "venues",
        r#"{"extra": {"$contains": "a"}}"#,
        r#"d.extra @> '"a"'"#,
    ),
    pg(
        "venues",
        r#"{"extra": {"_contained_in": {"tags": ["a", "b"], "public": true, "x": 1}}}"#,
        r#"d.extra <@ '{"tags": ["a", "b"], "public": true, "x": 1}'"#,
    ),
    pg(
        "venues",
        r#"{"extra": {"_has_key": "owner"}}"#,
        "d.extra ? 'owner'",
    ),
    pg("venues", r#"{"extra": {"$has_key": "a"}}"#, "d.extra ? 'a'"),
    pg(
        "venues",
        r#"{"extra": {"_cast": {"String": {"_ilike": "%OWNER%"}}}}"#,
        "d.extra::text ILIKE '%OWNER%'",
    ),
    pg(
        "venues",
        r#"{"extra": {"_has_keys_any": ["public", "owner"]}}"#,
        "d.extra ?| array['public', 'owner']",
    ),
    pg(
        "venues",
        r#"{"extra": {"$has_keys_all": ["tags", "public"]}}"#,
        "d.extra ?& array['tags', 'public']",
    ),
];

/// jsonb rows the venue rules are tried on (removed again at the end).
const JSON_VENUES: &str = r#"mutation { insert_venues(objects: [
  {name: "j1", extra: {tags: ["a", "b"], public: true}},
  {name: "j2", extra: {tags: ["b"], owner: {id: 1}}},
  {name: "j3", extra: ["a", "c"]},
  {name: "j4"}
]) { affected_rows } }"#;

/// A document without an owner (removed again at the end).
const ORPHAN_DOCUMENT: &str =
    r#"mutation { insert_documents_one(object: {id: 60, org_id: 1, title: "orphan"}) { id } }"#;

fn key_column(table: &str) -> &'static str {
    if table == "venues" {
        "name"
    } else {
        "id"
    }
}

/// A metadata file giving role `r<i>` select on its case's table under its rule.
fn metadata(cases: &[(usize, &Case)]) -> std::path::PathBuf {
    let mut docs = String::new();
    let mut venues = String::new();
    for (i, c) in cases {
        let list = if c.table == "venues" {
            &mut venues
        } else {
            &mut docs
        };
        let key = key_column(c.table);
        list.push_str(&format!(
            "    - role: r{i}\n      permission: {{columns: [{key}], filter: {}}}\n",
            c.rule
        ));
    }
    let yaml = format!(
        r#"- table: {{schema: public, name: documents}}
  object_relationships:
    - {{name: owner, using: {{foreign_key_constraint_on: owner_id}}}}
    - {{name: organisation, using: {{foreign_key_constraint_on: org_id}}}}
  select_permissions:
{docs}- table: {{schema: public, name: venues}}
  select_permissions:
{venues}- table: {{schema: public, name: organisations}}
  array_relationships:
    - name: members
      using: {{foreign_key_constraint_on: {{column: org_id, table: {{schema: public, name: users}}}}}}
- table: {{schema: public, name: users}}
"#
    );
    let path = std::env::temp_dir().join(format!(
        "grafton-rules-{}-{}.yaml",
        std::process::id(),
        cases.len()
    ));
    std::fs::write(&path, yaml).expect("metadata file");
    path
}

/// The keys of the rows `sql` selects, straight from the database.
fn rows_by_sql(db: Db, table: &str, sql: &str) -> Vec<Value> {
    let key = key_column(table);
    let query = format!("SELECT d.{key} FROM {table} d WHERE {sql} ORDER BY d.{key}");
    match db {
        Db::Sqlite => {
            let conn = rusqlite::Connection::open(setup_sqlite()).expect("open SQLite");
            let mut stmt = conn.prepare(&query).expect(&query);
            let rows = stmt
                .query_map([], |r| r.get::<_, rusqlite::types::Value>(0))
                .expect("rows");
            rows.map(|r| match r.expect("row") {
                rusqlite::types::Value::Integer(i) => json!(i),
                rusqlite::types::Value::Text(t) => json!(t),
                other => panic!("unexpected {other:?}"),
            })
            .collect()
        }
        Db::Postgres => {
            let url = setup_postgres();
            common::on_server_runtime(async move {
                let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
                    .await
                    .expect("connect");
                tokio::spawn(conn);
                let text = format!("SELECT d.{key}::text FROM ({query}) d");
                let rows = client.query(&text, &[]).await.expect(&query);
                rows.iter()
                    .map(|r| {
                        let v: String = r.get(0);
                        v.parse::<i64>().map(|i| json!(i)).unwrap_or(json!(v))
                    })
                    .collect()
            })
        }
    }
}

#[tokio::test]
async fn every_rule_form_sees_what_its_sql_sees() {
    let _g = serial().await;
    for db in BOTH {
        ok(db, JSON_VENUES, json!(null)).await;
        ok(db, ORPHAN_DOCUMENT, json!(null)).await;
    }
    for db in BOTH {
        let cases: Vec<(usize, &Case)> = CASES
            .iter()
            .enumerate()
            .filter(|(_, c)| db == Db::Postgres || !c.postgres_only || c.table == "venues")
            .collect();
        let config = grafton_schema::hasura::load(&metadata(&cases)).expect("metadata loads");
        let database_url = match db {
            Db::Sqlite => setup_sqlite(),
            Db::Postgres => setup_postgres(),
        };
        let base = common::start_server(grafton_server::ServeOptions {
            database_url,
            port: 0,
            config,
            ..Default::default()
        });
        for (i, c) in cases {
            let role = format!("r{i}");
            let headers = [
                ("x-hasura-role", role.as_str()),
                ("x-hasura-user-id", "1"),
                ("x-hasura-org-id", "1"),
                ("x-hasura-allowed-ids", "{1,4,5}"),
            ];
            let key = key_column(c.table);
            let (filter, scope) = if c.table == "venues" {
                (r#"where: {name: {_like: "j%"}}, "#, "d.name LIKE 'j%' AND ")
            } else {
                ("", "")
            };
            let query = format!(
                "{{ {}({filter}order_by: {{{key}: asc}}) {{ {key} }} }}",
                c.table
            );
            let (_, v, _) = common::post_with_headers(
                &format!("{base}/v1/graphql"),
                &headers,
                &json!({ "query": query }),
            )
            .await;
            let got: Vec<Value> = v["data"][c.table]
                .as_array()
                .unwrap_or_else(|| panic!("{db:?} {}: {v}", c.rule))
                .iter()
                .map(|row| row[key].clone())
                .collect();
            let sql = format!("{scope}({})", c.sql);
            let want = rows_by_sql(Db::Postgres, c.table, &sql);
            if !c.postgres_only {
                assert_eq!(rows_by_sql(Db::Sqlite, c.table, &sql), want, "{sql}");
            }
            assert_eq!(got, want, "{db:?}: rule {} vs SQL {}", c.rule, c.sql);
        }
        // An array session variable as a JSON array works too; one that is no array
        // is a data exception, and nothing is read.
        let role = CASES
            .iter()
            .position(|c| c.rule.contains(r#"{"_in": "X-Hasura-Allowed-Ids"}"#))
            .map(|i| format!("r{i}"))
            .expect("the _in case");
        for (ids, want) in [
            ("[4, 5]", json!({"documents": [{"id": 4}, {"id": 5}]})),
            ("{}", json!({"documents": []})),
        ] {
            let headers = [
                ("x-hasura-role", role.as_str()),
                ("x-hasura-allowed-ids", ids),
            ];
            let body = json!({"query": "{ documents(order_by: {id: asc}) { id } }"});
            let (_, v, _) =
                common::post_with_headers(&format!("{base}/v1/graphql"), &headers, &body).await;
            assert_eq!(v["data"], want, "{db:?}: {ids}: {v}");
        }
        let headers = [
            ("x-hasura-role", role.as_str()),
            ("x-hasura-allowed-ids", "1,4"),
        ];
        let body = json!({"query": "{ documents { id } }"});
        let (_, v, _) =
            common::post_with_headers(&format!("{base}/v1/graphql"), &headers, &body).await;
        assert_eq!(
            v["errors"][0]["extensions"]["code"], "data-exception",
            "{db:?}: {v}"
        );
    }
    for db in BOTH {
        ok(
            db,
            r#"mutation { delete_venues(where: {name: {_like: "j%"}}) { affected_rows } }"#,
            json!(null),
        )
        .await;
        ok(
            db,
            r#"mutation { delete_documents(where: {title: {_eq: "orphan"}}) { affected_rows } }"#,
            json!(null),
        )
        .await;
    }
}

/// Builds an engine over `db` with one rule for role `r` on `documents`; the error.
fn start_error(db: Db, rule: &str) -> String {
    let yaml = format!(
        "tables:\n  documents:\n    permissions:\n      r:\n        select: {{columns: [id], filter: {rule}}}\n"
    );
    let config: grafton_schema::Config = serde_norway::from_str(&yaml).expect("config parses");
    let database_url = match db {
        Db::Sqlite => setup_sqlite(),
        Db::Postgres => setup_postgres(),
    };
    engine_error(database_url, config)
}

#[tokio::test]
async fn rules_it_cannot_read_stop_start_up_with_their_path() {
    let _g = serial().await;
    for db in BOTH {
        for (rule, path, why) in [
            (
                r#"{id: {_eqq: 1}}"#,
                "select.filter.id._eqq",
                "unknown operator",
            ),
            (
                r#"{nosuch: 1}"#,
                "select.filter.nosuch",
                "not a column or relationship",
            ),
            (
                r#"{id: "abc"}"#,
                "select.filter.id",
                "expected a value of type",
            ),
            (
                r#"{id: null}"#,
                "select.filter.id",
                "expected a value of type",
            ),
            (r#"{_or: {id: 1}}"#, "select.filter._or", "expected a list"),
            (
                r#"{owner: {_not: 3}}"#,
                "select.filter.owner._not",
                "must be an object",
            ),
            (
                r#"{id: {_in: 1}}"#,
                "select.filter.id._in",
                "expected a list",
            ),
            (
                r#"{id: {_ceq: "title"}}"#,
                "select.filter.id._ceq",
                "another type",
            ),
            (
                r#"{id: {_ceq: ["owner", "id"]}}"#,
                "select.filter.id._ceq",
                "expected a column",
            ),
            (
                r#"{_exists: {_table: nosuch, _where: {}}}"#,
                "select.filter._exists._table",
                "no table",
            ),
            (
                r#"{title: {_has_key: "a"}}"#,
                "select.filter.title._has_key",
                "does not apply",
            ),
            (
                r#"{_eq: 1}"#,
                "select.filter._eq",
                "must be inside a column",
            ),
            (
                r#"{title: {_cast: {String: {_eq: "x"}}}}"#,
                "select.filter.title._cast",
                "jsonb",
            ),
        ] {
            let message = start_error(db, rule);
            for part in ["role 'r'", "on documents", path, why] {
                assert!(
                    message.contains(part),
                    "{db:?}: {rule}: '{part}' missing from: {message}"
                );
            }
        }
    }
    // Regular expressions are PostgreSQL's: SQLite refuses them rather than ignore them.
    let message = start_error(Db::Sqlite, r#"{title: {_regex: "^a"}}"#);
    assert!(message.contains("does not apply"), "{message}");
}
