//! The project-wide parts of Hasura metadata: `api_limits`, `query_collections`
//! with the `allowlist`, `inherited_roles`, `graphql_schema_introspection`,
//! `cron_triggers`, `actions`, `custom_types` and `remote_schemas` are served;
//! REST endpoints and the sources' unread parts are reported. Absent or empty (`{}`,
//! `[]`, `null`) parts say nothing.

use crate::api_limits::ApiLimits;
use crate::config::Config;
use crate::inconsistent::{Inconsistency, ObjectKind};
use crate::trusted::AllowedCollection;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{Map, Value};

/// Hasura's project-wide metadata files, which are never table entries, and the
/// key of the metadata document each is (`actions.yaml` holds `actions` and
/// `custom_types`; `version.yaml` is the document's `version`).
pub(super) const FILES: &[(&str, &str)] = &[
    ("actions.yaml", "actions"),
    ("allow_list.yaml", "allowlist"),
    ("api_limits.yaml", "api_limits"),
    ("backend_configs.yaml", "backend_configs"),
    ("cron_triggers.yaml", "cron_triggers"),
    ("functions.yaml", ""),
    (
        "graphql_schema_introspection.yaml",
        "graphql_schema_introspection",
    ),
    ("inherited_roles.yaml", "inherited_roles"),
    ("metrics_config.yaml", "metrics_config"),
    ("network.yaml", "network"),
    ("opentelemetry.yaml", "opentelemetry"),
    ("query_collections.yaml", "query_collections"),
    ("remote_schemas.yaml", "remote_schemas"),
    ("rest_endpoints.yaml", "rest_endpoints"),
    ("version.yaml", ""),
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

/// Parses a project file's text as what it holds, for an error with its line; files
/// whose content is not read (actions, cron triggers, …) need only be YAML.
pub(super) fn check(file: &str, text: &str) -> Result<(), serde_norway::Error> {
    fn parse<T: DeserializeOwned>(text: &str) -> Result<(), serde_norway::Error> {
        serde_norway::from_str::<Option<T>>(text).map(|_| ())
    }
    match file {
        "api_limits.yaml" if !is_empty_text(text) => parse::<ApiLimits>(text),
        "graphql_schema_introspection.yaml" if !is_empty_text(text) => {
            parse::<crate::trusted::Introspection>(text)
        }
        "inherited_roles.yaml" => parse::<Vec<InheritedRole>>(text),
        "query_collections.yaml" => parse::<Vec<Collection>>(text),
        "allow_list.yaml" => parse::<Vec<AllowListEntry>>(text),
        _ => parse::<serde_norway::Value>(text),
    }
}

/// `{}`, `[]` or nothing: a file that says nothing.
fn is_empty_text(text: &str) -> bool {
    let trimmed = text.trim();
    trimmed.is_empty() || trimmed == "{}" || trimmed == "[]"
}

/// The document's `key`, read as a `T`, when it says something.
fn read<T: DeserializeOwned>(doc: &Map<String, Value>, key: &str) -> Result<Option<T>, String> {
    match doc.get(key) {
        Some(v) if !super::document::is_empty(v) => super::document::typed(v, key).map(Some),
        _ => Ok(None),
    }
}

/// The `name` of each object of a list.
fn names(v: Option<&Value>) -> Vec<String> {
    let list = v.and_then(Value::as_array).cloned().unwrap_or_default();
    list.iter().map(super::convert::json_name).collect()
}

/// The project-wide objects Grafton does not serve yet (REST endpoints), each
/// by name, and the parts of the sources it
/// does not read (a source's customization, a second source): reported as
/// inconsistent metadata, never dropped in silence.
fn unserved(
    doc: &Map<String, Value>,
    naming: &mut Option<crate::naming::Convention>,
    affixes: &mut crate::config::RootFieldAffixes,
) -> Vec<Inconsistency> {
    let not_yet = |kind: ObjectKind, name: String| {
        let why = format!("{} are not served by Grafton yet", kind.plural());
        Inconsistency::new(kind, &name, why)
    };
    let mut out = Vec::new();
    for (key, kind) in [("rest_endpoints", ObjectKind::Endpoint)] {
        for name in names(doc.get(key)) {
            out.push(not_yet(kind, name));
        }
    }
    let sources = doc.get("sources").and_then(Value::as_array);
    for (i, source) in sources.into_iter().flatten().enumerate() {
        let name = super::convert::json_name(source);
        out.extend(unread_source_keys(source, &name));
        if i > 0 {
            let why = "Grafton serves one database (--database-url); a second source is not served"
                .to_owned();
            out.push(Inconsistency::new(ObjectKind::Source, &name, why));
        }
        let queries = source.get("native_queries").and_then(Value::as_array);
        for q in queries.into_iter().flatten() {
            let name = q
                .get("root_field_name")
                .and_then(Value::as_str)
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
        if let Some(n) = custom.get("naming_convention").and_then(Value::as_str) {
            match n.replace('_', "-").parse() {
                Ok(convention) => *naming = Some(convention),
                Err(_) => {
                    let why = format!("its naming_convention '{n}' is not one Grafton knows");
                    out.push(Inconsistency::new(ObjectKind::Source, &name, why));
                }
            }
        }
        let text = |v: Option<&Value>, key: &str| {
            v.and_then(|v| v.get(key))
                .and_then(Value::as_str)
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
    out
}

/// A source's keys Grafton does not read: any it does not know is reported (the
/// object is not served as written), and its connection settings, which Grafton's
/// own flags set, are named in a warning.
fn unread_source_keys(source: &Value, name: &str) -> Vec<Inconsistency> {
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
    let keys = source.as_object().into_iter().flatten().map(|(k, _)| k);
    for key in keys.filter(|k| !READ.contains(&k.as_str())) {
        let why = format!("its '{key}' is not read by Grafton");
        out.push(Inconsistency::new(ObjectKind::Source, name, why));
    }
    match source.get("kind").and_then(Value::as_str) {
        None | Some("postgres") | Some("pg") => {}
        Some(kind) => {
            let why =
                format!("a {kind} source is not served (Grafton serves PostgreSQL and SQLite)");
            out.push(Inconsistency::new(ObjectKind::Source, name, why));
        }
    }
    let configuration = source.get("configuration");
    let connection = configuration.and_then(|c| c.get("connection_info"));
    let mut settings: Vec<String> = (connection.and_then(Value::as_object).into_iter().flatten())
        .map(|(k, _)| k)
        .filter(|k| *k != "database_url")
        .map(|k| format!("connection_info.{k}"))
        .collect();
    settings.extend(
        (configuration
            .and_then(Value::as_object)
            .into_iter()
            .flatten())
        .map(|(k, _)| k)
        .filter(|k| *k != "connection_info")
        .cloned(),
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

/// Warns of the settings that set up the server, which Grafton's flags do instead;
/// an empty one says nothing.
fn unread_settings(doc: &Map<String, Value>) {
    for (key, instead) in [
        ("network", "TLS allow lists are not read"),
        ("opentelemetry", "use --otlp-endpoint"),
        ("metrics_config", "Grafton's /metrics has its own settings"),
        ("backend_configs", "data connectors are not served"),
    ] {
        if doc.get(key).is_some_and(|v| !super::document::is_empty(v)) {
            tracing::warn!("{key}: not read by Grafton ({instead})");
        }
    }
}

/// Fills `config` from the project-wide parts of the metadata document `doc`.
pub(super) fn apply(doc: &Map<String, Value>, config: &mut Config) -> Result<(), String> {
    let left_out = unserved(doc, &mut config.naming, &mut config.root_fields);
    unread_settings(doc);
    config.left_out.extend(left_out);
    if let Some(limits) = read(doc, "api_limits")? {
        config.api_limits = limits;
    }
    // Each cron trigger and action read alone: one Grafton cannot read is
    // reported, not the whole metadata refused; the custom types as a whole.
    let crons = each(
        doc,
        "cron_triggers",
        ObjectKind::CronTrigger,
        &mut config.left_out,
    );
    let actions = each(doc, "actions", ObjectKind::Action, &mut config.left_out);
    let remotes: Vec<crate::config::RemoteSchemaConfig> = each(
        doc,
        "remote_schemas",
        ObjectKind::RemoteSchema,
        &mut config.left_out,
    );
    config.cron_triggers.extend(crons);
    config.actions.extend(actions);
    for remote in remotes {
        // A relationship from a remote's types that cannot be served is
        // reported (and left out by the build), the remote itself served.
        let to_remotes = remote.remote_relationships_to_remotes().1;
        for (name, why) in remote.table_relationships().1.into_iter().chain(to_remotes) {
            let name = format!("{}.{name}", remote.name);
            let kind = ObjectKind::RemoteRelationship;
            config.left_out.push(Inconsistency::new(kind, &name, why));
        }
        config.remote_schemas.push(remote);
    }
    if let Some(types) = doc
        .get("custom_types")
        .filter(|v| !super::document::is_empty(v))
    {
        match super::document::typed(types, "custom_types") {
            Ok(types) => config.custom_types = types,
            Err(e) => {
                let kind = ObjectKind::CustomTypes;
                config
                    .left_out
                    .push(Inconsistency::new(kind, "custom_types", e));
            }
        }
    }
    if let Some(introspection) = read(doc, "graphql_schema_introspection")? {
        config.graphql_schema_introspection = introspection;
    }
    let inherited: Vec<InheritedRole> = read(doc, "inherited_roles")?.unwrap_or_default();
    for r in inherited {
        config.inherited_roles.insert(r.role_name, r.role_set);
    }
    let collections: Vec<Collection> = read(doc, "query_collections")?.unwrap_or_default();
    let allowed: Vec<AllowListEntry> = read(doc, "allowlist")?.unwrap_or_default();
    for entry in allowed {
        let Some(collection) = collections.iter().find(|c| c.name == entry.collection) else {
            return Err(format!(
                "allowlist: collection '{}' is not in query_collections",
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

/// Each entry of the list `key`, read alone: one that does not read is left out
/// and reported as a `kind`.
fn each<T: DeserializeOwned>(
    doc: &Map<String, Value>,
    key: &str,
    kind: ObjectKind,
    left_out: &mut Vec<Inconsistency>,
) -> Vec<T> {
    let list = doc.get(key).and_then(Value::as_array);
    let mut out = Vec::new();
    for (i, entry) in list.into_iter().flatten().enumerate() {
        match super::document::typed(entry, &format!("{key}[{i}]")) {
            Ok(t) => out.push(t),
            Err(e) => {
                let name = super::convert::json_name(entry);
                left_out.push(Inconsistency::new(kind, &name, e));
            }
        }
    }
    out
}
