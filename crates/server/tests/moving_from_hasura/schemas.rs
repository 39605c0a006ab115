//! Tables in another schema than `public` (PostgreSQL): the metadata names their
//! schema, so they are read without `--schema`, and the relationships it names keep
//! their names beside a second schema (issue 28).

use crate::{metadata, post, serve};
use serde_json::json;

const FIXTURE: &str = "
CREATE SCHEMA shop;
CREATE TABLE categories (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE shop.items (
  id INTEGER NOT NULL PRIMARY KEY,
  category INTEGER NOT NULL REFERENCES categories (id)
);
INSERT INTO categories VALUES (1, 'tools');
INSERT INTO shop.items VALUES (10, 1);
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_public_schema_named_by_the_metadata_is_served() {
    let dir = metadata(
        "other-schema",
        &[
            (
                "public_categories.yaml",
                "table: {name: categories, schema: public}\narray_relationships:\n  - name: shopItems\n    using: {foreign_key_constraint_on: {column: category, table: {name: items, schema: shop}}}\n",
            ),
            (
                "shop_items.yaml",
                "table: {name: items, schema: shop}\nobject_relationships:\n  - name: categoryByCategory\n    using: {foreign_key_constraint_on: category}\n",
            ),
        ],
    );
    let postgres = grafton_testkit::fresh_database("hasura_other_schema");
    grafton_testkit::psql(&postgres, FIXTURE.as_bytes());
    // No --schema: the default (public) and what the metadata names.
    let server = serve(&postgres, &dir).await;
    let body = post(
        &server,
        None,
        "{ shop_items { id categoryByCategory { name } } categories { shopItems { id } } }",
    )
    .await;
    assert_eq!(
        body["data"],
        json!({
            "shop_items": [{"id": 10, "categoryByCategory": {"name": "tools"}}],
            "categories": [{"shopItems": [{"id": 10}]}]
        }),
        "{body}"
    );
}
