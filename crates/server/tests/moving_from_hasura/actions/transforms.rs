//! Actions with Hasura's request and response transforms (Kriti), as
//! developer-portal's are written: the call's method, URL, query parameters,
//! headers and body made by the templates, the answer reshaped before it is
//! checked; a handler on 127.0.0.1 records each call as it arrived.

use super::ask;
use crate::{databases, metadata};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};

/// One call as it arrived: method, path and query, headers, body.
type Arrived = (String, String, axum::http::HeaderMap, String);

/// Records every call and answers `{"message": …}` with the query it got.
#[derive(Clone, Default)]
struct Recorder {
    calls: Arc<Mutex<Vec<Arrived>>>,
}

impl Recorder {
    async fn start(&self) -> String {
        async fn answer(
            axum::extract::State(r): axum::extract::State<Recorder>,
            method: axum::http::Method,
            uri: axum::http::Uri,
            headers: axum::http::HeaderMap,
            body: String,
        ) -> axum::Json<Value> {
            let target = uri.to_string();
            let call = (method.to_string(), target.clone(), headers, body);
            r.calls.lock().unwrap_or_else(|p| p.into_inner()).push(call);
            axum::Json(json!({"message": target, "data": {"id": 5}}))
        }
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let app = axum::Router::new()
            .fallback(answer)
            .with_state(self.clone());
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        format!("http://{addr}")
    }

    fn last(&self) -> Arrived {
        let calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
        calls.last().cloned().expect("a call")
    }
}

const GRAPHQL: &str = "
type Query { greet(app_id: String!, locale: String): Greeting }
type Mutation { register(email: String!, tags: [String!]!): Registered }
type Greeting { text: String! }
type Registered { id: Int! }
";

fn yaml(env: &str) -> String {
    format!(
        r##"actions:
  - name: greet
    definition:
      kind: ""
      type: query
      handler: "{{{{{env}}}}}/hasura/greet"
      request_transform:
        method: GET
        url: "{{{{$base_url}}}}/v2"
        query_params:
          app_id: "{{{{$body.input.app_id}}}}"
          locale: "{{{{$body.input?.locale}}}}"
        request_headers:
          add_headers: {{x-user: "{{{{$session_variables['x-hasura-user-id']}}}}"}}
        body: {{action: remove}}
        template_engine: Kriti
        version: 2
      response_transform:
        body: {{action: transform, template: '{{"text": {{{{$body.message}}}}}}'}}
        template_engine: Kriti
        version: 2
    permissions:
      - role: user
  - name: register
    definition:
      kind: synchronous
      handler: "{{{{{env}}}}}/hasura/register"
      request_transform:
        body:
          action: transform
          template: '{{"user": {{"email": {{{{$body.input.email}}}}, "tags": {{{{ range i, t := $body.input.tags }}}} {{"n": {{{{i}}}}, "tag": "#{{{{t}}}}"}} {{{{ end }}}}}}, "admin": {{{{ if $session_variables["x-hasura-role"] == "admin" }}}} true {{{{ else }}}} false {{{{ end }}}}}}'
        template_engine: Kriti
        version: 2
      response_transform:
        body: {{action: transform, template: '{{"id": {{{{$body.data.id}}}}}}'}}
        template_engine: Kriti
        version: 2
"##
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_and_response_transforms_make_the_call_and_read_the_answer() {
    let recorder = Recorder::default();
    let base = recorder.start().await;
    let env = "GRAFTON_TEST_ACTION_TRANSFORMS";
    std::env::set_var(env, &base);
    let dir = metadata(
        "action-transforms",
        &[("public_posts.yaml", "table: {name: posts, schema: public}")],
    );
    std::fs::write(dir.join("actions.graphql"), GRAPHQL).expect("actions.graphql");
    std::fs::write(dir.join("actions.yaml"), yaml(env)).expect("actions.yaml");
    let [sqlite, _] = databases("action_transforms");
    let server = crate::serve(&sqlite, &dir).await;

    // A GET with the input as query parameters (an absent optional one left
    // out), the URL made from the handler's, a header from the session, no body.
    let user = [("x-hasura-role", "user"), ("x-hasura-user-id", "u 1")];
    let greet = json!({"query": "{ greet(app_id: \"app 1\") { text } }"});
    let answer = crate::post_body(&server, &greet, &user).await;
    let target = "/hasura/greet/v2?app_id=app%201";
    assert_eq!(answer, json!({"data": {"greet": {"text": target}}}));
    let (method, uri, headers, body) = recorder.last();
    assert_eq!(
        (method.as_str(), uri.as_str(), body.as_str()),
        ("GET", target, "")
    );
    assert_eq!(headers["x-user"], "u 1");
    let with_locale = json!({"query": "{ greet(app_id: \"a\", locale: \"fr\") { text } }"});
    crate::post_body(&server, &with_locale, &user).await;
    assert_eq!(recorder.last().1, "/hasura/greet/v2?app_id=a&locale=fr");

    // A body made by a template (a range and an if), the answer reshaped.
    let register = "mutation { register(email: \"a@b.c\", tags: [\"x\", \"y\"]) { id } }";
    let answer = ask(&server, register).await;
    assert_eq!(answer, json!({"data": {"register": {"id": 5}}}));
    let (method, _, headers, body) = recorder.last();
    assert_eq!(method, "POST");
    assert_eq!(headers["content-type"], "application/json");
    let sent: Value = serde_json::from_str(&body).expect("JSON body");
    assert_eq!(
        sent,
        json!({"user": {"email": "a@b.c", "tags": [{"n": 0, "tag": "#x"}, {"n": 1, "tag": "#y"}]}, "admin": true})
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transform_grafton_cannot_read_leaves_its_action_out_reported() {
    let recorder = Recorder::default();
    let env = "GRAFTON_TEST_ACTION_TRANSFORMS_BAD";
    std::env::set_var(env, recorder.start().await);
    let dir = metadata(
        "action-transforms-bad",
        &[("public_posts.yaml", "table: {name: posts, schema: public}")],
    );
    std::fs::write(dir.join("actions.graphql"), GRAPHQL).expect("actions.graphql");
    let bad = yaml(env).replace("{{$body.input?.locale}}", "{{$body.input?.locale");
    std::fs::write(dir.join("actions.yaml"), bad).expect("actions.yaml");
    let [sqlite, _] = databases("action_transforms_bad");
    let server = crate::serve(&sqlite, &dir).await;
    let report = crate::inconsistent(&server).await;
    let objects = report["inconsistent_objects"].to_string();
    assert!(
        objects.contains("request_transform") && objects.contains("greet"),
        "{report}"
    );
    // The other action is served.
    let answer = ask(
        &server,
        "mutation { register(email: \"e\", tags: []) { id } }",
    )
    .await;
    assert_eq!(answer, json!({"data": {"register": {"id": 5}}}), "{answer}");
    server.stop().await;
}
