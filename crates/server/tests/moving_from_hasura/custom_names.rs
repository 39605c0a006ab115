//! `configuration.custom_name`, `custom_root_fields`, `column_config.<column>.custom_name`
//! and the older `custom_column_names`: every type, root field and field follows them,
//! permission rules keep naming database columns, and names that collide stop
//! start-up.

use crate::{databases, metadata, post, serve};
use serde_json::json;

const AUTHORS: &str = "
table: {name: authors, schema: public}
configuration:
  custom_name: writers
  comment: People who write
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
  custom_root_fields:
    select: articles
    select_by_pk: {name: article, comment: One article by its key}
    select_aggregate: articles_stats
    select_stream: articles_feed
    insert: add_articles
    insert_one: add_article
    update: edit_articles
    update_by_pk: edit_article
    update_many: edit_articles_many
    delete: remove_articles
    delete_by_pk: remove_article
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
              articles(where: {writerId: {_eq: 2}}) { title }
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
                "articles": [{"title": "Compilers"}]
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
              edit_article(pk_columns: {id: 1}, _set: {writerId: 2}) { writerId }
            }"#,
        )
        .await;
        assert_eq!(
            inserted["data"],
            json!({
                "insert_writers_one": {"id": 3, "name": "Edsger", "posts": [{"writerId": 3}]},
                "update_writers": {"affected_rows": 1},
                "edit_article": {"writerId": 2}
            }),
            "{url}: {inserted}"
        );
        // Every root field of posts is renamed, in all three root types, with the
        // comment as its description.
        let roots = post(
            &server,
            None,
            r#"{ q: __type(name: "query_root") { fields { name description } }
                 m: __type(name: "mutation_root") { fields { name } }
                 s: __type(name: "subscription_root") { fields { name } } }"#,
        )
        .await;
        let names = |root: &str| -> Vec<String> {
            (roots["data"][root]["fields"]
                .as_array()
                .into_iter()
                .flatten())
            .filter_map(|f| f["name"].as_str())
            .filter(|n| !n.contains("writers"))
            .map(str::to_owned)
            .collect()
        };
        assert_eq!(
            names("q"),
            ["articles", "articles_stats", "article"],
            "{roots}"
        );
        assert_eq!(
            names("s"),
            ["articles", "articles_stats", "article", "articles_feed"]
        );
        assert_eq!(
            names("m"),
            [
                "remove_articles",
                "remove_article",
                "add_articles",
                "add_article",
                "edit_articles",
                "edit_article",
                "edit_articles_many"
            ]
        );
        let by_pk = (roots["data"]["q"]["fields"]
            .as_array()
            .into_iter()
            .flatten())
        .find(|f| f["name"] == "article")
        .map(|f| f["description"].clone());
        assert_eq!(by_pk, Some(json!("One article by its key")));
        let removed = post(
            &server,
            None,
            "mutation { remove_article(id: 4) { title } add_articles(objects: [{id: 5, writerId: 3, title: \"T\"}]) { affected_rows } }",
        )
        .await;
        assert_eq!(
            removed["data"],
            json!({"remove_article": {"title": "GOTO"}, "add_articles": {"affected_rows": 1}}),
            "{url}: {removed}"
        );
        let types = post(
            &server,
            None,
            r#"{ t: __type(name: "writers_bool_exp") { name } c: __type(name: "writers_select_column") { enumValues { name } } }"#,
        )
        .await;
        assert_eq!(types["data"]["t"]["name"], "writers_bool_exp", "{types}");
        // The configuration's comments describe the type and the field.
        let described = post(
            &server,
            None,
            r#"{ __type(name: "writers") { description fields { name description } } }"#,
        )
        .await;
        let t = &described["data"]["__type"];
        assert_eq!(t["description"], "People who write", "{described}");
        let field = (t["fields"].as_array().into_iter().flatten()).find(|f| f["name"] == "name");
        assert_eq!(
            field.map(|f| f["description"].clone()),
            Some(json!("The name they publish under")),
            "{described}"
        );
        assert_eq!(
            types["data"]["c"]["enumValues"],
            json!([{"name": "id"}, {"name": "name"}]),
            "{types}"
        );
        // Rules name database columns and relationships, as in Hasura.
        let reader = post(
            &server,
            Some("reader"),
            "{ writers(order_by: {id: asc}) { name } articles { title } }",
        )
        .await;
        assert_eq!(
            reader["data"],
            json!({"writers": [{"name": "Ada L."}, {"name": "Edsger"}], "articles": [{"title": "Notes"}]}),
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
            "clash-root-field",
            "table: authors\nconfiguration: {custom_root_fields: {select_by_pk: posts}}\n",
            "table main.posts needs the GraphQL name 'posts', which table main.authors (custom_root_fields) already takes",
        ),
        (
            "twice-in-one-table",
            "table: authors\nconfiguration: {custom_root_fields: {select: a, delete: a}}\n",
            "needs the GraphQL name 'a', which another root field of table main.authors (custom_root_fields) already takes",
        ),
        (
            "unknown-root-field",
            "table: authors\nconfiguration: {custom_root_fields: {selekt: a}}\n",
            "custom_root_fields.selekt is not a root field",
        ),
    ];
    for (name, table, expected) in cases {
        // Hasura metadata serves only what it tracks: posts too, for the clashes.
        let files = [
            ("public_authors.yaml", table),
            ("public_posts.yaml", "table: posts\n"),
        ];
        let dir = metadata(name, &files);
        let error = match grafton_schema::hasura::load(&dir) {
            Err(e) => e,
            Ok(config) => {
                let started = grafton_server::start(&grafton_server::ServeOptions {
                    database_url: sqlite.clone(),
                    port: 0,
                    config,
                    strict_metadata: true,
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
