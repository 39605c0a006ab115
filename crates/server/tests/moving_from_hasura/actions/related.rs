//! Relationships from an action's output type to tables: each object of the
//! handler's answer joined to its rows, under the caller's row and column rules.

use super::{serve_dir, Handler};
use crate::{databases, metadata, post_body};
use serde_json::json;
use std::time::Duration;

const GRAPHQL: &str = "
type Query {
  picks: [Pick!]!
}

type Pick {
  post_id: Int!
  author_id: Int
}
";

fn yaml(env: &str) -> String {
    format!(
        r#"actions:
  - name: picks
    definition:
      kind: ""
      handler: "{{{{{env}}}}}/picks"
    permissions:
      - role: reader
      - role: author
custom_types:
  objects:
    - name: Pick
      relationships:
        - name: post
          type: object
          remote_table: {{schema: public, name: posts}}
          field_mapping: {{post_id: id}}
        - name: author_posts
          type: array
          remote_table: posts
          field_mapping: {{author_id: author_id}}
"#
    )
}

const POSTS: &str = "
table: {name: posts, schema: public}
select_permissions:
  - role: reader
    permission:
      columns: [id, title]
      filter: {title: {_neq: Notes}}
  - role: author
    permission:
      columns: [id, title]
      filter: {author_id: {_eq: X-Hasura-User-Id}}
      limit: 1
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_actions_answer_joins_its_rows_under_the_callers_rules() {
    let handler = Handler::default();
    let base = handler.start().await;
    let env = "GRAFTON_TEST_ACTIONS_RELATED";
    std::env::set_var(env, &base);
    let dir = metadata("actions-related", &[("public_posts.yaml", POSTS)]);
    std::fs::write(dir.join("actions.graphql"), GRAPHQL).expect("actions.graphql");
    std::fs::write(dir.join("actions.yaml"), yaml(env)).expect("actions.yaml");
    let picks = json!([{"post_id": 1, "author_id": 1}, {"post_id": 2, "author_id": 1},
                       {"post_id": 3, "author_id": 2}, {"post_id": 99, "author_id": null}]);
    handler.reply("picks", 200, picks, Duration::ZERO);
    let query = json!({"query": "{ picks { post_id post { title } author_posts(order_by: {id: asc}) { id title } } }"});
    for url in databases("actions_related") {
        let server = serve_dir(&url, &dir).await;
        // The reader does not see `Notes`: neither as an object nor in a list.
        let answer = post_body(&server, &query, &[("x-hasura-role", "reader")]).await;
        let engines = json!({"id": 1, "title": "Engines"});
        let compilers = json!({"id": 3, "title": "Compilers"});
        assert_eq!(
            answer,
            json!({"data": {"picks": [
                {"post_id": 1, "post": {"title": "Engines"}, "author_posts": [engines]},
                {"post_id": 2, "post": null, "author_posts": [engines]},
                {"post_id": 3, "post": {"title": "Compilers"}, "author_posts": [compilers]},
                {"post_id": 99, "post": null, "author_posts": []}
            ]}}),
            "{url}"
        );
        // Admin sees every row; a column the reader may not read is not there for it.
        let admin = post_body(&server, &query, &[]).await;
        assert_eq!(
            admin["data"]["picks"][1]["post"],
            json!({"title": "Notes"}),
            "{url}"
        );
        let hidden = json!({"query": "{ picks { post { author_id } } }"});
        let refused = post_body(&server, &hidden, &[("x-hasura-role", "reader")]).await;
        assert_eq!(
            refused["errors"][0]["extensions"]["code"], "validation-failed",
            "{refused}"
        );

        // A rule's session variable: bound per request, and its absence refused
        // (never read as null); the role's row cap holds, and a negative limit
        // cannot lift it.
        let author = [("x-hasura-role", "author"), ("x-hasura-user-id", "1")];
        let answer = post_body(&server, &query, &author).await;
        assert_eq!(
            answer["data"]["picks"],
            json!([
                {"post_id": 1, "post": {"title": "Engines"}, "author_posts": [engines]},
                {"post_id": 2, "post": {"title": "Notes"}, "author_posts": [engines]},
                {"post_id": 3, "post": null, "author_posts": []},
                {"post_id": 99, "post": null, "author_posts": []}
            ]),
            "{url}: {answer}"
        );
        let anonymous = post_body(&server, &query, &[("x-hasura-role", "author")]).await;
        assert_eq!(
            anonymous["errors"][0]["extensions"]["code"], "access-denied",
            "{anonymous}"
        );
        let negative = json!({"query": "query($n: Int) { picks { author_posts(limit: $n) { id } } }",
                              "variables": {"n": -1}});
        let refused = post_body(&server, &negative, &author).await;
        assert_eq!(
            refused["errors"][0]["extensions"]["code"], "validation-failed",
            "{refused}"
        );
        server.stop().await;
    }
}
