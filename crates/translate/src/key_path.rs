//! A condition through a many-to-one relationship whose foreign key the database
//! enforces, reading only the target's key columns (`{venue: {id: {_gt: X}}}`),
//! holds exactly when the row's own key columns are all set and satisfy it: the
//! key guarantees the target row, and its key columns equal the row's. So it is
//! written on the row's columns, without probing the target table once per row.

use crate::ctx::Ctx;
use grafton_ir::BoolExp;
use grafton_schema::{RelId, RelKind};
use grafton_sql::Expr;

impl Ctx<'_> {
    /// The condition for `BoolExp::Exists(rel, inner)` on the row aliased `alias`,
    /// written on the row's own columns; `None` when it needs the target's row.
    ///
    /// Only where a condition's truth is all that counts (no enclosing `NOT`):
    /// `EXISTS` is never NULL, while the rewritten condition is NULL where a
    /// comparison is, which a filter treats as false but a `NOT` would not.
    pub(crate) fn through_enforced_key(
        &mut self,
        rel: RelId,
        alias: &str,
        inner: &BoolExp,
    ) -> Option<Expr> {
        let r = &self.model.relationships[rel];
        // Only a key the database enforces may be trusted (PostgreSQL's; SQLite's
        // catalog marks none enforced, since it checks keys per connection).
        if self.negated || r.kind != RelKind::Object || !r.enforced {
            return None;
        }
        // The role's rule on the target would apply to the probed row: keep the probe.
        if self
            .table_rules(r.target)
            .is_some_and(|rules| rules.select.is_some() || !rules.redact.is_empty())
        {
            return None;
        }
        let (source, target) = (self.model.table(r.source), self.model.table(r.target));
        let same_types = r.mapping.iter().all(|&(s, t)| {
            let (a, b) = (&source.columns[s], &target.columns[t]);
            a.db_type == b.db_type && a.scalar == b.scalar
        });
        if !same_types {
            return None;
        }
        let remapped = remap(inner, &r.mapping)?;
        let (table, mapping) = (r.source, r.mapping.clone());
        let mut parts: Vec<Expr> = mapping
            .iter()
            .map(|&(s, _)| Expr::IsNull {
                expr: Box::new(self.column_value(table, alias, s)),
                negated: true,
            })
            .collect();
        parts.push(self.filter(table, alias, &remapped));
        Some(Expr::And(parts))
    }
}

/// `exp` over the target's key columns, rewritten over the source columns they are
/// mapped from; `None` if it reads anything else.
fn remap(exp: &BoolExp, mapping: &[(usize, usize)]) -> Option<BoolExp> {
    let all = |items: &[BoolExp]| -> Option<Vec<BoolExp>> {
        items.iter().map(|e| remap(e, mapping)).collect()
    };
    Some(match exp {
        BoolExp::And(items) => BoolExp::And(all(items)?),
        BoolExp::Or(items) => BoolExp::Or(all(items)?),
        BoolExp::Not(inner) => BoolExp::Not(Box::new(remap(inner, mapping)?)),
        BoolExp::Compare { column, op, value } => BoolExp::Compare {
            column: mapping.iter().find(|m| m.1 == *column)?.0,
            op: *op,
            value: value.clone(),
        },
        BoolExp::Exists(..)
        | BoolExp::ExistsIn(..)
        | BoolExp::CompareColumns { .. }
        | BoolExp::CompareText { .. }
        | BoolExp::DWithin(_)
        | BoolExp::Nband(_)
        | BoolExp::Aggregate(_)
        | BoolExp::Cast { .. }
        | BoolExp::CompareComputed { .. }
        | BoolExp::ExistsComputed(..) => return None,
    })
}
