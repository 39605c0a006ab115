//! A Hasura metadata directory (or a `tables.yaml`) read into one metadata document:
//! the JSON `export_metadata` answers with (`{version: 3, sources: [...], ...}`).
//! Each file is also parsed as what it holds, so a misspelled key is refused here
//! with its file and line rather than later with a path into the document.

use super::{include, project, Entry};
use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

/// The metadata document of the directory or file at `path`.
pub fn read(path: &Path) -> Result<Value, String> {
    wrong_path(path)?;
    let mut doc = Map::new();
    doc.insert("version".into(), json!(3));
    if path.is_dir() {
        project_files(path, &mut doc)?;
        let sources = sources(path)?;
        doc.insert("sources".into(), Value::Array(sources));
    } else {
        let tables = match include::included(path)? {
            // A v3 tables.yaml: the files it includes.
            Some(files) => entries(&files)?,
            None => entry_list(path)?,
        };
        let mut functions = Vec::new();
        // A v2 project's other files sit beside its tables.yaml.
        if let Some(dir) = path.parent().filter(|_| is_v2_tables(path)) {
            project_files(dir, &mut doc)?;
            functions = v2_functions(dir)?;
        }
        doc.insert(
            "sources".into(),
            json!([source("default", tables, functions)]),
        );
    }
    Ok(Value::Object(doc))
}

/// A source as Hasura exports one whose connection its environment gives.
fn source(name: &str, tables: Vec<Value>, functions: Vec<Value>) -> Value {
    let mut source = json!({
        "name": name,
        "kind": "postgres",
        "tables": tables,
        "configuration": {
            "connection_info": {"database_url": {"from_env": "HASURA_GRAPHQL_DATABASE_URL"}}
        },
    });
    if !functions.is_empty() {
        source["functions"] = Value::Array(functions);
    }
    source
}

/// The sources of a metadata directory: `databases/databases.yaml`'s, each with the
/// tables and functions its `!include`s name; else one per `databases/<db>`
/// directory; else (an older layout) the tables under the directory itself.
fn sources(dir: &Path) -> Result<Vec<Value>, String> {
    let databases = dir.join("databases");
    let listed = databases.join("databases.yaml");
    if listed.is_file() {
        let mut sources: Vec<Value> = yaml::<Option<Vec<Value>>>(&listed)?.unwrap_or_default();
        for source in &mut sources {
            for (key, read) in [
                (
                    "tables",
                    entries_at as fn(&Path) -> Result<Vec<Value>, String>,
                ),
                ("functions", functions_at),
            ] {
                let Some(Value::String(line)) = source.get(key) else {
                    continue;
                };
                let Some(file) = line.strip_prefix("!include ") else {
                    return Err(format!(
                        "{}: {key}: '{line}' is not an !include",
                        listed.display()
                    ));
                };
                let list = databases.join(file.trim());
                if !list.is_file() {
                    return Err(format!(
                        "{}: {key} includes {}, which does not exist",
                        listed.display(),
                        file.trim()
                    ));
                }
                source[key] = Value::Array(read(&list)?);
            }
        }
        return Ok(sources);
    }
    if let Ok(listing) = std::fs::read_dir(&databases) {
        let mut dbs: Vec<PathBuf> = listing.flatten().map(|d| d.path()).collect();
        dbs.retain(|d| d.is_dir());
        dbs.sort();
        let mut sources = Vec::new();
        for db in dbs {
            let name = db.file_name().and_then(|n| n.to_str()).unwrap_or("default");
            let tables = entries_at(&db.join("tables/tables.yaml"))?;
            let functions = functions_at(&db.join("functions/functions.yaml"))?;
            sources.push(source(name, tables, functions));
        }
        // No databases.yaml to say a source tracks nothing: no table files at all
        // is a wrong path, not an empty project.
        let tracked = |s: &Value| s["tables"].as_array().is_some_and(|t| !t.is_empty());
        if !sources.iter().any(tracked) {
            return Err(format!(
                "no table metadata files under {}",
                databases.display()
            ));
        }
        return Ok(sources);
    }
    // An older layout: a `tables` directory, or the entries beside the project files.
    let mut tables = Vec::new();
    if dir.join("tables").is_dir() {
        tables = entries_at(&dir.join("tables/tables.yaml"))?;
    }
    let list = dir.join("tables.yaml");
    match include::included(&list)? {
        Some(files) => tables.extend(entries(&files)?),
        None => {
            let files = yaml_files(dir, "tables.yaml");
            if !files.is_empty() {
                tables.extend(entries(&files)?);
            } else if tables.is_empty() && list.is_file() {
                // A v2 project: its tables.yaml holds the entries themselves.
                tables = entry_list(&list)?;
            } else if tables.is_empty() {
                return Err(format!("no table metadata files under {}", dir.display()));
            }
        }
    }
    Ok(vec![source("default", tables, v2_functions(dir)?)])
}

/// The table entries a list names: the files of a v3 `tables.yaml`'s `!include`s,
/// the entries of a v2 one, or (no list) every YAML file beside where it would be.
fn entries_at(list: &Path) -> Result<Vec<Value>, String> {
    listed::<Entry>(list, entry_list)
}

/// The function entries a `functions.yaml` names, as `entries_at` for tables.
fn functions_at(list: &Path) -> Result<Vec<Value>, String> {
    listed::<super::functions::Entry>(list, v2_function_list)
}

/// The entries (each a `T`) a list file names: its `!include`s' files, else its own
/// entries (`inline`), else (no list) every YAML file of its directory.
fn listed<T: DeserializeOwned>(
    list: &Path,
    inline: fn(&Path) -> Result<Vec<Value>, String>,
) -> Result<Vec<Value>, String> {
    let dir = list.parent().unwrap_or(Path::new("."));
    let name = list.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let files = match include::included(list)? {
        Some(files) => {
            let stale = include::left_out(dir, &files, name);
            if !stale.is_empty() {
                tracing::warn!(
                    "{}: {} file(s) not included by {name}, ignored as Hasura ignores them: {}",
                    dir.display(),
                    stale.len(),
                    stale.join(", ")
                );
            }
            files
        }
        None if list.is_file() => return inline(list),
        None => yaml_files(dir, name),
    };
    files.iter().map(|f| checked::<T>(f)).collect()
}

/// A v2 project's `functions.yaml`, beside its `tables.yaml`.
fn v2_functions(dir: &Path) -> Result<Vec<Value>, String> {
    let list = dir.join("functions.yaml");
    if !list.is_file() {
        return Ok(Vec::new());
    }
    v2_function_list(&list)
}

/// The entries of a v2 `functions.yaml`; an `!include` line among them is not
/// followed (Hasura's v2 layout has none).
fn v2_function_list(list: &Path) -> Result<Vec<Value>, String> {
    let lines: Vec<Value> = yaml::<Option<Vec<Value>>>(list)?.unwrap_or_default();
    let mut out = Vec::new();
    for line in lines.into_iter().filter(|l| !l.is_string()) {
        let _: super::functions::Entry =
            serde_json::from_value(line.clone()).map_err(|e| format!("{}: {e}", list.display()))?;
        out.push(line);
    }
    Ok(out)
}

/// Each file's table entry.
fn entries(files: &[PathBuf]) -> Result<Vec<Value>, String> {
    files.iter().map(|f| checked::<Entry>(f)).collect()
}

/// A file holding a list of table entries (a v2 `tables.yaml`).
fn entry_list(path: &Path) -> Result<Vec<Value>, String> {
    let text = text(path)?;
    let _: Option<Vec<Entry>> =
        serde_norway::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let list: Option<Vec<Value>> =
        serde_norway::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(list.unwrap_or_default())
}

/// The project-wide files, each under its key of the document (an absent or empty
/// file says nothing). `actions.yaml` holds two keys.
fn project_files(dir: &Path, doc: &mut Map<String, Value>) -> Result<(), String> {
    for &(file, key) in project::FILES {
        let path = dir.join(file);
        if !path.is_file() {
            continue;
        }
        let text = text(&path)?;
        project::check(file, &text).map_err(|e| format!("{}: {e}", path.display()))?;
        let value: Value =
            serde_norway::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        if super::document::is_empty(&value) {
            continue;
        }
        match (key, value) {
            ("", _) => {}
            ("actions", Value::Object(parts)) => {
                for (k, v) in parts {
                    if !super::document::is_empty(&v) {
                        doc.insert(k, v);
                    }
                }
            }
            (key, value) => {
                doc.insert(key.into(), value);
            }
        }
    }
    let sdl = dir.join("actions.graphql");
    if sdl.is_file() {
        let text = text(&sdl)?;
        super::actions_sdl::merge(&text, doc).map_err(|e| format!("{}: {e}", sdl.display()))?;
    }
    Ok(())
}

/// The YAML files of `dir` but `list`, sorted.
fn yaml_files(dir: &Path, list: &str) -> Vec<PathBuf> {
    let Ok(listing) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = listing
        .flatten()
        .map(|f| f.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name != list && !project::FILES.iter().any(|(f, _)| *f == name)
        })
        .collect();
    files.sort();
    files
}

fn text(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn yaml<T: DeserializeOwned>(path: &Path) -> Result<T, String> {
    serde_norway::from_str(&text(path)?).map_err(|e| format!("{}: {e}", path.display()))
}

/// The file's value, once it has parsed as a `T` (for an error with its line).
fn checked<T: DeserializeOwned>(path: &Path) -> Result<Value, String> {
    let text = text(path)?;
    let _: T = serde_norway::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_norway::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
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
