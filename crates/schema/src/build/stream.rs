//! Streaming subscriptions: `t_stream(batch_size, cursor, where)` on the
//! subscription root and its cursor input types, as Hasura names them.

use super::{Builder, FieldDef};
use crate::model::{RootField, RootKind, TableId};
use grafton_catalog::ScalarKind;

/// The enum of a cursor's direction.
pub(super) const CURSOR_ORDERING: &str = "cursor_ordering";

impl Builder<'_> {
    /// The `<t>_stream` root field of table `id` and its input types, when the role
    /// reads a column a cursor can follow (`columns`: readable (index, field name)).
    pub(super) fn write_stream(
        &mut self,
        id: TableId,
        columns: &[(usize, &str)],
        kinds: &[ScalarKind],
    ) -> Option<FieldDef> {
        let cursor_columns: Vec<FieldDef> = columns
            .iter()
            // Not JSON, and not PostGIS values: GeoJSON read back may round, and a
            // cursor that rounds skips or repeats rows.
            .filter(|(i, _)| {
                !matches!(
                    kinds[*i],
                    ScalarKind::Json
                        | ScalarKind::Jsonb
                        | ScalarKind::Geometry
                        | ScalarKind::Geography
                        | ScalarKind::Raster
                )
            })
            .map(|&(i, name)| FieldDef::new(name, self.scalar(&kinds[i])))
            .collect();
        if cursor_columns.is_empty() {
            return None;
        }
        let table = self.catalog.tables[self.tables[id].catalog_index]
            .name
            .clone();
        let value_input = self.table_ty(id, "_stream_cursor_value_input");
        let cursor_input = self.table_ty(id, "_stream_cursor_input");
        self.sdl.object(
            "input",
            &value_input,
            Some("Initial value of the column from where the streaming should start"),
            &cursor_columns,
        );
        let ordering = self.ty(CURSOR_ORDERING);
        self.sdl.object(
            "input",
            &cursor_input,
            Some(&format!("Streaming cursor of the table \"{table}\"")),
            &[
                FieldDef::new(
                    self.naming.field("initial_value"),
                    format!("{value_input}!"),
                )
                .describe(Some("Stream column input with initial value")),
                FieldDef::new(self.naming.field("ordering"), ordering)
                    .describe(Some("cursor ordering")),
            ],
        );
        self.streams = true;
        let roots = &self.tables[id].roots;
        let name = roots.name(RootKind::SelectStream).to_owned();
        let description = roots.describe(
            RootKind::SelectStream,
            format!("fetch data from the table in a streaming manner: \"{table}\""),
        );
        self.root_fields.insert(name.clone(), RootField::Stream(id));
        let args = vec![
            (self.naming.field("batch_size"), "Int!".to_owned()),
            (self.naming.field("cursor"), format!("[{cursor_input}]!")),
            (
                self.naming.arg(crate::naming::Arg::Where),
                self.table_ty(id, "_bool_exp"),
            ),
        ];
        Some(
            FieldDef::new(name, format!("[{}!]!", self.tables[id].type_name))
                .with_args(args)
                .describe(Some(&description)),
        )
    }

    /// `cursor_ordering`, once, when a table streams.
    pub(super) fn write_cursor_ordering(&mut self) {
        if !self.streams {
            return;
        }
        let ordering = self.ty(CURSOR_ORDERING);
        let values = ["ASC".to_owned(), "DESC".to_owned()];
        self.sdl
            .enumeration(&ordering, Some("ordering argument of a cursor"), &values);
    }
}
