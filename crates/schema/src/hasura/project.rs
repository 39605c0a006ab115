//! The project-wide files of a Hasura metadata directory: `api_limits.yaml`,
//! `query_collections.yaml` with `allow_list.yaml`, `inherited_roles.yaml` and
//! `graphql_schema_introspection.yaml`. Absent or empty (`{}`, `[]`) files say
//! nothing.

use crate::config::Config;
use crate::inconsistent::{Inconsistency, ObjectKind};
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
#[serde(deny_unknown_fields)]
struct InheritedRole {
    role_name: String,
    role_set: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Collection {
    name: String,
    #[serde(default, rename = "comment")]
    _comment: Option<String>,
    definition: Definition,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Definition {
    #[serde(default)]
    queries: Vec<NamedQuery>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NamedQuery {
    #[serde(default, rename = "name")]
    _name: Option<String>,
    query: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AllowListEntry {
    collection: String,
    #[serde(default)]
    scope: Option<Scope>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
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

/// The project-wide objects Grafton does not serve yet (actions, cron triggers,
/// remote schemas, REST endpoints), each by name, and the parts of
/// `databases/databases.yaml` it does not read (a source's customization, a second
/// source): reported as inconsistent metadata, never dropped in silence.
fn unserved(
    dir: &Path,
    naming: &mut Option<crate::naming::Convention>,
    affixes: &mut crate::config::RootFieldAffixes,
) -> Result<Vec<Inconsistency>, String> {
    // A file that is there but does not parse is refused, never skipped.
    let yaml = |file: &str| -> Result<Option<serde_norway::Value>, String> {
        let path = dir.join(file);
        let Ok(text) = std::fs::read_to_string(&path) else {
            return Ok(None);
        };
        serde_norway::from_str(&text)
            .map(Some)
            .map_err(|e| format!("{}: {e}", path.display()))
    };
    let not_yet = |kind: ObjectKind, name: String| {
        let why = format!("{} are not served by Grafton yet", kind.plural());
        Inconsistency::new(kind, &name, why)
    };
    let names = |v: Option<&serde_norway::Value>| -> Vec<String> {
        let list = v.and_then(|v| v.as_sequence()).cloned().unwrap_or_default();
        list.iter().map(super::convert::yaml_name).collect()
    };
    let mut out = Vec::new();
    if let Some(actions) = yaml("actions.yaml")? {
        for name in names(actions.get("actions")) {
            out.push(not_yet(ObjectKind::Action, name));
        }
        let types = actions.get("custom_types").and_then(|t| t.as_mapping());
        let any = types.is_some_and(|t| {
            t.values()
                .any(|v| v.as_sequence().is_some_and(|l| !l.is_empty()))
        });
        if any {
            let why = "actions' custom types are not served by Grafton yet".to_owned();
            out.push(Inconsistency::new(
                ObjectKind::CustomTypes,
                "custom_types",
                why,
            ));
        }
    }
    for (file, kind) in [
        ("cron_triggers.yaml", ObjectKind::CronTrigger),
        ("remote_schemas.yaml", ObjectKind::RemoteSchema),
        ("rest_endpoints.yaml", ObjectKind::Endpoint),
    ] {
        for name in names(yaml(file)?.as_ref()) {
            out.push(not_yet(kind, name));
        }
    }
    let sources = yaml("databases/databases.yaml")?;
    let sources = sources.as_ref().and_then(|s| s.as_sequence());
    for (i, source) in sources.into_iter().flatten().enumerate() {
        let name = super::convert::yaml_name(source);
        out.extend(unread_source_keys(source, &name));
        if i > 0 {
            let why = "Grafton serves one database (--database-url); a second source is not served"
                .to_owned();
            out.push(Inconsistency::new(ObjectKind::Source, &name, why));
        }
        let queries = source.get("native_queries").and_then(|q| q.as_sequence());
        for q in queries.into_iter().flatten() {
            let name = q
                .get("root_field_name")
                .and_then(|n| n.as_str())
                .unwrap_or("?");
            out.push(not_yet(ObjectKind::NativeQuery, name.to_owned()));
        }
        for name in names(source.get("logical_models")) {
            out.push(not_yet(ObjectKind::LogicalModel, name));
        }
        // The naming convention is applied; prefixes, suffixes and a namespace
        // are not yet, and are reported.
        let Some(custom) = source.get("customization").filter(|_| i == 0) else {
            continue;
        };
        if let Some(n) = custom.get("naming_convention").and_then(|n| n.as_str()) {
            match n.replace('_', "-").parse() {
                Ok(convention) => *naming = Some(convention),
                Err(_) => {
                    let why = format!("its naming_convention '{n}' is not one Grafton knows");
                    out.push(Inconsistency::new(ObjectKind::Source, &name, why));
                }
            }
        }
        let text = |v: Option<&serde_norway::Value>, key: &str| {
            v.and_then(|v| v.get(key))
                .and_then(|s| s.as_str())
                .map(str::to_owned)
        };
        let roots = custom.get("root_fields");
        let mut not_applied = Vec::new();
        // Hasura reads both as GraphQL names.
        let name_like = |s: &String| {
            let mut c = s.chars();
            c.next()
                .is_some_and(|f| f == '_' || f.is_ascii_alphabetic())
                && c.all(|x| x == '_' || x.is_ascii_alphanumeric())
        };
        let (prefix, suffix) = (text(roots, "prefix"), text(roots, "suffix"));
        if prefix.iter().chain(&suffix).all(name_like) {
            affixes.prefix = prefix;
            affixes.suffix = suffix;
        } else {
            not_applied.push("root_fields prefix or suffix (not a GraphQL name)");
        }
        if text(roots, "namespace").is_some() {
            not_applied.push("root_fields.namespace");
        }
        let types = custom.get("type_names");
        if text(types, "prefix").is_some() || text(types, "suffix").is_some() {
            not_applied.push("type_names (prefix, suffix)");
        }
        if !not_applied.is_empty() {
            let why = format!(
                "its customization's {} is not applied by Grafton yet",
                not_applied.join(" and ")
            );
            out.push(Inconsistency::new(ObjectKind::Source, &name, why));
        }
    }
    Ok(out)
}

/// A source's keys Grafton does not read: any it does not know is reported (the
/// object is not served as written), and its connection settings, which Grafton's
/// own flags set, are named in a warning.
fn unread_source_keys(source: &serde_norway::Value, name: &str) -> Vec<Inconsistency> {
    const READ: &[&str] = &[
        "name",
        "kind",
        "configuration",
        "tables",
        "functions",
        "customization",
        "native_queries",
        "logical_models",
    ];
    let mut out = Vec::new();
    let keys = source
        .as_mapping()
        .into_iter()
        .flatten()
        .filter_map(|(k, _)| k.as_str());
    for key in keys.filter(|k| !READ.contains(k)) {
        let why = format!("its '{key}' is not read by Grafton");
        out.push(Inconsistency::new(ObjectKind::Source, name, why));
    }
    match source.get("kind").and_then(|k| k.as_str()) {
        None | Some("postgres") | Some("pg") => {}
        Some(kind) => {
            let why =
                format!("a {kind} source is not served (Grafton serves PostgreSQL and SQLite)");
            out.push(Inconsistency::new(ObjectKind::Source, name, why));
        }
    }
    let configuration = source.get("configuration");
    let connection = configuration.and_then(|c| c.get("connection_info"));
    let mut settings: Vec<String> = (connection
        .and_then(|c| c.as_mapping())
        .into_iter()
        .flatten())
    .filter_map(|(k, _)| k.as_str())
    .filter(|k| *k != "database_url")
    .map(|k| format!("connection_info.{k}"))
    .collect();
    settings.extend(
        (configuration
            .and_then(|c| c.as_mapping())
            .into_iter()
            .flatten())
        .filter_map(|(k, _)| k.as_str())
        .filter(|k| *k != "connection_info")
        .map(str::to_owned),
    );
    if !settings.is_empty() {
        tracing::warn!(
            "source '{name}': {} not read; Grafton's flags set its connection \
             (--database-url, --pool-size, --read-replica-url, --request-timeout)",
            settings.join(", ")
        );
    }
    out
}

/// Warns of the project files that set up the server, which Grafton's flags do
/// instead; an empty one says nothing.
fn unread_settings(dir: &Path) {
    for (file, instead) in [
        ("network.yaml", "TLS allow lists are not read"),
        ("opentelemetry.yaml", "use --otlp-endpoint"),
        (
            "metrics_config.yaml",
            "Grafton's /metrics has its own settings",
        ),
        ("backend_configs.yaml", "data connectors are not served"),
    ] {
        let Ok(text) = std::fs::read_to_string(dir.join(file)) else {
            continue;
        };
        let trimmed = text.trim();
        if !(trimmed.is_empty() || trimmed == "{}" || trimmed == "[]") {
            tracing::warn!("{file}: not read by Grafton ({instead})");
        }
    }
}

/// Fills `config` from the project-wide files of the metadata directory `dir`.
pub(super) fn load(dir: &Path, config: &mut Config) -> Result<(), String> {
    let left_out = unserved(dir, &mut config.naming, &mut config.root_fields)?;
    unread_settings(dir);
    config.left_out.extend(left_out);
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
