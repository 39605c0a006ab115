//! `t_aggregate_bool_exp`: Hasura's aggregate predicates on a table's rows, offered
//! in the `bool_exp` of every table with an array relationship to it (where the
//! role may aggregate it).

use super::*;

impl Builder<'_> {
    /// `t_aggregate_bool_exp` and its parts: `count`, and `bool_and` / `bool_or`
    /// when the table has boolean columns.
    pub(super) fn write_aggregate_bool_exp(
        &mut self,
        id: TableId,
        columns: &[(usize, &str)],
        kinds: &[ScalarKind],
    ) {
        let n = self.naming;
        let name = self.table_ty(id, "_aggregate_bool_exp");
        let bool_exp = self.table_ty(id, "_bool_exp");
        let boolean = self.scalar(&ScalarKind::Boolean);
        self.used_scalars.insert(ScalarKind::Int);
        let common = |arguments: Option<String>, predicate: String| {
            let mut fields = Vec::with_capacity(4);
            if let Some(ty) = arguments {
                fields.push(FieldDef::new(n.field("arguments"), ty));
            }
            fields.push(FieldDef::new(n.field("distinct"), boolean.clone()));
            fields.push(FieldDef::new(n.field("filter"), bool_exp.clone()));
            fields.push(FieldDef::new(n.field("predicate"), predicate));
            fields
        };
        let int_cmp = self.ty(&format!(
            "{}_comparison_exp",
            self.scalar_base(&ScalarKind::Int)
        ));
        let select_column = self.table_ty(id, "_select_column");
        let count = self.table_ty(id, "_aggregate_bool_exp_count");
        let count_args = (!columns.is_empty()).then(|| format!("[{select_column}!]"));
        self.sdl.object(
            "input",
            &count,
            None,
            &common(count_args, format!("{int_cmp}!")),
        );
        let mut fields = vec![FieldDef::new(n.field("count"), count)];

        let booleans: Vec<String> = (columns.iter())
            .filter(|&&(i, _)| kinds[i] == ScalarKind::Boolean)
            .map(|&(_, name)| name.to_owned())
            .collect();
        if !booleans.is_empty() {
            self.used_scalars.insert(ScalarKind::Boolean);
            let bool_cmp = self.ty(&format!(
                "{}_comparison_exp",
                self.scalar_base(&ScalarKind::Boolean)
            ));
            for func in ["bool_and", "bool_or"] {
                let ty = self.table_ty(id, &format!("_aggregate_bool_exp_{func}"));
                // Hasura's name for the enum of the columns it may take.
                let base = &self.tables[id].base_name;
                let columns_enum = self.ty(&format!(
                    "{base}_select_column_{base}_aggregate_bool_exp_{func}_arguments_columns"
                ));
                self.sdl.enumeration(
                    &columns_enum,
                    Some(&format!(
                        "select \"{base}_aggregate_bool_exp_{func}_arguments_columns\" columns of table \"{base}\""
                    )),
                    &booleans,
                );
                let parts = common(Some(format!("{columns_enum}!")), format!("{bool_cmp}!"));
                self.sdl.object("input", &ty, None, &parts);
                fields.insert(0, FieldDef::new(n.field(func), ty));
            }
            fields.swap(0, 1);
        }
        self.sdl.object("input", &name, None, &fields);
    }
}
