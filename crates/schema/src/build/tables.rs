//! One table's types: its object, inputs (filter, order, columns), root fields,
//! and its aggregates.

use super::*;

impl Builder<'_> {
    pub(super) fn write_table(&mut self, id: TableId, roots: Roots<'_>) {
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
        // The Relay API's `id` is the global id: no column is served under it.
        let object_columns = (columns.iter()).filter(|(_, name)| !self.relay || *name != NODE_ID);
        if self.is_node(id) {
            fields.push(FieldDef::new(NODE_ID, "ID!"));
        }
        for &(i, name) in object_columns {
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
                    fields.extend(self.relationship_connection(id, r));
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
        fields.extend(self.computed_object_fields(id));
        fields.extend(self.remote_relationship_fields(id));
        let computed = self.computed_comparable(id);
        let description = table
            .comment
            .clone()
            .unwrap_or_else(|| format!("columns and relationships of \"{}\"", table.name));
        let readable = self.readable[id];
        if readable {
            let declared = match self.is_node(id) {
                true => format!("{type_name} implements Node"),
                false => type_name.clone(),
            };
            self.sdl
                .object("type", &declared, Some(&description), &fields);
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
            // Aggregate predicates where the role may aggregate the related rows.
            if let Some(agg_name) = (r.kind == RelKind::Array)
                .then(|| self.agg_field_name(id, r))
                .flatten()
            {
                let ty = self.table_ty(r.target, "_aggregate_bool_exp");
                fields.push(FieldDef::new(agg_name, ty));
            }
        }
        for (name, kind) in &computed {
            let cmp = self.ty(&format!("{}_comparison_exp", self.scalar_base(kind)));
            fields.push(FieldDef::new(name, cmp));
        }
        for (name, target) in self.computed_row_filters(id) {
            fields.push(FieldDef::new(name, self.table_ty(target, "_bool_exp")));
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
            .chain((computed.iter()).map(|(name, _)| FieldDef::new(name, order_by_enum.clone())))
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
        for (name, target) in self.computed_aggregate_order(id) {
            fields.push(FieldDef::new(
                name,
                self.table_ty(target, "_aggregate_order_by"),
            ));
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
        let names = info.roots.clone();
        let pk_visible = readable
            && !info.primary_key.is_empty()
            && info
                .primary_key
                .iter()
                .all(|c| columns.iter().any(|(i, _)| i == c));
        if self.relay {
            // Relay's roots are connections only (Hasura's `query_root_fields`
            // `select` gives them); writes are the `/v1/graphql` schema's.
            if readable && self.is_node(id) && (roots.list || subs.list) {
                let def = self.root_connection(id);
                both(|s| s.list, def);
            }
            if info.mutable {
                self.write_mutations(id, pk_visible, &kinds, mutation_root);
            }
            return;
        }
        if readable && (roots.list || subs.list) {
            let list = names.name(RootKind::Select).to_owned();
            self.root_fields.insert(list.clone(), RootField::List(id));
            both(
                |s| s.list,
                FieldDef::new(list, format!("[{type_name}!]!"))
                    .with_args(self.list_args(id))
                    .describe(Some(&names.describe(
                        RootKind::Select,
                        format!("fetch data from the table: \"{}\"", table.name),
                    ))),
            );
        }
        if aggregations && (roots.aggregate || subs.aggregate) {
            let agg = names.name(RootKind::SelectAggregate).to_owned();
            self.root_fields
                .insert(agg.clone(), RootField::Aggregate(id));
            both(
                |s| s.aggregate,
                FieldDef::new(agg, format!("{}!", self.table_ty(id, "_aggregate")))
                    .with_args(self.list_args(id))
                    .describe(Some(&names.describe(
                        RootKind::SelectAggregate,
                        format!("fetch aggregated fields from the table: \"{}\"", table.name),
                    ))),
            );
        }
        if pk_visible && (roots.by_pk || subs.by_pk) {
            let by_pk = names.name(RootKind::SelectByPk).to_owned();
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
                    .describe(Some(&names.describe(
                        RootKind::SelectByPk,
                        format!(
                            "fetch data from the table: \"{}\" using primary key columns",
                            table.name
                        ),
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
    pub(super) fn agg_field_name(&self, source: TableId, r: &Relationship) -> Option<String> {
        self.tables[source]
            .fields
            .iter()
            .find(|(_, f)| **f == TableField::ArrayAggregate(self.rel_id(r)))
            .map(|(name, _)| name.clone())
    }

    pub(super) fn rel_id(&self, r: &Relationship) -> RelId {
        self.relationships
            .iter()
            .position(|x| std::ptr::eq(x, r))
            .unwrap_or(usize::MAX)
    }
}
