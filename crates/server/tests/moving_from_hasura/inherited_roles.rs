//! Inherited roles (`inherited_roles.yaml`): a role made of two roles that read
//! overlapping rows and different columns sees the union of their rows, and each
//! column only on the rows of a role granting it (NULL elsewhere), in fields,
//! filters, ordering, aggregates and a mutation's `returning`; writes are inherited
//! only where the roles agree.

use crate::{databases_with, metadata, post, serve};
use serde_json::json;

const FIXTURE: &str = include_str!("../fixtures/sql/inherited_roles.sql");

/// `own` reads the caller's rows with salaries; `team` reads the engineers with
/// their department. Both may update names, with different filters, and only `own`
/// may delete.
const EMPLOYEES: &str = r#"table: {name: employees, schema: public}
select_permissions:
  - role: own
    permission:
      columns: [id, name, salary]
      filter: {owner_id: {_eq: X-Hasura-User-Id}}
      allow_aggregations: true
  - role: team
    permission:
      columns: [id, name, dept]
      filter: {dept: {_eq: eng}}
update_permissions:
  - role: own
    permission:
      columns: [name]
      filter: {owner_id: {_eq: X-Hasura-User-Id}}
  - role: team
    permission:
      columns: [name]
      filter: {dept: {_eq: eng}}
delete_permissions:
  - role: own
    permission:
      filter: {owner_id: {_eq: X-Hasura-User-Id}}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_role_made_of_two_sees_each_column_only_where_a_parent_grants_it() {
    let dir = metadata("inherited-roles", &[("public_employees.yaml", EMPLOYEES)]);
    std::fs::write(
        dir.join("inherited_roles.yaml"),
        "- role_name: member\n  role_set: [own, team]\n",
    )
    .expect("inherited_roles.yaml");
    for url in databases_with("inherited_roles", FIXTURE) {
        let server = serve(&url, &dir).await;
        let body = post(
            &server,
            Some("member"),
            r#"{
              all: employees(order_by: {id: asc}) { id name dept salary }
              rich: employees(where: {salary: {_gt: 150}}) { id }
              eng: employees(where: {dept: {_eq: "eng"}}, order_by: {id: asc}) { id }
              by_salary: employees(order_by: [{salary: desc_nulls_last}, {id: asc}]) { id }
              employees_aggregate { aggregate { count sum { salary } } }
              t: __type(name: "employees") { fields { name type { kind name } } }
            }"#,
        )
        .await;
        // Row 1 both roles read; 2 only team (no salary); 3 only own (no dept); 4 neither.
        assert_eq!(
            body["data"]["all"],
            json!([
                {"id": 1, "name": "Ada", "dept": "eng", "salary": 100},
                {"id": 2, "name": "Grace", "dept": "eng", "salary": null},
                {"id": 3, "name": "Linus", "dept": null, "salary": 300}
            ]),
            "{url}: {body}"
        );
        // Filters and sorting see the blanked values too: Grace's 200 is not there.
        assert_eq!(body["data"]["rich"], json!([{"id": 3}]), "{url}: {body}");
        assert_eq!(body["data"]["eng"], json!([{"id": 1}, {"id": 2}]), "{body}");
        assert_eq!(
            body["data"]["by_salary"],
            json!([{"id": 3}, {"id": 1}, {"id": 2}]),
            "{url}: {body}"
        );
        assert_eq!(
            body["data"]["employees_aggregate"]["aggregate"],
            json!({"count": 3, "sum": {"salary": 400}}),
            "{url}: {body}"
        );
        // A column only some parents read is nullable; one every parent reads is not.
        let field = |name: &str| {
            (body["data"]["t"]["fields"].as_array().into_iter().flatten())
                .find(|f| f["name"] == name)
                .map(|f| f["type"]["kind"].clone())
        };
        assert_eq!(field("salary"), Some(json!("SCALAR")), "{url}: {body}");
        assert_eq!(field("dept"), Some(json!("SCALAR")), "{body}");
        assert_eq!(field("name"), Some(json!("NON_NULL")), "{body}");

        // The parents themselves are unchanged: own's salary is non-null, team reads 2 rows.
        let own = post(&server, Some("own"), "{ employees { id salary } }").await;
        assert_eq!(own["data"]["employees"].as_array().map(Vec::len), Some(2));
        let team = post(&server, Some("team"), "{ employees { id dept } }").await;
        assert_eq!(team["data"]["employees"].as_array().map(Vec::len), Some(2));

        // Updates differ between the parents, deletes are own's alone: member may
        // delete (inherited) but not update (conflicting, so none).
        let schema = post(
            &server,
            Some("member"),
            r#"{ __schema { mutationType { fields { name } } } }"#,
        )
        .await;
        let mutations: Vec<&str> = (schema["data"]["__schema"]["mutationType"]["fields"]
            .as_array()
            .into_iter()
            .flatten())
        .filter_map(|f| f["name"].as_str())
        .collect();
        assert!(
            mutations.contains(&"delete_employees"),
            "{url}: {mutations:?}"
        );
        assert!(
            !mutations.contains(&"update_employees"),
            "{url}: {mutations:?}"
        );

        // A write's `returning` is read through the same blanking: Linus (own's row,
        // not an engineer) comes back without a department.
        let deleted = post(
            &server,
            Some("member"),
            r#"mutation { delete_employees(where: {id: {_in: [2, 3]}}) {
                 affected_rows returning { id name dept salary } } }"#,
        )
        .await;
        assert_eq!(
            deleted["data"]["delete_employees"],
            json!({"affected_rows": 1, "returning": [
                {"id": 3, "name": "Linus", "dept": null, "salary": 300}
            ]}),
            "{url}: {deleted}"
        );
        server.stop().await;
    }
}

/// The same from the config file: an explicit permission of the inherited role wins
/// over what it would inherit, an inherited role may be made of inherited roles,
/// and a cycle stops start-up naming it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explicit_permissions_win_roles_nest_and_cycles_stop_start_up() {
    let config = |inherited: &str| -> grafton_schema::Config {
        serde_norway::from_str(&format!(
            r#"
tables:
  employees:
    permissions:
      team:
        select: {{columns: [id, name, dept], filter: {{dept: {{_eq: eng}}}}}}
      member:
        select: {{columns: [id], filter: {{}}}}
inherited_roles: {inherited}
"#
        ))
        .expect("config")
    };
    for url in databases_with("inherited_roles_config", FIXTURE) {
        let server = grafton_server::start(&grafton_server::ServeOptions {
            database_url: url.clone(),
            port: 0,
            config: config("{member: [team], lead: [member, team]}"),
            ..Default::default()
        })
        .await
        .expect("server starts");
        // member's own select (every row, ids only) wins over team's.
        let member = post(&server, Some("member"), "{ employees { id } }").await;
        assert_eq!(
            member["data"]["employees"].as_array().map(Vec::len),
            Some(4)
        );
        let name = post(&server, Some("member"), "{ employees { name } }").await;
        assert_eq!(
            name["errors"][0]["extensions"]["code"], "validation-failed",
            "{url}: {name}"
        );
        // lead = member (ids of every row) + team (names of the engineers).
        let lead = post(
            &server,
            Some("lead"),
            "{ employees(order_by: {id: asc}) { id name } }",
        )
        .await;
        assert_eq!(
            lead["data"]["employees"],
            json!([
                {"id": 1, "name": "Ada"}, {"id": 2, "name": "Grace"},
                {"id": 3, "name": null}, {"id": 4, "name": null}
            ]),
            "{url}: {lead}"
        );
        server.stop().await;

        let cycle = grafton_server::start(&grafton_server::ServeOptions {
            database_url: url.clone(),
            port: 0,
            config: config("{a: [b], b: [team, a]}"),
            ..Default::default()
        })
        .await;
        match cycle {
            Err(e) => assert!(e.to_string().contains("a -> b -> a"), "{url}: {e}"),
            Ok(_) => panic!("{url}: a cycle of inherited roles started"),
        }
    }
}
