//! The mutation half of the schema: `mutation_root` fields and their input types,
//! named and shaped as Hasura's so its clients work unchanged, limited to what the
//! schema's role may do.

use super::Builder;
use crate::model::{MutationField, RelKind, RootKind, TableId};
use crate::naming::Arg;
use crate::sdl::FieldDef;
use grafton_catalog::ScalarKind;
use std::collections::BTreeSet;

mod inserts;
pub(in crate::build) use inserts::without_empty_inserts;

impl Builder<'_> {
    /// Writes the mutation input and output types of table `id` and pushes the root
    /// fields the role may use onto `root`. `kinds` are the columns' scalars;
    /// `pk_visible` says whether the `_by_pk` fields exist.
    pub(super) fn write_mutations(
        &mut self,
        id: TableId,
        pk_visible: bool,
        kinds: &[ScalarKind],
        root: &mut Vec<FieldDef>,
    ) {
        let n = self.naming;
        let info = &self.tables[id];
        let access = self.access[id].clone();
        let table_name = self.catalog.tables[info.catalog_index].name.clone();
        let type_name = info.type_name.clone();
        // A column's GraphQL name, unless a later column took it (warned at start-up).
        let named = |set: &BTreeSet<usize>| -> Vec<(usize, String)> {
            set.iter()
                .filter(|&&i| !info.column_fields[i + 1..].contains(&info.column_fields[i]))
                .map(|&i| (i, info.column_fields[i].clone()))
                .collect()
        };
        let insertable = access.insert.as_ref().map(named);
        let updatable = access.update.as_ref().map(named);
        let defs = |b: &Self, columns: &[(usize, String)], keep: &dyn Fn(&ScalarKind) -> bool| {
            columns
                .iter()
                .filter(|(i, _)| keep(&kinds[*i]))
                .map(|(i, name)| FieldDef::new(name, b.scalar(&kinds[*i])))
                .collect::<Vec<FieldDef>>()
        };
        let names = self.mutation_names.clone();

        // Upserts need update rights: their conflict branch is an update.
        let on_conflict = match (&updatable, info.constraints.is_empty()) {
            (Some(updatable), false) if insertable.is_some() => {
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
                let mut values: Vec<String> = updatable.iter().map(|(_, c)| c.clone()).collect();
                if values.is_empty() {
                    // An enum needs a value; Hasura uses the same placeholder.
                    values.push("_PLACEHOLDER".to_owned());
                }
                self.sdl.enumeration(
                    &update_column,
                    Some(&format!("update columns of table \"{table_name}\"")),
                    &values,
                );
                let bool_exp = self.table_ty(id, "_bool_exp");
                self.sdl.object(
                    "input",
                    &on_conflict,
                    Some(&format!(
                        "on_conflict condition type for table \"{table_name}\""
                    )),
                    &[
                        FieldDef::new(&names.constraint, format!("{constraint}!")),
                        FieldDef::new(&names.update_columns, format!("[{update_column}!]! = []")),
                        FieldDef::new(n.arg(Arg::Where), bool_exp),
                    ],
                );
                Some(on_conflict)
            }
            _ => None,
        };

        // Inserts, with nested inserts through relationships to tables the role may
        // insert into.
        let insert_input = self.table_ty(id, "_insert_input");
        if let Some(insertable) = &insertable {
            let mut fields = defs(self, insertable, &|_| true);
            for r in self.insert_relationships(id) {
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
            for (suffix, data_ty, what) in [
                (
                    "_obj_rel_insert_input",
                    format!("{insert_input}!"),
                    "object",
                ),
                (
                    "_arr_rel_insert_input",
                    format!("[{insert_input}!]!"),
                    "array",
                ),
            ] {
                let mut fields = vec![FieldDef::new(&names.data, data_ty)];
                if let Some(oc) = &on_conflict {
                    fields.push(FieldDef::new(&names.on_conflict, oc.clone()));
                }
                let ty = self.table_ty(id, suffix);
                self.sdl.object(
                    "input",
                    &ty,
                    Some(&format!(
                        "input type for inserting {what} relation for remote table \"{table_name}\""
                    )),
                    &fields,
                );
            }
        }

        // The response of the many-row mutations: `returning` only for a role that
        // may read the table (a write-only role learns how many rows, not which).
        let readable = self.readable[id];
        let response = self.table_ty(id, "_mutation_response");
        let mut response_fields = vec![FieldDef::new(&names.affected_rows, "Int!")
            .describe(Some("number of rows affected by the mutation"))];
        if readable {
            response_fields.push(
                FieldDef::new(&names.returning, format!("[{type_name}!]!"))
                    .describe(Some("data from the rows affected by the mutation")),
            );
        }
        self.sdl.object(
            "type",
            &response,
            Some(&format!(
                "response of any mutation on the table \"{table_name}\""
            )),
            &response_fields,
        );

        // Update operators: `_set` for every column, `_inc` for numbers, the jsonb ones
        // for jsonb columns without a JSON Schema (their result cannot be checked first).
        let mut operators: Vec<(String, String)> = Vec::new();
        if let Some(updatable) = &updatable {
            let numeric = |k: &ScalarKind| {
                matches!(
                    k,
                    ScalarKind::Int | ScalarKind::BigInt | ScalarKind::Float | ScalarKind::Numeric
                )
            };
            for (arg, suffix, keep) in [
                (
                    "_set",
                    "_set_input",
                    &(|_: &ScalarKind| true) as &dyn Fn(&ScalarKind) -> bool,
                ),
                ("_inc", "_inc_input", &numeric),
            ] {
                let fields = defs(self, updatable, keep);
                if fields.is_empty() {
                    continue;
                }
                let ty = self.table_ty(id, suffix);
                self.sdl.object(
                    "input",
                    &ty,
                    Some(&format!(
                        "input type for the {arg} operator on table \"{table_name}\""
                    )),
                    &fields,
                );
                operators.push((n.field(arg), ty));
            }
            let jsonb: Vec<&String> = updatable
                .iter()
                .filter(|(i, _)| {
                    kinds[*i] == ScalarKind::Jsonb && !self.validated.contains(&(id, *i))
                })
                .map(|(_, name)| name)
                .collect();
            if !jsonb.is_empty() {
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
                    let fields: Vec<FieldDef> = jsonb
                        .iter()
                        .map(|name| FieldDef::new(*name, ty.clone()))
                        .collect();
                    self.sdl.object(
                        "input",
                        &input,
                        Some(&format!(
                            "input type for the {arg} operator on jsonb columns of table \"{table_name}\""
                        )),
                        &fields,
                    );
                    operators.push((n.field(arg), input));
                }
            }
            operators.sort();
        }

        let pk_args: Vec<(String, String)> = if pk_visible {
            info.primary_key
                .iter()
                .map(|&i| {
                    (
                        info.column_fields[i].clone(),
                        format!("{}!", self.scalar(&kinds[i])),
                    )
                })
                .collect()
        } else {
            Vec::new()
        };
        let where_arg = (
            n.arg(Arg::Where),
            format!("{}!", self.table_ty(id, "_bool_exp")),
        );

        // Root fields, in Hasura's order.
        let roots = info.roots.clone();
        let mut add = |b: &mut Self, root_kind: RootKind, kind: MutationField, def: FieldDef| {
            let name = roots.name(root_kind).to_owned();
            b.mutation_fields.insert(name.clone(), kind);
            let mut def = def;
            def.name = name;
            if let Some(Some(comment)) = roots.comments.get(root_kind as usize) {
                def = def.describe(Some(comment));
            }
            root.push(def);
        };
        if access.delete {
            add(
                self,
                RootKind::Delete,
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
                    RootKind::DeleteByPk,
                    MutationField::DeleteByPk(id),
                    FieldDef::new("", type_name.clone())
                        .with_args(pk_args.clone())
                        .describe(Some(&format!(
                            "delete single row from the table: \"{table_name}\""
                        ))),
                );
            }
        }
        if insertable.is_some() {
            let mut insert_args = vec![(names.objects.clone(), format!("[{insert_input}!]!"))];
            let mut insert_one_args = vec![(names.object.clone(), format!("{insert_input}!"))];
            if let Some(oc) = &on_conflict {
                insert_args.push((names.on_conflict.clone(), oc.clone()));
                insert_one_args.push((names.on_conflict.clone(), oc.clone()));
            }
            add(
                self,
                RootKind::Insert,
                MutationField::Insert(id),
                FieldDef::new("", response.clone())
                    .with_args(insert_args)
                    .describe(Some(&format!(
                        "insert data into the table: \"{table_name}\""
                    ))),
            );
            if !readable {
                // `_one` answers with the row: a role that cannot read it has none.
                insert_one_args.clear();
            }
            if !insert_one_args.is_empty() {
                add(
                    self,
                    RootKind::InsertOne,
                    MutationField::InsertOne(id),
                    FieldDef::new("", type_name.clone())
                        .with_args(insert_one_args)
                        .describe(Some(&format!(
                            "insert a single row into the table: \"{table_name}\""
                        ))),
                );
            }
        }
        // Without operators (every updatable column is a preset) the fields remain:
        // the update sets the presets.
        if updatable.is_none() {
            return;
        }
        let mut update_args = operators.clone();
        update_args.push(where_arg);
        add(
            self,
            RootKind::Update,
            MutationField::Update(id),
            FieldDef::new("", response.clone())
                .with_args(update_args.clone())
                .describe(Some(&format!("update data of the table: \"{table_name}\""))),
        );
        if !pk_args.is_empty() {
            let pk_input = self.table_ty(id, "_pk_columns_input");
            let fields: Vec<FieldDef> = pk_args
                .iter()
                .map(|(name, ty)| FieldDef::new(name, ty))
                .collect();
            self.sdl.object(
                "input",
                &pk_input,
                Some(&format!(
                    "primary key columns input for table: {table_name}"
                )),
                &fields,
            );
            let mut args = operators;
            args.push((names.pk_columns.clone(), format!("{pk_input}!")));
            add(
                self,
                RootKind::UpdateByPk,
                MutationField::UpdateByPk(id),
                FieldDef::new("", type_name.clone())
                    .with_args(args)
                    .describe(Some(&format!(
                        "update single row of the table: \"{table_name}\""
                    ))),
            );
        }
        let updates = self.table_ty(id, "_updates");
        let fields: Vec<FieldDef> = update_args
            .iter()
            .map(|(name, ty)| FieldDef::new(name, ty))
            .collect();
        self.sdl.object("input", &updates, None, &fields);
        add(
            self,
            RootKind::UpdateMany,
            MutationField::UpdateMany(id),
            FieldDef::new("", format!("[{response}]"))
                .with_args(vec![(names.updates.clone(), format!("[{updates}!]!"))])
                .describe(Some(&format!(
                    "update multiples rows of table: \"{table_name}\""
                ))),
        );
    }
}
