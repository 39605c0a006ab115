//! Builds the [`SchemaModel`]: names every table, column and relationship, writes the
//! SDL, and validates it with apollo-compiler.

use crate::config::{Config, InsertionOrder, ManualKind};
use crate::model::*;
use crate::naming::{graphql_safe, plural, Arg, Combinator, CompareOp, Naming};
use crate::sdl::{FieldDef, Sdl};
use apollo_compiler::Schema;
use grafton_catalog::{Backend, Catalog, ScalarKind, Table};
use grafton_sql::AggFunc;
use std::collections::{BTreeSet, HashMap, HashSet};

mod access;
mod error;
pub use error::SchemaError;
mod action_fields;
mod action_relationships;
mod action_types;
mod actions;
pub use actions::named_type;
mod aggregate_predicates;
mod aggregates;
mod computed;
mod functions;
mod mutations;
mod names;
use names::{mutation_names, AGG_FUNCS, ORDER_VALUES};
mod basics;
mod lookup;
mod relations;
mod remote_relationships;
mod remote_to_remote;
mod remote_type_relationships;
use lookup::qualified;
pub(crate) use lookup::{config_entry, find_table};
mod relay;
pub use relay::NODE_ID;
mod remotes;
mod stream;
mod table_names;
mod tables;
mod types;
use types::has_min_max;
pub use types::ops_for;
mod validators;

use access::{redacted_nullable, restrict, table_access};
use relations::relationships;
use table_names::name_tables;
use validators::compile_validators;

/// The query field of a role that may read nothing (Hasura's name).
pub const NO_QUERIES: &str = "no_queries_available";

/// Builds the admin schema model for `catalog` under `config` and `naming`.
pub fn build(
    catalog: Catalog,
    config: &Config,
    naming: Naming,
    backend: Backend,
) -> Result<SchemaModel, SchemaError> {
    build_for_role(catalog, config, naming, backend, None, false)
}

/// Builds the schema model `role` sees (`None`: admin). Table and relationship ids
/// are the same for every role, so rules written against the admin model apply.
/// `backend_only`: whether the role's `backend_only` insert/update/delete
/// permissions count (a trusted backend's requests); otherwise they are absent.
pub fn build_for_role(
    catalog: Catalog,
    config: &Config,
    naming: Naming,
    backend: Backend,
    role: Option<&str>,
    backend_only: bool,
) -> Result<SchemaModel, SchemaError> {
    let view = View {
        role,
        backend_only,
        relay: false,
    };
    build_view(catalog, config, naming, backend, view)
}

/// Which of a role's schemas to build.
#[derive(Debug, Clone, Copy, Default)]
pub struct View<'r> {
    /// The role (`None`: admin).
    pub role: Option<&'r str>,
    /// Whether its `backend_only` permissions count (a trusted backend's view).
    pub backend_only: bool,
    /// The Relay API's schema (`/v1beta1/relay`) rather than `/v1/graphql`'s.
    pub relay: bool,
}

/// Builds the schema model of `view` (see [`build_for_role`]).
pub fn build_view(
    catalog: Catalog,
    config: &Config,
    naming: Naming,
    backend: Backend,
    view: View<'_>,
) -> Result<SchemaModel, SchemaError> {
    let View {
        role,
        backend_only,
        relay,
    } = view;
    let default_schema = match backend {
        Backend::Postgres => "public",
        Backend::Sqlite => "main",
    };
    // Kept to find what an action or a remote clashes with, should its SDL not
    // validate.
    let outside = !config.actions.is_empty() || !config.remote_schemas.is_empty();
    let original = outside.then(|| catalog.clone());
    let catalog = table_names::tracked(catalog, config, default_schema);
    let catalog = table_names::with_comments(catalog, config, default_schema);
    let mut warnings = Vec::new();
    let mut tables = name_tables(&catalog, config, naming, default_schema, &mut warnings)?;
    // Metadata that tracks nothing is served as Hasura serves it (a placeholder
    // query field); a database with nothing to serve is a mistake worth saying.
    if tables.is_empty() && config.auto_track.unwrap_or(true) && !config.serve_empty {
        let schemas: BTreeSet<&str> = catalog.tables.iter().map(|t| t.schema.as_str()).collect();
        let listed = if schemas.is_empty() {
            default_schema.to_owned()
        } else {
            schemas.into_iter().collect::<Vec<_>>().join(", ")
        };
        return Err(SchemaError::Empty(listed));
    }
    let relationships = relationships(
        &catalog,
        config,
        &mut tables,
        naming,
        default_schema,
        &mut warnings,
    )?;
    let computed = computed::resolve(
        &catalog,
        config,
        &mut tables,
        backend,
        default_schema,
        &mut warnings,
    )?;
    let validators = compile_validators(&catalog, config, &tables, default_schema)?;
    let access = table_access(
        &catalog,
        config,
        &tables,
        default_schema,
        role,
        backend_only,
    )?;
    let readable = restrict(&mut tables, &relationships, &computed, &access);
    if relay {
        relay::add_connections(
            &catalog,
            &mut tables,
            &relationships,
            &readable,
            &mut warnings,
        );
    }
    let access = mutations::without_empty_inserts(access, &tables, &relationships, &catalog, role);
    let catalog = redacted_nullable(catalog, &tables, &access);
    let functions = functions::resolve(&functions::Context {
        catalog: &catalog,
        config,
        tables: &tables,
        access: &access,
        readable: &readable,
        role,
        naming,
        backend,
        default_schema,
    })?;
    if role.is_none() {
        warnings.extend(functions::volatile_queries(&catalog, &functions));
    }
    let role_actions = actions::resolve(config, role, naming)?;
    let remotes = remotes::resolve(config, role)?;
    let remote_rels = remote_relationships::resolve(
        &catalog,
        config,
        &mut tables,
        &readable,
        &remotes,
        role,
        default_schema,
    )?;
    let action_rels = action_relationships::resolve(&catalog, config, &tables, default_schema)?;
    let remote_type_rels = remote_type_relationships::resolve(
        &catalog,
        config,
        &tables,
        &remotes,
        role,
        default_schema,
    )?;
    let remote_to_remote = remote_to_remote::resolve(&remotes, role)?;
    let mut b = Builder {
        catalog: &catalog,
        naming,
        backend,
        relay,
        tables: &tables,
        relationships: &relationships,
        sdl: Sdl::default(),
        used_scalars: BTreeSet::new(),
        named_scalars: BTreeSet::new(),
        declared_inputs: BTreeSet::new(),
        streams: false,
        root_fields: HashMap::new(),
        mutation_fields: HashMap::new(),
        mutation_names: mutation_names(naming),
        validated: validators.keys().copied().collect(),
        access: &access,
        readable: &readable,
        functions: &functions,
        computed: &computed,
        input_types: HashMap::new(),
        enum_warnings: &mut warnings,
        actions: &role_actions,
        custom_types: &config.custom_types,
        action_rels: &action_rels,
        written_rels: Vec::new(),
        remotes: &remotes,
        remote_rels: &remote_rels,
        remote_type_rels: &remote_type_rels,
        remote_to_remote: &remote_to_remote,
    };
    b.write_all();
    let Builder {
        sdl,
        root_fields,
        mutation_fields,
        mutation_names,
        input_types,
        written_rels,
        ..
    } = b;
    let schema = match Schema::parse_and_validate(&sdl.text, "schema.graphql") {
        Ok(schema) => schema,
        // What the actions clash with, found by building without them.
        Err(e) => match original {
            // Remotes first: what the database and the actions serve wins.
            Some(catalog) if !remotes.is_empty() => {
                let without = remotes::without_remotes(config);
                let plain = build_for_role(catalog, &without, naming, backend, role, backend_only)?;
                return Err(remotes::clashes(&plain, &remotes, &e.errors.to_string()));
            }
            Some(catalog) if !role_actions.actions.is_empty() => {
                let without = actions::without_actions(config);
                let plain = build_for_role(catalog, &without, naming, backend, role, backend_only)?;
                let error = e.errors.to_string();
                return Err(actions::clashes(&plain, &role_actions, &error));
            }
            _ => return Err(SchemaError::Invalid(e.errors.to_string())),
        },
    };
    let ops = CompareOp::ALL
        .into_iter()
        .map(|op| (naming.op(op), op))
        .collect();
    let order_values = ORDER_VALUES
        .iter()
        .map(|(name, d, n)| (naming.enum_value(name), (*d, *n)))
        .collect();
    let agg_funcs = AGG_FUNCS
        .iter()
        .map(|(f, name)| (naming.field(name), *f))
        .collect();
    Ok(SchemaModel {
        backend,
        naming,
        tables,
        relationships,
        functions,
        computed,
        root_fields,
        mutation_fields,
        mutation_names,
        input_types,
        ops,
        cast_op: naming.cast_op(),
        order_values,
        agg_funcs,
        combinators: [
            naming.combinator(Combinator::And),
            naming.combinator(Combinator::Or),
            naming.combinator(Combinator::Not),
        ],
        args: names::arg_names(naming),
        schema,
        sdl: sdl.text,
        role: role.map(str::to_owned),
        access,
        validators,
        warnings,
        relay,
        catalog,
        actions: role_actions.actions,
        action_relationships: written_rels,
        remote_schemas: remotes,
        remote_relationships: remote_rels.into_iter().map(|(r, _)| r).collect(),
        remote_type_remote_rels: remote_to_remote.into_iter().map(|(r, _)| r).collect(),
    })
}

/// The root types' field lists a table adds to.
struct Roots<'r> {
    query: &'r mut Vec<FieldDef>,
    mutation: &'r mut Vec<FieldDef>,
    subscription: &'r mut Vec<FieldDef>,
}

struct Builder<'a> {
    catalog: &'a Catalog,
    naming: Naming,
    backend: Backend,
    /// Writing the Relay API's schema.
    relay: bool,
    tables: &'a [TableInfo],
    relationships: &'a [Relationship],
    sdl: Sdl,
    used_scalars: BTreeSet<ScalarKind>,
    /// Hasura's scalars of array and row arguments (`_uuid`, `author_scalar`), by name.
    named_scalars: BTreeSet<String>,
    /// Input types written once whoever needs them first (`st_d_within_input`).
    declared_inputs: BTreeSet<String>,
    /// Some table has a `_stream` field (so `cursor_ordering` is written).
    streams: bool,
    root_fields: HashMap<String, RootField>,
    mutation_fields: HashMap<String, MutationField>,
    mutation_names: MutationNames,
    /// Columns with a JSON Schema: `(table, column)`.
    validated: HashSet<(TableId, usize)>,
    /// What the role may do with each table.
    access: &'a [TableAccess],
    /// Tables with an object type for the role (see [`restrict`]).
    readable: &'a [bool],
    /// Tracked functions.
    functions: &'a [FunctionInfo],
    /// Computed fields.
    computed: &'a [ComputedField],
    input_types: HashMap<String, InputKind>,
    enum_warnings: &'a mut Vec<String>,
    /// The actions the role may call, and the custom types they reach.
    actions: &'a actions::RoleActions,
    /// Every custom type.
    custom_types: &'a crate::config::CustomTypes,
    /// Every relationship from a custom object to a table.
    action_rels: &'a [ActionRel],
    /// Those written for the role.
    written_rels: Vec<ActionRel>,
    /// The remote schemas served.
    remotes: &'a [crate::model::ServedRemote],
    /// The remote relationships served, with their fields.
    remote_rels: &'a [(
        crate::model::RemoteRel,
        remote_relationships::RemoteFieldDef,
    )],
    /// The relationships from the remotes' types to tables the role sees.
    remote_type_rels: &'a [ActionRel],
    /// Those to other remotes, with their fields.
    remote_to_remote: &'a [(
        crate::model::RemoteTypeRel,
        remote_relationships::RemoteFieldDef,
    )],
}
