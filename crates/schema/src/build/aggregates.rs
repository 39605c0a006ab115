//! A table's aggregate types: `t_aggregate`, `t_aggregate_fields`, one type per
//! function (`t_sum_fields`…) and their `order_by` inputs.

use super::*;

impl Builder<'_> {
    pub(super) fn write_aggregates(
        &mut self,
        id: TableId,
        columns: &[(usize, &str)],
        kinds: &[ScalarKind],
    ) {
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
        let computed = self.computed_comparable(id);
        for (func, snake) in AGG_FUNCS {
            let applies = |kind: &ScalarKind| match func {
                AggFunc::Min | AggFunc::Max => has_min_max(kind),
                _ => kind.is_numeric(),
            };
            let cols: Vec<(usize, &str)> = columns
                .iter()
                .copied()
                .filter(|&(i, _)| applies(&kinds[i]))
                .collect();
            // Scalar computed fields aggregate too (Hasura's, on PostgreSQL), and
            // are aggregate order keys.
            let computed_keys: Vec<&str> = (computed.iter())
                .filter(|(_, kind)| applies(kind))
                .map(|(name, _)| name.as_str())
                .collect();
            let computed: Vec<FieldDef> = (computed.iter())
                .filter(|(_, kind)| applies(kind))
                .map(|(name, kind)| {
                    let t = if func.is_statistical() {
                        "Float".to_owned()
                    } else {
                        self.scalar(kind)
                    };
                    FieldDef::new(name, t)
                })
                .collect();
            if cols.is_empty() && computed.is_empty() {
                continue;
            }
            let ty = self.table_ty(id, &format!("_{snake}_fields"));
            let order_ty = self.table_ty(id, &format!("_{snake}_order_by"));
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
                .chain(computed)
                .collect();
            self.sdl.object(
                "type",
                &ty,
                Some(&format!("aggregate {snake} on columns")),
                &field_defs,
            );
            agg_fields.push(FieldDef::new(n.field(snake), ty));
            self.input_types
                .insert(order_ty.clone(), InputKind::AggregateFuncOrderBy(id, func));
            let order_defs: Vec<FieldDef> = (cols.iter().map(|&(_, name)| name))
                .chain(computed_keys)
                .map(|name| FieldDef::new(name, order_by_enum.clone()))
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
            order_fields.push(FieldDef::new(n.field(snake), order_ty));
        }
        self.sdl.object(
            "type",
            &fields_ty,
            Some(&format!("aggregate fields of \"{}\"", table.name)),
            &agg_fields,
        );
        self.write_aggregate_bool_exp(id, columns, kinds);
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
