//! worldcoin's developer portal (MIT; `fixtures/hasura/developer-portal`), its
//! metadata unedited, with the environment its actions read set (a test binary
//! of its own: the variables are the process's): every action served, and one
//! written with a request transform called as Hasura calls it, against a
//! handler on 127.0.0.1 that records the call.

use serde_json::{json, Value};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// One call as it arrived: method, path and query, headers, body.
type Arrived = (String, String, axum::http::HeaderMap, String);

async fn recorder(calls: Arc<Mutex<Vec<Arrived>>>) -> String {
    async fn answer(
        axum::extract::State(calls): axum::extract::State<Arc<Mutex<Vec<Arrived>>>>,
        method: axum::http::Method,
        uri: axum::http::Uri,
        headers: axum::http::HeaderMap,
        body: String,
    ) -> axum::Json<Value> {
        let url = uri.to_string();
        let call = (method.to_string(), url.clone(), headers, body);
        calls.lock().unwrap_or_else(|p| p.into_inner()).push(call);
        axum::Json(json!({ "url": url }))
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let app = axum::Router::new().fallback(answer).with_state(calls);
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{addr}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn developer_portals_actions_are_served_and_called_as_hasura_calls_them() {
    let calls = Arc::new(Mutex::new(Vec::new()));
    std::env::set_var("NEXT_API_URL", recorder(calls.clone()).await);
    std::env::set_var("INTERNAL_ENDPOINTS_SECRET", "s3cret");
    let project =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hasura/developer-portal/hasura");
    let url = grafton_testkit::migrated("developer_portal_actions", &project);
    let config = grafton_schema::hasura::load(&project.join("metadata")).expect("metadata");
    let server = grafton_server::start(&grafton_server::ServeOptions {
        database_url: url,
        port: 0,
        config,
        ..Default::default()
    })
    .await
    .expect("server starts");
    // No action is left out any more.
    let report = reqwest::Client::new()
        .post(format!("http://{}/v1/metadata", server.addr))
        .json(&json!({"type": "get_inconsistent_metadata", "args": {}}))
        .send()
        .await
        .expect("answer");
    let report: Value = report.json().await.expect("json");
    let actions: Vec<&Value> = (report["inconsistent_objects"]
        .as_array()
        .into_iter()
        .flatten())
    .filter(|o| o["type"] == "action")
    .collect();
    assert!(actions.is_empty(), "{actions:?}");

    // `get_uploaded_image` as its user role calls it: a POST with the input in
    // the query string (the absent optional `locale` left out), the action's
    // Authorization header, Hasura's payload as the body.
    let query = json!({"query": "{ get_uploaded_image(app_id: \"app_1\", image_type: \"logo_img\", content_type_ending: \"png\", team_id: \"team_1\") { url } }"});
    let user = [("x-hasura-role", "user"), ("x-hasura-user-id", "usr_1")];
    let mut request = reqwest::Client::new().post(server.url()).json(&query);
    for (k, v) in user {
        request = request.header(k, v);
    }
    let answer: Value = request
        .send()
        .await
        .expect("answer")
        .json()
        .await
        .expect("json");
    let target = "/hasura/get-image?app_id=app_1&content_type_ending=png&image_type=logo_img";
    assert_eq!(
        answer,
        json!({"data": {"get_uploaded_image": {"url": target}}})
    );
    let (method, uri, headers, body) = calls
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .last()
        .cloned()
        .expect("a call");
    assert_eq!((method.as_str(), uri.as_str()), ("POST", target));
    assert_eq!(headers["authorization"], "s3cret");
    let payload: Value = serde_json::from_str(&body).expect("JSON payload");
    assert_eq!(payload["action"]["name"], "get_uploaded_image");
    assert_eq!(payload["input"]["team_id"], "team_1");
    assert_eq!(payload["session_variables"]["x-hasura-user-id"], "usr_1");
    server.stop().await;
}
