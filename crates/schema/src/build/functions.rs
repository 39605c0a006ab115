//! Tracked SQL functions (Hasura's): each configured function matched to the
//! catalog and checked, named, and written as root fields for the roles that may
//! call it. A function that cannot be served as configured stops start-up, named.

use super::{Builder, SchemaError};
use crate::config::{Config, CustomRootField, ExposedAs, FunctionConfig};
use crate::inconsistent::{Inconsistency, ObjectKind};
use crate::model::*;
use crate::naming::{graphql_safe, Naming};
use crate::sdl::FieldDef;
use grafton_catalog::{Backend, Catalog, Function, ScalarKind};
use std::collections::HashSet;

/// What deciding a function's shape and visibility needs.
pub(super) struct Context<'a> {
    pub(super) catalog: &'a Catalog,
    pub(super) config: &'a Config,
    pub(super) tables: &'a [TableInfo],
    pub(super) access: &'a [TableAccess],
    pub(super) readable: &'a [bool],
    pub(super) role: Option<&'a str>,
    pub(super) naming: Naming,
    pub(super) backend: Backend,
    pub(super) default_schema: &'a str,
}

/// Every tracked function, in config order (the same ids in every role's model).
pub(super) fn resolve(cx: &Context<'_>) -> Result<Vec<FunctionInfo>, SchemaError> {
    let mut taken: HashSet<String> = cx
        .tables
        .iter()
        .flat_map(|t| t.roots.names.iter().cloned())
        .collect();
    let mut out = Vec::new();
    let mut problems = Vec::new();
    for (key, fc) in &cx.config.functions {
        let refuse = |why: String| Inconsistency::new(ObjectKind::Function, key, why);
        let info = match function(cx, key, fc) {
            Ok(info) => info,
            Err(why) => {
                problems.push(refuse(why));
                continue;
            }
        };
        let names = std::iter::once(&info.field).chain(&info.aggregate);
        if let Some(name) = names.into_iter().find(|n| taken.contains(*n)) {
            problems.push(refuse(format!(
                "its root field '{name}' is already taken by a table's or another function's \
                 root field (give it a custom_name)"
            )));
            continue;
        }
        taken.extend(std::iter::once(info.field.clone()).chain(info.aggregate.clone()));
        out.push(info);
    }
    if !problems.is_empty() {
        return Err(SchemaError::Inconsistent(problems));
    }
    Ok(out)
}

/// What start-up says of each VOLATILE function exposed as a query: Hasura infers
/// who may call it and serves it on every read path; Grafton does not, since each
/// call may write.
pub(super) fn volatile_queries(catalog: &Catalog, functions: &[FunctionInfo]) -> Vec<String> {
    (functions.iter())
        .filter(|f| f.volatile && !f.mutation)
        .map(|f| {
            let c = &catalog.functions[f.catalog_index];
            format!(
                "function {}.{} is VOLATILE and exposed as a query: only roles named in its \
                 permissions may call it (Hasura would infer them from the select permission), \
                 it is not a subscription field and it does not run over GET",
                c.schema, c.name
            )
        })
        .collect()
}

/// Whether a caller can pass `a`: a scalar Grafton maps, an array of a built-in
/// type, or a row type whose name is a GraphQL name (see [`Builder::arg_type`]).
pub(super) fn passable(a: &grafton_catalog::FunctionArg) -> bool {
    a.scalar.is_some()
        || a.array_of.is_some()
        || (a.row_of.as_ref()).is_some_and(|(_, t)| graphql_safe(t) == *t)
}

impl Builder<'_> {
    /// The GraphQL type of a [`passable`] argument, as Hasura names it: its
    /// scalar; `_<element>` holding a PostgreSQL array literal (`"{a,b}"`) for an
    /// array; `<type>_scalar` holding a row literal (`"(1,Ada)"`) for a row type,
    /// since the type's own name is its table's object type.
    pub(super) fn arg_type(&mut self, a: &grafton_catalog::FunctionArg) -> String {
        if let Some(element) = &a.array_of {
            let scalar = format!("_{element}");
            self.named_scalars.insert(scalar.clone());
            return scalar;
        }
        if let (None, Some((_, row))) = (&a.scalar, &a.row_of) {
            let scalar = self.naming.scalar(&format!("{row}_scalar"));
            self.named_scalars.insert(scalar.clone());
            return scalar;
        }
        let kind = a.scalar.clone().unwrap_or(ScalarKind::Text);
        let kind = self.column_kind(&kind);
        self.used_scalars.insert(kind.clone());
        self.scalar(&kind)
    }
}

/// The exposed table `schema.name`.
pub(super) fn exposed(
    catalog: &Catalog,
    tables: &[TableInfo],
    schema: &str,
    name: &str,
) -> Option<TableId> {
    tables.iter().position(|t| {
        let c = &catalog.tables[t.catalog_index];
        c.schema == schema && c.name == name
    })
}

/// The position of `name`, a session argument of one of `types`.
pub(super) fn session_argument(
    f: &Function,
    name: &str,
    types: &[&str],
    what: &str,
) -> Result<usize, String> {
    let p = (f.args.iter().position(|a| a.name == name))
        .ok_or_else(|| format!("{what}: session_argument '{name}' is not one of its arguments"))?;
    let ty = &f.args[p].db_type;
    if !types.contains(&ty.as_str()) {
        return Err(format!(
            "{what}: session_argument '{name}' has type {ty}, not {}",
            types.join(" or ")
        ));
    }
    Ok(p)
}

fn custom(root: &Option<CustomRootField>) -> Option<&str> {
    match root {
        Some(CustomRootField::Name(n)) => Some(n),
        Some(CustomRootField::Full { name, .. }) => name.as_deref(),
        None => None,
    }
}

fn function(cx: &Context<'_>, key: &str, fc: &FunctionConfig) -> Result<FunctionInfo, String> {
    if cx.backend == Backend::Sqlite {
        return Err(format!(
            "function '{key}': tracked functions need PostgreSQL (SQLite has no SQL functions)"
        ));
    }
    let (schema, name) = key.split_once('.').unwrap_or((cx.default_schema, key));
    let catalog_index = (cx.catalog.functions.iter())
        .position(|f| f.schema == schema && f.name == name)
        .ok_or_else(|| {
            format!(
                "function '{key}': no function {schema}.{name} returning a table's rows \
                 in the exposed schemas"
            )
        })?;
    let f: &Function = &cx.catalog.functions[catalog_index];
    let what = format!("function {schema}.{name}");
    if let Some(why) = &f.unsupported {
        return Err(format!("{what} cannot be tracked: {why}"));
    }
    let Some((rs, rt)) = f.returns.table() else {
        return Err(format!(
            "function '{key}': {what} does not return a table's rows"
        ));
    };
    let table = exposed(cx.catalog, cx.tables, rs, rt)
        .ok_or_else(|| format!("{what} returns rows of {rs}.{rt}, which is not exposed"))?;
    let mutation = match fc.exposed_as {
        Some(ExposedAs::Mutation) if !f.volatile => {
            return Err(format!(
                "{what} is exposed_as: mutation but is not VOLATILE"
            ))
        }
        Some(ExposedAs::Mutation) => true,
        Some(ExposedAs::Query) => false,
        None => f.volatile,
    };
    let session_arg = (fc.session_argument.as_deref())
        .map(|s| session_argument(f, s, &["json"], &what))
        .transpose()?;
    let mut args = Vec::new();
    for (i, a) in f.args.iter().enumerate() {
        if Some(i) == session_arg {
            continue;
        }
        if !passable(a) {
            return Err(format!(
                "{what}: argument '{}' has type {}, which Grafton cannot pass \
                 (a built-in base type or an array of one, an enum, json or a row \
                 type whose name is a GraphQL name can be)",
                a.name, a.db_type
            ));
        }
        if graphql_safe(&a.name) != a.name {
            return Err(format!(
                "{what}: argument '{}' is not a GraphQL name",
                a.name
            ));
        }
        args.push((a.name.clone(), i));
    }
    let base = fc.custom_name.clone().unwrap_or_else(|| {
        if schema == cx.default_schema {
            name.to_owned()
        } else {
            graphql_safe(&format!("{schema}_{name}"))
        }
    });
    let verbatim = fc.custom_name.is_some();
    let named = |suffix: &str| {
        let snake = format!("{base}{suffix}");
        if verbatim {
            snake
        } else {
            cx.naming.field(&snake)
        }
    };
    let field = custom(&fc.custom_root_fields.function).map_or_else(|| named(""), str::to_owned);
    let aggregate_name = custom(&fc.custom_root_fields.function_aggregate)
        .map_or_else(|| named("_aggregate"), str::to_owned);
    // The source's prefix and suffix, as on tables' root fields.
    let camel = cx.naming.convention == crate::naming::Convention::GraphqlDefault;
    let field = cx.config.root_fields.apply(&field, camel);
    let aggregate_name = cx.config.root_fields.apply(&aggregate_name, camel);
    for n in [&field, &aggregate_name] {
        if graphql_safe(n) != *n {
            return Err(format!("{what}: '{n}' is not a GraphQL name"));
        }
    }
    // Hasura's `<function>_args`, camel-cased (not Pascal) under graphql-default.
    let args_type = (!args.is_empty()).then(|| cx.naming.field(&format!("{base}_args")));
    let select = cx.access[table]
        .select
        .as_ref()
        .filter(|_| cx.readable[table]);
    let permitted = (fc.permissions.iter()).any(|p| Some(p.role.as_str()) == cx.role);
    // A function that may write is called only by the roles its permissions name.
    let inferred = !f.volatile && cx.config.infer_function_permissions.unwrap_or(true);
    let visible = select.is_some() && (cx.role.is_none() || permitted || inferred);
    let aggregate =
        (visible && !mutation && f.returns_set && select.is_some_and(|s| s.aggregations))
            .then_some(aggregate_name);
    let described = |root: &Option<CustomRootField>, default: String| match root {
        Some(CustomRootField::Full {
            comment: Some(c), ..
        }) => c.clone(),
        _ => default,
    };
    let own = (fc.comment.clone().or_else(|| f.comment.clone()))
        .unwrap_or_else(|| format!("execute function \"{name}\" which returns \"{rt}\""));
    let descriptions = [
        described(&fc.custom_root_fields.function, own),
        described(
            &fc.custom_root_fields.function_aggregate,
            format!(
                "execute function \"{name}\" and query aggregates on result of table type \"{rt}\""
            ),
        ),
    ];
    Ok(FunctionInfo {
        catalog_index,
        table,
        single: !f.returns_set,
        mutation,
        volatile: f.volatile,
        field,
        aggregate,
        args_type,
        args,
        session_arg,
        visible,
        descriptions,
    })
}

impl Builder<'_> {
    /// The root fields (and `args` input types) of the functions the role may call.
    pub(super) fn write_functions(
        &mut self,
        query: &mut Vec<FieldDef>,
        mutation: &mut Vec<FieldDef>,
        subscription: &mut Vec<FieldDef>,
    ) {
        for (id, info) in self.functions.iter().enumerate() {
            if !info.visible {
                continue;
            }
            let f = &self.catalog.functions[info.catalog_index];
            let type_name = self.tables[info.table].type_name.clone();
            let mut args = Vec::new();
            if let Some(args_type) = &info.args_type {
                let fields: Vec<FieldDef> = (info.args.iter())
                    .map(|(name, i)| FieldDef::new(name, self.arg_type(&f.args[*i])))
                    .collect();
                self.sdl.object("input", args_type, None, &fields);
                let required = f.args.len().saturating_sub(f.defaults);
                let required = (info.args.iter()).any(|(_, i)| *i < required);
                args.push((
                    "args".to_owned(),
                    format!("{args_type}{}", if required { "!" } else { "" }),
                ));
            }
            let list = !info.single;
            // A function returning one row takes them too (Hasura's).
            args.extend(self.list_args(info.table));
            let ty = if list {
                format!("[{type_name}!]!")
            } else {
                type_name
            };
            let def = FieldDef::new(&info.field, ty)
                .with_args(args.clone())
                .describe(Some(&info.descriptions[0]));
            if info.mutation {
                self.mutation_fields
                    .insert(info.field.clone(), MutationField::Function(id));
                mutation.push(def);
                continue;
            }
            // A poll would call it again and again: a function that may write is
            // never a subscription field.
            let live = !info.volatile;
            if self.relay {
                // Relay's: a connection over what a `SETOF` function returns.
                let mut args: Vec<_> = args.into_iter().filter(|(a, _)| a == "args").collect();
                if info.single || !self.is_node(info.table) || !self.readable[info.table] {
                    continue;
                }
                let name = self.naming.field(&format!("{}_connection", info.field));
                self.root_fields
                    .insert(name.clone(), RootField::FunctionConnection(id));
                args.extend(self.connection_args(info.table));
                let table = &self.catalog.tables[self.tables[info.table].catalog_index];
                let def = FieldDef::new(name, format!("{}!", self.connection_type(info.table)))
                    .with_args(args)
                    .describe(Some(&format!(
                        "execute function \"{}\" which returns \"{}\"",
                        f.name, table.name
                    )));
                if live {
                    subscription.push(def.clone());
                }
                query.push(def);
                continue;
            }
            self.root_fields
                .insert(info.field.clone(), RootField::Function(id));
            if live {
                subscription.push(def.clone());
            }
            query.push(def);
            if let Some(agg) = &info.aggregate {
                self.root_fields
                    .insert(agg.clone(), RootField::FunctionAggregate(id));
                let def =
                    FieldDef::new(agg, format!("{}!", self.table_ty(info.table, "_aggregate")))
                        .with_args(args)
                        .describe(Some(&info.descriptions[1]));
                if live {
                    subscription.push(def.clone());
                }
                query.push(def);
            }
        }
    }
}
