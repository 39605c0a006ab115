//! Generated SQL per backend, without a database: GraphQL in, SQL text and parameters out.
//! Review snapshot changes as carefully as code: they are the engine's real output.

use apollo_compiler::ast;
use grafton_catalog::{Backend, Catalog, Column, ForeignKey, ScalarKind, Table, TableKind, Writes};
use grafton_schema::{Config, Convention, Naming, SchemaModel};
use grafton_sql::{render, Dialect};
use serde_json::{json, Map, Value};

fn col(name: &str, scalar: ScalarKind, nullable: bool) -> Column {
    Column::new(name, scalar, nullable)
}

fn table(name: &str, columns: Vec<Column>, pk: &[&str], fks: Vec<ForeignKey>) -> Table {
    Table {
        schema: "public".into(),
        name: name.into(),
        kind: TableKind::Table,
        columns,
        primary_key: pk.iter().map(|s| s.to_string()).collect(),
        primary_key_name: Some(format!("{name}_pkey")),
        unique_constraints: vec![],
        foreign_keys: fks,
        comment: None,
        writes: Writes::ALL,
    }
}

fn fk(cols: &[&str], target: &str, ref_cols: &[&str]) -> ForeignKey {
    ForeignKey::new(cols, "public", target, ref_cols)
}

fn catalog(backend: Backend, enforced: bool) -> Catalog {
    let schema = match backend {
        Backend::Postgres => "public",
        Backend::Sqlite => "main",
    };
    let mut c = Catalog {
        tables: vec![
            table(
                "venues",
                vec![
                    col("id", ScalarKind::Int, false),
                    col("name", ScalarKind::Text, false),
                    col("postal_code", ScalarKind::Text, true),
                ],
                &["id"],
                vec![],
            ),
            table(
                "meetups",
                vec![
                    col("id", ScalarKind::Int, false),
                    col("title", ScalarKind::Text, false),
                    col("start_at", ScalarKind::Timestamp, true),
                    col("venue_id", ScalarKind::Int, true),
                    col("rating", ScalarKind::Float, true),
                ],
                &["id"],
                vec![fk(&["venue_id"], "venues", &["id"])],
            ),
        ],
        enums: vec![],
        functions: vec![],
        type_schemas: Default::default(),
        extension_tables: Default::default(),
    };
    for t in &mut c.tables {
        t.schema = schema.into();
        for f in &mut t.foreign_keys {
            f.ref_schema = schema.into();
            f.enforced = enforced && backend == Backend::Postgres;
        }
    }
    c
}

fn model(backend: Backend, convention: Convention, enforced: bool) -> SchemaModel {
    grafton_schema::build(
        catalog(backend, enforced),
        &Config::default(),
        Naming::new(convention),
        backend,
    )
    .expect("schema builds")
}

/// Renders `query` with `variables` for both dialects as one snapshot text.
fn sql(query: &str, variables: Value, convention: Convention) -> String {
    sql_with(query, variables, convention, false)
}

/// [`sql`], with the foreign keys enforced by PostgreSQL when `enforced`.
fn sql_with(query: &str, variables: Value, convention: Convention, enforced: bool) -> String {
    let vars: Map<String, Value> = match variables {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    let mut out = String::new();
    for (backend, dialect) in [
        (Backend::Postgres, Dialect::Postgres),
        (Backend::Sqlite, Dialect::Sqlite),
    ] {
        let m = model(backend, convention, enforced);
        let doc = ast::Document::parse(query, "q.graphql")
            .expect("parses")
            .to_executable_validate(&m.schema)
            .expect("validates");
        let op = doc.operations.get(None).expect("one operation");
        let ir = grafton_ir::build_query(&m, &doc, op, &vars).expect("builds IR");
        let select = grafton_translate::translate_query(&m, None, &ir).expect("needs SQL");
        let stmt = render(&select, dialect);
        out.push_str(&format!("-- {dialect:?}\n{}\n", stmt.sql));
        for (i, p) in stmt.params.iter().enumerate() {
            out.push_str(&format!("-- ${}: {:?}\n", i + 1, p.value));
        }
    }
    out
}

#[test]
fn seed_query_no_nest_orders_by_primary_key() {
    insta::assert_snapshot!(sql(
        "query($limit: Int!, $offset: Int!, $id_gt: Int!) { venues(limit: $limit, offset: $offset, where: {id: {_gt: $id_gt}}) { id name postal_code } }",
        json!({"limit": 50, "offset": 0, "id_gt": 10}),
        Convention::HasuraDefault,
    ));
}

#[test]
fn seed_query_one_nest_phrag() {
    insta::assert_snapshot!(sql(
        "query($limit: Int!, $offset: Int!, $id_gt: Int!) { venues(limit: $limit, offset: $offset, where: { id: { gt: $id_gt } }) { id name meetups(limit: $limit, sort: { id: desc }) { id title } } }",
        json!({"limit": 50, "offset": 0, "id_gt": 10}),
        Convention::Phrag,
    ));
}

#[test]
fn object_relationship_and_by_pk() {
    insta::assert_snapshot!(sql(
        "{ meetups_by_pk(id: 1) { title venue { name } } }",
        json!({}),
        Convention::HasuraDefault,
    ));
}

#[test]
fn filters_and_operators() {
    insta::assert_snapshot!(sql(
        r#"query($ids: [Int!], $null: Boolean) { meetups(where: {_or: [{id: {_in: $ids}}, {title: {_ilike: "%rust%"}}], _not: {rating: {_is_null: $null}}, venue: {name: {_eq: "x'y"}}}) { id } }"#,
        json!({"ids": [1, 2], "null": true}),
        Convention::HasuraDefault,
    ));
}

#[test]
fn ordering_by_relationships_and_aggregates() {
    insta::assert_snapshot!(sql(
        "{ venues(order_by: [{meetups_aggregate: {count: desc}}, {postal_code: asc_nulls_first}], limit: 5) { id } meetups(order_by: {venue: {name: asc}}) { id } }",
        json!({}),
        Convention::HasuraDefault,
    ));
}

#[test]
fn aggregates_with_nodes() {
    insta::assert_snapshot!(sql(
        "{ meetups_aggregate(where: {id: {_lt: 100}}) { aggregate { count(columns: [venue_id], distinct: true) avg { rating } max { start_at } stddev { id } } nodes { id } } }",
        json!({}),
        Convention::HasuraDefault,
    ));
}

#[test]
fn distinct_on() {
    insta::assert_snapshot!(sql(
        "{ meetups(distinct_on: [venue_id], order_by: [{venue_id: asc}, {start_at: desc}]) { id venue_id } }",
        json!({}),
        Convention::HasuraDefault,
    ));
}

#[test]
fn identifiers_and_literals_are_escaped() {
    // Aliases become JSON keys (string literals); values are always parameters.
    insta::assert_snapshot!(sql(
        r#"{ a: venues(where: {name: {_eq: "'; DROP TABLE venues; --"}}) { id } }"#,
        json!({}),
        Convention::HasuraDefault,
    ));
}

#[test]
fn an_enforced_keys_target_key_is_read_on_the_row() {
    // The first condition reads only the venue's key through an enforced foreign
    // key: written on meetups.venue_id, no probe of venues. Under `_not` (NULL and
    // false differ) and on another column of venues the probe stays; SQLite, whose
    // keys are not enforced, always probes.
    insta::assert_snapshot!(sql_with(
        "{ meetups(where: {_and: [{venue: {id: {_gt: 5}}}, {_not: {venue: {id: {_lt: 3}}}}, {venue: {name: {_eq: \"x\"}}}]}) { id } }",
        json!({}),
        Convention::HasuraDefault,
        true,
    ));
}
