//! Tracked functions in Hasura metadata: `databases/<db>/functions/<file>.yaml` (v3,
//! listed by that directory's `functions.yaml`) or the entries of a v2 project's
//! `functions.yaml`.

use super::TableName;
use crate::config::ExposedAs;
use crate::config::{Config, FunctionConfig, FunctionPermission, FunctionRootFields};
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    function: TableName,
    #[serde(default, deserialize_with = "super::null_default")]
    configuration: Configuration,
    #[serde(default, deserialize_with = "super::null_default")]
    permissions: Vec<FunctionPermission>,
    #[serde(default)]
    comment: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Configuration {
    #[serde(default)]
    exposed_as: Option<ExposedAs>,
    #[serde(default)]
    session_argument: Option<String>,
    #[serde(default)]
    custom_name: Option<String>,
    #[serde(default)]
    custom_root_fields: FunctionRootFields,
}

/// A v2 `functions.yaml` line: an entry (a v3 one, all `!include`s, is followed
/// above), or an include among entries, which is not followed.
#[derive(Deserialize)]
#[serde(untagged)]
enum Listed {
    Entry(Box<Entry>),
    Include(#[allow(dead_code)] String),
}

/// Adds the tracked functions of the metadata directory `dir` to `config`.
pub(super) fn load(dir: &Path, config: &mut Config) -> Result<(), String> {
    let mut entries = Vec::new();
    let databases = dir.join("databases");
    let listed: Vec<PathBuf> = match std::fs::read_dir(&databases) {
        Ok(dbs) => dbs.flatten().map(|d| d.path().join("functions")).collect(),
        Err(_) => Vec::new(),
    };
    for functions in listed {
        // functions.yaml names the files to read; others are not the project's.
        if let Some(files) = super::include::included(&functions.join("functions.yaml"))? {
            let stale = super::include::left_out(&functions, &files, "functions.yaml");
            if !stale.is_empty() {
                tracing::warn!(
                    "{}: {} file(s) not included by functions.yaml, ignored as Hasura ignores them: {}",
                    functions.display(),
                    stale.len(),
                    stale.join(", ")
                );
            }
            for f in files {
                entries.push(read::<Entry>(&f)?);
            }
            continue;
        }
        let Ok(listing) = std::fs::read_dir(&functions) else {
            continue;
        };
        let mut files: Vec<PathBuf> = listing
            .flatten()
            .map(|f| f.path())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
            .filter(|p| p.file_name().is_some_and(|n| n != "functions.yaml"))
            .collect();
        files.sort();
        for f in files {
            entries.push(read::<Entry>(&f)?);
        }
    }
    let v2 = dir.join("functions.yaml");
    if v2.exists() {
        for line in read::<Option<Vec<Listed>>>(&v2)?.unwrap_or_default() {
            if let Listed::Entry(e) = line {
                entries.push(*e);
            }
        }
    }
    for e in entries {
        let c = e.configuration;
        config.functions.insert(
            e.function.key(),
            FunctionConfig {
                exposed_as: c.exposed_as,
                session_argument: c.session_argument,
                custom_name: c.custom_name,
                custom_root_fields: c.custom_root_fields,
                comment: e.comment,
                permissions: e.permissions,
            },
        );
    }
    Ok(())
}

fn read<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_norway::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}
