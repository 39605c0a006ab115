//! Which tables a mutation writes, so live queries reading them poll at once.

use grafton_ir::{Action, InsertRow, Mutation, MutationRoot, Write};
use grafton_schema::{SchemaModel, TableId};
use std::collections::BTreeSet;

/// The tables `mutation` writes: each root write's table and those its nested
/// inserts reach. (Cascades and triggers are not seen; live queries catch them at
/// their next interval.)
pub(crate) fn tables_written(model: &SchemaModel, mutation: &Mutation) -> BTreeSet<TableId> {
    let mut out = BTreeSet::new();
    let writes = mutation.root.iter().flat_map(|(_, root)| match root {
        MutationRoot::Write(w) => std::slice::from_ref(w),
        MutationRoot::Many(ws) => ws.as_slice(),
        MutationRoot::Typename(_) | MutationRoot::Call(_) => &[],
    });
    for w in writes {
        write(model, w, &mut out);
    }
    // A mutation function may write anything; what it returns is the best guess.
    for (_, root) in &mutation.root {
        if let MutationRoot::Call(rows) = root {
            out.insert(rows.table);
        }
    }
    out
}

fn write(model: &SchemaModel, w: &Write, out: &mut BTreeSet<TableId>) {
    out.insert(w.table);
    if let Action::Insert { rows, .. } = &w.action {
        rows.iter().for_each(|r| nested(model, r, out));
    }
}

fn nested(model: &SchemaModel, row: &InsertRow, out: &mut BTreeSet<TableId>) {
    for n in row.objects.iter().chain(&row.arrays) {
        if let Some(rel) = model.relationships.get(n.rel) {
            out.insert(rel.target);
        }
        n.rows.iter().for_each(|r| nested(model, r, out));
    }
}

/// The names of the `written` tables and of every table whose foreign keys reach
/// one of them, transitively (a cascade or `SET NULL` writes those too): what
/// live queries and cached answers that read them must hear of.
pub(crate) fn changed_names(model: &SchemaModel, written: &BTreeSet<TableId>) -> Vec<String> {
    let catalog = &model.catalog;
    let mut names: BTreeSet<(&str, &str)> = (written.iter())
        .map(|&t| model.table(t))
        .map(|t| (t.schema.as_str(), t.name.as_str()))
        .collect();
    loop {
        let before = names.len();
        for t in &catalog.tables {
            let refers = (t.foreign_keys.iter())
                .any(|fk| names.contains(&(fk.ref_schema.as_str(), fk.ref_table.as_str())));
            if refers {
                names.insert((t.schema.as_str(), t.name.as_str()));
            }
        }
        if names.len() == before {
            break;
        }
    }
    let mut out: Vec<String> = names.into_iter().map(|(_, n)| n.to_owned()).collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Whether `mutation` may write tables it does not name: it calls a function, or
/// writes through a view (whose base tables are not known here).
pub(crate) fn writes_unnamed(
    model: &SchemaModel,
    mutation: &Mutation,
    written: &BTreeSet<TableId>,
) -> bool {
    let calls = (mutation.root.iter()).any(|(_, r)| matches!(r, MutationRoot::Call(_)));
    let views = (written.iter()).any(|&t| model.table(t).kind == grafton_catalog::TableKind::View);
    calls || views
}
