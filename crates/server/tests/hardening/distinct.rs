//! `distinct_on` for an inherited role on SQLite: the role's rows are read through a
//! redacting subquery, and SQLite (which has no `DISTINCT ON`) must get its
//! window-function stand-in there too, at the root, in a relationship and in an
//! `_aggregate`, answering as PostgreSQL does.

use crate::{databases, post_as, serve};
use serde_json::json;

const FIXTURE: &str = "
CREATE TABLE teams (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE employees (
  id INTEGER NOT NULL PRIMARY KEY,
  team_id INTEGER NOT NULL REFERENCES teams (id),
  dept TEXT NOT NULL,
  owner_id INTEGER NOT NULL,
  salary INTEGER NOT NULL
);
INSERT INTO teams VALUES (1, 'core');
INSERT INTO employees VALUES
  (1, 1, 'eng', 1, 100), (2, 1, 'eng', 2, 200), (3, 1, 'ops', 1, 300), (4, 1, 'ops', 2, 400), (5, 1, 'hr', 2, 500);
";

/// `own` reads its rows with salaries, `team` the engineers and operators without:
/// `member`, made of both, sees salaries only on its own rows.
const CONFIG: &str = r#"
inherited_roles: {member: [own, team]}
tables:
  teams:
    permissions:
      own: {select: {columns: [id, name], filter: {}}}
      team: {select: {columns: [id, name], filter: {}}}
  employees:
    permissions:
      own:
        select: {columns: [id, dept, salary], filter: {owner_id: {_eq: X-Hasura-User-Id}}, allow_aggregations: true}
      team:
        select: {columns: [id, dept], filter: {dept: {_in: [eng, ops]}}, allow_aggregations: true}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_inherited_role_gets_distinct_on_on_both_backends() {
    let query = r#"{
      employees(distinct_on: dept, order_by: [{dept: asc}, {id: desc}]) { id dept salary }
      teams { employees(distinct_on: dept, order_by: [{dept: asc}, {id: asc}]) { id } }
      employees_aggregate(distinct_on: dept, order_by: [{dept: asc}, {id: asc}]) { aggregate { count } nodes { id } }
    }"#;
    let mut answers = Vec::new();
    for url in databases("hardening_distinct", FIXTURE) {
        let server = serve(&url, CONFIG).await;
        let body = post_as(&server, Some("member"), "1", query).await;
        assert!(body.get("errors").is_none(), "{url}: {body}");
        answers.push(body);
    }
    // Rows 1–4 are team's; 1 and 3 are also own's (salaries shown); 5 is no one's.
    assert_eq!(
        answers[0]["data"]["employees"],
        json!([{"id": 2, "dept": "eng", "salary": null}, {"id": 4, "dept": "ops", "salary": null}])
    );
    assert_eq!(
        answers[0]["data"]["teams"],
        json!([{"employees": [{"id": 1}, {"id": 3}]}])
    );
    assert_eq!(
        answers[0]["data"]["employees_aggregate"],
        json!({"aggregate": {"count": 2}, "nodes": [{"id": 1}, {"id": 3}]})
    );
    assert_eq!(answers[0], answers[1], "SQLite and PostgreSQL differ");
}
