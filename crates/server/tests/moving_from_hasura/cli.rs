//! The Hasura CLI's own requests, replayed (issue 31). The CLI cannot be installed
//! here, so its traffic is written down from its source (cli/ of
//! hasura/graphql-engine v2.48: `internal/hasura/*`, `migrate/`,
//! `internal/statestore/`) and sent as it sends it, bodies with their keys sorted
//! as Go's maps sort them: the start-up handshake, `migrate apply` and `migrate
//! status` with `--database-name default`, `metadata apply`, `metadata export`,
//! `metadata reload`, `metadata inconsistency list` and `drop`. A real project's
//! migrations and metadata applied this way to an empty PostgreSQL serve what its
//! files serve.

use crate::projects::project;
use grafton_server::ServeOptions;
use serde_json::{json, Map, Value};
use std::path::Path;

const SECRET: &str = "cli-secret";

/// What the CLI sends: Go's encoder, keys sorted where the CLI builds a map.
fn sorted(v: &Value) -> Value {
    match v {
        Value::Object(o) => {
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort();
            let mut out = Map::new();
            for k in keys {
                out.insert(k.clone(), sorted(&o[k]));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
        v => v.clone(),
    }
}

struct Cli {
    base: String,
    http: reqwest::Client,
}

impl Cli {
    /// `POST path` with the admin secret header, as the CLI's `client.NewRequest`;
    /// the answer must be 200 and JSON (the CLI indents what is labelled JSON).
    async fn post(&self, path: &str, body: Value) -> Value {
        let response = (self.http.post(format!("{}/{path}", self.base)))
            .header("X-Hasura-Admin-Secret", SECRET)
            .header("Content-Type", "application/json")
            .body(format!("{body}\n"))
            .send()
            .await
            .expect("request");
        let status = response.status().as_u16();
        let json: Value = response.json().await.expect("a JSON answer");
        assert_eq!(status, 200, "{path} {body}: {json}");
        json
    }

    async fn metadata(&self, body: Value) -> Value {
        self.post("v1/metadata", body).await
    }

    /// `ExecutionContext.Validate()`: two versions (no credentials), the config
    /// (errors ignored), `export_metadata` on `/v1/query` (its `version` must be 3),
    /// `get_catalog_state` (its `id` read).
    async fn handshake(&self) {
        for _ in 0..2 {
            let version = self
                .http
                .get(format!("{}/v1/version", self.base))
                .send()
                .await;
            let version = version.expect("version");
            assert_eq!(version.status().as_u16(), 200);
            let body: Value = version.json().await.expect("JSON");
            assert!(body["version"].is_string(), "{body}");
        }
        let _ = (self.http.get(format!("{}/v1alpha1/config", self.base)))
            .header("X-Hasura-Admin-Secret", SECRET)
            .send()
            .await;
        let exported = self
            .post("v1/query", json!({"type": "export_metadata", "args": {}}))
            .await;
        assert_eq!(
            exported["version"], 3,
            "config v3 needs metadata v3: {exported}"
        );
        let state = self
            .metadata(sorted(&json!({"type": "get_catalog_state", "args": {}})))
            .await;
        assert!(state["id"].is_string(), "{state}");
    }

    /// The CLI's state: `cli_state` must be there (it dereferences it).
    async fn cli_state(&self) -> Value {
        let state = self
            .metadata(json!({"type": "get_catalog_state", "args": {}}))
            .await;
        assert!(state["cli_state"].is_object(), "cli_state missing: {state}");
        state["cli_state"].clone()
    }

    async fn set_cli_state(&self, state: &Value) {
        let body = json!({"type": "set_catalog_state", "args": sorted(&json!({"state": state, "type": "cli"}))});
        let answer = self.metadata(body).await;
        assert_eq!(answer, json!({"message": "success"}));
    }

    /// `run_sql` on `/v2/query`; the answer must decode as `{result_type, result:
    /// [][]string}` (null cells allowed).
    async fn run_sql(&self, sql: &str) -> Value {
        let body = json!({"type": "run_sql", "args": {"sql": sql, "source": "default", "check_metadata_consistency": false}});
        let answer = self.post("v2/query", body).await;
        assert!(answer["result_type"].is_string(), "{answer}");
        for row in answer["result"].as_array().into_iter().flatten() {
            let cells = row.as_array().expect("a row is a list");
            assert!(
                cells.iter().all(|c| c.is_string() || c.is_null()),
                "{answer}"
            );
        }
        answer
    }

    /// `hasura migrate apply --database-name default` (config v3), from a fresh
    /// state: settings, the one-time state copy, then each migration and its state.
    async fn migrate_apply(&self, migrations: &Path) -> usize {
        self.handshake().await;
        let exported = self
            .metadata(json!({"type": "export_metadata", "args": {}}))
            .await;
        let default = (exported["sources"].as_array().into_iter().flatten())
            .find(|s| s["name"] == "default")
            .expect("database default on the server");
        assert_eq!(default["kind"], "postgres");
        let mut state = self.cli_state().await;
        if state["settings"]["migration_mode"]
            .as_str()
            .unwrap_or("")
            .is_empty()
        {
            state["settings"] = json!({"migration_mode": "true"});
        }
        state["isStateCopyCompleted"] = state["isStateCopyCompleted"]
            .as_bool()
            .unwrap_or(false)
            .into();
        self.set_cli_state(&state).await;
        let mut state = self.cli_state().await;
        let _scan = self.cli_state().await;
        if state["isStateCopyCompleted"] != true {
            let probe = self.run_sql("SELECT COUNT(1) FROM information_schema.tables WHERE table_name = 'schema_migrations' AND table_schema = 'hdb_catalog' LIMIT 1").await;
            assert_eq!(probe["result_type"], "TuplesOk", "{probe}");
            assert_eq!(
                probe["result"][1][0], "0",
                "the CLI reads result[1][0]: {probe}"
            );
            state["isStateCopyCompleted"] = json!(true);
            self.set_cli_state(&state).await;
        }
        let state = self.cli_state().await;
        assert_eq!(state["settings"]["migration_mode"], "true", "{state}");
        let mut steps: Vec<(u64, std::path::PathBuf)> = std::fs::read_dir(migrations)
            .expect("migrations")
            .flatten()
            .filter_map(|d| {
                let name = d.file_name().to_string_lossy().into_owned();
                let version = name.split('_').next()?.parse().ok()?;
                Some((version, d.path().join("up.sql")))
            })
            .filter(|(_, up)| up.is_file())
            .collect();
        steps.sort();
        let applied = state["migrations"]["default"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        let mut count = 0;
        for (version, up) in steps {
            if applied.contains_key(&version.to_string()) {
                continue;
            }
            let sql = std::fs::read_to_string(&up).expect("up.sql");
            if sql.trim().is_empty() {
                continue;
            }
            self.run_sql(&sql).await;
            let mut state = self.cli_state().await;
            state["migrations"]["default"][version.to_string()] = json!(false);
            self.set_cli_state(&state).await;
            count += 1;
        }
        count
    }

    /// `hasura migrate status`: the versions the server's state has.
    async fn migrate_status(&self) -> Vec<String> {
        self.handshake().await;
        let state = self.cli_state().await;
        let versions = state["migrations"]["default"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        versions.keys().cloned().collect()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_moves_through_the_clis_own_requests() {
    let dir = project("developer-portal");
    let url = std::thread::spawn(|| grafton_testkit::fresh_database("cli_moves"))
        .join()
        .expect("database");
    let mut options = ServeOptions {
        database_url: url,
        port: 0,
        metadata_store: true,
        ..ServeOptions::default()
    };
    options.auth.admin_secret = Some(SECRET.into());
    let server = grafton_server::start(&options)
        .await
        .expect("an empty database serves");
    let cli = Cli {
        base: format!("http://{}", server.addr),
        http: reqwest::Client::new(),
    };

    // migrate apply, then again (nothing to apply), then status.
    let migrations = dir.join("migrations/default");
    let applied = cli.migrate_apply(&migrations).await;
    assert!(applied > 100, "{applied} migrations applied");
    assert_eq!(
        cli.migrate_apply(&migrations).await,
        0,
        "a second apply applies nothing"
    );
    assert_eq!(cli.migrate_status().await.len(), applied);

    // metadata apply: the directory as the CLI sends it.
    cli.handshake().await;
    let metadata = grafton_schema::hasura::read_document(&dir.join("metadata")).expect("reads");
    let apply = json!({"type": "replace_metadata", "version": 2,
        "args": {"allow_inconsistent_metadata": true, "metadata": sorted(&metadata)}});
    let answer = cli.metadata(apply).await;
    assert!(answer["is_consistent"].is_boolean(), "{answer}");

    // metadata export: the whole answer is the metadata, version 3.
    cli.handshake().await;
    let exported = cli
        .metadata(json!({"type": "export_metadata", "args": {}}))
        .await;
    assert_eq!(exported, sorted(&metadata));

    // metadata reload, inconsistency list and drop.
    cli.handshake().await;
    cli.metadata(json!({"type": "reload_metadata", "args": {}}))
        .await;
    let listed = cli
        .metadata(json!({"type": "get_inconsistent_metadata", "args": {}}))
        .await;
    assert_eq!(
        listed["is_consistent"], false,
        "actions and cron triggers are reported: {listed}"
    );
    assert!(listed["inconsistent_objects"].is_array(), "{listed}");
    cli.handshake().await;
    cli.metadata(json!({"type": "drop_inconsistent_metadata", "args": {}}))
        .await;
    let listed = cli
        .metadata(json!({"type": "get_inconsistent_metadata", "args": {}}))
        .await;
    assert!(
        listed["inconsistent_objects"].as_array().is_some(),
        "{listed}"
    );

    // What is served is what the files serve, role by role.
    let files = grafton_server::build_engine(&ServeOptions {
        database_url: options.database_url.clone(),
        config: grafton_schema::hasura::load(&dir.join("metadata")).expect("loads"),
        ..ServeOptions::default()
    })
    .await
    .expect("the files build");
    let sdl = |s: &grafton_engine::Schemas, role: Option<&str>| match role {
        None => s.admin_model().schema.to_string(),
        Some(r) => s
            .planner_for(Some(r), false)
            .expect("role")
            .model()
            .schema
            .to_string(),
    };
    let (served, from_files) = (server.engine.schemas(), files.schemas());
    for role in [
        None,
        Some("user"),
        Some("api_key"),
        Some("service"),
        Some("reviewer"),
    ] {
        assert!(
            sdl(&served, role) == sdl(&from_files, role),
            "{role:?}: schemas differ"
        );
    }
}
