//! A remote schema Grafton cannot produce (graphql-js, `tests/conformance/
//! remote_server.mjs`): a custom scalar, an interface, a union, arguments with
//! defaults, an enum and an input object, served under a type-name prefix.

use crate::{databases_with, metadata, post_body, serve};
use serde_json::{json, Value};
use std::io::BufRead;

/// The graphql-js server, on 127.0.0.1; its URL. Killed when dropped.
pub(crate) struct JsRemote {
    child: std::process::Child,
    pub(crate) url: String,
}

impl JsRemote {
    pub(crate) fn start() -> Self {
        let dir = grafton_testkit::node::conformance_dir();
        grafton_testkit::node::require_tool("node");
        grafton_testkit::node::ensure_installed(&dir);
        let mut child = std::process::Command::new("node")
            .arg("remote_server.mjs")
            .current_dir(&dir)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("node starts");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .expect("a line");
        let port = line.trim().strip_prefix("listening ").expect("its port");
        Self {
            child,
            url: format!("http://127.0.0.1:{port}/graphql"),
        }
    }

    /// The requests it got so far (this one included).
    pub(crate) async fn calls(&self) -> u64 {
        let answer = reqwest::Client::new()
            .post(&self.url)
            .json(&json!({"query": "{ calls }"}))
            .send()
            .await
            .expect("answer");
        let body: Value = answer.json().await.expect("json");
        body["data"]["calls"].as_u64().expect("a count")
    }
}

impl Drop for JsRemote {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A Grafton (its notes on SQLite) with `remote` as `shelf`, its types named
/// `js_…`, and `more` of its definition (permissions).
async fn serve_with(remote: &JsRemote, name: &'static str, more: &str) -> grafton_server::Running {
    let env = format!("GRAFTON_TEST_{}", name.to_uppercase());
    std::env::set_var(&env, &remote.url);
    let yaml = format!(
        "- name: shelf\n  definition:\n    url: \"{{{{{env}}}}}\"\n    customization:\n      \
         type_names: {{prefix: js_}}\n{more}"
    );
    let dir = metadata(
        &name.replace('_', "-"),
        &[("public_notes.yaml", "table: {name: notes, schema: public}")],
    );
    std::fs::write(dir.join("remote_schemas.yaml"), yaml).expect("remote_schemas.yaml");
    let sql = "CREATE TABLE notes (id INTEGER NOT NULL PRIMARY KEY, body TEXT NOT NULL);";
    let [db, _] = databases_with(name, sql);
    serve(&db, &dir).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_graphql_js_remote_with_interfaces_unions_and_scalars_is_served_renamed() {
    let remote = JsRemote::start();
    let server = serve_with(&remote, "remote_js", "").await;
    let before = remote.calls().await;
    let query = json!({"query": "query ($in: js_SearchInput!) {
        search(input: $in) {
          __typename
          ... on js_Author { name books(first: 1) { title } }
          ... on js_Book { title price kind }
        }
        node(id: \"b2\") { __typename id ...Who }
        echo
        whoami
      }
      fragment Who on js_Book { author { name } }",
      "variables": {"in": {"text": "n", "kinds": ["ESSAY"]}}});
    let user = [("x-hasura-role", "user"), ("x-hasura-user-id", "42")];
    let answer = post_body(&server, &query, &user).await;
    assert_eq!(
        answer,
        json!({"data": {
            "search": [
                {"__typename": "js_Book", "title": "Engines", "price": 1250, "kind": "ESSAY"}],
            "node": {"__typename": "js_Book", "id": "b2", "author": {"name": "Grace"}},
            "echo": "hi",
            "whoami": "42"}})
    );
    // Four root fields, one call (and this count's own).
    assert_eq!(remote.calls().await, before + 2);
    // Its mutation, and its scalar's and enum's names as served.
    let add = json!({"query": "mutation { addBook(title: \"Notes\") { __typename title kind } }"});
    let answer = post_body(&server, &add, &[]).await;
    assert_eq!(
        answer,
        json!({"data": {"addBook": {"__typename": "js_Book", "title": "Notes", "kind": "NOVEL"}}})
    );
    let types = json!({"query": "{ a: __type(name: \"js_Money\") { kind description }
        b: __type(name: \"js_SearchResult\") { possibleTypes { name } } }"});
    let answer = post_body(&server, &types, &[]).await;
    assert_eq!(
        answer,
        json!({"data": {
            "a": {"kind": "SCALAR", "description": "Money in cents, as a JSON number"},
            "b": {"possibleTypes": [{"name": "js_Author"}, {"name": "js_Book"}]}}})
    );
    server.stop().await;
}

/// Two roles' parts of the graphql-js remote, each with a preset on a field of
/// its input object: a literal list of enum values, and a session variable.
const PRESET_ROLES: &str = r#"  permissions:
    - role: reader
      definition:
        schema: |
          type Query { search(input: SearchInput!): [SearchResult!]! }
          input SearchInput { text: String! kinds: [Kind!] @preset(value: [ESSAY]) }
          enum Kind { NOVEL ESSAY }
          union SearchResult = Author | Book
          type Author { id: ID! name: String! }
          type Book { id: ID! title: String! }
    - role: finder
      definition:
        schema: |
          type Query { search(input: SearchInput!): [SearchResult!]! }
          input SearchInput { text: String! @preset(value: "x-hasura-search") kinds: [Kind!] }
          enum Kind { NOVEL ESSAY }
          union SearchResult = Author | Book
          type Author { id: ID! name: String! }
          type Book { id: ID! title: String! }
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_preset_on_an_input_objects_field_is_added_to_every_value_of_its_type() {
    let remote = JsRemote::start();
    let server = serve_with(&remote, "remote_js_presets", PRESET_ROLES).await;
    let select = "{ __typename ... on js_Author { name } ... on js_Book { title } }";
    // `reader` searches essays only, whether the input is a literal or a
    // variable (written into the document with the preset).
    let reader = [("x-hasura-role", "reader")];
    let essays = json!({"data": {"search": [
        {"__typename": "js_Author", "name": "Grace"},
        {"__typename": "js_Book", "title": "Engines"}]}});
    let literal = json!({"query": format!("{{ search(input: {{text: \"e\"}}) {select} }}")});
    assert_eq!(post_body(&server, &literal, &reader).await, essays);
    let variable = json!({
        "query": format!("query($i: js_SearchInput!) {{ search(input: $i) {select} }}"),
        "variables": {"i": {"text": "e"}}});
    assert_eq!(post_body(&server, &variable, &reader).await, essays);
    // The field is not in the role's schema: it cannot be given.
    let own = json!({"query": format!(
        "{{ search(input: {{text: \"e\", kinds: [NOVEL]}}) {select} }}")});
    let answer = post_body(&server, &own, &reader).await;
    assert_eq!(
        answer["errors"][0]["extensions"]["code"],
        json!("validation-failed"),
        "{answer}"
    );
    let own = json!({
        "query": format!("query($i: js_SearchInput!) {{ search(input: $i) {select} }}"),
        "variables": {"i": {"text": "e", "kinds": ["NOVEL"]}}});
    let answer = post_body(&server, &own, &reader).await;
    assert!(
        answer["data"].is_null() && answer["errors"][0].is_object(),
        "{answer}"
    );
    // `finder`'s text is its session's; without it the call is not made.
    let novels = json!({"query": format!("{{ search(input: {{kinds: [NOVEL]}}) {select} }}")});
    let finder = [("x-hasura-role", "finder"), ("x-hasura-search", "o")];
    assert_eq!(
        post_body(&server, &novels, &finder).await,
        json!({"data": {"search": [{"__typename": "js_Book", "title": "Compilers"}]}})
    );
    let calls = remote.calls().await;
    let answer = post_body(&server, &novels, &[("x-hasura-role", "finder")]).await;
    let message = answer["errors"][0]["message"].as_str().unwrap_or_default();
    assert!(message.contains("x-hasura-search"), "{answer}");
    assert_eq!(remote.calls().await, calls + 1, "only the count's own call");
    server.stop().await;
}
