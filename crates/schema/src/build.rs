//! Builds the [`SchemaModel`]: names every table, column and relationship, writes the
//! SDL, and validates it with apollo-compiler.

use crate::config::{Config, InsertionOrder, JsonSchemaConfig, ManualKind};
use crate::model::*;
use crate::naming::{graphql_safe, plural, Arg, Combinator, CompareOp, Naming};
use crate::sdl::{FieldDef, Sdl};
use apollo_compiler::Schema;
use grafton_catalog::{Backend, Catalog, ScalarKind, Table};
use grafton_sql::{AggFunc, Direction, Nulls};
use std::collections::{BTreeSet, HashMap, HashSet};

mod access;
mod mutations;
mod names;
mod stream;

use access::{restrict, table_access};

/// Why a schema could not be built.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// The config names something the database does not have.
    #[error("config: {0}")]
    Config(String),
    /// The database has no table Grafton can expose.
    #[error("the database has no tables to expose (schemas searched: {0})")]
    Empty(String),
    /// The generated SDL did not validate: a bug in Grafton.
    #[error("generated schema is invalid (please report this): {0}")]
    Invalid(String),
}

/// The query field of a role that may read nothing (Hasura's name).
pub const NO_QUERIES: &str = "no_queries_available";

const AGG_FUNCS: [(AggFunc, &str); 10] = [
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

const ORDER_VALUES: [(&str, Direction, Option<Nulls>); 6] = [
    ("asc", Direction::Asc, Some(Nulls::Last)),
    ("asc_nulls_first", Direction::Asc, Some(Nulls::First)),
    ("asc_nulls_last", Direction::Asc, Some(Nulls::Last)),
    ("desc", Direction::Desc, Some(Nulls::First)),
    ("desc_nulls_first", Direction::Desc, Some(Nulls::First)),
    ("desc_nulls_last", Direction::Desc, Some(Nulls::Last)),
];

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
    let default_schema = match backend {
        Backend::Postgres => "public",
        Backend::Sqlite => "main",
    };
    let mut warnings = Vec::new();
    let mut tables = name_tables(&catalog, config, naming, default_schema, &mut warnings)?;
    if tables.is_empty() {
        let schemas: BTreeSet<&str> = catalog.tables.iter().map(|t| t.schema.as_str()).collect();
        let listed = if schemas.is_empty() {
            default_schema.to_owned()
        } else {
            schemas.into_iter().collect::<Vec<_>>().join(", ")
        };
        return Err(SchemaError::Empty(listed));
    }
    let relationships = relationships(&catalog, config, &mut tables, naming, &mut warnings)?;
    let validators = compile_validators(&catalog, config, &tables, default_schema)?;
    let access = table_access(
        &catalog,
        config,
        &tables,
        default_schema,
        role,
        backend_only,
    )?;
    let readable = restrict(&mut tables, &relationships, &access);
    let mut b = Builder {
        catalog: &catalog,
        naming,
        backend,
        tables: &tables,
        relationships: &relationships,
        sdl: Sdl::default(),
        used_scalars: BTreeSet::new(),
        streams: false,
        root_fields: HashMap::new(),
        mutation_fields: HashMap::new(),
        mutation_names: mutation_names(naming),
        validated: validators.keys().copied().collect(),
        access: &access,
        readable: &readable,
        input_types: HashMap::new(),
        enum_warnings: &mut warnings,
    };
    b.write_all();
    let Builder {
        sdl,
        root_fields,
        mutation_fields,
        mutation_names,
        input_types,
        ..
    } = b;
    let schema = Schema::parse_and_validate(&sdl.text, "schema.graphql")
        .map_err(|e| SchemaError::Invalid(e.errors.to_string()))?;

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
        args: ArgNames {
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
        },
        schema,
        sdl: sdl.text,
        role: role.map(str::to_owned),
        access,
        validators,
        warnings,
        catalog,
    })
}

/// Compiles the JSON Schemas the config attaches to columns (once, at start-up).
fn compile_validators(
    catalog: &Catalog,
    config: &Config,
    tables: &[TableInfo],
    default_schema: &str,
) -> Result<HashMap<(TableId, usize), grafton_validate::ColumnSchema>, SchemaError> {
    let mut out = HashMap::new();
    for (key, tc) in &config.tables {
        for (column, cc) in &tc.columns {
            let Some(source) = &cc.json_schema else {
                continue;
            };
            let ci = find_table(catalog, key, default_schema);
            let Some(id) = tables.iter().position(|t| Some(t.catalog_index) == ci) else {
                return Err(SchemaError::Config(format!(
                    "columns of '{key}': the table is not exposed"
                )));
            };
            let t = &catalog.tables[tables[id].catalog_index];
            let index = t
                .columns
                .iter()
                .position(|c| &c.name == column)
                .ok_or_else(|| {
                    SchemaError::Config(format!("'{column}' is not a column of '{key}'"))
                })?;
            if !matches!(
                t.columns[index].scalar,
                ScalarKind::Json | ScalarKind::Jsonb | ScalarKind::Text
            ) {
                return Err(SchemaError::Config(format!(
                    "{key}.{column}: a JSON Schema can only be attached to a json, jsonb or text column"
                )));
            }
            let source = match source {
                JsonSchemaConfig::Path(p) => grafton_validate::SchemaSource::Path(p.into()),
                JsonSchemaConfig::Inline(v) => grafton_validate::SchemaSource::Inline(v.clone()),
            };
            let compiled = grafton_validate::compile(&source, &config.base_dir)
                .map_err(|e| SchemaError::Config(format!("{key}.{column}: {e}")))?;
            out.insert((id, index), compiled);
        }
    }
    Ok(out)
}

fn mutation_names(naming: Naming) -> MutationNames {
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

/// The operators a column of `kind` supports on `backend`.
pub fn ops_for(kind: &ScalarKind, backend: Backend) -> Vec<CompareOp> {
    use CompareOp::*;
    if *kind == ScalarKind::Json {
        // Postgres has no equality on json; only nullness is testable.
        return vec![IsNull];
    }
    let mut ops = vec![Eq, Neq, Gt, Gte, Lt, Lte, In, Nin, IsNull];
    if *kind == ScalarKind::Jsonb {
        ops.extend([Contains, ContainedIn, HasKey, HasKeysAny, HasKeysAll]);
    }
    if kind.is_text() {
        ops.extend([Like, Nlike, Ilike, Nilike]);
        if backend == Backend::Postgres {
            ops.extend([Similar, Nsimilar, Regex, Iregex, Nregex, Niregex]);
        }
    }
    ops
}

/// Whether `min`/`max` exist for this kind on both backends.
fn has_min_max(kind: &ScalarKind) -> bool {
    !matches!(
        kind,
        ScalarKind::Json
            | ScalarKind::Jsonb
            | ScalarKind::Boolean
            | ScalarKind::Bytea
            | ScalarKind::Uuid
    )
}

fn qualified(t: &Table) -> String {
    format!("{}.{}", t.schema, t.name)
}

fn find_table(catalog: &Catalog, key: &str, default_schema: &str) -> Option<usize> {
    match key.split_once('.') {
        Some((schema, name)) => catalog.table_index(schema, name),
        None => catalog.table_index(default_schema, key),
    }
}

fn name_tables(
    catalog: &Catalog,
    config: &Config,
    naming: Naming,
    default_schema: &str,
    warnings: &mut Vec<String>,
) -> Result<Vec<TableInfo>, SchemaError> {
    for key in config.tables.keys() {
        if find_table(catalog, key, default_schema).is_none() {
            return Err(SchemaError::Config(format!(
                "table '{key}' is not in the database"
            )));
        }
    }
    let mut taken = names::Taken::reserved(naming, catalog, default_schema);
    let mut tables = Vec::new();
    for (ci, t) in catalog.tables.iter().enumerate() {
        let base = if t.schema == default_schema {
            graphql_safe(&t.name)
        } else {
            graphql_safe(&format!("{}_{}", t.schema, t.name))
        };
        if let Err(name) = taken.claim(naming, &base) {
            warnings.push(format!(
                "table {} skipped: the GraphQL name '{name}' it needs is taken",
                qualified(t)
            ));
            continue;
        }
        let table_config = config
            .tables
            .iter()
            .find(|(k, _)| find_table(catalog, k, default_schema) == Some(ci))
            .map(|(_, v)| v);
        let pk_names = match table_config {
            Some(tc) if !tc.primary_key.is_empty() => tc.primary_key.clone(),
            _ => t.primary_key.clone(),
        };
        let mut primary_key = Vec::new();
        for name in &pk_names {
            let idx = t
                .columns
                .iter()
                .position(|c| &c.name == name)
                .ok_or_else(|| {
                    SchemaError::Config(format!(
                        "primary key column '{name}' is not in {}",
                        qualified(t)
                    ))
                })?;
            primary_key.push(idx);
        }
        let mut fields = HashMap::new();
        let mut column_fields = Vec::new();
        for (i, c) in t.columns.iter().enumerate() {
            let name = naming.field(&graphql_safe(&c.name));
            if fields.insert(name.clone(), TableField::Column(i)).is_some() {
                warnings.push(format!(
                    "column {}.{} hides another column with the GraphQL name '{name}'",
                    qualified(t),
                    c.name
                ));
            }
            column_fields.push(name);
        }
        let position = |name: &String| t.columns.iter().position(|c| &c.name == name);
        let mut constraints = HashMap::new();
        if !t.primary_key.is_empty() {
            let name = t
                .primary_key_name
                .clone()
                .unwrap_or_else(|| format!("{}_pkey", t.name));
            let cols: Option<Vec<usize>> = t.primary_key.iter().map(position).collect();
            if let Some(cols) = cols {
                constraints.insert(naming.enum_value(&graphql_safe(&name)), cols);
            }
        }
        for u in &t.unique_constraints {
            let cols: Option<Vec<usize>> = u.columns.iter().map(position).collect();
            if let Some(cols) = cols {
                constraints.insert(naming.enum_value(&graphql_safe(&u.name)), cols);
            }
        }
        tables.push(TableInfo {
            catalog_index: ci,
            type_name: naming.type_name(&base),
            base_name: base,
            primary_key,
            column_fields,
            fields,
            mutable: t.writes.any(),
            constraints,
        });
    }
    Ok(tables)
}

/// A relationship before its final name is settled.
struct Draft {
    snake: String,
    kind: RelKind,
    source: TableId,
    target: TableId,
    mapping: Vec<(usize, usize)>,
    /// Suffix that disambiguates a clash (`_by_<columns>`).
    disambiguator: String,
    /// See [`Relationship::after_parent`].
    after_parent: bool,
}

fn relationships(
    catalog: &Catalog,
    config: &Config,
    tables: &mut [TableInfo],
    naming: Naming,
    warnings: &mut Vec<String>,
) -> Result<Vec<Relationship>, SchemaError> {
    let by_catalog: HashMap<usize, TableId> = tables
        .iter()
        .enumerate()
        .map(|(id, t)| (t.catalog_index, id))
        .collect();
    let default_schema = tables
        .first()
        .map(|t| catalog.tables[t.catalog_index].schema.clone())
        .unwrap_or_default();
    let mut drafts = Vec::new();
    for (source, info) in tables.iter().enumerate() {
        let table = &catalog.tables[info.catalog_index];
        for fk in &table.foreign_keys {
            let Some(ref_ci) = catalog.table_index(&fk.ref_schema, &fk.ref_table) else {
                continue;
            };
            let Some(&target) = by_catalog.get(&ref_ci) else {
                continue;
            };
            let ref_table = &catalog.tables[ref_ci];
            let mut mapping = Vec::new();
            for (col, ref_col) in fk.columns.iter().zip(&fk.ref_columns) {
                let (Some(a), Some(b)) = (
                    table.columns.iter().position(|c| &c.name == col),
                    ref_table.columns.iter().position(|c| &c.name == ref_col),
                ) else {
                    continue;
                };
                mapping.push((a, b));
            }
            if mapping.len() != fk.columns.len() {
                continue;
            }
            let cols = graphql_safe(&fk.columns.join("_"));
            let object_name = match fk.columns.as_slice() {
                [one] => match one.strip_suffix("_id") {
                    Some(stem) if !stem.is_empty() && table.column(stem).is_none() => {
                        graphql_safe(stem)
                    }
                    _ => format!("{cols}_{}", tables[target].base_name),
                },
                _ => format!("{cols}_{}", tables[target].base_name),
            };
            drafts.push(Draft {
                snake: object_name,
                kind: RelKind::Object,
                source,
                target,
                mapping: mapping.clone(),
                disambiguator: format!("_by_{cols}"),
                after_parent: false,
            });
            let fks_to_same = table
                .foreign_keys
                .iter()
                .filter(|f| f.ref_schema == fk.ref_schema && f.ref_table == fk.ref_table)
                .count();
            let mut array_name = plural(&tables[source].base_name);
            if fks_to_same > 1 {
                array_name = format!("{array_name}_by_{cols}");
            }
            drafts.push(Draft {
                snake: array_name,
                kind: RelKind::Array,
                source: target,
                target: source,
                mapping: mapping.iter().map(|(a, b)| (*b, *a)).collect(),
                disambiguator: format!("_by_{cols}"),
                after_parent: false,
            });
        }
    }
    // Manual relationships from the config.
    for (key, tc) in &config.tables {
        let Some(ci) = find_table(catalog, key, &default_schema) else {
            continue;
        };
        let Some(&source) = by_catalog.get(&ci) else {
            continue;
        };
        for (name, manual) in &tc.relationships {
            let target_ci =
                find_table(catalog, &manual.table, &default_schema).ok_or_else(|| {
                    SchemaError::Config(format!(
                        "relationship {key}.{name}: table '{}' is not in the database",
                        manual.table
                    ))
                })?;
            let target = *by_catalog.get(&target_ci).ok_or_else(|| {
                SchemaError::Config(format!(
                    "relationship {key}.{name}: table '{}' is not exposed",
                    manual.table
                ))
            })?;
            let mut mapping = Vec::new();
            for (from, to) in &manual.columns {
                let a = catalog.tables[ci]
                    .columns
                    .iter()
                    .position(|c| &c.name == from);
                let b = catalog.tables[target_ci]
                    .columns
                    .iter()
                    .position(|c| &c.name == to);
                match (a, b) {
                    (Some(a), Some(b)) => mapping.push((a, b)),
                    _ => {
                        return Err(SchemaError::Config(format!(
                            "relationship {key}.{name}: unknown column in mapping {from} → {to}"
                        )))
                    }
                }
            }
            if mapping.is_empty() {
                return Err(SchemaError::Config(format!(
                    "relationship {key}.{name}: `columns` must map at least one column"
                )));
            }
            drafts.push(Draft {
                snake: graphql_safe(name),
                kind: match manual.kind {
                    ManualKind::Object => RelKind::Object,
                    ManualKind::Array => RelKind::Array,
                },
                source,
                target,
                mapping,
                disambiguator: "_manual".to_owned(),
                after_parent: manual.kind == ManualKind::Object
                    && manual.insertion_order == InsertionOrder::AfterParent,
            });
        }
        for (name, fk) in &tc.foreign_key_relationships {
            let kind = match fk.kind {
                ManualKind::Object => RelKind::Object,
                ManualKind::Array => RelKind::Array,
            };
            // An object relationship through the remote table's key (a one-to-one,
            // Hasura's `foreign_key_constraint_on: {table, column}`) is found as that
            // key's array side and added as an object relationship.
            let remote_object = kind == RelKind::Object && fk.table.is_some();
            let kind = if remote_object { RelKind::Array } else { kind };
            let holder = match (&fk.table, kind) {
                (Some(t), RelKind::Array) => find_table(catalog, t, &default_schema)
                    .and_then(|ci| by_catalog.get(&ci).copied()),
                (None, RelKind::Object) => Some(source),
                _ => None,
            };
            let key_columns = |d: &Draft| -> Vec<&str> {
                let (table, cols): (TableId, Vec<usize>) = match d.kind {
                    RelKind::Object => (d.source, d.mapping.iter().map(|m| m.0).collect()),
                    RelKind::Array => (d.target, d.mapping.iter().map(|m| m.1).collect()),
                };
                let t = &catalog.tables[tables[table].catalog_index];
                cols.iter().map(|&c| t.columns[c].name.as_str()).collect()
            };
            let found = drafts.iter().position(|d| {
                d.source == source
                    && d.kind == kind
                    && d.disambiguator != "_manual"
                    && holder
                        == Some(if kind == RelKind::Object {
                            d.source
                        } else {
                            d.target
                        })
                    && key_columns(d) == fk.columns.iter().map(String::as_str).collect::<Vec<_>>()
            });
            let Some(i) = found else {
                return Err(SchemaError::Config(format!(
                    "foreign_key_relationships {key}.{name}: no foreign key on ({}) {}",
                    fk.columns.join(", "),
                    fk.table
                        .as_deref()
                        .map(|t| format!("of '{t}'"))
                        .unwrap_or_default()
                )));
            };
            if remote_object {
                let d = &drafts[i];
                let object = Draft {
                    snake: graphql_safe(name),
                    kind: RelKind::Object,
                    source,
                    target: d.target,
                    mapping: d.mapping.clone(),
                    disambiguator: "_manual".to_owned(),
                    after_parent: true,
                };
                drafts.push(object);
            } else {
                drafts[i].snake = graphql_safe(name);
            }
        }
        for (from, to) in &tc.rename_relationships {
            let Some(d) = drafts
                .iter_mut()
                .find(|d| d.source == source && &d.snake == from)
            else {
                return Err(SchemaError::Config(format!(
                    "rename_relationships on {key}: no relationship named '{from}'"
                )));
            };
            d.snake = graphql_safe(to);
        }
    }
    // Settle names: a clash with a column or an earlier relationship gets a suffix.
    let mut out = Vec::new();
    for d in drafts {
        let fields = &mut tables[d.source].fields;
        let mut snake = d.snake.clone();
        let taken = |fields: &HashMap<String, TableField>, s: &str| {
            fields.contains_key(&naming.field(s))
                || fields.contains_key(&naming.field(&format!("{s}_aggregate")))
        };
        if taken(fields, &snake) {
            snake = format!("{}{}", d.snake, d.disambiguator);
            let mut n = 2;
            while taken(fields, &snake) {
                snake = format!("{}{}_{n}", d.snake, d.disambiguator);
                n += 1;
            }
            warnings.push(format!(
                "relationship '{}' on {} renamed to '{snake}' to avoid a clash",
                d.snake, tables[d.source].base_name
            ));
        }
        let id = out.len();
        let name = naming.field(&snake);
        match d.kind {
            RelKind::Object => {
                fields.insert(name.clone(), TableField::Object(id));
            }
            RelKind::Array => {
                fields.insert(name.clone(), TableField::Array(id));
                fields.insert(
                    naming.field(&format!("{snake}_aggregate")),
                    TableField::ArrayAggregate(id),
                );
            }
        }
        out.push(Relationship {
            name,
            kind: d.kind,
            source: d.source,
            target: d.target,
            mapping: d.mapping,
            after_parent: d.after_parent,
        });
    }
    Ok(out)
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
    tables: &'a [TableInfo],
    relationships: &'a [Relationship],
    sdl: Sdl,
    used_scalars: BTreeSet<ScalarKind>,
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
    input_types: HashMap<String, InputKind>,
    enum_warnings: &'a mut Vec<String>,
}

impl Builder<'_> {
    fn ty(&self, snake: &str) -> String {
        self.naming.type_name(snake)
    }

    fn table_ty(&self, id: TableId, suffix: &str) -> String {
        self.ty(&format!("{}{suffix}", self.tables[id].base_name))
    }

    fn scalar_base(&self, kind: &ScalarKind) -> String {
        match kind {
            ScalarKind::Int => "Int".into(),
            ScalarKind::BigInt => "bigint".into(),
            ScalarKind::Float => "Float".into(),
            ScalarKind::Numeric => "numeric".into(),
            ScalarKind::Text => "String".into(),
            ScalarKind::Boolean => "Boolean".into(),
            ScalarKind::Uuid => "uuid".into(),
            ScalarKind::Timestamptz => "timestamptz".into(),
            ScalarKind::Timestamp => "timestamp".into(),
            ScalarKind::Date => "date".into(),
            ScalarKind::Time => "time".into(),
            ScalarKind::Timetz => "timetz".into(),
            ScalarKind::Interval => "interval".into(),
            ScalarKind::Json => "json".into(),
            ScalarKind::Jsonb => "jsonb".into(),
            ScalarKind::Bytea => "bytea".into(),
            ScalarKind::Enum(i) => {
                let e = &self.catalog.enums[*i];
                if e.schema == "public" {
                    graphql_safe(&e.name)
                } else {
                    graphql_safe(&format!("{}_{}", e.schema, e.name))
                }
            }
        }
    }

    fn scalar(&self, kind: &ScalarKind) -> String {
        self.naming.scalar(&self.scalar_base(kind))
    }

    /// The scalar kind a column is exposed as: enums with labels that are not valid
    /// GraphQL names fall back to String.
    fn column_kind(&mut self, kind: &ScalarKind) -> ScalarKind {
        if let ScalarKind::Enum(i) = kind {
            let e = &self.catalog.enums[*i];
            let valid = e
                .values
                .iter()
                .all(|v| graphql_safe(v) == *v && !matches!(v.as_str(), "true" | "false" | "null"));
            if !valid {
                let msg = format!(
                    "enum {}.{} has labels that are not GraphQL names; exposed as String",
                    e.schema, e.name
                );
                if !self.enum_warnings.contains(&msg) {
                    self.enum_warnings.push(msg);
                }
                return ScalarKind::Text;
            }
        }
        kind.clone()
    }

    fn list_args(&self, target: TableId) -> Vec<(String, String)> {
        let n = self.naming;
        let mut args = Vec::with_capacity(5);
        if self.has_columns(target) {
            args.push((
                n.arg(Arg::DistinctOn),
                format!("[{}!]", self.table_ty(target, "_select_column")),
            ));
        }
        args.push((n.arg(Arg::Limit), "Int".into()));
        args.push((n.arg(Arg::Offset), "Int".into()));
        if self.orderable(target) {
            args.push((
                n.arg(Arg::OrderBy),
                format!("[{}!]", self.table_ty(target, "_order_by")),
            ));
        }
        args.push((n.arg(Arg::Where), self.table_ty(target, "_bool_exp")));
        args
    }

    /// Whether the role sees any column of `id` (else no `_select_column` enum).
    fn has_columns(&self, id: TableId) -> bool {
        self.tables[id]
            .fields
            .values()
            .any(|f| matches!(f, TableField::Column(_)))
    }

    /// Whether `id`'s `_order_by` input has a field: a column, an object
    /// relationship or an array relationship's aggregate.
    fn orderable(&self, id: TableId) -> bool {
        self.tables[id]
            .fields
            .values()
            .any(|f| !matches!(f, TableField::Array(_)))
    }

    fn write_all(&mut self) {
        let mut root = Vec::new();
        let mut mutation_root = Vec::new();
        let mut subscription_root = Vec::new();
        for id in 0..self.tables.len() {
            if self.access[id].select.is_some() || self.tables[id].mutable {
                let roots = Roots {
                    query: &mut root,
                    mutation: &mut mutation_root,
                    subscription: &mut subscription_root,
                };
                self.write_table(id, roots);
            }
        }
        let root_name = "query_root";
        if root.is_empty() {
            // A role that may only write still needs a query type; Hasura's placeholder.
            root.push(
                FieldDef::new(NO_QUERIES, "String!").describe(Some(
                    "There are no queries available to the current role either due to lack of permissions or due to no tables being tracked",
                )),
            );
        }
        self.sdl.object("type", root_name, None, &root);
        let has_mutations = !mutation_root.is_empty();
        if has_mutations {
            self.sdl
                .object("type", "mutation_root", None, &mutation_root);
        }
        let has_subscriptions = !subscription_root.is_empty();
        if has_subscriptions {
            self.sdl
                .object("type", "subscription_root", None, &subscription_root);
        }
        self.write_cursor_ordering();
        let order_by = self.ty("order_by");
        let values: Vec<String> = ORDER_VALUES
            .iter()
            .map(|(v, _, _)| self.naming.enum_value(v))
            .collect();
        self.sdl
            .enumeration(&order_by, Some("column ordering options"), &values);
        // jsonb's `_cast: {String: …}` compares through String_comparison_exp.
        if self.used_scalars.contains(&ScalarKind::Jsonb) {
            self.used_scalars.insert(ScalarKind::Text);
        }
        let used: Vec<ScalarKind> = self.used_scalars.iter().cloned().collect();
        for kind in used {
            self.write_scalar(&kind);
        }
        let mutation = if has_mutations {
            "  mutation: mutation_root\n"
        } else {
            ""
        };
        let subscription = if has_subscriptions {
            "  subscription: subscription_root\n"
        } else {
            ""
        };
        self.sdl.text.insert_str(
            0,
            &format!("schema {{\n  query: query_root\n{mutation}{subscription}}}\n\n"),
        );
    }

    fn write_scalar(&mut self, kind: &ScalarKind) {
        let name = self.scalar(kind);
        match kind {
            ScalarKind::Int | ScalarKind::Float | ScalarKind::Text | ScalarKind::Boolean => {}
            ScalarKind::Enum(i) => {
                let values = self.catalog.enums[*i].values.clone();
                self.sdl.enumeration(&name, None, &values);
            }
            _ => self.sdl.scalar(&name),
        }
        let cmp = self.ty(&format!("{}_comparison_exp", self.scalar_base(kind)));
        self.input_types
            .insert(cmp.clone(), InputKind::Comparison(kind.clone()));
        let fields: Vec<FieldDef> = ops_for(kind, self.backend)
            .into_iter()
            .map(|op| {
                let ty = match op {
                    CompareOp::In | CompareOp::Nin => format!("[{name}!]"),
                    CompareOp::IsNull => "Boolean".to_owned(),
                    CompareOp::HasKeysAny | CompareOp::HasKeysAll => "[String!]".to_owned(),
                    CompareOp::Like
                    | CompareOp::Nlike
                    | CompareOp::Ilike
                    | CompareOp::Nilike
                    | CompareOp::Similar
                    | CompareOp::Nsimilar
                    | CompareOp::Regex
                    | CompareOp::Iregex
                    | CompareOp::Nregex
                    | CompareOp::Niregex
                    | CompareOp::HasKey => "String".to_owned(),
                    _ => name.clone(),
                };
                FieldDef::new(self.naming.op(op), ty)
            })
            .collect();
        let mut fields = fields;
        if *kind == ScalarKind::Jsonb {
            let cast = self.ty("jsonb_cast_exp");
            let text = self.ty(&format!(
                "{}_comparison_exp",
                self.scalar_base(&ScalarKind::Text)
            ));
            self.sdl.object(
                "input",
                &cast,
                None,
                &[FieldDef::new(self.scalar(&ScalarKind::Text), text)],
            );
            fields.insert(0, FieldDef::new(self.naming.cast_op(), cast));
        }
        self.sdl.object(
            "input",
            &cmp,
            Some(&format!(
                "Boolean expression to compare columns of type \"{name}\". All fields are combined with logical 'AND'."
            )),
            &fields,
        );
    }

    fn write_table(&mut self, id: TableId, roots: Roots<'_>) {
        let Roots {
            query: root,
            mutation: mutation_root,
            subscription: subscription_root,
        } = roots;
        let info = &self.tables[id];
        let table = &self.catalog.tables[info.catalog_index];
        let n = self.naming;
        let kinds: Vec<ScalarKind> = table
            .columns
            .iter()
            .map(|c| self.column_kind(&c.scalar))
            .collect();
        for k in &kinds {
            self.used_scalars.insert(k.clone());
        }
        // Only columns whose GraphQL name resolves to them (clashes were warned about).
        let columns: Vec<(usize, &str)> = info
            .column_fields
            .iter()
            .enumerate()
            .filter(|(i, name)| info.fields.get(*name) == Some(&TableField::Column(*i)))
            .map(|(i, name)| (i, name.as_str()))
            .collect();
        // Relationships the role can follow (both ends visible).
        let rels: Vec<(usize, &Relationship)> = self
            .relationships
            .iter()
            .enumerate()
            .filter(|(rid, r)| {
                r.source == id
                    && matches!(
                        info.fields.get(&r.name),
                        Some(TableField::Object(x) | TableField::Array(x)) if x == rid
                    )
            })
            .collect();

        // Object type.
        let type_name = info.type_name.clone();
        let mut fields = Vec::new();
        for &(i, name) in &columns {
            let c = &table.columns[i];
            let bang = if c.nullable { "" } else { "!" };
            let mut def = FieldDef::new(name, format!("{}{bang}", self.scalar(&kinds[i])))
                .describe(c.comment.as_deref());
            if matches!(kinds[i], ScalarKind::Json | ScalarKind::Jsonb) {
                def = def.with_args(vec![("path".to_owned(), "String".to_owned())]);
            }
            fields.push(def);
        }
        for (_, r) in &rels {
            match r.kind {
                RelKind::Object => fields.push(FieldDef::new(
                    &r.name,
                    self.tables[r.target].type_name.clone(),
                )),
                RelKind::Array => {
                    fields.push(
                        FieldDef::new(&r.name, format!("[{}!]!", self.tables[r.target].type_name))
                            .with_args(self.list_args(r.target)),
                    );
                    let Some(agg_name) = self.agg_field_name(id, r) else {
                        continue;
                    };
                    fields.push(
                        FieldDef::new(
                            agg_name,
                            format!("{}!", self.table_ty(r.target, "_aggregate")),
                        )
                        .with_args(self.list_args(r.target)),
                    );
                }
            }
        }
        let description = table
            .comment
            .clone()
            .unwrap_or_else(|| format!("columns and relationships of \"{}\"", table.name));
        let readable = self.readable[id];
        if readable {
            self.sdl
                .object("type", &type_name, Some(&description), &fields);
        }

        // Boolean expression.
        let bool_exp = self.table_ty(id, "_bool_exp");
        self.input_types
            .insert(bool_exp.clone(), InputKind::BoolExp(id));
        let mut fields = vec![
            FieldDef::new(n.combinator(Combinator::And), format!("[{bool_exp}!]")),
            FieldDef::new(n.combinator(Combinator::Not), bool_exp.clone()),
            FieldDef::new(n.combinator(Combinator::Or), format!("[{bool_exp}!]")),
        ];
        for &(i, name) in &columns {
            let cmp = self.ty(&format!("{}_comparison_exp", self.scalar_base(&kinds[i])));
            fields.push(FieldDef::new(name, cmp));
        }
        for (_, r) in &rels {
            fields.push(FieldDef::new(&r.name, self.table_ty(r.target, "_bool_exp")));
        }
        self.sdl.object(
            "input",
            &bool_exp,
            Some(&format!(
                "Boolean expression to filter rows from the table \"{}\". All fields are combined with a logical 'AND'.",
                table.name
            )),
            &fields,
        );

        // Ordering.
        let order_by_enum = self.ty("order_by");
        let order_by = self.table_ty(id, "_order_by");
        self.input_types
            .insert(order_by.clone(), InputKind::OrderBy(id));
        let mut fields: Vec<FieldDef> = columns
            .iter()
            .map(|&(_, name)| FieldDef::new(name, order_by_enum.clone()))
            .collect();
        for (_, r) in &rels {
            match r.kind {
                RelKind::Object => {
                    fields.push(FieldDef::new(&r.name, self.table_ty(r.target, "_order_by")))
                }
                RelKind::Array => {
                    if let Some(agg_name) = self.agg_field_name(id, r) {
                        fields.push(FieldDef::new(
                            agg_name,
                            self.table_ty(r.target, "_aggregate_order_by"),
                        ))
                    }
                }
            }
        }
        if !fields.is_empty() {
            self.sdl.object(
                "input",
                &order_by,
                Some(&format!(
                    "Ordering options when selecting data from \"{}\".",
                    table.name
                )),
                &fields,
            );
        }

        // Column enum for distinct_on and count(columns:).
        let select_column = self.table_ty(id, "_select_column");
        let values: Vec<String> = columns.iter().map(|&(_, name)| name.to_owned()).collect();
        if !values.is_empty() {
            self.sdl.enumeration(
                &select_column,
                Some(&format!("select columns of table \"{}\"", table.name)),
                &values,
            );
        }

        let aggregations = self.access[id]
            .select
            .as_ref()
            .is_some_and(|s| s.aggregations);
        if aggregations {
            self.write_aggregates(id, &columns, &kinds);
        }

        // Root fields, the same in queries and subscriptions (Hasura's
        // `query_root_fields` and `subscription_root_fields` may drop some).
        let (roots, subs) = self.access[id]
            .select
            .as_ref()
            .map(|s| (s.root_fields, s.subscription_fields))
            .unwrap_or_default();
        let mut both = |kind: fn(&RootFieldSet) -> bool, def: FieldDef| {
            if kind(&subs) {
                subscription_root.push(def.clone());
            }
            if kind(&roots) {
                root.push(def);
            }
        };
        let base = info.base_name.clone();
        if readable && (roots.list || subs.list) {
            let list = n.field(&base);
            self.root_fields.insert(list.clone(), RootField::List(id));
            both(
                |s| s.list,
                FieldDef::new(list, format!("[{type_name}!]!"))
                    .with_args(self.list_args(id))
                    .describe(Some(&format!(
                        "fetch data from the table: \"{}\"",
                        table.name
                    ))),
            );
        }
        if aggregations && (roots.aggregate || subs.aggregate) {
            let agg = n.field(&format!("{base}_aggregate"));
            self.root_fields
                .insert(agg.clone(), RootField::Aggregate(id));
            both(
                |s| s.aggregate,
                FieldDef::new(agg, format!("{}!", self.table_ty(id, "_aggregate")))
                    .with_args(self.list_args(id))
                    .describe(Some(&format!(
                        "fetch aggregated fields from the table: \"{}\"",
                        table.name
                    ))),
            );
        }
        let pk_visible = readable
            && !info.primary_key.is_empty()
            && info
                .primary_key
                .iter()
                .all(|c| columns.iter().any(|(i, _)| i == c));
        if pk_visible && (roots.by_pk || subs.by_pk) {
            let by_pk = n.field(&format!("{base}_by_pk"));
            self.root_fields.insert(by_pk.clone(), RootField::ByPk(id));
            let args = info
                .primary_key
                .iter()
                .map(|&i| {
                    (
                        info.column_fields[i].clone(),
                        format!("{}!", self.scalar(&kinds[i])),
                    )
                })
                .collect();
            both(
                |s| s.by_pk,
                FieldDef::new(by_pk, type_name.clone())
                    .with_args(args)
                    .describe(Some(&format!(
                        "fetch data from the table: \"{}\" using primary key columns",
                        table.name
                    ))),
            );
        }
        if readable && subs.stream {
            if let Some(def) = self.write_stream(id, &columns, &kinds) {
                subscription_root.push(def);
            }
        }
        if info.mutable {
            self.write_mutations(id, pk_visible, &kinds, mutation_root);
        }
    }

    /// The `<array>_aggregate` field of an array relationship, if the role has it.
    fn agg_field_name(&self, source: TableId, r: &Relationship) -> Option<String> {
        self.tables[source]
            .fields
            .iter()
            .find(|(_, f)| **f == TableField::ArrayAggregate(self.rel_id(r)))
            .map(|(name, _)| name.clone())
    }

    fn rel_id(&self, r: &Relationship) -> RelId {
        self.relationships
            .iter()
            .position(|x| std::ptr::eq(x, r))
            .unwrap_or(usize::MAX)
    }

    fn write_aggregates(&mut self, id: TableId, columns: &[(usize, &str)], kinds: &[ScalarKind]) {
        let n = self.naming;
        let table = &self.catalog.tables[self.tables[id].catalog_index];
        let aggregate = self.table_ty(id, "_aggregate");
        let fields_ty = self.table_ty(id, "_aggregate_fields");
        let agg_order = self.table_ty(id, "_aggregate_order_by");
        let order_by_enum = self.ty("order_by");
        self.input_types
            .insert(agg_order.clone(), InputKind::AggregateOrderBy(id));
        // A count-only role (no readable columns) gets no `nodes`.
        let mut aggregate_fields = vec![FieldDef::new("aggregate", fields_ty.clone())];
        if self.readable[id] {
            aggregate_fields.push(FieldDef::new(
                "nodes",
                format!("[{}!]!", self.tables[id].type_name),
            ));
        }
        self.sdl.object(
            "type",
            &aggregate,
            Some(&format!("aggregated selection of \"{}\"", table.name)),
            &aggregate_fields,
        );
        let mut count_args = Vec::with_capacity(2);
        if !columns.is_empty() {
            count_args.push((
                n.arg(Arg::Columns),
                format!("[{}!]", self.table_ty(id, "_select_column")),
            ));
        }
        count_args.push((n.arg(Arg::Distinct), "Boolean".into()));
        let mut agg_fields = vec![FieldDef::new("count", "Int!").with_args(count_args)];
        let mut order_fields = vec![FieldDef::new("count", order_by_enum.clone())];
        for (func, snake) in AGG_FUNCS {
            let cols: Vec<(usize, &str)> = columns
                .iter()
                .copied()
                .filter(|&(i, _)| match func {
                    AggFunc::Min | AggFunc::Max => has_min_max(&kinds[i]),
                    _ => kinds[i].is_numeric(),
                })
                .collect();
            if cols.is_empty() {
                continue;
            }
            let ty = self.table_ty(id, &format!("_{snake}_fields"));
            let order_ty = self.table_ty(id, &format!("_{snake}_order_by"));
            self.input_types
                .insert(order_ty.clone(), InputKind::AggregateFuncOrderBy(id, func));
            let field_defs: Vec<FieldDef> = cols
                .iter()
                .map(|&(i, name)| {
                    let t = if func.is_statistical() {
                        "Float".to_owned()
                    } else {
                        self.scalar(&kinds[i])
                    };
                    FieldDef::new(name, t)
                })
                .collect();
            self.sdl.object(
                "type",
                &ty,
                Some(&format!("aggregate {snake} on columns")),
                &field_defs,
            );
            let order_defs: Vec<FieldDef> = cols
                .iter()
                .map(|&(_, name)| FieldDef::new(name, order_by_enum.clone()))
                .collect();
            self.sdl.object(
                "input",
                &order_ty,
                Some(&format!(
                    "order by {snake}() on columns of table \"{}\"",
                    table.name
                )),
                &order_defs,
            );
            agg_fields.push(FieldDef::new(n.field(snake), ty));
            order_fields.push(FieldDef::new(n.field(snake), order_ty));
        }
        self.sdl.object(
            "type",
            &fields_ty,
            Some(&format!("aggregate fields of \"{}\"", table.name)),
            &agg_fields,
        );
        self.sdl.object(
            "input",
            &agg_order,
            Some(&format!(
                "order by aggregate values of table \"{}\"",
                table.name
            )),
            &order_fields,
        );
    }
}
