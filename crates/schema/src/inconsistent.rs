//! Inconsistent metadata (Hasura's term): an object the metadata names that Grafton
//! cannot serve (a table not in the database, a relationship to an untracked table,
//! a function with an argument type it cannot pass, a kind not implemented yet) is
//! left out whole and reported, as Hasura starts without it; `--strict-metadata`
//! refuses to start instead. Leaving out only ever takes access away: a permission
//! goes whole, and an inherited role whose own permission goes loses every
//! permission, since it would otherwise fall back to its parents' wider ones.

use serde::Serialize;
use std::collections::BTreeMap;

mod remove;
pub use remove::remove;

/// The kind of a metadata object, by the `type` Hasura reports it under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ObjectKind {
    /// A tracked table or view.
    Table,
    /// An object relationship.
    ObjectRelation,
    /// An array relationship.
    ArrayRelation,
    /// A role's select permission on a table.
    SelectPermission,
    /// A role's insert permission on a table.
    InsertPermission,
    /// A role's update permission on a table.
    UpdatePermission,
    /// A role's delete permission on a table.
    DeletePermission,
    /// A tracked function.
    Function,
    /// A computed field.
    ComputedField,
    /// An inherited role.
    InheritedRole,
    /// An event trigger (not served yet).
    EventTrigger,
    /// A remote relationship (not served yet).
    RemoteRelationship,
    /// An action (not served yet).
    Action,
    /// The custom types of actions (not served yet).
    CustomTypes,
    /// A cron trigger.
    CronTrigger,
    /// A remote schema.
    RemoteSchema,
    /// A role's part of a remote schema.
    RemoteSchemaPermission,
    /// A REST endpoint (not served yet).
    Endpoint,
    /// A source's setting (a customization, a second source).
    Source,
    /// A table's Apollo Federation setting (not served yet).
    ApolloFederationConfig,
    /// A native query: SQL in the metadata served as a root field (not served yet).
    NativeQuery,
    /// A logical model: the type a native query returns (not served yet).
    LogicalModel,
}

impl ObjectKind {
    /// Hasura's name of the kind.
    pub fn name(self) -> &'static str {
        use ObjectKind::*;
        match self {
            Table => "table",
            ObjectRelation => "object_relation",
            ArrayRelation => "array_relation",
            SelectPermission => "select_permission",
            InsertPermission => "insert_permission",
            UpdatePermission => "update_permission",
            DeletePermission => "delete_permission",
            Function => "function",
            ComputedField => "computed_field",
            InheritedRole => "inherited_role",
            EventTrigger => "event_trigger",
            RemoteRelationship => "remote_relationship",
            Action => "action",
            CustomTypes => "custom_types",
            CronTrigger => "cron_trigger",
            RemoteSchema => "remote_schema",
            RemoteSchemaPermission => "remote_schema_permission",
            Endpoint => "endpoint",
            Source => "source",
            ApolloFederationConfig => "apollo_federation_config",
            NativeQuery => "native_query",
            LogicalModel => "logical_model",
        }
    }

    /// The kind's plural, for people: `event triggers`, `native queries`.
    pub fn plural(self) -> String {
        let name = self.name().replace('_', " ");
        match name.strip_suffix('y') {
            Some(stem) => format!("{stem}ies"),
            None => format!("{name}s"),
        }
    }

    /// The permission kind of a table's `select`/`insert`/`update`/`delete`.
    pub fn permission(kind: &str) -> Option<ObjectKind> {
        Some(match kind {
            "select" => ObjectKind::SelectPermission,
            "insert" => ObjectKind::InsertPermission,
            "update" => ObjectKind::UpdatePermission,
            "delete" => ObjectKind::DeletePermission,
            _ => return None,
        })
    }
}

/// One object left out, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inconsistency {
    /// What kind of object.
    pub kind: ObjectKind,
    /// The table it belongs to (config key: `name` or `schema.name`), if any.
    pub table: Option<String>,
    /// Its name: the table's or function's key, the relationship's, computed
    /// field's, trigger's or action's name, or the role of a permission.
    pub name: String,
    /// Why it cannot be served.
    pub reason: String,
}

impl Inconsistency {
    /// An object of `table`.
    pub fn of_table(kind: ObjectKind, table: &str, name: &str, reason: String) -> Self {
        Self {
            kind,
            table: Some(table.to_owned()),
            name: name.to_owned(),
            reason,
        }
    }

    /// An object that belongs to no table (a table itself, a function, an action).
    pub fn new(kind: ObjectKind, name: &str, reason: String) -> Self {
        Self {
            kind,
            table: None,
            name: name.to_owned(),
            reason,
        }
    }

    /// How a person names it: `select permission of role 'user' on authors`.
    pub fn describe(&self) -> String {
        let kind = self.kind.name().replace('_', " ");
        match (&self.table, self.kind) {
            (Some(t), k) if is_permission(k) => format!("{kind} of role '{}' on {t}", self.name),
            (Some(t), _) => format!("{kind} '{}' on {t}", self.name),
            (None, _) => format!("{kind} '{}'", self.name),
        }
    }

    /// Hasura's `inconsistent_objects` entry: `type`, `name`, `reason` and a
    /// `definition` naming the object (not its whole metadata).
    pub fn to_json(&self) -> serde_json::Value {
        let table = |key: &str| match key.split_once('.') {
            Some((schema, name)) => serde_json::json!({"schema": schema, "name": name}),
            None => serde_json::json!({"schema": "public", "name": key}),
        };
        let definition = match (&self.table, self.kind) {
            (Some(t), k) if is_permission(k) => {
                serde_json::json!({"source": "default", "table": table(t), "role": self.name})
            }
            (Some(t), _) => {
                serde_json::json!({"source": "default", "table": table(t), "name": self.name})
            }
            (None, ObjectKind::Table | ObjectKind::Function) => {
                serde_json::json!({"source": "default", self.kind.name(): table(&self.name)})
            }
            (None, _) => serde_json::json!({"name": self.name}),
        };
        serde_json::json!({
            "type": self.kind.name(),
            "name": self.describe(),
            "reason": self.reason,
            "definition": definition,
        })
    }
}

fn is_permission(kind: ObjectKind) -> bool {
    matches!(
        kind,
        ObjectKind::SelectPermission
            | ObjectKind::InsertPermission
            | ObjectKind::UpdatePermission
            | ObjectKind::DeletePermission
    )
}

/// One warning for everything left out: the count of each kind, then each object
/// and why.
pub fn summary(left_out: &[Inconsistency]) -> Option<String> {
    (!left_out.is_empty()).then(|| {
        format!(
            "inconsistent metadata: {}; the rest is served (--strict-metadata refuses to \
             start instead; /v1/metadata get_inconsistent_metadata lists them){}",
            counts(left_out, "left out"),
            lines(left_out)
        )
    })
}

/// Why `--strict-metadata` refuses to start.
pub fn refusal(list: &[Inconsistency]) -> String {
    format!(
        "inconsistent metadata (--strict-metadata): {}{}",
        counts(list, "cannot be served"),
        lines(list)
    )
}

/// `3 object(s) left out (1 function, 2 event_trigger)`.
fn counts(list: &[Inconsistency], what: &str) -> String {
    let mut by_kind: BTreeMap<ObjectKind, usize> = BTreeMap::new();
    for i in list {
        *by_kind.entry(i.kind).or_default() += 1;
    }
    let counts: Vec<String> = (by_kind.iter())
        .map(|(k, n)| format!("{n} {}", k.name()))
        .collect();
    format!("{} object(s) {what} ({})", list.len(), counts.join(", "))
}

/// A line per object, grouped by kind.
fn lines(list: &[Inconsistency]) -> String {
    let mut sorted: Vec<&Inconsistency> = list.iter().collect();
    sorted.sort_by_key(|i| i.kind);
    (sorted.iter())
        .map(|i| format!("\n  {}: {}", i.describe(), i.reason))
        .collect()
}
