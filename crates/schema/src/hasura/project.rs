//! The project-wide files of a Hasura metadata directory: `api_limits.yaml`,
//! `query_collections.yaml` with `allow_list.yaml`, `inherited_roles.yaml` and
//! `graphql_schema_introspection.yaml`. Absent or empty (`{}`, `[]`) files say
//! nothing.

use crate::config::Config;
use crate::trusted::AllowedCollection;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use std::path::Path;

/// Hasura's project-wide metadata files, which are never table entries.
pub(super) const FILES: &[&str] = &[
    "actions.yaml",
    "allow_list.yaml",
    "api_limits.yaml",
    "backend_configs.yaml",
    "cron_triggers.yaml",
    "functions.yaml",
    "graphql_schema_introspection.yaml",
    "inherited_roles.yaml",
    "metrics_config.yaml",
    "network.yaml",
    "opentelemetry.yaml",
    "query_collections.yaml",
    "remote_schemas.yaml",
    "rest_endpoints.yaml",
    "version.yaml",
];

/// One entry of `inherited_roles.yaml`.
#[derive(Deserialize)]
struct InheritedRole {
    role_name: String,
    role_set: Vec<String>,
}

#[derive(Deserialize)]
struct Collection {
    name: String,
    definition: Definition,
}

#[derive(Deserialize)]
struct Definition {
    #[serde(default)]
    queries: Vec<NamedQuery>,
}

#[derive(Deserialize)]
struct NamedQuery {
    query: String,
}

#[derive(Deserialize)]
struct AllowListEntry {
    collection: String,
    #[serde(default)]
    scope: Option<Scope>,
}

#[derive(Deserialize)]
struct Scope {
    #[serde(default)]
    global: bool,
    #[serde(default)]
    roles: Vec<String>,
}

/// Reads `file` under `dir` when it exists and says something.
fn read<T: DeserializeOwned>(dir: &Path, file: &str) -> Result<Option<T>, String> {
    let path = dir.join(file);
    if !path.exists() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let trimmed = text.trim();
    if trimmed.is_empty() || trimmed == "{}" || trimmed == "[]" {
        return Ok(None);
    }
    serde_norway::from_str(&text)
        .map(Some)
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// The project-wide files Grafton does not serve yet: each non-empty one is said
/// loudly at load, so a project's business logic and side effects never stop in
/// silence.
const UNSERVED: &[(&str, &str)] = &[
    ("actions.yaml", "actions"),
    ("actions.graphql", "action types"),
    ("cron_triggers.yaml", "cron triggers"),
    ("remote_schemas.yaml", "remote schemas"),
    ("rest_endpoints.yaml", "REST endpoints"),
];

/// Warns of every non-empty project file Grafton does not serve, and of the parts
/// of `databases/databases.yaml` it does not read (a source's customization, a
/// second source).
fn unserved(dir: &Path) {
    for (file, what) in UNSERVED {
        let Ok(text) = std::fs::read_to_string(dir.join(file)) else {
            continue;
        };
        let trimmed = text.trim();
        if !(trimmed.is_empty() || trimmed == "{}" || trimmed == "[]") {
            tracing::warn!("{file}: {what} in the metadata, not served by Grafton yet: left out");
        }
    }
    let databases = dir.join("databases").join("databases.yaml");
    let Ok(text) = std::fs::read_to_string(&databases) else {
        return;
    };
    let Ok(serde_norway::Value::Sequence(sources)) = serde_norway::from_str(&text) else {
        return;
    };
    if sources.len() > 1 {
        tracing::warn!(
            "{}: {} sources; Grafton serves one database (--database-url), and reads the tables of every source's directory into it",
            databases.display(),
            sources.len()
        );
    }
    for source in &sources {
        if source.get("customization").is_some() {
            let name = source.get("name").and_then(|n| n.as_str()).unwrap_or("?");
            tracing::warn!(
                "{}: source '{name}' has a customization (naming convention, root field or type name prefixes), not applied by Grafton yet (see --naming)",
                databases.display()
            );
        }
    }
}

/// Fills `config` from the project-wide files of the metadata directory `dir`.
pub(super) fn load(dir: &Path, config: &mut Config) -> Result<(), String> {
    unserved(dir);
    if let Some(limits) = read(dir, "api_limits.yaml")? {
        config.api_limits = limits;
    }
    if let Some(introspection) = read(dir, "graphql_schema_introspection.yaml")? {
        config.graphql_schema_introspection = introspection;
    }
    let inherited: Vec<InheritedRole> = read(dir, "inherited_roles.yaml")?.unwrap_or_default();
    for r in inherited {
        config.inherited_roles.insert(r.role_name, r.role_set);
    }
    let collections: Vec<Collection> = read(dir, "query_collections.yaml")?.unwrap_or_default();
    let allowed: Vec<AllowListEntry> = read(dir, "allow_list.yaml")?.unwrap_or_default();
    for entry in allowed {
        let Some(collection) = collections.iter().find(|c| c.name == entry.collection) else {
            return Err(format!(
                "allow_list.yaml: collection '{}' is not in query_collections.yaml",
                entry.collection
            ));
        };
        let roles = match entry.scope {
            Some(Scope {
                global: false,
                roles,
            }) => Some(roles),
            _ => None,
        };
        config.allow_list.push(AllowedCollection {
            name: collection.name.clone(),
            queries: collection
                .definition
                .queries
                .iter()
                .map(|q| q.query.clone())
                .collect(),
            roles,
        });
    }
    Ok(())
}
