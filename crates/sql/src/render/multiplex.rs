//! One statement for many subscribers. On PostgreSQL the operation's `SELECT`
//! becomes a scalar subquery evaluated once per subscriber, its parameters read
//! from that subscriber's row of values instead of from bind parameters: the
//! database parses and plans it once and answers a whole batch in one round trip.

use super::{Dialect, Renderer, Statement};
use crate::ast::{Param, Select};
use std::fmt::Write as _;

/// Renders `select` for many subscribers at once.
///
/// On PostgreSQL the statement has one bind parameter (`$1`): a JSON array with one
/// element per subscriber, each an array of that subscriber's values in the order
/// of the returned `params` (each value the parameter's text); the operation's
/// `SELECT` is a scalar subquery evaluated per element, and each result row is
/// `(index, data)`: the subscriber's 0-based position and its JSON.
///
/// SQLite cannot read an outer row from inside a subquery in `FROM` (no `LATERAL`),
/// which a paged list needs; there the statement is the operation's own, run once
/// per subscriber with its values (native ones) on one connection, in one call to
/// the database's thread.
pub fn render_multiplexed(select: &Select, dialect: Dialect) -> Multiplexed {
    let mut r = reading(dialect, dialect == Dialect::Postgres);
    if dialect == Dialect::Postgres {
        r.push("SELECT \"_subs\".\"i\" - 1 AS \"i\", (");
    }
    r.select(select);
    if dialect == Dialect::Postgres {
        // jsonb: each `->>` reads the parsed value instead of parsing the text again.
        r.push(") AS \"d\" FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS \"_subs\"(\"v\", \"i\")");
    }
    Multiplexed {
        tables: r.read.take().unwrap_or_default().into_iter().collect(),
        statement: Statement {
            sql: r.sql,
            params: r.params,
            compact: !r.padded,
        },
    }
}

/// Renders a top-level `SELECT` as [`render`](super::render) does, and the
/// tables (and views) it reads, as `(schema, name)`: what a cached answer of it
/// depends on.
pub fn render_reading(
    select: &Select,
    dialect: Dialect,
) -> (Statement, Vec<(Option<String>, String)>) {
    let mut r = reading(dialect, false);
    r.select(select);
    let tables = r.read.take().unwrap_or_default().into_iter().collect();
    (
        Statement {
            sql: r.sql,
            params: r.params,
            compact: !r.padded,
        },
        tables,
    )
}

/// A statement for many subscribers, and what it reads.
#[derive(Debug, Clone, PartialEq)]
pub struct Multiplexed {
    /// The statement; its `params` are the values each subscriber supplies.
    pub statement: Statement,
    /// The tables (and views) it reads, as `(schema, name)`: a write to one of them
    /// may change its answers.
    pub tables: Vec<(Option<String>, String)>,
}

impl Renderer {
    /// Parameter `i` of the subscriber on the current row (PostgreSQL), typed as a
    /// bind parameter would be.
    pub(super) fn subscriber_value(&mut self, i: usize, p: &Param) {
        let _ = write!(self.sql, "(\"_subs\".\"v\"->>{i})::");
        self.sql_type(&p.ty);
        if p.list {
            self.push("[]");
        }
    }
}

/// A renderer that notes the tables it reads.
fn reading(dialect: Dialect, multiplexed: bool) -> Renderer {
    Renderer {
        dialect,
        sql: String::with_capacity(512),
        params: Vec::new(),
        bare_params: false,
        read: Some(Default::default()),
        multiplexed,
        renamed: None,
        padded: false,
    }
}
