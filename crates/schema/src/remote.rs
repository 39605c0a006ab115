//! A remote schema as its introspection gave it, named as it is served (its
//! customization applied): what the schema build merges into each role's
//! schema, and the renames a request's part for it is written back with.

use std::collections::BTreeMap;

/// One remote schema's introspected types and root fields.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RemoteIntrospected {
    /// Its types other than its root types (not the built-in scalars), each
    /// as SDL, named as served.
    pub types: Vec<RemoteType>,
    /// Its query root fields.
    pub query: Vec<RemoteField>,
    /// Its mutation root fields.
    pub mutation: Vec<RemoteField>,
    /// Served type name → the remote's (only those that differ).
    pub type_renames: BTreeMap<String, String>,
    /// The remote's type name → the served one (only those that differ).
    pub served_names: BTreeMap<String, String>,
    /// (served type, served field) → the remote's field name (only those that
    /// differ).
    pub field_renames: BTreeMap<(String, String), String>,
    /// Arguments a role's permission sets (`@preset`), by (served type, served
    /// field): absent from the role's schema, added to every call.
    pub presets: Presets,
    /// Input object fields a role's permission sets (`@preset`): absent from
    /// the role's schema, added to every value of their type a call carries.
    pub input_presets: InputPresets,
    /// The one root field holding its root fields (`root_fields_namespace`).
    pub namespace: Option<String>,
    /// Its query root type's name (as served: the key of its root fields'
    /// renames).
    pub query_type: String,
    /// Its mutation root type's name, if it has one.
    pub mutation_type: Option<String>,
    /// The introspection answer as received (`introspect_remote_schema`).
    pub raw: serde_json::Value,
}

impl RemoteIntrospected {
    /// The remote's name of served type `name`.
    pub fn remote_type<'a>(&'a self, name: &'a str) -> &'a str {
        self.type_renames.get(name).map_or(name, String::as_str)
    }

    /// The remote's name of field `field` of served type `parent`.
    pub fn remote_field<'a>(&'a self, parent: &str, field: &'a str) -> &'a str {
        let key = (parent.to_owned(), field.to_owned());
        self.field_renames.get(&key).map_or(field, String::as_str)
    }

    /// The names of the root fields it adds to `query_root` and to
    /// `mutation_root` (its namespace's alone, when it has one).
    pub fn root_field_names(&self) -> (Vec<&str>, Vec<&str>) {
        if let Some(ns) = self.namespace.as_deref() {
            let mutation = self.mutation.is_empty();
            return (vec![ns], if mutation { Vec::new() } else { vec![ns] });
        }
        let query = self.query.iter().map(|f| f.name.as_str()).collect();
        let mutation = self.mutation.iter().map(|f| f.name.as_str()).collect();
        (query, mutation)
    }

    /// Its types and root types as one schema (parsed as far as it goes):
    /// what a remote relationship's path is looked up in.
    pub fn parsed_schema(&self) -> apollo_compiler::Schema {
        use std::fmt::Write;
        let mut sdl: String = (self.types.iter())
            .map(|t| format!("{}\n", t.sdl))
            .collect();
        let roots = [(&self.query_type, &self.query)];
        let mutation = self.mutation_type.as_ref().map(|m| (m, &self.mutation));
        for (name, fields) in roots.into_iter().chain(mutation) {
            if fields.is_empty() || self.types.iter().any(|t| &t.name == name) {
                continue;
            }
            let _ = write!(sdl, "type {name} {{");
            for f in fields {
                let args: Vec<String> = (f.args.iter()).map(|(n, t)| format!("{n}: {t}")).collect();
                match args.is_empty() {
                    true => {
                        let _ = write!(sdl, " {}: {}", f.name, f.ty);
                    }
                    false => {
                        let _ = write!(sdl, " {}({}): {}", f.name, args.join(", "), f.ty);
                    }
                }
            }
            sdl.push_str(" }\n");
        }
        apollo_compiler::Schema::parse(sdl, "remote.graphql").unwrap_or_else(|e| e.partial)
    }

    /// The served name of the remote's type `name`.
    pub fn served_type(&self, name: &str) -> String {
        self.served_names
            .get(name)
            .map_or_else(|| name.to_owned(), String::clone)
    }
}

/// One type of a remote schema.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteType {
    /// Its name, as served.
    pub name: String,
    /// A scalar (merged with one of the same name, as Hasura merges them).
    pub scalar: bool,
    /// Its SDL definition.
    pub sdl: String,
}

/// One root field of a remote schema, as served.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteField {
    /// Its name.
    pub name: String,
    /// Its arguments: each SDL name (with its description) and type (with its
    /// default).
    pub args: Vec<(String, String)>,
    /// Its type, with a `@deprecated` when it is.
    pub ty: String,
    /// Its description.
    pub description: Option<String>,
}

/// Presets by (type, field).
pub type Presets = BTreeMap<(String, String), Vec<Preset>>;

/// The presets a role's permission SDL sets, in the remote's own names.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RolePresets {
    /// On arguments, by (type, field).
    pub arguments: Presets,
    /// On input object fields, by input type (each [`Preset::arg`] a field).
    pub input_fields: BTreeMap<String, Vec<Preset>>,
}

/// What writing a call's values with the presets on input object fields
/// needs, in served names: the input types whose values are rewritten (those
/// with presets, and those that hold one of them), and where they are taken.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InputPresets {
    /// The presets of each input type that has some.
    pub presets: BTreeMap<String, Vec<Preset>>,
    /// Each rewritten input type's fields and their types.
    pub types: BTreeMap<String, BTreeMap<String, apollo_compiler::ast::Type>>,
    /// The arguments of a rewritten type, by (type, field): name → type.
    pub args: BTreeMap<(String, String), BTreeMap<String, apollo_compiler::ast::Type>>,
    /// The enums a rewritten type's fields take (a value written as a name).
    pub enums: std::collections::BTreeSet<String>,
}

/// An argument a role's remote schema permission sets.
#[derive(Debug, Clone, PartialEq)]
pub struct Preset {
    /// The argument's name.
    pub arg: String,
    /// Its value.
    pub value: PresetValue,
}

/// A preset's value.
#[derive(Debug, Clone, PartialEq)]
pub enum PresetValue {
    /// A GraphQL literal, written as is.
    Literal(String),
    /// The caller's session variable (lower-case name), written as the
    /// argument's type (`kind`: `Int`, `Float`, `Boolean`, `Enum`, else a string).
    Session {
        /// The variable.
        var: String,
        /// How it is written.
        kind: String,
    },
}

/// A remote as each role sees it: whole (admin, and every role when it has no
/// permissions), or the part a role's permission gives.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteViews {
    /// The whole remote.
    pub whole: std::sync::Arc<RemoteIntrospected>,
    /// Each role's part (an error: the role sees none of it, reported).
    pub roles: BTreeMap<String, Result<std::sync::Arc<RemoteIntrospected>, String>>,
}
