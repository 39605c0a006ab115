//! `databases/databases.yaml` (issue 28): the source's `naming_convention` and root
//! field prefix and suffix are applied (`--naming` wins over the convention), and
//! what Grafton does not apply yet (type name prefixes, a root field namespace, a
//! second source) is reported as inconsistent metadata.

use crate::{databases, metadata, post};
use grafton_schema::Convention;
use grafton_server::ServeOptions;

const SOURCES: &str = "- name: default
  kind: postgres
  configuration: {connection_info: {database_url: {from_env: HASURA_GRAPHQL_DATABASE_URL}}}
  tables: \"!include default/tables/tables.yaml\"
  customization:
    naming_convention: graphql-default
    root_fields: {prefix: shop_}
    type_names: {prefix: Shop_}
  health_check: {test: {sql: SELECT 1}, interval: 60}
- name: analytics
  kind: mssql
  configuration: {connection_info: {database_url: {from_env: ANALYTICS_URL}}}
  tables: []
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sources_naming_convention_is_applied_and_the_rest_reported() {
    let dir = metadata(
        "source-customization",
        &[
            ("public_authors.yaml", "table: {name: authors, schema: public}\n"),
            ("public_posts.yaml", "table: {name: posts, schema: public}\nobject_relationships:\n  - name: author\n    using: {foreign_key_constraint_on: author_id}\n"),
        ],
    );
    std::fs::write(dir.join("databases/databases.yaml"), SOURCES).expect("databases.yaml");
    let config = grafton_schema::hasura::load(&dir).expect("metadata loads");
    assert_eq!(config.naming, Some(Convention::GraphqlDefault));
    let reported: Vec<String> = (config.left_out.iter())
        .map(|i| format!("{}: {}", i.describe(), i.reason))
        .collect();
    assert_eq!(reported.len(), 4, "{reported:?}");
    let has = |a: &str, b: &str| reported.iter().any(|r| r.contains(a) && r.contains(b));
    assert!(has("source 'analytics'", "second source"), "{reported:?}");
    assert!(has("source 'default'", "type_names"), "{reported:?}");
    assert!(
        has("source 'default'", "'health_check' is not read"),
        "{reported:?}"
    );
    assert!(
        has("source 'analytics'", "a mssql source is not served"),
        "{reported:?}"
    );

    for url in databases("hasura_source") {
        let server = grafton_server::start(&ServeOptions {
            database_url: url.clone(),
            port: 0,
            config: config.clone(),
            ..ServeOptions::default()
        })
        .await
        .expect("server starts");
        // graphql-default: camelCase root fields and arguments, PascalCase types;
        // the prefix before each root field, joined as Hasura joins it.
        let query = "{ shop_PostsByPk(id: 1) { title author { fullName } } shop_Authors { id } }";
        let body = post(&server, None, query).await;
        let data = &body["data"];
        assert_eq!(
            data["shop_PostsByPk"]["author"]["fullName"], "Ada",
            "{url}: {body}"
        );
        assert_eq!(
            data["shop_Authors"].as_array().map(Vec::len),
            Some(2),
            "{url}: {body}"
        );
        server.stop().await;

        // --naming wins over the source's.
        let server = grafton_server::start(&ServeOptions {
            database_url: url.clone(),
            port: 0,
            config: config.clone(),
            naming: Some(Convention::HasuraDefault),
            ..ServeOptions::default()
        })
        .await
        .expect("server starts");
        let query = "{ shop_posts_by_pk(id: 1) { author { full_name } } }";
        let body = post(&server, None, query).await;
        let author = &body["data"]["shop_posts_by_pk"]["author"];
        assert_eq!(author["full_name"], "Ada", "{url}: {body}");
        server.stop().await;
    }
}
