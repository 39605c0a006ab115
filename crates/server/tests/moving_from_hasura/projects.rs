//! Two public Hasura projects, unedited (issue 28): worldcoin's developer portal
//! (MIT: enum table, tracked functions, computed fields, an event trigger, actions,
//! cron triggers, native queries) and UWFlow (MIT: tables and views in the
//! `aggregate` and `queue` schemas, tracked functions). Their migrations are applied
//! with psql in order, their metadata loaded as it is, and Grafton must serve
//! exactly the tables they track, report everything it leaves out, and give each
//! role the schema snapshotted here. Sources and licences: `fixtures/hasura/*/`.

use grafton_server::ServeOptions;
use serde_norway::Value as Yaml;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

pub fn project(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hasura")
        .join(name)
        .join("hasura")
}

/// A fresh database with the project's migrations applied.
pub fn migrated(name: &'static str, project: &Path) -> String {
    grafton_testkit::migrated(name, project)
}

/// Every table entry the metadata's tables.yaml includes, by `schema.name`.
fn entries(project: &Path) -> Vec<(String, Yaml)> {
    let dir = project.join("metadata/databases/default/tables");
    let list: Vec<String> = serde_norway::from_str(
        &std::fs::read_to_string(dir.join("tables.yaml")).expect("tables.yaml"),
    )
    .expect("include list");
    list.iter()
        .map(|line| {
            let file = line.trim_start_matches("!include ").trim();
            let entry: Yaml = serde_norway::from_str(
                &std::fs::read_to_string(dir.join(file)).expect("table file"),
            )
            .expect("table entry");
            let table = &entry["table"];
            let schema = table["schema"].as_str().unwrap_or("public");
            let key = format!("{schema}.{}", table["name"].as_str().expect("table name"));
            (key, entry)
        })
        .collect()
}

/// The `schema.name` of every table the metadata tracks.
fn tracked(project: &Path) -> BTreeSet<String> {
    entries(project).into_iter().map(|(key, _)| key).collect()
}

/// One line per role: its root fields, then each object type's fields, sorted; a
/// reviewable summary of the schema the role gets.
fn summary(model: &grafton_schema::SchemaModel) -> String {
    let schema = &model.schema;
    let mut lines = Vec::new();
    for (name, ty) in &schema.types {
        if name.starts_with("__") {
            continue;
        }
        if let apollo_compiler::schema::ExtendedType::Object(o) = ty {
            let fields: Vec<&str> = o.fields.keys().map(|f| f.as_str()).collect();
            lines.push(format!("{name}: {}", fields.join(" ")));
        }
    }
    lines.sort();
    lines.join("\n")
}

/// Loads the project and checks what is served; the database's URL.
async fn check(name: &'static str, roles: &[&str]) -> String {
    let project = project(name);
    let url = std::thread::spawn({
        let project = project.clone();
        move || migrated(name, &project)
    })
    .join()
    .expect("migrations apply");
    let config =
        grafton_schema::hasura::load(&project.join("metadata")).expect("metadata loads unedited");
    let options = ServeOptions {
        database_url: url.clone(),
        port: 0,
        config,
        ..ServeOptions::default()
    };
    let engine = grafton_server::build_engine(&options)
        .await
        .expect("the project starts");
    let schemas = engine.schemas();
    let left_out: Vec<String> = (schemas.left_out().iter())
        .map(|i| format!("{} | {}: {}", i.kind.name(), i.describe(), i.reason))
        .collect();
    insta::assert_snapshot!(format!("{name}_left_out"), left_out.join("\n"));

    // Exactly what the metadata tracks, less the tables reported as left out.
    let admin = schemas.planner_for(None, false).expect("admin").model();
    let served: BTreeSet<String> = (0..admin.tables.len())
        .map(|id| {
            let t = admin.table(id);
            format!("{}.{}", t.schema, t.name)
        })
        .collect();
    let dropped: BTreeSet<String> = (schemas.left_out().iter())
        .filter(|i| i.kind == grafton_schema::inconsistent::ObjectKind::Table)
        .map(|i| {
            if i.name.contains('.') {
                i.name.clone()
            } else {
                format!("public.{}", i.name)
            }
        })
        .collect();
    let expected: BTreeSet<String> = tracked(&project).difference(&dropped).cloned().collect();
    assert_eq!(served, expected, "{name}: served tables");
    // Each relationship the metadata names, under its name, and no other.
    let mut relationships = 0;
    for (key, entry) in entries(&project) {
        let Some(id) = (0..admin.tables.len())
            .find(|&id| format!("{}.{}", admin.table(id).schema, admin.table(id).name) == key)
        else {
            continue;
        };
        let fields = &admin.tables[id].fields;
        let named: BTreeSet<&str> = ["object_relationships", "array_relationships"]
            .iter()
            .filter_map(|k| entry[*k].as_sequence())
            .flatten()
            .filter_map(|r| r["name"].as_str())
            .collect();
        for rel in &named {
            assert!(
                fields.contains_key(*rel),
                "{name}: {key}.{rel} is not served"
            );
            relationships += 1;
        }
        let served: BTreeSet<&str> = (fields.iter())
            .filter(|(_, f)| {
                matches!(
                    f,
                    grafton_schema::TableField::Object(_) | grafton_schema::TableField::Array(_)
                )
            })
            .map(|(n, _)| n.as_str())
            .collect();
        assert_eq!(served, named, "{name}: {key}'s relationships");
    }
    assert!(
        relationships > 10,
        "{name}: only {relationships} relationships checked"
    );

    insta::assert_snapshot!(format!("{name}_admin"), summary(admin));
    for role in roles {
        let model = schemas
            .planner_for(Some(role), false)
            .expect("role")
            .model();
        insta::assert_snapshot!(format!("{name}_{role}"), summary(model));
    }
    url
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn developer_portal_loads_unedited() {
    let url = check(
        "developer-portal",
        &["user", "api_key", "service", "reviewer"],
    )
    .await;
    // Teams as admin and as three roles whose rules differ (a relationship to the
    // caller's memberships, a session variable, a column test), against plain SQL.
    grafton_testkit::psql(
        &url,
        b"INSERT INTO team (id, name) VALUES ('team_a', 'A'), ('team_b', 'B'), ('team_c', 'C');
          UPDATE team SET deleted_at = now() WHERE id = 'team_b';
          INSERT INTO \"user\" (id, email, ironclad_id) VALUES ('usr_1', 'one@example.com', 'i1'), ('usr_2', 'two@example.com', 'i2');
          INSERT INTO membership (user_id, team_id, role) VALUES
            ('usr_1', 'team_a', 'OWNER'), ('usr_1', 'team_b', 'MEMBER'), ('usr_2', 'team_c', 'OWNER');",
    );
    let config = grafton_schema::hasura::load(&project("developer-portal").join("metadata"))
        .expect("metadata");
    let server = grafton_server::start(&ServeOptions {
        database_url: url.clone(),
        port: 0,
        config,
        ..ServeOptions::default()
    })
    .await
    .expect("server starts");
    let by_sql = |condition: &str| -> serde_json::Value {
        let sql = format!(
            "SELECT coalesce(json_agg(json_build_object('id', t.id, 'name', t.name) ORDER BY t.id), '[]') \
             FROM team t WHERE {condition}"
        );
        serde_json::from_str(grafton_testkit::psql(&url, sql.as_bytes()).trim()).expect("JSON")
    };
    let cases = [
        (None, vec![], by_sql("true")),
        (
            Some("user"),
            vec![("x-hasura-user-id", "usr_1")],
            by_sql("t.deleted_at IS NULL AND EXISTS (SELECT 1 FROM membership m WHERE m.team_id = t.id AND m.user_id = 'usr_1')"),
        ),
        (Some("api_key"), vec![("x-hasura-team-id", "team_c")], by_sql("t.id = 'team_c'")),
        (Some("reviewer"), vec![], by_sql("t.deleted_at IS NULL")),
    ];
    for (role, session, expected) in cases {
        let mut headers = session;
        headers.extend(role.map(|r| ("x-hasura-role", r)));
        let query = serde_json::json!({"query": "{ team(order_by: {id: asc}) { id name } }"});
        let body = crate::post_body(&server, &query, &headers).await;
        assert_eq!(body["data"]["team"], expected, "{role:?}: {body}");
    }
    assert_eq!(by_sql("true").as_array().map(Vec::len), Some(3));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uwflow_loads_unedited() {
    let url = check("uwflow", &["anonymous", "user"]).await;
    // Its courses and their prerequisites (a relationship by foreign key, under
    // the metadata's name), as admin and as both roles, against plain SQL.
    grafton_testkit::psql(
        &url,
        b"INSERT INTO course (id, code, name) VALUES (1, 'cs135', 'Design'), (2, 'cs136', 'Algorithms'), (3, 'cs246', 'Objects');
          INSERT INTO course_prerequisite (course_id, prerequisite_id, is_corequisite) VALUES (2, 1, false), (3, 2, false), (3, 1, true);",
    );
    let sql = "SELECT coalesce(json_agg(json_build_object('code', c.code, 'name', c.name, 'prerequisites', \
        (SELECT coalesce(json_agg(json_build_object('is_corequisite', cp.is_corequisite, \
           'prerequisite', json_build_object('code', p.code)) ORDER BY cp.prerequisite_id), '[]') \
         FROM course_prerequisite cp JOIN course p ON p.id = cp.prerequisite_id WHERE cp.course_id = c.id)) \
        ORDER BY c.code), '[]') FROM course c";
    let expected: serde_json::Value =
        serde_json::from_str(grafton_testkit::psql(&url, sql.as_bytes()).trim())
            .expect("SQL's JSON");
    assert_eq!(expected.as_array().map(Vec::len), Some(3), "{expected}");
    let config =
        grafton_schema::hasura::load(&project("uwflow").join("metadata")).expect("metadata");
    let server = grafton_server::start(&ServeOptions {
        database_url: url,
        port: 0,
        config,
        ..ServeOptions::default()
    })
    .await
    .expect("server starts");
    let query = "{ course(order_by: {code: asc}) { code name \
        prerequisites(order_by: {prerequisite_id: asc}) { is_corequisite prerequisite { code } } } }";
    for role in [None, Some("anonymous"), Some("user")] {
        let body = crate::post(&server, role, query).await;
        assert_eq!(body["data"]["course"], expected, "{role:?}: {body}");
    }
    server.stop().await;
}
