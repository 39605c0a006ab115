//! The metadata API's action commands.

use super::Handler;
use crate::{databases, post_body};
use serde_json::{json, Value};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_metadata_api_creates_changes_and_drops_actions() {
    const SECRET: &str = "actions-secret";
    let handler = Handler::default();
    let base = handler.start().await;
    handler.reply("double", 200, json!({"n": 4}), Duration::ZERO);
    handler.reply("twice", 200, json!({"n": 6}), Duration::ZERO);
    let [sqlite, _] = databases("actions_api");
    let server = crate::store_server(sqlite, SECRET).await;
    let api = |body: Value| crate::metadata_api(&server, SECRET, body);
    let as_user = [("x-hasura-admin-secret", SECRET), ("x-hasura-role", "user")];
    let admin = [("x-hasura-admin-secret", SECRET)];
    let double = json!({"query": "{ double(x: 2) { n } }"});

    let types = json!({"type": "set_custom_types", "args": {
        "objects": [{"name": "Out", "fields": [{"name": "n", "type": "Int!"}]}]}});
    assert_eq!(api(types).await, (200, json!({"message": "success"})));
    let definition = json!({"handler": format!("{base}/double"), "output_type": "Out",
        "arguments": [{"name": "x", "type": "Int!"}], "type": "query"});
    let create =
        json!({"type": "create_action", "args": {"name": "double", "definition": definition}});
    assert_eq!(
        api(create.clone()).await,
        (200, json!({"message": "success"}))
    );
    let (status, again) = api(create).await;
    assert_eq!(
        (status, again["code"].as_str()),
        (400, Some("already-exists")),
        "{again}"
    );
    let unknown = json!({"type": "create_action", "args": {"name": "nope", "definition":
        {"handler": format!("{base}/nope"), "output_type": "Nope", "type": "query"}}});
    let (status, refused) = api(unknown).await;
    assert_eq!(status, 400, "{refused}");

    // Admin calls it; a role only once permitted.
    let answer = post_body(&server, &double, &admin).await;
    assert_eq!(answer, json!({"data": {"double": {"n": 4}}}));
    assert_eq!(
        handler.calls().last().map(|c| c.body["input"].clone()),
        Some(json!({"x": 2}))
    );
    let permit =
        json!({"type": "create_action_permission", "args": {"action": "double", "role": "user"}});
    assert_eq!(api(permit).await.0, 200);
    let answer = post_body(&server, &double, &as_user).await;
    assert_eq!(answer, json!({"data": {"double": {"n": 4}}}));

    // Changed: the new handler is called, the permission kept.
    let definition = json!({"handler": format!("{base}/twice"), "output_type": "Out",
        "arguments": [{"name": "x", "type": "Int!"}], "type": "query"});
    let update =
        json!({"type": "update_action", "args": {"name": "double", "definition": definition}});
    assert_eq!(api(update).await.0, 200);
    let answer = post_body(&server, &double, &as_user).await;
    assert_eq!(answer, json!({"data": {"double": {"n": 6}}}));
    let (_, exported) = api(json!({"type": "export_metadata", "args": {}})).await;
    assert_eq!(exported["actions"][0]["name"], "double", "{exported}");
    assert_eq!(
        exported["actions"][0]["permissions"],
        json!([{"role": "user"}])
    );
    assert_eq!(exported["custom_types"]["objects"][0]["name"], "Out");

    // The permission dropped, then the action.
    let forbid =
        json!({"type": "drop_action_permission", "args": {"action": "double", "role": "user"}});
    assert_eq!(api(forbid).await.0, 200);
    let answer = post_body(&server, &double, &as_user).await;
    assert!(answer["errors"].is_array(), "{answer}");
    let drop = json!({"type": "drop_action", "args": {"name": "double"}});
    assert_eq!(api(drop).await.0, 200);
    let answer = post_body(&server, &double, &admin).await;
    assert_eq!(
        answer["errors"][0]["extensions"]["code"], "validation-failed",
        "{answer}"
    );
    server.stop().await;
}
