//! Asynchronous actions: the mutation answers an id at once, the handler is
//! called in the background (Hasura's payload, `request_query: null`), and the
//! result is read by id, by query and by subscription, only by the session that
//! made the call (admin: any); a call claimed by an instance that died is
//! called again.

use super::{serve_dir, Handler};
use crate::{databases, metadata, next_data, post_body, subscribe};
use serde_json::{json, Value};
use std::time::Duration;

const GRAPHQL: &str = "
type Mutation {
  create_user(email: String!, name: String!): UserId
  slow_echo(word: String!): Echo!
}

type UserId {
  id: Int!
}

type Echo {
  word: String!
}
";

fn yaml(env: &str) -> String {
    format!(
        r#"actions:
  - name: create_user
    definition:
      kind: asynchronous
      handler: "{{{{{env}}}}}/create_user"
    permissions:
      - role: user
  - name: slow_echo
    definition:
      kind: asynchronous
      handler: "{{{{{env}}}}}/slow_echo"
    permissions:
      - role: user
custom_types:
  objects:
    - name: UserId
      relationships:
        - name: posts
          type: array
          remote_table: posts
          field_mapping: {{id: author_id}}
"#
    )
}

const POSTS: &str = "
table: {name: posts, schema: public}
select_permissions:
  - role: user
    permission:
      columns: [id, title]
      filter: {title: {_neq: Notes}}
";

fn project(name: &str, env: &str, base: &str) -> std::path::PathBuf {
    std::env::set_var(env, base);
    let dir = metadata(name, &[("public_posts.yaml", POSTS)]);
    std::fs::write(dir.join("actions.graphql"), GRAPHQL).expect("actions.graphql");
    std::fs::write(dir.join("actions.yaml"), yaml(env)).expect("actions.yaml");
    dir
}

/// A handler on 127.0.0.1 and the project calling it through `env`.
async fn handled(name: &str, env: &str) -> (Handler, std::path::PathBuf) {
    let handler = Handler::default();
    let base = handler.start().await;
    let dir = project(name, env, &base);
    (handler, dir)
}

/// Posts the mutation `body` (calling `field`) as user 1; the call's id.
async fn call_id(server: &grafton_server::Running, body: &Value, field: &str) -> String {
    let answer = post_body(server, body, &user("1")).await;
    let id = answer["data"][field].as_str().expect("an id").to_owned();
    assert_eq!(id.len(), 36, "{answer}");
    id
}

fn user(id: &'static str) -> [(&'static str, &'static str); 2] {
    [("x-hasura-role", "user"), ("x-hasura-user-id", id)]
}

const RESULT: &str = "query ($id: uuid!) { create_user(id: $id) {
  __typename id errors output { id posts(order_by: {id: asc}) { title } } } }";

/// Reads `query`'s result of `id` as `headers` until the call is over (its
/// output or errors set; 10 s at most).
async fn finished_as(
    server: &grafton_server::Running,
    query: &str,
    id: &str,
    headers: &[(&str, &str)],
) -> Value {
    let body = json!({"query": query, "variables": {"id": id}});
    for _ in 0..200 {
        let answer = post_body(server, &body, headers).await;
        let data = answer["data"].as_object().and_then(|d| d.values().next());
        let result = data.cloned().unwrap_or(Value::Null);
        if !result["output"].is_null() || !result["errors"].is_null() {
            return answer;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the call {id} never finished");
}

/// [`finished_as`] with [`RESULT`].
async fn finished(server: &grafton_server::Running, id: &str, headers: &[(&str, &str)]) -> Value {
    finished_as(server, RESULT, id, headers).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mutation_answers_an_id_and_the_caller_reads_the_result_later() {
    let (handler, dir) = handled("actions-async", "GRAFTON_TEST_ACTIONS_ASYNC").await;
    let create = json!({"query":
        r#"mutation { create_user(email: "ada@example.com", name: "Ada") }"#});
    for url in databases("actions_async") {
        let server = serve_dir(&url, &dir).await;
        // The handler answers in 1 s: the id comes before it.
        handler.reply(
            "create_user",
            200,
            json!({"id": 1, "extra": true}),
            Duration::from_secs(1),
        );
        let id = call_id(&server, &create, "create_user").await;
        let early = post_body(
            &server,
            &json!({"query": RESULT, "variables": {"id": id}}),
            &user("1"),
        )
        .await;
        assert_eq!(
            early,
            json!({"data": {"create_user": {"__typename": "create_user", "id": id,
                "errors": null, "output": null}}})
        );
        // Its output, checked and shaped, with its relationship under the
        // caller's rules (the user does not see `Notes`).
        let done = finished(&server, &id, &user("1")).await;
        assert_eq!(
            done,
            json!({"data": {"create_user": {"__typename": "create_user", "id": id,
                "errors": null,
                "output": {"id": 1, "posts": [{"title": "Engines"}]}}}})
        );
        let call = (handler.calls().into_iter())
            .rfind(|c| c.path == "create_user")
            .expect("the handler was called");
        assert_eq!(
            call.body,
            json!({"action": {"name": "create_user"},
                   "session_variables": {"x-hasura-role": "user", "x-hasura-user-id": "1"},
                   "input": {"email": "ada@example.com", "name": "Ada"},
                   "request_query": null})
        );
        // Another user of the role reads nothing; admin reads it.
        let body = json!({"query": RESULT, "variables": {"id": id}});
        let other = post_body(&server, &body, &user("2")).await;
        assert_eq!(other, json!({"data": {"create_user": null}}));
        let admin = post_body(&server, &body, &[]).await;
        assert_eq!(
            admin["data"]["create_user"]["output"]["id"],
            json!(1),
            "{admin}"
        );
        // An id that is not a UUID is refused, not looked up.
        let bad = json!({"query": RESULT, "variables": {"id": "nope"}});
        let refused = post_body(&server, &bad, &user("1")).await;
        assert_eq!(
            refused["errors"][0]["extensions"]["code"],
            json!("parse-failed"),
            "{refused}"
        );

        // A handler's 4xx is the call's error, as Hasura's log holds one.
        let error = json!({"message": "that e-mail is taken", "extensions": {"code": "taken"}});
        handler.reply("create_user", 400, error, Duration::ZERO);
        let id = call_id(&server, &create, "create_user").await;
        let failed = finished(&server, &id, &user("1")).await;
        assert_eq!(
            failed["data"]["create_user"]["errors"],
            json!({"path": "$", "error": "that e-mail is taken", "code": "taken"}),
            "{failed}"
        );
        assert_eq!(failed["data"]["create_user"]["output"], Value::Null);
        // An answer that does not fit the output type is an error too.
        handler.reply("create_user", 200, json!({"id": "one"}), Duration::ZERO);
        let id = call_id(&server, &create, "create_user").await;
        let failed = finished(&server, &id, &user("1")).await;
        let errors = &failed["data"]["create_user"]["errors"];
        assert_eq!(errors["code"], json!("unexpected"), "{failed}");
        assert!(
            errors["error"].as_str().is_some_and(|e| e.contains("$.id")),
            "{failed}"
        );
        // A null answer for a non-null output type (`Echo!`) is an error, though
        // the result's `output` field is nullable (null until the answer).
        handler.reply("slow_echo", 200, Value::Null, Duration::ZERO);
        let echo = json!({"query": r#"mutation { slow_echo(word: "x") }"#});
        let id = call_id(&server, &echo, "slow_echo").await;
        let read = "query ($id: uuid!) { slow_echo(id: $id) { output { word } errors } }";
        let answer = finished_as(&server, read, &id, &user("1")).await;
        assert_eq!(
            answer["data"]["slow_echo"]["errors"]["code"],
            json!("unexpected"),
            "{answer}"
        );
        assert_eq!(
            answer["data"]["slow_echo"]["output"],
            Value::Null,
            "{answer}"
        );
        server.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_sends_the_result_when_the_handler_answers() {
    let (handler, dir) = handled("actions-async-live", "GRAFTON_TEST_ACTIONS_ASYNC_LIVE").await;
    handler.reply(
        "slow_echo",
        200,
        json!({"word": "hello"}),
        Duration::from_secs(1),
    );
    for url in databases("actions_async_live") {
        let server = serve_dir(&url, &dir).await;
        let echo = json!({"query": r#"mutation { slow_echo(word: "hello") }"#});
        let id = call_id(&server, &echo, "slow_echo").await;
        let query = format!(
            r#"subscription {{ slow_echo(id: "{id}") {{ id output {{ word }} errors }} }}"#
        );
        let headers = json!({"x-hasura-role": "user", "x-hasura-user-id": "1"});
        let mut ws = subscribe(&server, headers, &query).await;
        assert_eq!(
            next_data(&mut ws).await,
            json!({"slow_echo": {"id": id, "output": null, "errors": null}})
        );
        assert_eq!(
            next_data(&mut ws).await,
            json!({"slow_echo": {"id": id, "output": {"word": "hello"}, "errors": null}})
        );
        // Another user's subscription to it sees nothing.
        let headers = json!({"x-hasura-role": "user", "x-hasura-user-id": "2"});
        let mut other = subscribe(&server, headers, &query).await;
        assert_eq!(next_data(&mut other).await, json!({"slow_echo": null}));
        server.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_claimed_by_an_instance_that_died_is_called_again() {
    let (handler, dir) = handled("actions-async-claims", "GRAFTON_TEST_ACTIONS_ASYNC_CLAIMS").await;
    handler.reply("slow_echo", 200, json!({"word": "again"}), Duration::ZERO);
    let echo = json!({"query": r#"mutation { slow_echo(word: "again") }"#});
    for url in databases("actions_async_claims") {
        // An instance that calls no handler writes the call.
        let config = grafton_schema::hasura::load(&dir).expect("metadata loads");
        let mut options = grafton_server::ServeOptions {
            database_url: url.clone(),
            port: 0,
            config,
            ..Default::default()
        };
        options.events.async_fetch_interval = Duration::ZERO;
        let writer = grafton_server::start(&options)
            .await
            .expect("server starts");
        let id = call_id(&writer, &echo, "slow_echo").await;
        writer.stop().await;
        // As if an instance claimed it an hour ago and died.
        let claim = format!(
            "UPDATE grafton_catalog{}action_log SET status = 'processing', \
             locked_by = 'gone', locked_at = {} WHERE id = '{id}'",
            if url.starts_with("postgres") {
                "."
            } else {
                "_"
            },
            if url.starts_with("postgres") {
                "now() - interval '1 hour'"
            } else {
                "strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-3600 seconds')"
            },
        );
        match url.starts_with("postgres") {
            true => {
                grafton_testkit::psql(&url, claim.as_bytes());
            }
            false => {
                let conn = rusqlite::Connection::open(&url).expect("SQLite file");
                assert_eq!(conn.execute(&claim, []).expect("claim"), 1);
            }
        }
        let calls = handler.calls().len();
        let server = serve_dir(&url, &dir).await;
        let query = "query ($id: uuid!) { slow_echo(id: $id) { output { word } errors } }";
        let answer = finished_as(&server, query, &id, &user("1")).await;
        assert_eq!(
            answer,
            json!({"data": {"slow_echo": {"output": {"word": "again"}, "errors": null}}})
        );
        assert_eq!(handler.calls().len(), calls + 1);
        server.stop().await;
    }
}
