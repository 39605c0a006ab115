//! The builder's small lookups: type names, scalars, a table's list
//! arguments, whether a table has columns to order by.

use super::*;

impl Builder<'_> {
    pub(super) fn ty(&self, snake: &str) -> String {
        self.naming.type_name(snake)
    }

    pub(super) fn table_ty(&self, id: TableId, suffix: &str) -> String {
        self.ty(&format!("{}{suffix}", self.tables[id].base_name))
    }

    pub(super) fn scalar_base(&self, kind: &ScalarKind) -> String {
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
            ScalarKind::Geometry => "geometry".into(),
            ScalarKind::Geography => "geography".into(),
            ScalarKind::Ltree => "ltree".into(),
            ScalarKind::Raster => "raster".into(),
            // Its comparison type is `String_array_comparison_exp`.
            ScalarKind::Array(element) => format!("{}_array", self.scalar_base(element)),
            ScalarKind::Enum(i) => {
                let e = &self.catalog.enums[*i];
                // An enum table's type is named already (`<table>_enum`).
                if e.schema == "public" || e.from_table.is_some() {
                    graphql_safe(&e.name)
                } else {
                    graphql_safe(&format!("{}_{}", e.schema, e.name))
                }
            }
        }
    }

    pub(super) fn scalar(&self, kind: &ScalarKind) -> String {
        match kind {
            ScalarKind::Array(element) => format!("[{}!]", self.scalar(element)),
            _ => self.naming.scalar(&self.scalar_base(kind)),
        }
    }

    /// The scalar kind a column is exposed as: enums with labels that are not valid
    /// GraphQL names fall back to String.
    pub(super) fn column_kind(&mut self, kind: &ScalarKind) -> ScalarKind {
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

    pub(super) fn list_args(&self, target: TableId) -> Vec<(String, String)> {
        let n = self.naming;
        let page = [(n.arg(Arg::Limit), "Int"), (n.arg(Arg::Offset), "Int")];
        self.selection_args(target, &[], &page)
    }

    /// A selection's arguments in Hasura's order: `lead`, `distinct_on`, `page`,
    /// `order_by`, `where`.
    pub(super) fn selection_args(
        &self,
        target: TableId,
        lead: &[(String, &str)],
        page: &[(String, &str)],
    ) -> Vec<(String, String)> {
        let n = self.naming;
        let owned = |(a, t): &(String, &str)| (a.clone(), t.to_string());
        let mut args: Vec<(String, String)> = lead.iter().map(owned).collect();
        if self.has_columns(target) {
            args.push((
                n.arg(Arg::DistinctOn),
                format!("[{}!]", self.table_ty(target, "_select_column")),
            ));
        }
        args.extend(page.iter().map(owned));
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
    pub(super) fn has_columns(&self, id: TableId) -> bool {
        self.tables[id]
            .fields
            .values()
            .any(|f| matches!(f, TableField::Column(_)))
    }

    /// Whether `id`'s `_order_by` input has a field (what `write_table` writes
    /// there): a column, an object relationship, an array relationship's or a
    /// set-returning computed field's aggregate, a scalar computed field without
    /// arguments.
    pub(super) fn orderable(&self, id: TableId) -> bool {
        let computed = self.computed;
        self.tables[id].fields.values().any(|f| match f {
            TableField::Column(_) | TableField::Object(_) | TableField::ArrayAggregate(_) => true,
            TableField::Computed(c) => {
                computed[*c].args.is_empty()
                    && matches!(computed[*c].returns, ComputedReturns::Scalar(_))
            }
            TableField::ComputedAggregate(c) => computed[*c].args.is_empty(),
            TableField::Array(_) | TableField::ArrayConnection(_) | TableField::Remote(_) => false,
        })
    }
}
