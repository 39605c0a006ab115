//! PostgreSQL builds a response as one JSON value; past a size, Grafton should not
//! receive it at all. The guard returns the JSON only when it is small enough, and
//! its size always, so a too-large answer never crosses the wire.

use super::Statement;

/// [`size_guard_postgres`] for a multiplexed statement (`render_multiplexed`, whose
/// rows are `(i, d)`): each subscriber's JSON when it is at most `max_bytes` long,
/// and its length, so no answer past the limit crosses the wire.
pub fn size_guard_multiplexed(statement: &Statement, max_bytes: u64) -> Statement {
    let sql = format!(
        "SELECT \"g\".\"i\", CASE WHEN octet_length(\"g\".\"d\"::text) <= {max_bytes} THEN \"g\".\"d\" END, \
         octet_length(\"g\".\"d\"::text) FROM ({} OFFSET 0) AS \"g\"",
        statement.sql
    );
    Statement {
        sql,
        params: statement.params.clone(),
        compact: statement.compact,
    }
}

/// Wraps a PostgreSQL query whose one column is `data` (JSON): column 1 becomes
/// that JSON when it is at most `max_bytes` long (else NULL), column 2 its length.
/// `OFFSET 0` keeps the planner from inlining the subquery, which would build the
/// JSON once per reference.
pub fn size_guard_postgres(statement: &Statement, max_bytes: u64) -> Statement {
    let sql = format!(
        "SELECT CASE WHEN octet_length(\"g\".\"data\"::text) <= {max_bytes} THEN \"g\".\"data\" END, \
         octet_length(\"g\".\"data\"::text) FROM ({} OFFSET 0) AS \"g\"",
        statement.sql
    );
    Statement {
        sql,
        params: statement.params.clone(),
        compact: statement.compact,
    }
}
