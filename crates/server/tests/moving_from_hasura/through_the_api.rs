//! A real Hasura project moved the way its CI moves it (issue 31): its migrations
//! applied, then its metadata sent as `hasura metadata apply` sends it (one
//! `replace_metadata`, version 2, inconsistencies allowed) to an instance whose
//! store is empty. What is exported afterwards is what was exported by an instance
//! started from the files (`--metadata-from`), and every role gets the schema the
//! files give.

use crate::projects::{migrated, project};
use grafton_server::ServeOptions;
use serde_json::{json, Value};

const SECRET: &str = "moving-secret";

fn store_options(url: String) -> ServeOptions {
    let mut o = ServeOptions {
        database_url: url,
        port: 0,
        metadata_store: true,
        ..ServeOptions::default()
    };
    o.auth.admin_secret = Some(SECRET.into());
    o
}

async fn metadata(base: &str, body: Value) -> (u16, Value) {
    let response = reqwest::Client::new()
        .post(format!("{base}/v1/metadata"))
        .header("x-hasura-admin-secret", SECRET)
        .json(&body)
        .send()
        .await
        .expect("metadata request");
    let status = response.status().as_u16();
    (status, response.json().await.expect("JSON"))
}

/// Each role's SDL (admin's first), to compare two servers' schemas.
fn schemas(server: &grafton_server::Running, roles: &[&str]) -> Vec<String> {
    let schemas = server.engine.schemas();
    let mut out = vec![schemas.admin_model().schema.to_string()];
    for role in roles {
        let planner = schemas.planner_for(Some(role), false).expect("role schema");
        out.push(planner.model().schema.to_string());
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_applied_through_the_api_serves_what_its_files_serve() {
    let metadata_dir = project("developer-portal").join("metadata");
    let urls = std::thread::spawn(|| {
        let p = project("developer-portal");
        (migrated("api_files", &p), migrated("api_apply", &p))
    })
    .join()
    .expect("migrations apply");

    // Started from the files.
    let mut seeded = store_options(urls.0.clone());
    seeded.metadata_from = Some(metadata_dir.clone());
    let from_files = grafton_server::start(&seeded)
        .await
        .expect("starts from the files");
    let base = format!("http://{}", from_files.addr);
    let (status, exported) = metadata(&base, json!({"type": "export_metadata", "args": {}})).await;
    assert_eq!(status, 200, "{exported}");
    let tables = exported["sources"][0]["tables"].as_array().map(Vec::len);
    assert!(tables.is_some_and(|n| n > 10), "{tables:?}");

    // An empty instance, given the metadata as the CLI's `metadata apply` does.
    let applied = grafton_server::start(&store_options(urls.1.clone()))
        .await
        .expect("starts empty");
    let base = format!("http://{}", applied.addr);
    let apply = json!({"type": "replace_metadata", "version": 2,
        "args": {"allow_inconsistent_metadata": true, "metadata": exported}});
    let (status, answer) = metadata(&base, apply).await;
    assert_eq!(status, 200, "{answer}");
    // What Grafton does not serve (actions, cron triggers, …) is reported.
    assert_eq!(answer["is_consistent"], false, "{answer}");
    let (_, again) = metadata(&base, json!({"type": "export_metadata", "args": {}})).await;
    assert_eq!(
        again, exported,
        "export → replace → export changed the metadata"
    );
    let roles = ["user", "api_key", "service", "reviewer"];
    assert_eq!(schemas(&applied, &roles), schemas(&from_files, &roles));
    let inconsistent = |s: &grafton_server::Running| -> Vec<Value> {
        s.engine
            .schemas()
            .left_out()
            .iter()
            .map(|i| i.to_json())
            .collect()
    };
    assert_eq!(inconsistent(&applied), inconsistent(&from_files));

    // Without allowing inconsistencies, the same metadata is refused whole.
    let (status, refused) = metadata(
        &base,
        json!({"type": "replace_metadata", "version": 2,
        "args": {"metadata": again}}),
    )
    .await;
    assert_eq!(
        (status, refused["code"].as_str()),
        (400, Some("unexpected")),
        "{refused}"
    );
}
