//! Actions (issue 33): a Hasura project's `actions.graphql` and `actions.yaml`,
//! unedited in shape, served against a real handler on 127.0.0.1: Hasura's
//! payload, the answer checked against the output type and shaped to the
//! selection, the handler's errors passed on as Hasura passes them, per-role
//! permissions, and the metadata API's action commands.

mod api;
mod asynchronous;
mod errors;
mod related;
mod served;
mod transforms;

use crate::{metadata, post_body};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One call the handler received.
#[derive(Debug, Clone)]
pub struct Call {
    pub path: String,
    pub headers: HeaderMap,
    pub body: Value,
}

/// What the handler answers on a path: status, body, and how long it waits.
type Reply = (u16, String, Duration);

/// A handler on 127.0.0.1 recording every call and answering each path as set.
#[derive(Clone, Default)]
pub struct Handler {
    calls: Arc<Mutex<Vec<Call>>>,
    replies: Arc<Mutex<Vec<(String, Reply)>>>,
    cookies: Arc<Mutex<Vec<(String, String)>>>,
}

impl Handler {
    /// Starts it; its base URL.
    pub async fn start(&self) -> String {
        async fn answer(
            State(h): State<Handler>,
            Path(path): Path<String>,
            headers: HeaderMap,
            body: axum::Json<Value>,
        ) -> axum::response::Response {
            let call = Call {
                path: path.clone(),
                headers,
                body: body.0,
            };
            h.calls.lock().unwrap_or_else(|p| p.into_inner()).push(call);
            let reply = (h.replies.lock().unwrap_or_else(|p| p.into_inner()).iter())
                .find(|(p, _)| *p == path)
                .map(|(_, r)| r.clone());
            let (status, body, wait) = reply.unwrap_or((404, "{}".into(), Duration::ZERO));
            tokio::time::sleep(wait).await;
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
            let mut response =
                (status, [("content-type", "application/json")], body).into_response();
            let cookies = h.cookies.lock().unwrap_or_else(|p| p.into_inner()).clone();
            for (_, cookie) in cookies.iter().filter(|(p, _)| *p == path) {
                let value = cookie.parse().expect("a header value");
                response.headers_mut().append("set-cookie", value);
            }
            response
        }
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let app = axum::Router::new()
            .route("/{path}", axum::routing::post(answer))
            .with_state(self.clone());
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        format!("http://{addr}")
    }

    /// Answers `path` with `status` and `body` (after `wait`).
    pub fn reply(&self, path: &str, status: u16, body: Value, wait: Duration) {
        let mut replies = self.replies.lock().unwrap_or_else(|p| p.into_inner());
        replies.retain(|(p, _)| p != path);
        replies.push((path.to_owned(), (status, body.to_string(), wait)));
    }

    /// Answers `path` with a body that is not JSON.
    pub fn reply_text(&self, path: &str, status: u16, body: &str) {
        let mut replies = self.replies.lock().unwrap_or_else(|p| p.into_inner());
        replies.retain(|(p, _)| p != path);
        replies.push((path.to_owned(), (status, body.to_owned(), Duration::ZERO)));
    }

    /// Adds a `Set-Cookie` to every answer on `path`.
    pub fn set_cookie(&self, path: &str, cookie: &str) {
        let mut cookies = self.cookies.lock().unwrap_or_else(|p| p.into_inner());
        cookies.push((path.to_owned(), cookie.to_owned()));
    }

    /// The calls so far.
    pub fn calls(&self) -> Vec<Call> {
        self.calls.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

pub const ACTIONS_GRAPHQL: &str = r#"
type Mutation {
  login("Who logs in" username: String!, password: String!): LoginResponse
}

type Query {
  """Who the caller is"""
  whoami(tags: [String!], filter: Filter): Person!
}

"Any JSON"
scalar Blob

input Filter {
  min_age: Int
  kind: Kind
}

enum Kind {
  HUMAN
  ROBOT
}

type LoginResponse {
  accessToken: String!
  userId: Int!
  extra: Blob
}

type Person {
  id: ID!
  name: String
  kind: Kind
  friends: [Person!]
}
"#;

/// As `hasura metadata export` writes it: the SDL's parts left out.
pub fn actions_yaml(env: &str) -> String {
    format!(
        r#"actions:
  - name: login
    definition:
      kind: synchronous
      handler: "{{{{{env}}}}}/login"
      forward_client_headers: true
      headers:
        - name: x-handler-secret
          value: s3cret
    permissions:
      - role: user
    comment: Logs in
  - name: whoami
    definition:
      kind: ""
      handler: "{{{{{env}}}}}/whoami"
      timeout: 2
    permissions:
      - role: user
      - role: reviewer
custom_types:
  enums:
    - name: Kind
      values:
        - description: null
          is_deprecated: null
          value: HUMAN
        - description: null
          is_deprecated: null
          value: ROBOT
  input_objects:
    - name: Filter
  objects:
    - name: LoginResponse
    - name: Person
  scalars:
    - name: Blob
"#
    )
}

const AUTHORS: &str = "
table: {name: authors, schema: public}
select_permissions:
  - role: reviewer
    permission: {columns: [id, full_name], filter: {}}
";

/// A project with the actions, its handlers at `base` through `env`.
pub fn project(name: &str, env: &str, base: &str) -> std::path::PathBuf {
    // Each test names its own variable: tests run side by side.
    std::env::set_var(env, base);
    let posts = "table: {name: posts, schema: public}";
    let dir = metadata(
        name,
        &[
            ("public_authors.yaml", AUTHORS),
            ("public_posts.yaml", posts),
        ],
    );
    std::fs::write(dir.join("actions.graphql"), ACTIONS_GRAPHQL).expect("actions.graphql");
    std::fs::write(dir.join("actions.yaml"), actions_yaml(env)).expect("actions.yaml");
    dir
}

pub async fn serve_dir(url: &str, dir: &std::path::Path) -> grafton_server::Running {
    crate::serve(url, dir).await
}

/// Posts `query` as admin; the answer.
pub async fn ask(server: &grafton_server::Running, query: &str) -> Value {
    post_body(server, &json!({ "query": query }), &[]).await
}
