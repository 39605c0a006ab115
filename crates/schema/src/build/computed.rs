//! Computed fields (Hasura's): functions of a table's row, served as fields of the
//! table's type. Each configured one is matched to the catalog and checked; one
//! that cannot be served stops start-up, named.

use super::{find_table, SchemaError};
use crate::config::{ComputedFieldConfig, Config};
use crate::inconsistent::{Inconsistency, ObjectKind};
use crate::model::*;
use crate::naming::graphql_safe;
use crate::sdl::FieldDef;
use grafton_catalog::{Backend, Catalog, Returns, ScalarKind};

/// Every configured computed field, added to its table's fields.
pub(super) fn resolve(
    catalog: &Catalog,
    config: &Config,
    tables: &mut [TableInfo],
    backend: Backend,
    default_schema: &str,
    warnings: &mut Vec<String>,
) -> Result<Vec<ComputedField>, SchemaError> {
    let mut out = Vec::new();
    let mut problems = Vec::new();
    for (key, tc) in &config.tables {
        let listed = (tc.permissions.values()).any(|p| {
            p.select
                .as_ref()
                .is_some_and(|s| !s.computed_fields.is_empty())
        });
        if tc.computed_fields.is_empty() && !listed {
            continue;
        }
        let ci = find_table(catalog, key, default_schema);
        let Some(table) = tables.iter().position(|t| Some(t.catalog_index) == ci) else {
            return Err(SchemaError::Config(format!(
                "computed_fields of '{key}': the table is not exposed"
            )));
        };
        for (name, cf) in &tc.computed_fields {
            let mut refuse = |why: String| {
                problems.push(Inconsistency::of_table(
                    ObjectKind::ComputedField,
                    key,
                    name,
                    why,
                ));
            };
            let field = match computed(catalog, tables, table, name, cf, backend, default_schema) {
                Ok(field) => field,
                Err(why) => {
                    refuse(why);
                    continue;
                }
            };
            let fields = &mut tables[table].fields;
            if fields.contains_key(name) {
                refuse("a column or relationship has that name".to_owned());
                continue;
            }
            fields.insert(name.clone(), TableField::Computed(out.len()));
            out.push(field);
        }
        // One returning rows is aggregated too (where the role may), under a
        // name no configured field or remote relationship has.
        for (id, c) in out.iter().enumerate().filter(|(_, c)| c.table == table) {
            if !matches!(c.returns, ComputedReturns::Rows(_)) {
                continue;
            }
            let aggregate = format!("{}_aggregate", c.name);
            let fields = &mut tables[table].fields;
            if fields.contains_key(&aggregate) || tc.remote_relationships.contains_key(&aggregate) {
                warnings.push(format!(
                    "computed field '{}' of '{key}' has no '{aggregate}': the name is taken",
                    c.name
                ));
                continue;
            }
            fields.insert(aggregate, TableField::ComputedAggregate(id));
        }
        for (role, p) in &tc.permissions {
            for name in p.select.iter().flat_map(|s| &s.computed_fields) {
                let scalar = (out.iter()).any(|c| {
                    c.table == table
                        && &c.name == name
                        && matches!(c.returns, ComputedReturns::Scalar(_))
                });
                if !scalar {
                    let why = format!(
                        "'{name}' is not a scalar computed field of the table (one returning \
                         rows follows its table's select permission)"
                    );
                    let kind = ObjectKind::SelectPermission;
                    problems.push(Inconsistency::of_table(kind, key, role, why));
                    break;
                }
            }
        }
    }
    if !problems.is_empty() {
        return Err(SchemaError::Inconsistent(problems));
    }
    Ok(out)
}

fn computed(
    catalog: &Catalog,
    tables: &[TableInfo],
    table: TableId,
    name: &str,
    cf: &ComputedFieldConfig,
    backend: Backend,
    default_schema: &str,
) -> Result<ComputedField, String> {
    if backend == Backend::Sqlite {
        return Err("computed fields need PostgreSQL (SQLite has no SQL functions)".into());
    }
    if graphql_safe(name) != name {
        return Err("the name is not a GraphQL name".into());
    }
    let (schema, fname) = cf
        .function
        .split_once('.')
        .unwrap_or((default_schema, &cf.function));
    let catalog_index = (catalog.functions.iter())
        .position(|f| f.schema == schema && f.name == fname)
        .ok_or_else(|| format!("no function {schema}.{fname} taking a table's row"))?;
    let f = &catalog.functions[catalog_index];
    let what = format!("function {schema}.{fname}");
    if let Some(why) = &f.unsupported {
        return Err(format!("{what} cannot be used: {why}"));
    }
    if f.volatile {
        return Err(format!(
            "{what} is VOLATILE; a computed field must be STABLE or IMMUTABLE"
        ));
    }
    let row_arg = match &cf.table_argument {
        Some(a) => (f.args.iter().position(|x| &x.name == a))
            .ok_or_else(|| format!("{what} has no argument '{a}'"))?,
        None => 0,
    };
    let t = &catalog.tables[tables[table].catalog_index];
    let own_row = (f.args.get(row_arg).and_then(|a| a.row_of.as_ref()))
        .is_some_and(|(s, n)| *s == t.schema && *n == t.name);
    if !own_row {
        return Err(format!(
            "{what}: its table argument must be of the row type {}.{}",
            t.schema, t.name
        ));
    }
    let session_arg = (cf.session_argument.as_deref())
        .map(|s| super::functions::session_argument(f, s, &["json", "jsonb"], &what))
        .transpose()?;
    let mut args = Vec::new();
    for (i, a) in f.args.iter().enumerate() {
        if i == row_arg || Some(i) == session_arg {
            continue;
        }
        if !super::functions::passable(a) || graphql_safe(&a.name) != a.name {
            return Err(format!(
                "{what}: argument '{}' (type {}) cannot be passed",
                a.name, a.db_type
            ));
        }
        args.push((a.name.clone(), i));
    }
    let returns = match (&f.returns, f.returns_set) {
        (Returns::Scalar(_, Some(kind)), false) => ComputedReturns::Scalar(kind.clone()),
        (Returns::Table(s, n), true) => ComputedReturns::Rows(
            super::functions::exposed(catalog, tables, s, n)
                .ok_or_else(|| format!("{what} returns rows of {s}.{n}, which is not exposed"))?,
        ),
        (Returns::Scalar(ty, _), _) | (Returns::Table(_, ty), _) => {
            return Err(format!(
                "{what} returns {}{ty}: a computed field returns a base type or SETOF a table",
                if f.returns_set { "SETOF " } else { "" }
            ))
        }
    };
    let required = f.args.len().saturating_sub(f.defaults);
    Ok(ComputedField {
        name: name.to_owned(),
        table,
        catalog_index,
        row_arg,
        session_arg,
        args_required: args.iter().any(|(_, i)| *i < required),
        args_type: (!args.is_empty()).then(|| format!("{name}_{}_args", tables[table].base_name)),
        args,
        returns,
        description: cf.comment.clone().or_else(|| f.comment.clone()),
    })
}

impl<'a> super::Builder<'a> {
    /// The computed fields of `table` the role has, in config order.
    fn computed_of(&self, table: TableId) -> Vec<(ComputedId, &'a ComputedField)> {
        let info = &self.tables[table];
        let all: &'a [ComputedField] = self.computed;
        (all.iter().enumerate())
            .filter(|(id, c)| info.fields.get(&c.name) == Some(&TableField::Computed(*id)))
            .collect()
    }

    /// The object type's computed fields (and their `args` input types).
    pub(super) fn computed_object_fields(&mut self, table: TableId) -> Vec<FieldDef> {
        let mut fields = Vec::new();
        let catalog: &'a Catalog = self.catalog;
        for (id, c) in self.computed_of(table) {
            let f = &catalog.functions[c.catalog_index];
            let mut args = Vec::new();
            if let Some(args_type) = &c.args_type {
                let inputs: Vec<FieldDef> = (c.args.iter())
                    .map(|(name, i)| FieldDef::new(name, self.arg_type(&f.args[*i])))
                    .collect();
                self.sdl.object("input", args_type, None, &inputs);
                let bang = if c.args_required { "!" } else { "" };
                args.push(("args".to_owned(), format!("{args_type}{bang}")));
            }
            let def = match &c.returns {
                ComputedReturns::Scalar(kind) => {
                    self.used_scalars.insert(kind.clone());
                    // A json value takes a path, as a json column does.
                    if matches!(kind, ScalarKind::Json | ScalarKind::Jsonb) {
                        args.push(("path".to_owned(), "String".to_owned()));
                    }
                    FieldDef::new(&c.name, self.scalar(kind))
                }
                ComputedReturns::Rows(target) => {
                    args.extend(self.list_args(*target));
                    FieldDef::new(&c.name, format!("[{}!]!", self.tables[*target].type_name))
                }
            };
            // A set-returning one's aggregate follows it, with the same arguments.
            let aggregate = match &c.returns {
                ComputedReturns::Rows(target) => self.computed_aggregate(table, id).map(|name| {
                    let ty = format!("{}!", self.table_ty(*target, "_aggregate"));
                    FieldDef::new(name, ty).with_args(args.clone())
                }),
                ComputedReturns::Scalar(_) => None,
            };
            fields.push(def.with_args(args).describe(c.description.as_deref()));
            fields.extend(aggregate.map(|a| a.describe(c.description.as_deref())));
        }
        fields
    }

    /// The `<field>_aggregate` of a computed field returning rows, where the role
    /// may aggregate them.
    fn computed_aggregate(&self, table: TableId, id: ComputedId) -> Option<&'a String> {
        let fields: &'a std::collections::HashMap<String, TableField> = &self.tables[table].fields;
        (fields.iter())
            .find(|(_, f)| **f == TableField::ComputedAggregate(id))
            .map(|(name, _)| name)
    }

    /// The `<field>_aggregate` order keys of `table`: its set-returning computed
    /// fields without arguments whose rows the role may aggregate, `(name, rows'
    /// table)`.
    pub(super) fn computed_aggregate_order(&self, table: TableId) -> Vec<(String, TableId)> {
        (self.computed_of(table).into_iter())
            .filter_map(|(id, c)| match c.returns {
                ComputedReturns::Rows(target) if c.args.is_empty() => self
                    .computed_aggregate(table, id)
                    .map(|name| (name.clone(), target)),
                _ => None,
            })
            .collect()
    }

    /// The set-returning computed fields without arguments, which `where` takes as
    /// their table's `bool_exp`: `(name, table)`.
    pub(super) fn computed_row_filters(&self, table: TableId) -> Vec<(String, TableId)> {
        (self.computed_of(table).into_iter())
            .filter_map(|(_, c)| match c.returns {
                ComputedReturns::Rows(target) if c.args.is_empty() => {
                    Some((c.name.clone(), target))
                }
                _ => None,
            })
            .collect()
    }

    /// The scalar computed fields without arguments, which `where` and `order_by`
    /// take (Hasura's rule): `(name, kind)`.
    pub(super) fn computed_comparable(&self, table: TableId) -> Vec<(String, ScalarKind)> {
        (self.computed_of(table).into_iter())
            .filter_map(|(_, c)| match &c.returns {
                ComputedReturns::Scalar(kind) if c.args.is_empty() => {
                    Some((c.name.clone(), kind.clone()))
                }
                _ => None,
            })
            .collect()
    }
}
