//! Every name a table brings into the schema, claimed before the table is kept: a
//! table whose names collide with GraphQL's own (`String`, `query_root`), with the
//! schema's shared types (`order_by`, `jsonb_comparison_exp`, an enum), or with
//! another table's (`items_aggregate` beside `items`) is skipped with a warning, so
//! whoever can create a table cannot stop the API at its next start. A custom name
//! (config or Hasura metadata) that collides stops start-up instead, naming both:
//! it is a mistake in the configuration, not in the database.

use crate::model::MutationNames;
use crate::model::UpdateOperator;
use crate::naming::{graphql_safe, Naming};
use grafton_catalog::Catalog;
use grafton_sql::{AggFunc, Direction, Nulls};
use std::collections::HashMap;

/// The suffixes of the types generated for a table (`venues_bool_exp`, …).
const TYPE_SUFFIXES: [&str; 24] = [
    "",
    "_bool_exp",
    "_order_by",
    "_select_column",
    "_aggregate",
    "_aggregate_fields",
    "_aggregate_order_by",
    "_aggregate_bool_exp",
    "_aggregate_bool_exp_count",
    "_aggregate_bool_exp_bool_and",
    "_aggregate_bool_exp_bool_or",
    "_insert_input",
    "_obj_rel_insert_input",
    "_arr_rel_insert_input",
    "_on_conflict",
    "_constraint",
    "_update_column",
    "_mutation_response",
    "_set_input",
    "_inc_input",
    "_pk_columns_input",
    "_updates",
    "_stream_cursor_input",
    "_stream_cursor_value_input",
];

/// The jsonb operators' input types, per table.
const JSONB_SUFFIXES: [&str; 5] = [
    "_append_input",
    "_prepend_input",
    "_delete_key_input",
    "_delete_elem_input",
    "_delete_at_path_input",
];

/// The scalars' base names (built-in ones keep their names under every naming).
const SCALARS: [&str; 17] = [
    "Int",
    "Float",
    "String",
    "Boolean",
    "ID",
    "bigint",
    "numeric",
    "uuid",
    "timestamptz",
    "timestamp",
    "date",
    "time",
    "timetz",
    "interval",
    "json",
    "jsonb",
    "bytea",
];

/// The scalars and input types of extension types, reserved only where the
/// database has them (a SQLite table may well be called `geometry`).
const EXTENSION_TYPES: [(&str, &[&str], &[&str]); 2] = [
    (
        "geometry",
        &["geometry", "geography"],
        &[
            "geometry_cast_exp",
            "geography_cast_exp",
            "st_d_within_input",
            "st_d_within_geography_input",
        ],
    ),
    ("ltree", &["ltree", "lquery", "ltxtquery"], &[]),
];

/// Type and root field names already in use, each with who uses it and whether
/// that use is a custom name.
pub(super) struct Taken {
    types: HashMap<String, (String, bool)>,
    fields: HashMap<String, (String, bool)>,
}

/// A name two tables (or a table and the schema) both need.
pub(super) struct Clash {
    /// The name.
    pub(super) name: String,
    /// Who has it.
    pub(super) by: String,
    /// Whether either side's use of it is a custom name.
    pub(super) custom: bool,
}

impl Taken {
    /// The names the schema uses whatever its tables: root types, `order_by`, every
    /// scalar and its comparison type, jsonb's cast type, and the database's enums.
    pub(super) fn reserved(naming: Naming, catalog: &Catalog, default_schema: &str) -> Self {
        let mut types = HashMap::new();
        let mut reserve = |name: String, what: &str| types.insert(name, (what.to_owned(), false));
        for t in ["query_root", "mutation_root", "subscription_root"] {
            reserve(t.to_owned(), "a type every schema has");
        }
        for t in ["order_by", "jsonb_cast_exp", super::stream::CURSOR_ORDERING] {
            reserve(naming.type_name(t), "a type every schema has");
        }
        let mut scalars: Vec<String> = SCALARS.iter().map(|s| s.to_string()).collect();
        for (found, types, inputs) in EXTENSION_TYPES {
            let used = catalog.type_schemas.contains_key(found)
                || (found == "geometry" && catalog.type_schemas.contains_key("geography"));
            if used {
                scalars.extend(types.iter().map(|t| t.to_string()));
                for t in inputs {
                    reserve(naming.type_name(t), "an extension type's input");
                }
            }
        }
        let enums = catalog.enums.iter().map(|e| {
            if e.schema == default_schema || e.from_table.is_some() {
                graphql_safe(&e.name)
            } else {
                graphql_safe(&format!("{}_{}", e.schema, e.name))
            }
        });
        for base in scalars.into_iter().chain(enums) {
            reserve(naming.scalar(&base), "a scalar or enum type");
            let comparison = naming.type_name(&format!("{base}_comparison_exp"));
            reserve(comparison, "a scalar's comparison type");
        }
        Taken {
            types,
            fields: HashMap::new(),
        }
    }

    /// Claims for `owner` every name table `base` brings: its types (custom names
    /// when `custom_base`) and its root fields (`roots`: each name and whether it is
    /// custom); on a clash claims nothing and says what clashed.
    pub(super) fn claim(
        &mut self,
        naming: Naming,
        base: &str,
        custom_base: bool,
        roots: &[(String, bool)],
        owner: &str,
    ) -> Result<(), Clash> {
        let funcs = AGG_FUNCS
            .iter()
            .flat_map(|(_, f)| [format!("_{f}_fields"), format!("_{f}_order_by")]);
        let suffixes = TYPE_SUFFIXES
            .iter()
            .chain(JSONB_SUFFIXES.iter())
            .map(|s| s.to_string())
            .chain(funcs);
        let types: Vec<(String, bool)> = suffixes
            .map(|s| (naming.type_name(&format!("{base}{s}")), custom_base))
            .collect();
        let mut seen = std::collections::HashSet::new();
        if let Some((name, _)) = roots.iter().find(|(n, _)| !seen.insert(n)) {
            return Err(Clash {
                name: name.clone(),
                by: format!("another root field of {owner}"),
                custom: true,
            });
        }
        for (names, taken) in [(&types, &self.types), (&roots.to_vec(), &self.fields)] {
            let clash = names.iter().find_map(|(name, custom)| {
                let (by, theirs) = taken.get(name)?;
                Some(Clash {
                    name: name.clone(),
                    by: by.clone(),
                    custom: *custom || *theirs,
                })
            });
            if let Some(clash) = clash {
                return Err(clash);
            }
        }
        let own = |(n, c): (String, bool)| (n, (owner.to_owned(), c));
        self.types.extend(types.into_iter().map(own));
        self.fields.extend(roots.iter().cloned().map(own));
        Ok(())
    }
}

pub(super) const AGG_FUNCS: [(AggFunc, &str); 10] = [
    (AggFunc::Sum, "sum"),
    (AggFunc::Avg, "avg"),
    (AggFunc::Max, "max"),
    (AggFunc::Min, "min"),
    (AggFunc::Stddev, "stddev"),
    (AggFunc::StddevPop, "stddev_pop"),
    (AggFunc::StddevSamp, "stddev_samp"),
    (AggFunc::VarPop, "var_pop"),
    (AggFunc::VarSamp, "var_samp"),
    (AggFunc::Variance, "variance"),
];

pub(super) const ORDER_VALUES: [(&str, Direction, Option<Nulls>); 6] = [
    ("asc", Direction::Asc, Some(Nulls::Last)),
    ("asc_nulls_first", Direction::Asc, Some(Nulls::First)),
    ("asc_nulls_last", Direction::Asc, Some(Nulls::Last)),
    ("desc", Direction::Desc, Some(Nulls::First)),
    ("desc_nulls_first", Direction::Desc, Some(Nulls::First)),
    ("desc_nulls_last", Direction::Desc, Some(Nulls::Last)),
];

/// The argument and field names of mutations under `naming`.
pub(super) fn mutation_names(naming: Naming) -> MutationNames {
    MutationNames {
        objects: naming.field("objects"),
        object: naming.field("object"),
        on_conflict: naming.field("on_conflict"),
        constraint: naming.field("constraint"),
        update_columns: naming.field("update_columns"),
        data: naming.field("data"),
        pk_columns: naming.field("pk_columns"),
        updates: naming.field("updates"),
        affected_rows: naming.field("affected_rows"),
        returning: naming.field("returning"),
        operators: UpdateOperator::ALL
            .iter()
            .map(|(op, name)| (naming.field(name), *op))
            .collect(),
    }
}

/// The argument names under `naming`.
pub(super) fn arg_names(naming: Naming) -> crate::model::ArgNames {
    use crate::naming::Arg;
    crate::model::ArgNames {
        where_: naming.arg(Arg::Where),
        order_by: naming.arg(Arg::OrderBy),
        limit: naming.arg(Arg::Limit),
        offset: naming.arg(Arg::Offset),
        distinct_on: naming.arg(Arg::DistinctOn),
        columns: naming.arg(Arg::Columns),
        distinct: naming.arg(Arg::Distinct),
        batch_size: naming.field("batch_size"),
        cursor: naming.field("cursor"),
        initial_value: naming.field("initial_value"),
        ordering: naming.field("ordering"),
    }
}
