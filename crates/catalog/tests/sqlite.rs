//! Introspection of a real SQLite file.

use grafton_catalog::{introspect_sqlite, ScalarKind, Table, TableKind, Writes};
use rusqlite::Connection;

const SCHEMA: &str = r#"
CREATE TABLE members (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    email VARCHAR(200),
    nick TEXT UNIQUE,
    created_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    avatar BLOB,
    score REAL,
    balance NUMERIC(10, 2),
    active BOOLEAN,
    meta JSON,
    untyped
);
CREATE TABLE groups (
    org_id INTEGER NOT NULL,
    slug TEXT NOT NULL,
    title TEXT,
    PRIMARY KEY (slug, org_id)
);
CREATE UNIQUE INDEX groups_title_idx ON groups (title);
CREATE UNIQUE INDEX groups_lower_title ON groups (lower(title));
CREATE UNIQUE INDEX groups_partial ON groups (title) WHERE org_id > 0;
CREATE INDEX groups_plain ON groups (org_id);
CREATE TABLE groups_members (
    group_slug TEXT NOT NULL,
    group_org INTEGER NOT NULL,
    member_id INTEGER NOT NULL REFERENCES Members,
    joined DATE DEFAULT CURRENT_DATE,
    FOREIGN KEY (group_org, group_slug) REFERENCES groups (org_id, slug),
    UNIQUE (member_id, group_slug, group_org)
);
CREATE TABLE audit_log (at TIMESTAMP, message TEXT, uid UUID, doc JSONB, at_tz TIMESTAMPTZ);
CREATE TABLE tags (id INTEGER PRIMARY KEY, label TEXT) WITHOUT ROWID;
CREATE VIEW member_names AS SELECT id, name FROM members;
CREATE TRIGGER member_names_update INSTEAD   OF
  update ON member_names BEGIN UPDATE members SET name = NEW.name WHERE id = OLD.id; END;
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

#[test]
fn introspects_a_sqlite_file() {
    let path = grafton_testkit::sqlite_path("catalog");
    let conn = Connection::open(&path).expect("open");
    conn.execute_batch(SCHEMA).expect("schema");
    let result = introspect_sqlite(&conn).expect("introspect");
    let catalog = &result.catalog;

    let names: Vec<_> = catalog.tables.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "audit_log",
            "groups",
            "groups_members",
            "member_names",
            "members",
            "tags"
        ],
        "sorted, without sqlite_sequence"
    );
    assert!(catalog.tables.iter().all(|t| t.schema == "main"));
    assert!(catalog.enums.is_empty());

    let members = catalog.table("main", "members").expect("members");
    assert_eq!(members.kind, TableKind::Table);
    assert_eq!(members.primary_key, ["id"]);
    assert_eq!(members.primary_key_name.as_deref(), Some("members_pkey"));
    use ScalarKind::*;
    assert_eq!(
        columns(members),
        [
            ("id", "INTEGER", Int, false, true),
            ("name", "TEXT", Text, false, false),
            ("email", "VARCHAR(200)", Text, true, false),
            ("nick", "TEXT", Text, true, false),
            ("created_at", "DATETIME", Timestamp, false, true),
            ("avatar", "BLOB", Text, true, false),
            ("score", "REAL", Float, true, false),
            ("balance", "NUMERIC(10, 2)", Numeric, true, false),
            ("active", "BOOLEAN", Boolean, true, false),
            ("meta", "JSON", Json, true, false),
            ("untyped", "", Text, true, false),
        ]
    );
    assert_eq!(members.unique_constraints.len(), 1);
    assert_eq!(members.unique_constraints[0].name, "members_nick_key");
    assert_eq!(members.unique_constraints[0].columns, ["nick"]);
    assert_eq!(
        result.warnings,
        ["column main.members.avatar has type BLOB, exposed as String"]
    );

    let groups = catalog.table("main", "groups").expect("groups");
    assert_eq!(groups.primary_key, ["slug", "org_id"], "key order");
    assert_eq!(groups.primary_key_name.as_deref(), Some("groups_pkey"));
    let org_id = groups.column("org_id").expect("org_id");
    assert!(
        !org_id.has_default,
        "part of a composite key: not a rowid alias"
    );
    let uniques: Vec<_> = groups
        .unique_constraints
        .iter()
        .map(|u| (u.name.as_str(), u.columns.clone()))
        .collect();
    assert_eq!(
        uniques,
        [("groups_title_idx", vec!["title".to_owned()])],
        "no expression, partial or non-unique indexes"
    );
    assert!(groups.foreign_keys.is_empty());

    let gm = catalog
        .table("main", "groups_members")
        .expect("groups_members");
    assert!(gm.primary_key.is_empty());
    assert_eq!(gm.primary_key_name, None);
    assert_eq!(
        columns(gm)[3],
        ("joined", "DATE", Date, true, true),
        "default"
    );
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
            )
        })
        .collect();
    let v = |s: &[&str]| s.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        fks,
        [
            (
                "groups_members_group_org_group_slug_fkey",
                v(&["group_org", "group_slug"]),
                "main",
                "groups",
                v(&["org_id", "slug"]),
            ),
            (
                "groups_members_member_id_fkey",
                v(&["member_id"]),
                "main",
                "members",
                v(&["id"]),
            ),
        ]
    );
    assert_eq!(gm.unique_constraints.len(), 1);
    assert_eq!(
        gm.unique_constraints[0].name,
        "groups_members_member_id_group_slug_group_org_key"
    );
    assert_eq!(
        gm.unique_constraints[0].columns,
        ["member_id", "group_slug", "group_org"]
    );

    let audit = catalog.table("main", "audit_log").expect("audit_log");
    assert!(audit.primary_key.is_empty());
    let kinds: Vec<_> = audit.columns.iter().map(|c| c.scalar.clone()).collect();
    assert_eq!(kinds, [Timestamp, Text, Uuid, Jsonb, Timestamptz]);
    assert!(audit.columns.iter().all(|c| c.nullable && !c.has_default));

    let tags = catalog.table("main", "tags").expect("tags");
    assert_eq!(tags.primary_key, ["id"]);
    assert!(
        !tags.columns[0].has_default,
        "WITHOUT ROWID: INTEGER PRIMARY KEY is no rowid alias"
    );

    let view = catalog.table("main", "member_names").expect("view");
    assert_eq!(view.kind, TableKind::View);
    let view_cols: Vec<_> = view.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(view_cols, ["id", "name"]);
    assert!(view.primary_key.is_empty());
    // Writes through a view exist only where INSTEAD OF triggers implement them.
    assert_eq!(
        view.writes,
        Writes {
            insert: false,
            update: true,
            delete: false
        }
    );
    assert_eq!(tags.writes, Writes::ALL);
}
