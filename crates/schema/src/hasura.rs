//! Hasura metadata import: a `tables.yaml` (a list of table entries) or a metadata
//! directory (`databases/<db>/tables/*.yaml`, one entry per file) becomes Grafton's
//! config — relationships (foreign-key and manual) and the four permission kinds —
//! so a Hasura project moves over without rewriting its rules.

use crate::config::{Columns, Config, CustomRootField};
use convert::convert;
use serde::Deserialize;
use serde_json::Value;

mod convert;
mod functions;
mod include;
mod merge;
mod project;
pub use merge::merge;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Deserialize)]
#[serde(untagged)]
enum TableName {
    Qualified {
        name: String,
        schema: Option<String>,
    },
    Plain(String),
}

impl TableName {
    /// Grafton's config key: `name` in `public`, else `schema.name`.
    fn key(&self) -> String {
        match self {
            TableName::Qualified { name, schema } => match schema.as_deref() {
                None | Some("public") => name.clone(),
                Some(s) => format!("{s}.{name}"),
            },
            TableName::Plain(name) => name.clone(),
        }
    }
}

/// Hasura's export writes `null` for an empty list, map or flag: read as empty.
fn null_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// A table's entry. Every key Hasura writes is named here, so a misspelled one is
/// refused with its file and line instead of taking its permissions with it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    table: TableName,
    #[serde(default, deserialize_with = "null_default")]
    is_enum: bool,
    #[serde(default, deserialize_with = "null_default")]
    configuration: Configuration,
    #[serde(default, deserialize_with = "null_default")]
    object_relationships: Vec<Relationship>,
    #[serde(default, deserialize_with = "null_default")]
    array_relationships: Vec<Relationship>,
    #[serde(default, deserialize_with = "null_default")]
    select_permissions: Vec<Permission>,
    #[serde(default, deserialize_with = "null_default")]
    insert_permissions: Vec<Permission>,
    #[serde(default, deserialize_with = "null_default")]
    update_permissions: Vec<Permission>,
    #[serde(default, deserialize_with = "null_default")]
    delete_permissions: Vec<Permission>,
    #[serde(default, deserialize_with = "null_default")]
    computed_fields: Vec<ComputedField>,
    /// Not served yet: said loudly at load (see [`unserved`]).
    #[serde(default, deserialize_with = "null_default")]
    event_triggers: Vec<serde_norway::Value>,
    #[serde(default, deserialize_with = "null_default")]
    remote_relationships: Vec<serde_norway::Value>,
    #[serde(default)]
    apollo_federation_config: Option<serde_norway::Value>,
}

/// A table's computed field.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ComputedField {
    name: String,
    definition: ComputedDefinition,
    #[serde(default)]
    comment: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ComputedDefinition {
    function: TableName,
    #[serde(default)]
    table_argument: Option<String>,
    #[serde(default)]
    session_argument: Option<String>,
}

/// A table's `configuration`: its GraphQL names.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Configuration {
    custom_name: Option<String>,
    comment: Option<String>,
    #[serde(default, deserialize_with = "null_default")]
    column_config: BTreeMap<String, ColumnNames>,
    /// The older spelling of `column_config.<column>.custom_name`.
    #[serde(default, deserialize_with = "null_default")]
    custom_column_names: BTreeMap<String, String>,
    #[serde(default, deserialize_with = "null_default")]
    custom_root_fields: BTreeMap<String, Option<CustomRootField>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ColumnNames {
    custom_name: Option<String>,
    comment: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Relationship {
    name: String,
    using: Using,
    #[serde(default, rename = "comment")]
    _comment: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Using {
    foreign_key_constraint_on: Option<ForeignKeyOn>,
    manual_configuration: Option<Manual>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ForeignKeyOn {
    Column(String),
    Columns(Vec<String>),
    Remote {
        table: TableName,
        column: Option<String>,
        columns: Option<Vec<String>>,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Manual {
    remote_table: TableName,
    column_mapping: BTreeMap<String, String>,
    /// Hasura's export writes `null` for the default.
    #[serde(default)]
    insertion_order: Option<crate::config::InsertionOrder>,
}

/// A permission entry. Its body's keys are all known: an unknown (or misspelled)
/// one is refused, never skipped, as it may be a rule.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Permission {
    role: String,
    permission: Body,
    #[serde(default, rename = "comment")]
    _comment: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Body {
    #[serde(default)]
    columns: Option<Columns>,
    filter: Option<Value>,
    check: Option<Value>,
    #[serde(default, deserialize_with = "null_default")]
    set: BTreeMap<String, Value>,
    limit: Option<u64>,
    #[serde(default, deserialize_with = "null_default")]
    allow_aggregations: bool,
    #[serde(default, deserialize_with = "null_default")]
    backend_only: bool,
    query_root_fields: Option<Vec<String>>,
    subscription_root_fields: Option<Vec<String>>,
    /// An input validation webhook: not supported, so refused rather than skipped.
    validate_input: Option<Value>,
    /// Scalar computed fields the role may read.
    #[serde(default, deserialize_with = "null_default")]
    computed_fields: Vec<String>,
}

/// Reads Hasura metadata from a `tables.yaml` file or a metadata directory.
pub fn load(path: &Path) -> Result<Config, String> {
    let mut entries: Vec<Entry> = Vec::new();
    let mut project = Config::default();
    wrong_path(path)?;
    if path.is_dir() {
        project::load(path, &mut project)?;
        let mut files = Vec::new();
        let databases = path.join("databases");
        let roots: Vec<std::path::PathBuf> = match std::fs::read_dir(&databases) {
            Ok(dbs) => dbs.flatten().map(|d| d.path().join("tables")).collect(),
            Err(_) => vec![path.join("tables"), path.to_path_buf()],
        };
        for dir in roots {
            // A v3 tables.yaml names the files to read; others are not the project's.
            if let Some(listed) = include::included(&dir.join("tables.yaml"))? {
                let stale = include::left_out(&dir, &listed, "tables.yaml");
                if !stale.is_empty() {
                    tracing::warn!(
                        "{}: {} file(s) not included by tables.yaml, ignored as Hasura ignores them: {}",
                        dir.display(),
                        stale.len(),
                        stale.join(", ")
                    );
                }
                files.extend(listed);
                continue;
            }
            let Ok(listing) = std::fs::read_dir(&dir) else {
                continue;
            };
            for f in listing.flatten() {
                let p = f.path();
                let yaml = p.extension().is_some_and(|e| e == "yaml" || e == "yml");
                // tables.yaml only lists `!include`s of the per-table files; the
                // project-wide files are read by `project`.
                let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                if yaml && name != "tables.yaml" && !project::FILES.contains(&name) {
                    files.push(p);
                }
            }
        }
        files.sort();
        let v2 = path.join("tables.yaml");
        if files.is_empty() && v2.is_file() {
            // A v2 project: its tables.yaml holds the entries themselves.
            entries = parse_list(&v2)?;
        } else if files.is_empty() {
            return Err(format!("no table metadata files under {}", path.display()));
        }
        for f in files {
            entries.push(parse(&f)?);
        }
    } else if let Some(files) = include::included(path)? {
        // A v3 tables.yaml: the files it includes.
        for f in files {
            entries.push(parse(&f)?);
        }
    } else {
        entries = parse_list(path)?;
        // A v2 project's other files sit beside its tables.yaml.
        if let Some(dir) = path.parent().filter(|_| is_v2_tables(path)) {
            project::load(dir, &mut project)?;
        }
    }
    let mut config = convert(entries)?;
    config.api_limits = project.api_limits;
    config.left_out.extend(project.left_out);
    config.naming = project.naming;
    config.root_fields = project.root_fields;
    config.allow_list = project.allow_list;
    config.graphql_schema_introspection = project.graphql_schema_introspection;
    config.inherited_roles = project.inherited_roles;
    // Hasura serves what its metadata tracks, and nothing else.
    config.auto_track = Some(false);
    match path.parent() {
        _ if path.is_dir() => functions::load(path, &mut config)?,
        Some(dir) if is_v2_tables(path) => functions::load(dir, &mut config)?,
        _ => {}
    }
    Ok(config)
}

/// Refuses, saying what to pass instead, the paths people try that are not a
/// metadata directory or a tables.yaml: a Hasura project's root and DDN metadata.
fn wrong_path(path: &Path) -> Result<(), String> {
    if !path.is_dir() {
        return Ok(());
    }
    if path.join("config.yaml").is_file() && path.join("metadata").is_dir() {
        return Err(format!(
            "{} is a Hasura project's root: pass its metadata directory \
             (--hasura-metadata {})",
            path.display(),
            path.join("metadata").display()
        ));
    }
    let ddn = path.join("supergraph.yaml").is_file()
        || std::fs::read_dir(path).is_ok_and(|l| {
            l.flatten()
                .any(|f| f.path().extension().is_some_and(|e| e == "hml"))
        });
    if ddn {
        return Err(format!(
            "{}: Hasura DDN metadata (supergraph, .hml files) is not supported; Grafton \
             reads Hasura v2 and v3 metadata (a directory with databases/ or tables.yaml)",
            path.display()
        ));
    }
    Ok(())
}

/// A file named `tables.yaml`: a v2 project's, whose other files sit beside it.
fn is_v2_tables(path: &Path) -> bool {
    path.is_file() && path.file_name().is_some_and(|n| n == "tables.yaml")
}

fn parse_list(path: &Path) -> Result<Vec<Entry>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_norway::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn parse(path: &Path) -> Result<Entry, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_norway::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests;
