//! Actions from a project's files, answered through their handler.

use super::{project, serve_dir, Handler};
use crate::{databases, post_body};
use serde_json::json;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn actions_from_a_hasura_project_answer_through_their_handler() {
    let handler = Handler::default();
    let base = handler.start().await;
    let dir = project("actions-served", "GRAFTON_TEST_ACTIONS_SERVED", &base);
    let person = json!({"id": 1, "name": "Ada", "kind": "HUMAN", "unused": true,
        "friends": [{"id": "2", "name": "Grace", "kind": "ROBOT"}]});
    handler.reply("whoami", 200, person, Duration::ZERO);
    handler.reply(
        "login",
        200,
        json!({"accessToken": "tok-ada", "userId": 7}),
        Duration::ZERO,
    );
    handler.set_cookie("login", "session=s1; HttpOnly");
    handler.set_cookie("login", "theme=dark");
    for url in databases("actions_served") {
        let server = serve_dir(&url, &dir).await;
        let config = grafton_schema::hasura::load(&dir).expect("metadata");
        assert!(config.left_out.is_empty(), "{:?}", config.left_out);

        // A query mixing a table and an action: answers in document order.
        let query = "query Q($f: Filter) { authors(order_by: {id: asc}) { full_name } \
            me: whoami(tags: [\"a\"], filter: $f) { __typename id name ... on Person { kind } \
            friends { name } } }";
        let body = json!({"query": query, "variables": {"f": {"min_age": 30, "kind": "HUMAN"}}});
        let answer = post_body(&server, &body, &[]).await;
        assert_eq!(
            answer,
            json!({"data": {
                "authors": [{"full_name": "Ada"}, {"full_name": "Grace"}],
                "me": {"__typename": "Person", "id": "1", "name": "Ada", "kind": "HUMAN",
                       "friends": [{"name": "Grace"}]}
            }}),
            "{url}"
        );
        let call = handler.calls().pop().expect("a call");
        assert_eq!(call.path, "whoami");
        assert_eq!(
            call.body,
            json!({"action": {"name": "whoami"},
                   "session_variables": {"x-hasura-role": "admin"},
                   "input": {"tags": ["a"], "filter": {"min_age": 30, "kind": "HUMAN"}},
                   "request_query": query})
        );

        // A mutation as a role with the permission: its session, the action's
        // headers and the client's forwarded (never its x-hasura-*).
        let headers = [
            ("x-hasura-role", "user"),
            ("x-hasura-user-id", "1"),
            ("authorization", "Bearer abc"),
            ("x-client", "web"),
            ("x-grafton-admin-secret", "not-for-handlers"),
        ];
        let login = json!({"query": "mutation { login(username: \"ada\", password: \"pw\") { userId accessToken } }"});
        let answer = post_body(&server, &login, &headers).await;
        assert_eq!(
            answer,
            json!({"data": {"login": {"userId": 7, "accessToken": "tok-ada"}}})
        );
        let call = handler.calls().pop().expect("a call");
        assert_eq!(
            call.body["session_variables"],
            json!({"x-hasura-role": "user", "x-hasura-user-id": "1"})
        );
        assert_eq!(
            call.body["input"],
            json!({"username": "ada", "password": "pw"})
        );
        let header = |name: &str| call.headers.get(name).and_then(|v| v.to_str().ok());
        assert_eq!(header("x-handler-secret"), Some("s3cret"));
        assert_eq!(header("authorization"), Some("Bearer abc"));
        assert_eq!(header("x-client"), Some("web"));
        assert_eq!(header("x-hasura-role"), None);
        assert_eq!(header("x-hasura-user-id"), None);
        assert_eq!(header("x-grafton-admin-secret"), None);

        // The handler's cookies reach the client, as Hasura passes them on.
        let response = reqwest::Client::new()
            .post(server.url())
            .json(&login)
            .send()
            .await
            .expect("login");
        let cookies: Vec<&str> = (response.headers().get_all("set-cookie").iter())
            .filter_map(|v| v.to_str().ok())
            .collect();
        assert_eq!(cookies, ["session=s1; HttpOnly", "theme=dark"]);

        // The SDL's descriptions are the schema's.
        let intro = json!({"query": "{ m: __type(name: \"mutation_root\") { fields { name args { name description } } } \
            b: __type(name: \"Blob\") { kind description } }"});
        let answer = post_body(&server, &intro, &[]).await;
        let fields = answer["data"]["m"]["fields"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let field = fields
            .iter()
            .find(|f| f["name"] == "login")
            .cloned()
            .unwrap_or_default();
        assert_eq!(
            field["args"][0],
            json!({"name": "username", "description": "Who logs in"}),
            "{answer}"
        );
        assert_eq!(
            answer["data"]["b"],
            json!({"kind": "SCALAR", "description": "Any JSON"}),
            "{answer}"
        );

        // A role without the permission has no such field.
        let reviewer = [("x-hasura-role", "reviewer")];
        let answer = post_body(&server, &login, &reviewer).await;
        assert_eq!(
            answer["errors"][0]["extensions"]["code"], "validation-failed",
            "{answer}"
        );
        let calls = handler.calls().len();
        let answer = post_body(&server, &json!({"query": "{ whoami { name } }"}), &reviewer).await;
        assert_eq!(answer, json!({"data": {"whoami": {"name": "Ada"}}}));
        assert_eq!(handler.calls().len(), calls + 1);
        server.stop().await;
    }
}
