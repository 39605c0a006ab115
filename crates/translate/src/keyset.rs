//! A Relay page's keyset: the sort keys as a cursor's condition compares them
//! (each bound as the type it sorts as), the condition itself, NULLs where they
//! sort, and the order turned around for `last`.

use crate::ctx::{sql_type, Ctx};
use grafton_ir::{Aggregated, Connection, OrderTarget, Value};
use grafton_schema::{ComputedReturns, TableId};
use grafton_sql::{AggFunc, BinOp, Dialect, Direction, Expr, Nulls, OrderItem, Param, SqlType};

/// One sort key as the keyset condition compares it.
pub(crate) struct Key {
    pub(crate) expr: Expr,
    direction: Direction,
    /// Where its NULLs sort, as the dialect sorts them.
    nulls: Nulls,
    nullable: bool,
    ty: SqlType,
}

impl Ctx<'_> {
    /// The sort keys with what the keyset condition needs of each.
    pub(crate) fn keys(&self, c: &Connection, order: &[OrderItem]) -> Vec<Key> {
        let dialect = self.model.dialect();
        (order.iter().zip(&c.args.order_by))
            .map(|(item, o)| {
                let (ty, nullable) = self.key_type(c.table, &o.target);
                // Each dialect's default: PostgreSQL's NULLs are largest, SQLite's smallest.
                let large = dialect == Dialect::Postgres;
                let nulls = item.nulls.unwrap_or(match (item.direction, large) {
                    (Direction::Asc, true) | (Direction::Desc, false) => Nulls::Last,
                    _ => Nulls::First,
                });
                Key {
                    expr: item.expr.clone(),
                    direction: item.direction,
                    nulls,
                    nullable,
                    ty,
                }
            })
            .collect()
    }

    /// The type a sort key's cursor value is bound as (what it sorts as), and
    /// whether the key can be NULL.
    fn key_type(&self, table: TableId, target: &OrderTarget) -> (SqlType, bool) {
        let model = self.model;
        match target {
            OrderTarget::Column(c) => {
                let nullable = model.table(table).columns[*c].nullable;
                (self.column_type(table, *c), nullable)
            }
            OrderTarget::Computed(id) => match &model.computed[*id].returns {
                ComputedReturns::Scalar(kind) => {
                    let f = &model.catalog.functions[model.computed[*id].catalog_index];
                    let own = match &f.returns {
                        grafton_catalog::Returns::Scalar(db_type, _) => self.db_type(db_type),
                        _ => None,
                    };
                    (own.unwrap_or_else(|| sql_type(self, kind)), true)
                }
                ComputedReturns::Rows(_) => (SqlType::Builtin("text"), true),
            },
            OrderTarget::Object(rel, inner) => (
                self.key_type(model.relationships[*rel].target, inner).0,
                true,
            ),
            OrderTarget::ArrayCount(_) | OrderTarget::ComputedCount(_) => {
                (SqlType::Builtin("int8"), false)
            }
            OrderTarget::ComputedAggregate(id, func, of) => {
                let ComputedReturns::Rows(target) = model.computed[*id].returns else {
                    return (SqlType::Builtin("text"), true);
                };
                (self.aggregate_type(target, *func, of), true)
            }
            OrderTarget::ArrayAggregate(rel, func, of) => {
                let target = model.relationships[*rel].target;
                (self.aggregate_type(target, *func, of), true)
            }
        }
    }

    /// The type an aggregate of a column (or computed field) of `table` sorts as:
    /// `max`/`min` the value's (an unmapped column's text, which is what is
    /// aggregated), `sum` a float's own, the others a float's `float8`, else
    /// `numeric`.
    fn aggregate_type(&self, table: TableId, func: AggFunc, of: &Aggregated) -> SqlType {
        let value = match of {
            Aggregated::Column(c)
                if self.model.table(table).columns[*c].unmapped(self.model.backend) =>
            {
                SqlType::Builtin("text")
            }
            Aggregated::Column(c) => self.column_type(table, *c),
            Aggregated::Computed(id) => self.key_type(table, &OrderTarget::Computed(*id)).0,
        };
        let float = matches!(value, SqlType::Builtin("float4" | "float8"));
        match func {
            AggFunc::Max | AggFunc::Min => value,
            AggFunc::BoolAnd | AggFunc::BoolOr => SqlType::Builtin("bool"),
            AggFunc::Sum if float => value,
            _ if float => SqlType::Builtin("float8"),
            _ => SqlType::Builtin("numeric"),
        }
    }

    /// A column's own type where its GraphQL scalar's would compare differently
    /// (`citext` case-insensitively, `bpchar` with its padding, `float4` at its
    /// precision, and the types Grafton does not map, by their own operators).
    fn column_type(&self, table: TableId, column: usize) -> SqlType {
        let col = &self.model.table(table).columns[column];
        self.db_type(&col.db_type)
            .unwrap_or_else(|| sql_type(self, &col.scalar))
    }

    /// The SQL type a value of the database type `db_type` is bound as where its
    /// GraphQL scalar's differs: by the type's own name, in the schema the
    /// catalog found it in (a type it did not see, or an array, as text).
    fn db_type(&self, db_type: &str) -> Option<SqlType> {
        let named = |schema: &String| SqlType::Named {
            schema: schema.clone(),
            name: db_type.to_owned(),
        };
        let known = self.model.catalog.type_schemas.get(db_type);
        if let Some(element) = db_type.strip_suffix("[]") {
            // PostgreSQL names an array type after its element: `_inet`.
            return known.map(|schema| SqlType::Named {
                schema: schema.clone(),
                name: format!("_{element}"),
            });
        }
        match db_type {
            "bpchar" => Some(SqlType::Builtin("bpchar")),
            "float4" => Some(SqlType::Builtin("float4")),
            "citext" => Some(known.map_or(SqlType::Builtin("citext"), named)),
            "text" | "varchar" | "name" => None,
            _ if self.model.backend != grafton_catalog::Backend::Postgres => None,
            _ => known.map(named),
        }
    }
}

/// Rows strictly beyond the cursor in the keys' order (before it: in the reverse
/// order): `k1 > v1 OR (k1 = v1 AND (k2 > v2 OR …))`, NULLs where they sort.
pub(crate) fn beyond(keys: &[Key], values: &[Value], before: bool) -> Expr {
    let mut condition: Option<Expr> = None;
    for (k, v) in keys.iter().zip(values).rev() {
        let value = Expr::Param(Param {
            value: v.clone(),
            ty: k.ty.clone(),
            list: false,
        });
        let (direction, nulls) = match before {
            false => (k.direction, k.nulls),
            true => (flip(k.direction), flip_nulls(k.nulls)),
        };
        let past = past(k, &value, direction, nulls);
        condition = Some(match condition {
            None => past,
            Some(rest) => Expr::Or(vec![past, Expr::And(vec![equal(k, &value), rest])]),
        });
    }
    condition.unwrap_or(Expr::Bool(false))
}

/// The key sorts after `value`.
fn past(k: &Key, value: &Expr, direction: Direction, nulls: Nulls) -> Expr {
    let compare = Expr::Compare {
        left: Box::new(k.expr.clone()),
        op: match direction {
            Direction::Asc => BinOp::Gt,
            Direction::Desc => BinOp::Lt,
        },
        right: Box::new(value.clone()),
    };
    if !k.nullable {
        return compare;
    }
    let is_null = |e: &Expr, negated: bool| Expr::IsNull {
        expr: Box::new(e.clone()),
        negated,
    };
    match nulls {
        // After a value: larger ones and the NULLs; after a NULL: nothing.
        Nulls::Last => Expr::And(vec![
            is_null(value, true),
            Expr::Or(vec![compare, is_null(&k.expr, false)]),
        ]),
        // After a NULL: every value; after a value: larger ones.
        Nulls::First => Expr::Or(vec![
            Expr::And(vec![is_null(value, false), is_null(&k.expr, true)]),
            compare,
        ]),
    }
}

/// The key equals `value` (NULL equals NULL).
fn equal(k: &Key, value: &Expr) -> Expr {
    let eq = Expr::Compare {
        left: Box::new(k.expr.clone()),
        op: BinOp::Eq,
        right: Box::new(value.clone()),
    };
    if !k.nullable {
        return eq;
    }
    let is_null = |e: &Expr| Expr::IsNull {
        expr: Box::new(e.clone()),
        negated: false,
    };
    Expr::Or(vec![eq, Expr::And(vec![is_null(&k.expr), is_null(value)])])
}

fn flip(d: Direction) -> Direction {
    match d {
        Direction::Asc => Direction::Desc,
        Direction::Desc => Direction::Asc,
    }
}

fn flip_nulls(n: Nulls) -> Nulls {
    match n {
        Nulls::First => Nulls::Last,
        Nulls::Last => Nulls::First,
    }
}

/// The same keys in the opposite order (each dialect's default NULL placement
/// reverses with the direction, so an unset one stays unset).
pub(crate) fn reversed(order: &[OrderItem]) -> Vec<OrderItem> {
    (order.iter())
        .map(|o| OrderItem {
            expr: o.expr.clone(),
            direction: flip(o.direction),
            nulls: o.nulls.map(flip_nulls),
        })
        .collect()
}
