//! Actions in the schema: a root field per action the role may call (`query_root`
//! for a query action, `mutation_root` for a mutation), and the custom types those
//! fields reach. What cannot be served is found here, before any SDL is written,
//! and reported as inconsistent metadata: an unknown or misplaced type, an
//! asynchronous query, a transform. The SDL is written in `action_fields`.

pub use super::action_types::named_type;
use super::action_types::{bad_custom_name, is_name, is_type, kind_of, Kind};
use super::*;
use crate::config::{ActionConfig, ActionKind, ActionOperation, CustomTypes};
use crate::inconsistent::{Inconsistency, ObjectKind};

/// GraphQL's own scalars.
pub(super) const BUILT_IN: [&str; 5] = ["String", "Int", "Float", "Boolean", "ID"];

/// The database scalars an action's types may name (as Hasura's may name its
/// source's scalars).
pub(super) const DB_SCALARS: [ScalarKind; 16] = [
    ScalarKind::BigInt,
    ScalarKind::Numeric,
    ScalarKind::Uuid,
    ScalarKind::Timestamptz,
    ScalarKind::Timestamp,
    ScalarKind::Date,
    ScalarKind::Time,
    ScalarKind::Timetz,
    ScalarKind::Interval,
    ScalarKind::Json,
    ScalarKind::Jsonb,
    ScalarKind::Bytea,
    ScalarKind::Geometry,
    ScalarKind::Geography,
    ScalarKind::Ltree,
    ScalarKind::Raster,
];

/// The actions a role may call, and the custom types they reach.
#[derive(Default)]
pub(crate) struct RoleActions {
    /// The actions, in metadata order.
    pub(crate) actions: Vec<ActionConfig>,
    /// Names of the custom types reached from them.
    pub(crate) types: BTreeSet<String>,
}

/// Whether `role` (`None`: admin) may call `action`: listed, or an inherited role
/// one of whose roles may.
fn allowed(config: &Config, action: &ActionConfig, role: Option<&str>, depth: usize) -> bool {
    let Some(role) = role else { return true };
    if action.permissions.iter().any(|p| p.role == role) {
        return true;
    }
    let parents = config.inherited_roles.get(role).into_iter().flatten();
    depth < 16
        && parents
            .into_iter()
            .any(|p| allowed(config, action, Some(p), depth + 1))
}

/// The actions `role` may call and the types they reach; or what in the
/// metadata cannot be served (checked for every action, whoever the role).
pub(crate) fn resolve(
    config: &Config,
    role: Option<&str>,
    naming: Naming,
) -> Result<RoleActions, SchemaError> {
    let types = &config.custom_types;
    let scalar = |name: &str| {
        BUILT_IN.contains(&name)
            || DB_SCALARS.iter().any(|k| db_scalar_name(naming, k) == name)
            || matches!(kind_of(types, name), Some(Kind::Enum | Kind::Scalar))
    };
    if let Some(why) = bad_custom_name(types) {
        let list = vec![Inconsistency::new(
            ObjectKind::CustomTypes,
            "custom_types",
            why,
        )];
        return Err(SchemaError::Inconsistent(list));
    }
    let mut bad = Vec::new();
    // The custom types' own fields: outputs of objects, inputs of input objects.
    for o in &types.objects {
        for f in &o.fields {
            let n = named_type(&f.ty);
            if !(scalar(n) || kind_of(types, n) == Some(Kind::Object)) {
                let why = format!(
                    "field {}.{}: '{}' is not a scalar, enum or object type of the custom types",
                    o.name, f.name, f.ty
                );
                bad.push(Inconsistency::new(
                    ObjectKind::CustomTypes,
                    "custom_types",
                    why,
                ));
            }
        }
        if o.fields
            .iter()
            .any(|f| f.arguments.as_ref().is_some_and(|a| !a.is_null()))
        {
            let why = format!("the object '{}' can't have arguments", o.name);
            bad.push(Inconsistency::new(
                ObjectKind::CustomTypes,
                "custom_types",
                why,
            ));
        }
    }
    for i in &types.input_objects {
        for f in &i.fields {
            let n = named_type(&f.ty);
            if !(scalar(n) || kind_of(types, n) == Some(Kind::Input)) {
                let why = format!("field {}.{}: '{}' is not a scalar, enum or input object type of the custom types", i.name, f.name, f.ty);
                bad.push(Inconsistency::new(
                    ObjectKind::CustomTypes,
                    "custom_types",
                    why,
                ));
            }
        }
    }
    if !bad.is_empty() {
        return Err(SchemaError::Inconsistent(bad));
    }
    for (i, a) in config.actions.iter().enumerate() {
        if config.actions[..i].iter().any(|b| b.name == a.name) {
            let why = format!("action with name \"{}\" already exists", a.name);
            bad.push(Inconsistency::new(ObjectKind::Action, &a.name, why));
            continue;
        }
        if let Some(why) = unservable(a, types, &scalar) {
            bad.push(Inconsistency::new(ObjectKind::Action, &a.name, why));
        }
    }
    if !bad.is_empty() {
        return Err(SchemaError::Inconsistent(bad));
    }
    let mut out = RoleActions::default();
    for a in config
        .actions
        .iter()
        .filter(|a| allowed(config, a, role, 0))
    {
        let d = &a.definition;
        let named = std::iter::once(named_type(&d.output_type))
            .chain(d.arguments.iter().map(|x| named_type(&x.ty)));
        for n in named {
            reach(types, n, &mut out.types);
        }
        out.actions.push(a.clone());
    }
    Ok(out)
}

/// Why an action cannot be served, if it cannot.
fn unservable(
    a: &ActionConfig,
    custom: &CustomTypes,
    scalar: &dyn Fn(&str) -> bool,
) -> Option<String> {
    let d = &a.definition;
    let names = std::iter::once(&a.name).chain(d.arguments.iter().map(|x| &x.name));
    if let Some(name) = names.into_iter().find(|n| !is_name(n)) {
        return Some(format!("'{name}' is not a GraphQL name"));
    }
    let types = std::iter::once(&d.output_type).chain(d.arguments.iter().map(|x| &x.ty));
    if let Some(ty) = types.into_iter().find(|t| !is_type(t)) {
        return Some(format!("'{ty}' is not a GraphQL type"));
    }
    if d.kind == ActionKind::Asynchronous && d.operation == ActionOperation::Query {
        return Some("a query action cannot be asynchronous: only mutations are".into());
    }
    // Its transforms read now: one Grafton cannot read is reported, never a
    // call that fails later.
    if let Some(Err(why)) = d
        .request_transform
        .as_ref()
        .map(grafton_kriti::RequestTransform::read)
    {
        return Some(format!("its request_transform: {why}"));
    }
    if let Some(Err(why)) = d
        .response_transform
        .as_ref()
        .map(grafton_kriti::ResponseTransform::read)
    {
        return Some(format!("its response_transform: {why}"));
    }
    // As Hasura, the handler's `{{ENV}}` is resolved when the schema is built.
    let vars = crate::config::template_vars(&d.handler);
    if let Some(var) = vars.iter().find(|v| std::env::var(v.as_str()).is_err()) {
        return Some(format!(
            "the environment variable '{var}' (in its handler) is not set"
        ));
    }
    let out = named_type(&d.output_type);
    if !(scalar(out) || kind_of(custom, out) == Some(Kind::Object)) {
        return Some(format!(
            "its output type '{}' is not a scalar, enum or object type of the custom types",
            d.output_type
        ));
    }
    for arg in &d.arguments {
        let n = named_type(&arg.ty);
        if !(scalar(n) || kind_of(custom, n) == Some(Kind::Input)) {
            return Some(format!(
                "its argument '{}' has type '{}', which is not a scalar, enum or input object type of the custom types",
                arg.name, arg.ty
            ));
        }
    }
    None
}

/// Adds `name` and every custom type its fields reach to `seen`.
fn reach(types: &CustomTypes, name: &str, seen: &mut BTreeSet<String>) {
    if kind_of(types, name).is_none() || !seen.insert(name.to_owned()) {
        return;
    }
    let fields = (types
        .objects
        .iter()
        .filter(|o| o.name == name)
        .flat_map(|o| &o.fields))
    .chain((types.input_objects.iter().filter(|i| i.name == name)).flat_map(|i| &i.fields));
    let named: Vec<String> = fields.map(|f| named_type(&f.ty).to_owned()).collect();
    for n in named {
        reach(types, &n, seen);
    }
}

/// The SDL name of a database scalar under `naming`.
pub(super) fn db_scalar_name(naming: Naming, kind: &ScalarKind) -> String {
    let base = match kind {
        ScalarKind::BigInt => "bigint",
        ScalarKind::Numeric => "numeric",
        ScalarKind::Uuid => "uuid",
        ScalarKind::Timestamptz => "timestamptz",
        ScalarKind::Timestamp => "timestamp",
        ScalarKind::Date => "date",
        ScalarKind::Time => "time",
        ScalarKind::Timetz => "timetz",
        ScalarKind::Interval => "interval",
        ScalarKind::Json => "json",
        ScalarKind::Jsonb => "jsonb",
        ScalarKind::Geometry => "geometry",
        ScalarKind::Geography => "geography",
        ScalarKind::Ltree => "ltree",
        ScalarKind::Raster => "raster",
        _ => "bytea",
    };
    naming.scalar(base)
}

/// Why the schema with the role's actions does not validate when the one
/// without them does (`plain`): an action named as another root field, a
/// custom type named as one of the database's; else every action, with
/// `error`.
pub(crate) fn clashes(plain: &SchemaModel, role: &RoleActions, error: &str) -> SchemaError {
    let mut bad = Vec::new();
    for a in &role.actions {
        let taken = match a.definition.operation {
            ActionOperation::Query => plain.root_fields.contains_key(&a.name),
            ActionOperation::Mutation => plain.mutation_fields.contains_key(&a.name),
        };
        // An asynchronous action's result is a query field and a type too.
        let result_taken = a.definition.kind == ActionKind::Asynchronous
            && (plain.root_fields.contains_key(&a.name)
                || plain.schema.types.contains_key(a.name.as_str()));
        if taken || result_taken {
            let why = "its name is that of another root field".to_owned();
            bad.push(Inconsistency::new(ObjectKind::Action, &a.name, why));
        }
    }
    for name in &role.types {
        if plain.schema.types.contains_key(name.as_str()) {
            let why =
                format!("the custom type '{name}' has the name of a type of the database's schema");
            bad.push(Inconsistency::new(
                ObjectKind::CustomTypes,
                "custom_types",
                why,
            ));
        }
    }
    if bad.is_empty() {
        for a in &role.actions {
            let why = format!("the schema with it does not validate: {error}");
            bad.push(Inconsistency::new(ObjectKind::Action, &a.name, why));
        }
    }
    SchemaError::Inconsistent(bad)
}

/// `config` without actions or custom types.
pub(crate) fn without_actions(config: &Config) -> Config {
    Config {
        actions: Vec::new(),
        custom_types: Default::default(),
        ..config.clone()
    }
}
