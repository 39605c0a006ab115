//! Introspection of a real PostgreSQL database (a throwaway cluster from
//! grafton-testkit, or `GRAFTON_TEST_DATABASE_URL`).

use grafton_catalog::{introspect_postgres, ScalarKind, Table, TableKind, Writes};
use tokio_postgres::NoTls;

const SCHEMA: &str = r#"
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
ALTER TYPE mood ADD VALUE 'meh' BEFORE 'ok';
CREATE DOMAIN email AS varchar(200) NOT NULL;
CREATE DOMAIN mood_d AS mood;
CREATE TABLE members (
    id serial PRIMARY KEY,
    name text NOT NULL,
    email email,
    nick varchar(40) UNIQUE,
    mood mood,
    mood2 mood_d,
    tags text[],
    notes jsonb[],
    doc tsvector,
    created_at timestamptz NOT NULL DEFAULT now(),
    seq bigint GENERATED ALWAYS AS IDENTITY,
    name_len int2 GENERATED ALWAYS AS (length(name)) STORED
);
COMMENT ON TABLE members IS 'People';
COMMENT ON COLUMN members.name IS 'Display name';
CREATE TABLE groups (
    org_id int4 NOT NULL,
    slug text NOT NULL,
    title varchar(100),
    PRIMARY KEY (slug, org_id)
);
CREATE UNIQUE INDEX groups_title_idx ON groups (title);
CREATE UNIQUE INDEX groups_lower_title ON groups (lower(title));
CREATE UNIQUE INDEX groups_partial ON groups (title) WHERE org_id > 0;
CREATE INDEX groups_plain ON groups (org_id);
CREATE TABLE groups_members (
    group_slug text NOT NULL,
    group_org int4 NOT NULL,
    member_id int NOT NULL REFERENCES members (id),
    joined date DEFAULT current_date,
    CONSTRAINT gm_group_fkey FOREIGN KEY (group_org, group_slug)
        REFERENCES groups (org_id, slug),
    CONSTRAINT gm_unique UNIQUE (member_id, group_slug, group_org)
);
-- Added NOT VALID: rows from before it may dangle, so it is not "enforced".
ALTER TABLE groups_members ADD CONSTRAINT gm_member_unchecked
    FOREIGN KEY (member_id) REFERENCES members (id) NOT VALID;
CREATE TABLE audit_log (
    at timestamp, at_tz timestamptz, day date, t time, ttz timetz, span interval,
    amount numeric(10, 2), ratio float8, small float4, raw bytea, payload jsonb,
    j json, flag bool, uid uuid, code char(3), big int8
);
CREATE VIEW member_names AS SELECT id, name FROM members;
CREATE MATERIALIZED VIEW member_counts AS SELECT count(*) AS n FROM members;
CREATE SCHEMA other;
CREATE TYPE other.color AS ENUM ('red');
CREATE TABLE other.hidden (id int PRIMARY KEY, m mood);
"#;

type Col<'a> = (&'a str, &'a str, ScalarKind, bool, bool);

fn columns(t: &Table) -> Vec<Col<'_>> {
    t.columns
        .iter()
        .map(|c| {
            (
                c.name.as_str(),
                c.db_type.as_str(),
                c.scalar.clone(),
                c.nullable,
                c.has_default,
            )
        })
        .collect()
}

fn v(s: &[&str]) -> Vec<String> {
    s.iter().map(|s| s.to_string()).collect()
}

#[tokio::test]
async fn introspects_a_postgres_database() {
    let url = grafton_testkit::fresh_database("catalog");
    let (client, connection) = tokio_postgres::connect(&url, NoTls).await.expect("connect");
    tokio::spawn(connection);
    client.batch_execute(SCHEMA).await.expect("schema");

    let result = introspect_postgres(&client, &["public".to_owned()])
        .await
        .expect("introspect");
    let catalog = &result.catalog;

    let names: Vec<_> = catalog.tables.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "audit_log",
            "groups",
            "groups_members",
            "member_counts",
            "member_names",
            "members"
        ]
    );
    assert!(catalog.tables.iter().all(|t| t.schema == "public"));

    assert_eq!(catalog.enums.len(), 1, "only enums of public");
    let mood = &catalog.enums[0];
    assert_eq!(
        (mood.schema.as_str(), mood.name.as_str()),
        ("public", "mood")
    );
    assert_eq!(mood.values, ["sad", "meh", "ok", "happy"], "by sort order");

    use ScalarKind::*;
    let members = catalog.table("public", "members").expect("members");
    assert_eq!(members.kind, TableKind::Table);
    assert_eq!(members.comment.as_deref(), Some("People"));
    assert_eq!(members.primary_key, ["id"]);
    assert_eq!(members.primary_key_name.as_deref(), Some("members_pkey"));
    assert_eq!(
        columns(members),
        [
            ("id", "int4", Int, false, true),
            ("name", "text", Text, false, false),
            ("email", "varchar", Text, false, false),
            ("nick", "varchar", Text, true, false),
            ("mood", "mood", Enum(0), true, false),
            ("mood2", "mood", Enum(0), true, false),
            ("tags", "text[]", Array(Box::new(Text)), true, false),
            ("notes", "jsonb[]", Text, true, false),
            ("doc", "tsvector", Text, true, false),
            ("created_at", "timestamptz", Timestamptz, false, true),
            ("seq", "int8", BigInt, false, true),
            ("name_len", "int2", Int, true, true),
        ]
    );
    assert_eq!(
        members.column("name").and_then(|c| c.comment.as_deref()),
        Some("Display name")
    );
    assert_eq!(
        result.warnings,
        [
            "column public.members.notes has type jsonb[], exposed as String",
            "column public.members.doc has type tsvector, exposed as String",
        ]
    );
    assert_eq!(members.unique_constraints.len(), 1);
    assert_eq!(members.unique_constraints[0].name, "members_nick_key");
    assert_eq!(members.unique_constraints[0].columns, ["nick"]);

    let groups = catalog.table("public", "groups").expect("groups");
    assert_eq!(groups.primary_key, ["slug", "org_id"], "key order");
    assert_eq!(groups.primary_key_name.as_deref(), Some("groups_pkey"));
    let uniques: Vec<_> = groups
        .unique_constraints
        .iter()
        .map(|u| (u.name.as_str(), u.columns.clone()))
        .collect();
    assert_eq!(
        uniques,
        [("groups_title_idx", v(&["title"]))],
        "no expression, partial or non-unique indexes"
    );

    let gm = catalog
        .table("public", "groups_members")
        .expect("groups_members");
    assert!(gm.primary_key.is_empty());
    assert_eq!(gm.primary_key_name, None);
    assert_eq!(columns(gm)[3], ("joined", "date", Date, true, true));
    let fks: Vec<_> = gm
        .foreign_keys
        .iter()
        .map(|f| {
            (
                f.name.as_str(),
                f.columns.clone(),
                f.ref_schema.as_str(),
                f.ref_table.as_str(),
                f.ref_columns.clone(),
                f.enforced,
            )
        })
        .collect();
    assert_eq!(
        fks,
        [
            (
                "gm_group_fkey",
                v(&["group_org", "group_slug"]),
                "public",
                "groups",
                v(&["org_id", "slug"]),
                true,
            ),
            (
                "gm_member_unchecked",
                v(&["member_id"]),
                "public",
                "members",
                v(&["id"]),
                false,
            ),
            (
                "groups_members_member_id_fkey",
                v(&["member_id"]),
                "public",
                "members",
                v(&["id"]),
                true,
            ),
        ]
    );
    assert_eq!(gm.unique_constraints.len(), 1);
    assert_eq!(gm.unique_constraints[0].name, "gm_unique");
    assert_eq!(
        gm.unique_constraints[0].columns,
        ["member_id", "group_slug", "group_org"]
    );

    let audit = catalog.table("public", "audit_log").expect("audit_log");
    assert!(audit.primary_key.is_empty());
    let kinds: Vec<_> = audit.columns.iter().map(|c| c.scalar.clone()).collect();
    assert_eq!(
        kinds,
        [
            Timestamp,
            Timestamptz,
            Date,
            Time,
            Timetz,
            Interval,
            Numeric,
            Float,
            Float,
            Bytea,
            Jsonb,
            Json,
            Boolean,
            Uuid,
            Text,
            BigInt
        ]
    );
    assert!(audit.columns.iter().all(|c| c.nullable && !c.has_default));

    for name in ["member_names", "member_counts"] {
        let view = catalog.table("public", name).expect("view");
        assert_eq!(view.kind, TableKind::View, "{name}");
        assert!(view.primary_key.is_empty());
    }
    // A simple view is auto-updatable; a materialized view takes no writes.
    let writes = |name: &str| catalog.table("public", name).expect("relation").writes;
    assert_eq!(writes("member_names"), Writes::ALL);
    assert_eq!(writes("member_counts"), Writes::default());
    assert_eq!(writes("members"), Writes::ALL);
    let view = catalog.table("public", "member_names").expect("view");
    assert_eq!(
        columns(view),
        [
            ("id", "int4", Int, true, false),
            ("name", "text", Text, true, false)
        ]
    );
    let counts = catalog.table("public", "member_counts").expect("matview");
    assert_eq!(columns(counts), [("n", "int8", BigInt, true, false)]);

    // Two schemas: tables of both, ordered by (schema, name); enums of both.
    let both = introspect_postgres(&client, &["other".to_owned(), "public".to_owned()])
        .await
        .expect("introspect");
    let first = &both.catalog.tables[0];
    assert_eq!(
        (first.schema.as_str(), first.name.as_str()),
        ("other", "hidden")
    );
    assert_eq!(both.catalog.tables.len(), 7);
    let enums: Vec<_> = both
        .catalog
        .enums
        .iter()
        .map(|e| format!("{}.{}", e.schema, e.name))
        .collect();
    assert_eq!(enums, ["other.color", "public.mood"]);
    let m = both.catalog.tables[0].column("m").expect("m");
    assert_eq!(m.scalar, Enum(1));
}

#[tokio::test]
async fn foreign_keys_out_of_scope_are_reported() {
    let url = grafton_testkit::fresh_database("catalog_scope");
    let (client, connection) = tokio_postgres::connect(&url, NoTls).await.expect("connect");
    tokio::spawn(connection);
    client
        .batch_execute(
            "CREATE SCHEMA other;
             CREATE TYPE other.color AS ENUM ('red', 'green');
             CREATE TABLE other.parent (id int PRIMARY KEY);
             CREATE TABLE child (id int PRIMARY KEY, parent_id int REFERENCES other.parent,
                                 color other.color);",
        )
        .await
        .expect("schema");
    let result = introspect_postgres(&client, &["public".to_owned()])
        .await
        .expect("introspect");
    let child = result.catalog.table("public", "child").expect("child");
    assert!(child.foreign_keys.is_empty());
    assert_eq!(
        result.warnings,
        [
            "foreign key child_parent_id_fkey on public.child references other.parent, \
          which is not introspected; ignored"
        ]
    );
    // An enum used from another schema is still known.
    assert_eq!(result.catalog.enums.len(), 1);
    assert_eq!(result.catalog.enums[0].values, ["red", "green"]);
    assert_eq!(
        child.column("color").map(|c| &c.scalar),
        Some(&ScalarKind::Enum(0))
    );
}
