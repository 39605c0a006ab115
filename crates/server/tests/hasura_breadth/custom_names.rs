//! `configuration.custom_name`, `column_config.<column>.custom_name` and the older
//! `custom_column_names`: every type, root field and field follows them, permission
//! rules keep naming database columns, and names that collide stop start-up.

use crate::{databases, metadata, post, serve};
use serde_json::json;

const AUTHORS: &str = "
table: {name: authors, schema: public}
configuration:
  custom_name: writers
  column_config:
    full_name: {custom_name: name, comment: The name they publish under}
array_relationships:
  - name: posts
    using: {foreign_key_constraint_on: {column: author_id, table: {name: posts, schema: public}}}
select_permissions:
  - role: reader
    permission:
      columns: [id, full_name]
      filter: {full_name: {_neq: Grace}}
";

const POSTS: &str = "
table: {name: posts, schema: public}
configuration:
  custom_column_names: {author_id: writerId}
object_relationships:
  - name: writer
    using: {foreign_key_constraint_on: author_id}
select_permissions:
  - role: reader
    permission:
      columns: [id, author_id, title]
      filter: {writer: {id: {_eq: X-Hasura-User-Id}}}
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_names_from_hasura_metadata_name_everything() {
    let dir = metadata(
        "custom-names",
        &[
            ("public_authors.yaml", AUTHORS),
            ("public_posts.yaml", POSTS),
        ],
    );
    for url in databases("custom_names") {
        let server = serve(&url, &dir).await;
        let body = post(
            &server,
            None,
            r#"{
              writers(order_by: {name: desc}, where: {name: {_like: "%a%"}}) { id name posts(order_by: {id: asc}) { title writerId writer { name } } }
              writers_by_pk(id: 1) { __typename name }
              writers_aggregate { aggregate { count max { name } } }
              posts(where: {writerId: {_eq: 2}}) { title }
            }"#,
        )
        .await;
        assert_eq!(
            body,
            json!({"data": {
                "writers": [
                    {"id": 2, "name": "Grace", "posts": [{"title": "Compilers", "writerId": 2, "writer": {"name": "Grace"}}]},
                    {"id": 1, "name": "Ada", "posts": [
                        {"title": "Engines", "writerId": 1, "writer": {"name": "Ada"}},
                        {"title": "Notes", "writerId": 1, "writer": {"name": "Ada"}}
                    ]}
                ],
                "writers_by_pk": {"__typename": "writers", "name": "Ada"},
                "writers_aggregate": {"aggregate": {"count": 2, "max": {"name": "Grace"}}},
                "posts": [{"title": "Compilers"}]
            }}),
            "{url}"
        );
        // The table's own names are gone; mutations and their inputs follow too.
        let old = post(&server, None, "{ authors { full_name } }").await;
        assert_eq!(
            old["errors"][0]["extensions"]["code"], "validation-failed",
            "{old}"
        );
        let inserted = post(
            &server,
            None,
            r#"mutation {
              insert_writers_one(object: {id: 3, name: "Edsger", posts: {data: [{id: 4, title: "GOTO"}]}}) { id name posts { writerId } }
              update_writers(where: {name: {_eq: "Ada"}}, _set: {name: "Ada L."}) { affected_rows }
              update_posts_by_pk(pk_columns: {id: 1}, _set: {writerId: 2}) { writerId }
            }"#,
        )
        .await;
        assert_eq!(
            inserted["data"],
            json!({
                "insert_writers_one": {"id": 3, "name": "Edsger", "posts": [{"writerId": 3}]},
                "update_writers": {"affected_rows": 1},
                "update_posts_by_pk": {"writerId": 2}
            }),
            "{url}: {inserted}"
        );
        let types = post(
            &server,
            None,
            r#"{ t: __type(name: "writers_bool_exp") { name } c: __type(name: "writers_select_column") { enumValues { name } } }"#,
        )
        .await;
        assert_eq!(types["data"]["t"]["name"], "writers_bool_exp", "{types}");
        assert_eq!(
            types["data"]["c"]["enumValues"],
            json!([{"name": "id"}, {"name": "name"}]),
            "{types}"
        );
        // Rules name database columns and relationships, as in Hasura.
        let reader = post(
            &server,
            Some("reader"),
            "{ writers(order_by: {id: asc}) { name } posts { title } }",
        )
        .await;
        assert_eq!(
            reader["data"],
            json!({"writers": [{"name": "Ada L."}, {"name": "Edsger"}], "posts": [{"title": "Notes"}]}),
            "{url}: {reader}"
        );
        server.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_names_that_collide_stop_start_up_naming_both() {
    let [sqlite, _] = databases("custom_name_clash");
    let cases = [
        (
            "clash-tables",
            "table: authors\nconfiguration: {custom_name: posts}\n",
            "table main.posts needs the GraphQL name 'posts', which table main.authors (custom_name 'posts') already takes",
        ),
        (
            "clash-columns",
            "table: authors\nconfiguration: {column_config: {full_name: {custom_name: id}}}\n",
            "columns main.authors.id and main.authors.full_name would both be the GraphQL field 'id'",
        ),
        (
            "bad-name",
            "table: authors\nconfiguration: {custom_name: 'the writers'}\n",
            "custom_name 'the writers' is not a GraphQL name",
        ),
        (
            "root-fields",
            "table: authors\nconfiguration: {custom_root_fields: {select: writers}}\n",
            "custom_root_fields",
        ),
    ];
    for (name, table, expected) in cases {
        let dir = metadata(name, &[("public_authors.yaml", table)]);
        let error = match grafton_schema::hasura::load(&dir) {
            Err(e) => e,
            Ok(config) => {
                let started = grafton_server::start(&grafton_server::ServeOptions {
                    database_url: sqlite.clone(),
                    port: 0,
                    config,
                    ..Default::default()
                })
                .await;
                match started {
                    Err(e) => e.to_string(),
                    Ok(_) => panic!("{name}: started"),
                }
            }
        };
        assert!(error.contains(expected), "{name}: {error}");
    }
}
