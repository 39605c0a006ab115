//! Trusted documents: Apollo's automatic persisted queries, allow lists (config,
//! Hasura metadata, `--allow-list` files) and introspection switched off per role.

use crate::*;
use serde_json::{json, Value};

const Q: &str = "query One { nodes_by_pk(id: 7) { id label } }";

fn sha256(text: &str) -> String {
    grafton_server::engine::trusted::sha256_hex(text)
}

async fn send(url: &str, body: Value) -> (u16, Value) {
    post_json(url, Some("user"), &body).await
}

#[tokio::test]
async fn persisted_query_round_trip() {
    run(async {
        for db in BOTH {
            let url = start(options(db));
            let ext = json!({"persistedQuery": {"version": 1, "sha256Hash": sha256(Q)}});
            // Unknown hash: the client is told to send the document.
            let (status, body) = send(&url, json!({"extensions": ext})).await;
            assert_eq!(status, 200, "{body}");
            assert_eq!(
                body["errors"][0]["message"], "PersistedQueryNotFound",
                "{db:?}"
            );
            assert_eq!(code(&body), "PERSISTED_QUERY_NOT_FOUND");
            // Document and hash: registered and answered.
            let (_, body) = send(&url, json!({"query": Q, "extensions": ext})).await;
            assert_eq!(data(body)["nodes_by_pk"]["label"], "n7", "{db:?}");
            // The hash alone now does, over POST and GET.
            let (_, body) = send(&url, json!({"extensions": ext})).await;
            assert_eq!(data(body)["nodes_by_pk"]["id"], 7);
            let response = reqwest::Client::new()
                .get(&url)
                .header("x-hasura-admin-secret", ADMIN_SECRET)
                .query(&[("extensions", ext.to_string())])
                .send()
                .await
                .expect("GET");
            let body: Value = response.json().await.expect("JSON");
            assert_eq!(data(body)["nodes_by_pk"]["id"], 7, "{db:?}");
            // A document that is not what its hash says is refused, not stored.
            let wrong = json!({"persistedQuery": {"version": 1, "sha256Hash": sha256("{ x }")}});
            let (status, body) = send(&url, json!({"query": Q, "extensions": wrong})).await;
            assert_eq!((status, code(&body)), (400, "parse-failed"), "{body}");
            let (_, body) = send(&url, json!({"extensions": wrong})).await;
            assert_eq!(code(&body), "PERSISTED_QUERY_NOT_FOUND");
        }
    })
}

fn allow_listed(db: Db) -> String {
    let mut o = options(db);
    o.config.allow_list = serde_norway::from_str(
        r#"
- name: everyone
  queries: ["query One { nodes_by_pk(id: 7) { id label } }"]
- name: deep only
  roles: [deep]
  queries: ["query Two { nodes_by_pk(id: 2) { ...N } } fragment N on nodes { id }"]
"#,
    )
    .expect("allow list");
    start(o)
}

#[tokio::test]
async fn an_allow_list_refuses_every_other_document_per_role() {
    run(async {
        for db in BOTH {
            let url = allow_listed(db);
            // The listed document, spelled differently, runs.
            let respelled =
                "# listed\nquery One {\n  nodes_by_pk(id: 7) {\n    id\n    label\n  }\n}";
            let (_, body) = post(&url, Some("user"), respelled, json!({})).await;
            assert_eq!(data(body)["nodes_by_pk"]["id"], 7, "{db:?}");
            // Anything else, even one field more, does not.
            let other = "query One { nodes_by_pk(id: 7) { id label parent_id } }";
            let (status, body) = post(&url, Some("user"), other, json!({})).await;
            assert_eq!(
                (status, code(&body)),
                (200, "validation-failed"),
                "{db:?} {body}"
            );
            assert!(body["errors"][0]["message"]
                .as_str()
                .unwrap_or("")
                .contains("allow list"));
            // A collection for `deep` only.
            let two = "query Two { nodes_by_pk(id: 2) { ...N } } fragment N on nodes { id }";
            let (_, body) = post(&url, Some("user"), two, json!({})).await;
            assert_eq!(code(&body), "validation-failed");
            let (_, body) = post(&url, Some("deep"), two, json!({})).await;
            assert_eq!(data(body)["nodes_by_pk"]["id"], 2);
            // Admin is not bound by it.
            let (_, body) = post(&url, None, other, json!({})).await;
            data(body);
        }
    })
}

#[tokio::test]
async fn allow_lists_come_from_hasura_metadata_and_manifest_files() {
    let dir = hasura_metadata(
        "allow",
        &[
            (
                "query_collections.yaml",
                "- name: allowed-queries\n  definition:\n    queries:\n      - name: one\n        query: 'query One { nodes_by_pk(id: 7) { id label } }'\n",
            ),
            (
                "allow_list.yaml",
                "- collection: allowed-queries\n  scope: {global: false, roles: [user]}\n",
            ),
            ("graphql_schema_introspection.yaml", "disabled_for_roles: [user]\n"),
        ],
    );
    let mut o = options(Db::Sqlite);
    o.config = grafton_schema::hasura::load(&dir).expect("metadata loads");
    // And a manifest file, as `--allow-list` reads it.
    let manifest = dir.join("manifest.json");
    let body = "query Three { nodes_by_pk(id: 3) { id } }";
    std::fs::write(
        &manifest,
        json!({"format": "apollo-persisted-query-manifest", "version": 1,
               "operations": [{"id": sha256(body), "name": "Three", "type": "query", "body": body}]})
        .to_string(),
    )
    .expect("manifest");
    o.config
        .allow_list
        .push(grafton_server::load_allow_list(&manifest).expect("manifest loads"));
    run(async move {
        let url = start(o);
        let (_, body) = post(&url, Some("user"), Q, json!({})).await;
        assert_eq!(data(body)["nodes_by_pk"]["id"], 7);
        let (_, body) = post(
            &url,
            Some("user"),
            "query Three { nodes_by_pk(id: 3) { id } }",
            json!({}),
        )
        .await;
        assert_eq!(data(body)["nodes_by_pk"]["id"], 3);
        let (_, body) = post(
            &url,
            Some("user"),
            "{ nodes_by_pk(id: 1) { id } }",
            json!({}),
        )
        .await;
        assert_eq!(code(&body), "validation-failed", "{body}");
        // Introspection is off for user, even for an allowed-looking document.
        let (_, body) = post(
            &url,
            Some("user"),
            "{ __schema { queryType { name } } }",
            json!({}),
        )
        .await;
        let message = body["errors"][0]["message"].as_str().unwrap_or("");
        assert!(message.contains("introspection is disabled"), "{body}");
        // Admin keeps it.
        let (_, body) = post(&url, None, "{ __schema { queryType { name } } }", json!({})).await;
        data(body);
    })
}
