//! One statement for many subscribers: the operation's `SELECT` becomes a scalar
//! subquery evaluated once per subscriber, its parameters read from that
//! subscriber's row of values instead of from bind parameters. The database parses
//! and plans it once and answers every subscriber of a cohort in one round trip.

use super::{Dialect, Renderer, Statement};
use crate::ast::{Param, Select};
use std::fmt::Write as _;

/// Renders `select` for many subscribers at once. The statement has one bind
/// parameter (`$1` / `?1`): a JSON array with one element per subscriber, each an
/// array of that subscriber's values in the order of the returned `params` (on
/// PostgreSQL each value is the parameter's text, on SQLite its native value).
/// Each result row is `(index, data)`: the subscriber's 0-based position in the
/// array and the operation's JSON for it.
pub fn render_multiplexed(select: &Select, dialect: Dialect) -> Multiplexed {
    let mut r = Renderer {
        dialect,
        sql: String::with_capacity(512),
        params: Vec::new(),
        bare_params: false,
        read: Some(Default::default()),
    };
    r.push(match dialect {
        Dialect::Postgres => "SELECT \"_subs\".\"i\" - 1, (",
        Dialect::Sqlite => "SELECT \"_subs\".\"key\", (",
    });
    r.select(select);
    r.push(match dialect {
        // jsonb: each `->>` reads the parsed value instead of parsing the text again.
        Dialect::Postgres => {
            ") FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS \"_subs\"(\"v\", \"i\")"
        }
        Dialect::Sqlite => ") FROM json_each(?1) AS \"_subs\"",
    });
    Multiplexed {
        tables: r.read.take().unwrap_or_default().into_iter().collect(),
        statement: Statement {
            sql: r.sql,
            params: r.params,
        },
    }
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
    /// Parameter `i` of the subscriber on the current row, typed as a bind parameter
    /// would be.
    pub(super) fn subscriber_value(&mut self, i: usize, p: &Param) {
        match self.dialect {
            Dialect::Postgres => {
                let _ = write!(self.sql, "(\"_subs\".\"v\"->>{i})::");
                self.sql_type(&p.ty);
                if p.list {
                    self.push("[]");
                }
            }
            Dialect::Sqlite => {
                let _ = write!(self.sql, "json_extract(\"_subs\".\"value\", '$[{i}]')");
            }
        }
    }
}
