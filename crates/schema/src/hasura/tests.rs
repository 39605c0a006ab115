//! The Hasura metadata import, on YAML written as Hasura writes it.

use super::convert::convert;
use super::*;

#[test]
fn unknown_permission_keys_are_refused() {
    let yaml = r#"
- table: {schema: public, name: documents}
  select_permissions:
    - role: user
      permission: {columns: [id], filtre: {id: {_eq: 1}}}
"#;
    let err = serde_norway::from_str::<Vec<Entry>>(yaml)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("filtre"), "{err}");
}

#[test]
fn converts_relationships_and_permissions() {
    let yaml = r#"
- table: {schema: public, name: documents}
  object_relationships:
    - name: organisation
      using: {foreign_key_constraint_on: org_id}
  select_permissions:
    - role: user
      permission:
        columns: [id, title]
        filter: {org_id: {_eq: X-Hasura-Org-Id}}
        limit: 10
        allow_aggregations: true
        computed_fields: []
  insert_permissions:
    - role: user
      permission: {check: {}, set: {owner_id: x-hasura-User-Id}, columns: [title], backend_only: false}
  delete_permissions:
    - role: user
      permission: {filter: {owner_id: {_eq: X-Hasura-User-Id}}}
- table: {schema: public, name: organisations}
  array_relationships:
    - name: docs
      using: {foreign_key_constraint_on: {column: org_id, table: {schema: public, name: documents}}}
    - name: members
      using: {manual_configuration: {remote_table: {schema: public, name: users}, column_mapping: {id: org_id}}}
"#;
    let entries: Vec<Entry> = serde_norway::from_str(yaml).expect("metadata parses");
    let c = convert(entries).expect("converts");
    let docs = &c.tables["documents"];
    assert_eq!(
        docs.foreign_key_relationships["organisation"].columns,
        ["org_id"]
    );
    let select = docs.permissions["user"].select.as_ref().expect("select");
    assert_eq!(select.limit, Some(10));
    assert!(select.allow_aggregations);
    assert!(matches!(&select.columns, Columns::Some(c) if c == &["id", "title"]));
    assert!(docs.permissions["user"].insert.is_some() && docs.permissions["user"].delete.is_some());
    let orgs = &c.tables["organisations"];
    let docs_rel = &orgs.foreign_key_relationships["docs"];
    assert_eq!(
        (docs_rel.table.as_deref(), docs_rel.columns.as_slice()),
        (Some("documents"), &["org_id".to_owned()][..])
    );
    assert_eq!(orgs.relationships["members"].table, "users");
}

#[test]
fn custom_names_come_from_both_spellings_and_the_config_file_wins() {
    let yaml = r#"
- table: {name: authors, schema: public}
  configuration:
    custom_name: writers
    custom_column_names: {id: writerId}
    column_config: {full_name: {custom_name: name, comment: shown}}
    custom_root_fields: {select: all_writers, select_by_pk: {name: writer, comment: One}, delete: null}
"#;
    let entries: Vec<Entry> = serde_norway::from_str(yaml).expect("yaml");
    let imported = convert(entries).expect("converts");
    let t = &imported.tables["authors"];
    assert_eq!(t.custom_name.as_deref(), Some("writers"));
    assert_eq!(t.columns["id"].custom_name.as_deref(), Some("writerId"));
    assert_eq!(t.columns["full_name"].custom_name.as_deref(), Some("name"));
    assert!(matches!(
        &t.custom_root_fields["select"],
        Some(CustomRootField::Name(n)) if n == "all_writers"
    ));
    assert!(matches!(
        &t.custom_root_fields["select_by_pk"],
        Some(CustomRootField::Full { name: Some(n), comment: Some(c) }) if n == "writer" && c == "One"
    ));
    assert!(t.custom_root_fields["delete"].is_none());

    let mut config: Config = serde_norway::from_str(
        "tables: {authors: {custom_name: authors_list, columns: {id: {custom_name: key}}}}",
    )
    .expect("config");
    merge(&mut config, imported);
    let t = &config.tables["authors"];
    assert_eq!(t.custom_name.as_deref(), Some("authors_list"));
    assert_eq!(t.columns["id"].custom_name.as_deref(), Some("key"));
    assert_eq!(t.columns["full_name"].custom_name.as_deref(), Some("name"));
}

#[test]
fn functions_come_from_v2_and_v3_layouts() {
    let root = std::env::temp_dir().join(format!("grafton-hasura-fns-{}", std::process::id()));
    // v2: functions.yaml beside tables.yaml, entries inline.
    let v2 = root.join("v2");
    std::fs::create_dir_all(&v2).unwrap();
    std::fs::write(
        v2.join("tables.yaml"),
        "- table: {schema: public, name: posts}\n",
    )
    .unwrap();
    std::fs::write(
        v2.join("functions.yaml"),
        "- function: {schema: public, name: search_posts}\n  configuration: {session_argument: s}\n  permissions: [{role: user}]\n",
    )
    .unwrap();
    // v3: one file per function under databases/<db>/functions, listed by functions.yaml.
    let v3 = root.join("v3");
    let fdir = v3.join("databases/default/functions");
    std::fs::create_dir_all(v3.join("databases/default/tables")).unwrap();
    std::fs::create_dir_all(&fdir).unwrap();
    std::fs::write(
        v3.join("databases/default/tables/public_posts.yaml"),
        "table: {schema: public, name: posts}\n",
    )
    .unwrap();
    std::fs::write(fdir.join("functions.yaml"), "- \"!include other_f.yaml\"\n").unwrap();
    std::fs::write(
        fdir.join("other_f.yaml"),
        "function: {schema: other, name: f}\nconfiguration: {exposed_as: query, custom_name: g}\n",
    )
    .unwrap();
    std::fs::write(
        v3.join("inherited_roles.yaml"),
        "- role_name: m\n  role_set: [a, b]\n",
    )
    .unwrap();

    std::fs::write(
        v2.join("inherited_roles.yaml"),
        "- role_name: m\n  role_set: [a]\n",
    )
    .unwrap();
    for path in [v2.clone(), v2.join("tables.yaml")] {
        let config = load(&path).unwrap();
        let f = &config.functions["search_posts"];
        assert_eq!(f.session_argument.as_deref(), Some("s"), "{path:?}");
        assert_eq!(f.permissions[0].role, "user");
        assert_eq!(
            config.inherited_roles["m"],
            vec!["a".to_owned()],
            "{path:?}"
        );
    }
    let config = load(&v3).unwrap();
    let f = &config.functions["other.f"];
    assert_eq!(f.custom_name.as_deref(), Some("g"));
    assert_eq!(f.exposed_as, Some(crate::config::ExposedAs::Query));
    assert_eq!(
        config.inherited_roles["m"],
        vec!["a".to_owned(), "b".to_owned()]
    );
    let _ = std::fs::remove_dir_all(&root);
}

/// As Hasura's `metadata export` writes a project (issue 28): `insertion_order:
/// null`, event triggers and remote relationships beside the permissions (said, not
/// served), relationship comments.
#[test]
fn entries_as_hasura_exports_them_load() {
    let yaml = r#"
- table: {schema: public, name: posts}
  object_relationships:
    - name: author
      using:
        manual_configuration:
          remote_table: {schema: public, name: authors}
          column_mapping: {author_id: id}
          insertion_order: null
      comment: the writer
  event_triggers:
    - name: notify
      definition: {enable_manual: false, insert: {columns: '*'}}
      webhook: https://example.invalid/hook
  remote_relationships: []
"#;
    let entries: Vec<Entry> = serde_norway::from_str(yaml).expect("an exported entry loads");
    let config = convert(entries).expect("converts");
    let rel = &config.tables["posts"].relationships["author"];
    assert_eq!(
        rel.insertion_order,
        crate::config::InsertionOrder::default()
    );
}

/// A misspelled table-level key takes no permissions with it in silence: it is
/// refused, naming the key and its line.
#[test]
fn unknown_table_keys_are_refused_with_their_line() {
    let yaml = "- table: {schema: public, name: posts}\n  select_permisions:\n    - role: user\n";
    let err = serde_norway::from_str::<Vec<Entry>>(yaml)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        err.contains("select_permisions") && err.contains("line 2"),
        "{err}"
    );
}

/// A v3 `tables` directory at `tables` whose tables.yaml includes one table, posts.
fn v3_tables(tables: &Path) {
    std::fs::create_dir_all(tables).expect("dir");
    std::fs::write(
        tables.join("tables.yaml"),
        "- \"!include public_posts.yaml\"\n",
    )
    .expect("list");
    std::fs::write(
        tables.join("public_posts.yaml"),
        "table: {name: posts, schema: public}\n",
    )
    .expect("table");
}

/// A v3 directory reads the files its tables.yaml includes, not a stale one beside
/// them (which here would not even parse).
#[test]
fn tables_yaml_decides_which_files_are_read() {
    let dir = std::env::temp_dir().join(format!("grafton-hasura-includes-{}", std::process::id()));
    let tables = dir.join("databases/default/tables");
    v3_tables(&tables);
    std::fs::write(
        tables.join("public_old.yaml"),
        "table: {name: old}\nselect_permisions: []\n",
    )
    .expect("stale");
    let config = load(&dir).expect("loads what tables.yaml includes");
    assert_eq!(config.tables.keys().collect::<Vec<_>>(), ["posts"]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The paths people pass by mistake get a message saying what to pass instead, and a
/// v3 tables.yaml passed alone reads the files it includes (issue 28).
#[test]
fn wrong_paths_say_what_to_pass() {
    let root = std::env::temp_dir().join(format!("grafton-hasura-paths-{}", std::process::id()));
    let tables = root.join("metadata/databases/default/tables");
    v3_tables(&tables);
    std::fs::write(root.join("config.yaml"), "version: 3\n").expect("config");
    let err = load(&root).err().unwrap_or_default();
    assert!(err.contains("pass its metadata directory"), "{err}");
    let config = load(&tables.join("tables.yaml")).expect("a v3 tables.yaml loads");
    assert_eq!(config.tables.keys().collect::<Vec<_>>(), ["posts"]);
    let ddn = root.join("ddn");
    std::fs::create_dir_all(&ddn).expect("dir");
    std::fs::write(ddn.join("supergraph.yaml"), "kind: Supergraph\n").expect("ddn");
    let err = load(&ddn).err().unwrap_or_default();
    assert!(err.contains("Hasura DDN metadata"), "{err}");
    let _ = std::fs::remove_dir_all(&root);
}

/// Unknown keys are refused in the project-wide files and function entries too,
/// with the file and line: a misspelling never drops a role, a query or a setting.
#[test]
fn unknown_keys_in_project_files_and_functions_are_refused() {
    let dir = std::env::temp_dir().join(format!("grafton-unknown-keys-{}", std::process::id()));
    v3_tables(&dir.join("databases/default/tables"));
    let functions = dir.join("databases/default/functions");
    std::fs::create_dir_all(&functions).expect("dir");
    std::fs::write(
        functions.join("functions.yaml"),
        "- \"!include public_f.yaml\"\n",
    )
    .expect("list");
    for (file, yaml, key) in [
        (
            "inherited_roles.yaml",
            "- role_name: member\n  role_sets: [user]\n",
            "role_sets",
        ),
        (
            "databases/default/functions/public_f.yaml",
            "function: {name: f, schema: public}\nconfiguration: {exposed_az: query}\n",
            "exposed_az",
        ),
        (
            "query_collections.yaml",
            "- name: allowed\n  definition:\n    queries:\n      - {name: q, querry: '{ posts { id } }'}\n",
            "querry",
        ),
    ] {
        let path = dir.join(file);
        std::fs::write(&path, yaml).expect("file");
        let err = load(&dir).err().unwrap_or_default();
        assert!(
            err.contains(key) && err.contains(file.rsplit('/').next().unwrap_or(file)),
            "{file}: {err}"
        );
        std::fs::remove_file(&path).expect("remove");
        if file.contains("functions") {
            std::fs::write(&path, "function: {name: f, schema: public}\n").expect("file");
        }
    }
}

/// Hasura's export writes `null` for an empty list, map or flag (as it does for
/// `insertion_order`): each reads as empty, never as an error.
#[test]
fn nulls_where_hasura_writes_them_read_as_empty() {
    let yaml = r#"
- table: {schema: public, name: posts}
  is_enum: null
  configuration: {custom_name: null, comment: null, column_config: null, custom_column_names: null, custom_root_fields: null}
  object_relationships: null
  array_relationships: null
  computed_fields: null
  select_permissions:
    - role: user
      permission: {columns: [id], filter: {}, set: null, computed_fields: null, allow_aggregations: null, backend_only: null, limit: null, query_root_fields: null}
  insert_permissions: null
  update_permissions: null
  delete_permissions: null
  event_triggers: null
  remote_relationships: null
"#;
    let entries: Vec<Entry> = serde_norway::from_str(yaml).expect("nulls read as empty");
    let config = convert(entries).expect("converts");
    let select = config.tables["posts"].permissions["user"].select.as_ref();
    assert_eq!(
        select.map(|s| s.columns.clone()),
        Some(Columns::Some(vec!["id".into()]))
    );
    assert!(config.left_out.is_empty());
}

/// A project file that does not parse is refused with its name, never skipped: a
/// broken actions.yaml must not make its actions vanish from the report.
#[test]
fn a_project_file_that_does_not_parse_is_refused() {
    let dir = std::env::temp_dir().join(format!("grafton-broken-files-{}", std::process::id()));
    v3_tables(&dir.join("databases/default/tables"));
    std::fs::write(dir.join("actions.yaml"), "actions: [\n  - name: login\n").expect("file");
    let err = load(&dir).err().unwrap_or_default();
    assert!(err.contains("actions.yaml"), "{err}");
}

/// A databases.yaml that includes a missing file, or a databases directory with no
/// table files and no databases.yaml, is refused: neither loads as "no tables".
#[test]
fn a_missing_include_or_no_table_files_is_refused() {
    let dir = std::env::temp_dir().join(format!("grafton-missing-include-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("databases/default")).expect("dir");
    let err = load(&dir).err().unwrap_or_default();
    assert!(err.contains("no table metadata files"), "{err}");
    std::fs::write(
        dir.join("databases/databases.yaml"),
        "- name: default\n  kind: postgres\n  tables: \"!include default/tables/tables.yaml\"\n",
    )
    .expect("databases.yaml");
    let err = load(&dir).err().unwrap_or_default();
    assert!(
        err.contains("includes default/tables/tables.yaml, which does not exist"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
