//! Schema generation from a hand-built catalog: names, relationships, config, SDL.

use grafton_catalog::{Backend, Catalog, Column, ForeignKey, ScalarKind, Table, TableKind, Writes};
use grafton_schema::{
    build, Config, Convention, Naming, RootField, SchemaError, SchemaModel, TableField,
};

fn col(name: &str, scalar: ScalarKind, nullable: bool) -> Column {
    Column::new(name, scalar, nullable)
}

fn fk(cols: &[&str], target: &str, ref_cols: &[&str]) -> ForeignKey {
    ForeignKey::new(cols, "public", target, ref_cols)
}

fn table(
    name: &str,
    kind: TableKind,
    columns: Vec<Column>,
    pk: &[&str],
    fks: Vec<ForeignKey>,
) -> Table {
    Table {
        schema: "public".into(),
        name: name.into(),
        kind,
        columns,
        primary_key: pk.iter().map(|s| s.to_string()).collect(),
        primary_key_name: None,
        unique_constraints: vec![],
        foreign_keys: fks,
        comment: None,
        writes: if kind == TableKind::Table {
            Writes::ALL
        } else {
            Writes::default()
        },
    }
}

/// A slice of the meetup schema plus the awkward cases.
fn catalog() -> Catalog {
    use ScalarKind::*;
    use TableKind::Table as T;
    Catalog {
        tables: vec![
            table(
                "members",
                T,
                vec![col("id", Int, false), col("email", Text, true)],
                &["id"],
                vec![],
            ),
            table(
                "member_follow",
                T,
                vec![col("created_by", Int, false), col("member_id", Int, false)],
                &["created_by", "member_id"],
                vec![
                    fk(&["created_by"], "members", &["id"]),
                    fk(&["member_id"], "members", &["id"]),
                ],
            ),
            table(
                "venues",
                T,
                vec![col("id", Int, false), col("name", Text, false)],
                &["id"],
                vec![],
            ),
            table(
                "meetups",
                T,
                vec![
                    col("id", Int, false),
                    col("title", Text, false),
                    col("venue_id", Int, true),
                    col("score", Float, true),
                    col("tags", Jsonb, true),
                ],
                &["id"],
                vec![fk(&["venue_id"], "venues", &["id"])],
            ),
            table(
                "category",
                T,
                vec![col("id", Int, false), col("parent_id", Int, true)],
                &["id"],
                vec![fk(&["parent_id"], "category", &["id"])],
            ),
            table(
                "venue_stats",
                TableKind::View,
                vec![col("venue_id", Int, true), col("n", BigInt, true)],
                &[],
                vec![],
            ),
            table("log lines", T, vec![col("msg", Text, true)], &[], vec![]),
        ],
        enums: vec![],
        functions: vec![],
        type_schemas: Default::default(),
        extension_tables: Default::default(),
    }
}

fn model(config: &Config, convention: Convention) -> SchemaModel {
    build(
        catalog(),
        config,
        Naming::new(convention),
        Backend::Postgres,
    )
    .expect("schema builds")
}

fn field<'a>(m: &'a SchemaModel, table: &str, name: &str) -> Option<&'a TableField> {
    let t = m.tables.iter().find(|t| t.base_name == table)?;
    t.fields.get(name)
}

#[test]
fn relationship_names_follow_hasura_rules() {
    let m = model(&Config::default(), Convention::HasuraDefault);
    assert!(matches!(
        field(&m, "meetups", "venue"),
        Some(TableField::Object(_))
    ));
    assert!(matches!(
        field(&m, "venues", "meetups"),
        Some(TableField::Array(_))
    ));
    assert!(matches!(
        field(&m, "venues", "meetups_aggregate"),
        Some(TableField::ArrayAggregate(_))
    ));
    // No `_id` suffix: `<column>_<table>`.
    assert!(matches!(
        field(&m, "member_follow", "created_by_members"),
        Some(TableField::Object(_))
    ));
    assert!(matches!(
        field(&m, "member_follow", "member"),
        Some(TableField::Object(_))
    ));
    // Two FKs from one child to the same parent: `_by_<column>`.
    assert!(matches!(
        field(&m, "members", "member_follows_by_created_by"),
        Some(TableField::Array(_))
    ));
    assert!(matches!(
        field(&m, "members", "member_follows_by_member_id"),
        Some(TableField::Array(_))
    ));
    // Self reference: both directions on one table.
    assert!(matches!(
        field(&m, "category", "parent"),
        Some(TableField::Object(_))
    ));
    assert!(matches!(
        field(&m, "category", "categories"),
        Some(TableField::Array(_))
    ));
}

#[test]
fn root_fields_and_keyless_tables() {
    let m = model(&Config::default(), Convention::HasuraDefault);
    for name in [
        "venues",
        "venues_by_pk",
        "venues_aggregate",
        "venue_stats",
        "log_lines",
    ] {
        assert!(m.root_fields.contains_key(name), "{name}");
    }
    assert!(
        !m.root_fields.contains_key("venue_stats_by_pk"),
        "views have no key by default"
    );
    assert!(!m.root_fields.contains_key("log_lines_by_pk"));
    assert!(
        m.sdl.contains("type log_lines"),
        "invalid characters are replaced"
    );
}

#[test]
fn graphql_default_names() {
    let m = model(&Config::default(), Convention::GraphqlDefault);
    assert!(matches!(
        m.root_fields.get("venuesByPk"),
        Some(RootField::ByPk(_))
    ));
    assert!(matches!(
        m.root_fields.get("meetupsAggregate"),
        Some(RootField::Aggregate(_))
    ));
    assert!(m.sdl.contains("input VenuesBoolExp"));
    assert!(m.sdl.contains("input IntComparisonExp"));
    assert!(m.sdl.contains("  _isNull: Boolean"));
    assert!(m.sdl.contains("  DESC_NULLS_LAST"));
    assert!(m.sdl.contains("orderBy: [VenuesOrderBy!]"));
    assert!(matches!(
        field(&m, "members", "memberFollowsByCreatedBy"),
        Some(TableField::Array(_))
    ));
}

#[test]
fn config_keys_renames_and_manual_relationships() {
    let config: Config = serde_norway::from_str(
        r#"
tables:
  venue_stats:
    primary_key: [venue_id]
    relationships:
      venue: { type: object, table: venues, columns: { venue_id: id } }
  venues:
    rename_relationships: { meetups: events }
"#,
    )
    .expect("config parses");
    let m = model(&config, Convention::HasuraDefault);
    assert!(matches!(
        m.root_fields.get("venue_stats_by_pk"),
        Some(RootField::ByPk(_))
    ));
    assert!(matches!(
        field(&m, "venue_stats", "venue"),
        Some(TableField::Object(_))
    ));
    assert!(matches!(
        field(&m, "venues", "events"),
        Some(TableField::Array(_))
    ));
    assert!(matches!(
        field(&m, "venues", "events_aggregate"),
        Some(TableField::ArrayAggregate(_))
    ));
    assert!(field(&m, "venues", "meetups").is_none());
}

#[test]
fn config_mistakes_are_clear_errors() {
    for (yaml, expected) in [
        ("tables: {nope: {}}", "no table or view 'nope' in the database"),
        ("tables: {venues: {primary_key: [zip]}}", "primary key column 'zip'"),
        ("tables: {venues: {rename_relationships: {x: y}}}", "no relationship named 'x'"),
        (
            "tables: {venues: {relationships: {r: {type: array, table: meetups, columns: {id: nope}}}}}",
            "unknown column in mapping",
        ),
    ] {
        let config: Config = serde_norway::from_str(yaml).expect("yaml parses");
        let err = build(catalog(), &config, Naming::default(), Backend::Postgres).expect_err(yaml);
        // Each names the object left out (inconsistent metadata), and why.
        assert!(matches!(err, SchemaError::Inconsistent(_)), "{yaml}");
        assert!(err.to_string().contains(expected), "{yaml}: {err}");
    }
    let unknown_key: Result<Config, _> = serde_norway::from_str("tables: {venues: {colour: red}}");
    assert!(unknown_key.is_err(), "unknown config keys are rejected");
}

#[test]
fn empty_database_is_an_error() {
    let err = build(
        Catalog::default(),
        &Config::default(),
        Naming::default(),
        Backend::Sqlite,
    )
    .expect_err("no tables");
    assert!(err.to_string().contains("no tables"));
}

#[test]
fn sdl_hasura_default() {
    insta::assert_snapshot!(model(&Config::default(), Convention::HasuraDefault).sdl);
}

/// A role whose insert leaves no column to write (every one a preset) and whose
/// update grants no column gets no empty input type (GraphQL has none): its insert
/// is left out whole, its update keeps only `where` (issue 28).
#[test]
fn a_role_that_can_write_no_field_gets_no_empty_input_type() {
    let config: Config = serde_norway::from_str(
        r#"
tables:
  members:
    permissions:
      clerk:
        select: {columns: [id, email], filter: {}}
        insert: {columns: [email], set: {email: X-Hasura-User-Id}}
        update: {columns: [], filter: {}, set: {email: X-Hasura-User-Id}}
"#,
    )
    .expect("config");
    let naming = Naming::new(Convention::HasuraDefault);
    let model = grafton_schema::build_for_role(
        catalog(),
        &config,
        naming,
        Backend::Postgres,
        Some("clerk"),
        false,
    )
    .expect("the role's schema is valid");
    assert!(!model.sdl.contains("members_insert_input"), "{}", model.sdl);
    assert!(!model.sdl.contains("members_set_input"), "{}", model.sdl);
    assert!(!model.mutation_fields.contains_key("insert_members"));
    assert!(model.mutation_fields.contains_key("update_members"));
    insta::assert_snapshot!(model.sdl);
}

/// With a second schema that sorts before `public`, a config key without a schema
/// still names a `public` table: the relationship the config names keeps its name
/// (it became the generated `author` before, in silence; issue 28).
#[test]
fn config_keys_without_a_schema_name_public_tables_whatever_else_is_exposed() {
    use ScalarKind::*;
    let mut logs = table(
        "logs",
        TableKind::Table,
        vec![col("id", Int, false)],
        &["id"],
        vec![],
    );
    logs.schema = "aaa".into();
    let authors = table(
        "authors",
        TableKind::Table,
        vec![col("id", Int, false)],
        &["id"],
        vec![],
    );
    let posts = table(
        "posts",
        TableKind::Table,
        vec![col("id", Int, false), col("author_id", Int, false)],
        &["id"],
        vec![fk(&["author_id"], "authors", &["id"])],
    );
    let catalog = Catalog {
        tables: vec![logs, authors, posts],
        ..Catalog::default()
    };
    let config: Config = serde_norway::from_str(
        "tables: {posts: {foreign_key_relationships: {writer: {type: object, columns: [author_id]}}}}",
    )
    .expect("config");
    let model = build(
        catalog,
        &config,
        Naming::new(Convention::HasuraDefault),
        Backend::Postgres,
    )
    .expect("schema builds");
    assert!(matches!(
        field(&model, "posts", "writer"),
        Some(TableField::Object(_))
    ));
    assert!(field(&model, "posts", "author").is_none());
}

/// PostGIS's and ltree's type names are taken only where the database has those
/// types: without PostGIS a table may be called `geometry`.
#[test]
fn extension_type_names_are_taken_only_where_the_database_has_them() {
    let catalog = || Catalog {
        tables: vec![table(
            "geometry",
            TableKind::Table,
            vec![col("id", ScalarKind::Int, false)],
            &["id"],
            vec![],
        )],
        ..Catalog::default()
    };
    let m = build(
        catalog(),
        &Config::default(),
        Naming::default(),
        Backend::Postgres,
    )
    .expect("a table named geometry builds without PostGIS");
    assert!(m.root_fields.contains_key("geometry"));
    // With PostGIS the name is its scalar's: the table is skipped, loudly.
    let mut with_postgis = catalog();
    with_postgis.tables.push(table(
        "shapes",
        TableKind::Table,
        vec![col("id", ScalarKind::Int, false)],
        &["id"],
        vec![],
    ));
    with_postgis
        .type_schemas
        .insert("geometry".into(), "public".into());
    let m = build(
        with_postgis,
        &Config::default(),
        Naming::default(),
        Backend::Postgres,
    )
    .expect("builds");
    assert!(!m.root_fields.contains_key("geometry"));
    assert!(
        (m.warnings.iter()).any(|w| w.contains("table public.geometry skipped")),
        "{:?}",
        m.warnings
    );
}
