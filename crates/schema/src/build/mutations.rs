//! The mutation half of the schema: `mutation_root` fields and their input types,
//! named and shaped as Hasura's so its clients work unchanged.

use super::Builder;
use crate::model::{MutationField, RelKind, TableId};
use crate::naming::Arg;
use crate::sdl::FieldDef;
use grafton_catalog::ScalarKind;

impl Builder<'_> {
    /// Writes the mutation input and output types of table `id` and pushes its root
    /// fields onto `root`. `columns` are the exposed columns, `kinds` their scalars.
    pub(super) fn write_mutations(
        &mut self,
        id: TableId,
        columns: &[(usize, &str)],
        kinds: &[ScalarKind],
        root: &mut Vec<FieldDef>,
    ) {
        let n = self.naming;
        let info = &self.tables[id];
        let table_name = self.catalog.tables[info.catalog_index].name.clone();
        let type_name = info.type_name.clone();
        let base = info.base_name.clone();
        let column_defs =
            |b: &Self, keep: &dyn Fn(&ScalarKind) -> bool, ty: &dyn Fn(&str) -> String| {
                columns
                    .iter()
                    .filter(|&&(i, _)| keep(&kinds[i]))
                    .map(|&(i, name)| FieldDef::new(name, ty(&b.scalar(&kinds[i]))))
                    .collect::<Vec<FieldDef>>()
            };
        let all = |_: &ScalarKind| true;
        let same = |s: &str| s.to_owned();

        // Inserts, with nested inserts through relationships to other mutable tables.
        let insert_input = self.table_ty(id, "_insert_input");
        let mut fields = column_defs(self, &all, &same);
        for r in self.relationships.iter().filter(|r| r.source == id) {
            if !self.tables[r.target].mutable {
                continue;
            }
            let suffix = match r.kind {
                RelKind::Object => "_obj_rel_insert_input",
                RelKind::Array => "_arr_rel_insert_input",
            };
            fields.push(FieldDef::new(&r.name, self.table_ty(r.target, suffix)));
        }
        self.sdl.object(
            "input",
            &insert_input,
            Some(&format!(
                "input type for inserting data into table \"{table_name}\""
            )),
            &fields,
        );
        let names = &self.mutation_names;
        let on_conflict = if info.constraints.is_empty() {
            None
        } else {
            let on_conflict = self.table_ty(id, "_on_conflict");
            let constraint = self.table_ty(id, "_constraint");
            let update_column = self.table_ty(id, "_update_column");
            let mut values: Vec<String> = info.constraints.keys().cloned().collect();
            values.sort();
            self.sdl.enumeration(
                &constraint,
                Some(&format!(
                    "unique or primary key constraints on table \"{table_name}\""
                )),
                &values,
            );
            let values: Vec<String> = columns.iter().map(|&(_, c)| c.to_owned()).collect();
            self.sdl.enumeration(
                &update_column,
                Some(&format!("update columns of table \"{table_name}\"")),
                &values,
            );
            self.sdl.object(
                "input",
                &on_conflict,
                Some(&format!(
                    "on_conflict condition type for table \"{table_name}\""
                )),
                &[
                    FieldDef::new(&names.constraint, format!("{constraint}!")),
                    FieldDef::new(&names.update_columns, format!("[{update_column}!]! = []")),
                    FieldDef::new(n.arg(Arg::Where), self.table_ty(id, "_bool_exp")),
                ],
            );
            Some(on_conflict)
        };
        let data_args = |data_ty: String| {
            let mut args = vec![(names.data.clone(), data_ty)];
            if let Some(oc) = &on_conflict {
                args.push((names.on_conflict.clone(), oc.clone()));
            }
            args
        };
        let obj_rel: Vec<FieldDef> = data_args(format!("{insert_input}!"))
            .into_iter()
            .map(|(name, ty)| FieldDef::new(name, ty))
            .collect();
        let arr_rel: Vec<FieldDef> = data_args(format!("[{insert_input}!]!"))
            .into_iter()
            .map(|(name, ty)| FieldDef::new(name, ty))
            .collect();
        let obj_rel_ty = self.table_ty(id, "_obj_rel_insert_input");
        let arr_rel_ty = self.table_ty(id, "_arr_rel_insert_input");
        self.sdl.object(
            "input",
            &obj_rel_ty,
            Some(&format!(
                "input type for inserting object relation for remote table \"{table_name}\""
            )),
            &obj_rel,
        );
        self.sdl.object(
            "input",
            &arr_rel_ty,
            Some(&format!(
                "input type for inserting array relation for remote table \"{table_name}\""
            )),
            &arr_rel,
        );

        // The response of the many-row mutations.
        let response = self.table_ty(id, "_mutation_response");
        self.sdl.object(
            "type",
            &response,
            Some(&format!(
                "response of any mutation on the table \"{table_name}\""
            )),
            &[
                FieldDef::new(&names.affected_rows, "Int!")
                    .describe(Some("number of rows affected by the mutation")),
                FieldDef::new(&names.returning, format!("[{type_name}!]!"))
                    .describe(Some("data from the rows affected by the mutation")),
            ],
        );

        // Update operators: `_set` for every column, `_inc` for numbers, the jsonb ones
        // for jsonb columns without a JSON Schema (their result cannot be checked first).
        let mut operators: Vec<(String, String)> = Vec::new();
        let numeric = |k: &ScalarKind| {
            matches!(
                k,
                ScalarKind::Int | ScalarKind::BigInt | ScalarKind::Float | ScalarKind::Numeric
            )
        };
        let jsonb_columns: Vec<(usize, &str)> = columns
            .iter()
            .copied()
            .filter(|&(i, _)| kinds[i] == ScalarKind::Jsonb && !self.validated.contains(&(id, i)))
            .collect();
        type OperatorSpec<'f> = (&'f str, &'f str, &'f dyn Fn(&ScalarKind) -> bool);
        let specs: [OperatorSpec; 2] = [
            ("_set", "_set_input", &all),
            ("_inc", "_inc_input", &numeric),
        ];
        for (arg, suffix, keep) in specs {
            let defs = column_defs(self, keep, &same);
            if defs.is_empty() {
                continue;
            }
            let ty = self.table_ty(id, suffix);
            self.sdl.object(
                "input",
                &ty,
                Some(&format!(
                    "input type for the {arg} operator on table \"{table_name}\""
                )),
                &defs,
            );
            operators.push((n.field(arg), ty));
        }
        if !jsonb_columns.is_empty() {
            let jsonb_ty = self.scalar(&ScalarKind::Jsonb);
            for (arg, suffix, ty) in [
                ("_append", "_append_input", jsonb_ty.clone()),
                ("_prepend", "_prepend_input", jsonb_ty),
                ("_delete_key", "_delete_key_input", "String".to_owned()),
                ("_delete_elem", "_delete_elem_input", "Int".to_owned()),
                (
                    "_delete_at_path",
                    "_delete_at_path_input",
                    "[String!]".to_owned(),
                ),
            ] {
                let input = self.table_ty(id, suffix);
                let defs: Vec<FieldDef> = jsonb_columns
                    .iter()
                    .map(|&(_, name)| FieldDef::new(name, ty.clone()))
                    .collect();
                self.sdl.object(
                    "input",
                    &input,
                    Some(&format!(
                        "input type for the {arg} operator on jsonb columns of table \"{table_name}\""
                    )),
                    &defs,
                );
                operators.push((n.field(arg), input));
            }
        }
        operators.sort();

        let pk_args: Vec<(String, String)> = info
            .primary_key
            .iter()
            .map(|&i| {
                (
                    info.column_fields[i].clone(),
                    format!("{}!", self.scalar(&kinds[i])),
                )
            })
            .collect();
        let where_arg = (
            n.arg(Arg::Where),
            format!("{}!", self.table_ty(id, "_bool_exp")),
        );

        // Root fields, in Hasura's order.
        let mut add = |b: &mut Self, snake: String, kind: MutationField, def: FieldDef| {
            let name = n.field(&snake);
            b.mutation_fields.insert(name.clone(), kind);
            let mut def = def;
            def.name = name;
            root.push(def);
        };
        add(
            self,
            format!("delete_{base}"),
            MutationField::Delete(id),
            FieldDef::new("", response.clone())
                .with_args(vec![where_arg.clone()])
                .describe(Some(&format!(
                    "delete data from the table: \"{table_name}\""
                ))),
        );
        if !pk_args.is_empty() {
            add(
                self,
                format!("delete_{base}_by_pk"),
                MutationField::DeleteByPk(id),
                FieldDef::new("", type_name.clone())
                    .with_args(pk_args.clone())
                    .describe(Some(&format!(
                        "delete single row from the table: \"{table_name}\""
                    ))),
            );
        }
        let mut insert_args = vec![(n.field("objects"), format!("[{insert_input}!]!"))];
        let mut insert_one_args = vec![(n.field("object"), format!("{insert_input}!"))];
        if let Some(oc) = &on_conflict {
            insert_args.push((n.field("on_conflict"), oc.clone()));
            insert_one_args.push((n.field("on_conflict"), oc.clone()));
        }
        add(
            self,
            format!("insert_{base}"),
            MutationField::Insert(id),
            FieldDef::new("", response.clone())
                .with_args(insert_args)
                .describe(Some(&format!(
                    "insert data into the table: \"{table_name}\""
                ))),
        );
        add(
            self,
            format!("insert_{base}_one"),
            MutationField::InsertOne(id),
            FieldDef::new("", type_name.clone())
                .with_args(insert_one_args)
                .describe(Some(&format!(
                    "insert a single row into the table: \"{table_name}\""
                ))),
        );
        let mut update_args = operators.clone();
        update_args.push(where_arg.clone());
        add(
            self,
            format!("update_{base}"),
            MutationField::Update(id),
            FieldDef::new("", response.clone())
                .with_args(update_args.clone())
                .describe(Some(&format!("update data of the table: \"{table_name}\""))),
        );
        if !pk_args.is_empty() {
            let pk_input = self.table_ty(id, "_pk_columns_input");
            let defs: Vec<FieldDef> = pk_args
                .iter()
                .map(|(name, ty)| FieldDef::new(name, ty))
                .collect();
            self.sdl.object(
                "input",
                &pk_input,
                Some(&format!(
                    "primary key columns input for table: {table_name}"
                )),
                &defs,
            );
            let mut args = operators.clone();
            args.push((n.field("pk_columns"), format!("{pk_input}!")));
            add(
                self,
                format!("update_{base}_by_pk"),
                MutationField::UpdateByPk(id),
                FieldDef::new("", type_name.clone())
                    .with_args(args)
                    .describe(Some(&format!(
                        "update single row of the table: \"{table_name}\""
                    ))),
            );
        }
        let updates = self.table_ty(id, "_updates");
        let defs: Vec<FieldDef> = update_args
            .iter()
            .map(|(name, ty)| FieldDef::new(name, ty))
            .collect();
        self.sdl.object("input", &updates, None, &defs);
        add(
            self,
            format!("update_{base}_many"),
            MutationField::UpdateMany(id),
            FieldDef::new("", format!("[{response}]"))
                .with_args(vec![(n.field("updates"), format!("[{updates}!]!"))])
                .describe(Some(&format!(
                    "update multiples rows of table: \"{table_name}\""
                ))),
        );
    }
}
