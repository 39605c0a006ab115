//! Trace spans of database work (target `grafton::trace`, which only the
//! OpenTelemetry layer listens to): one per statement, with its SQL text when
//! `--otlp-include-sql` asks for it (never the values bound to it).

use std::sync::atomic::{AtomicBool, Ordering};

/// Database spans carry their SQL (process-wide, like the trace exporter itself).
static STATEMENTS: AtomicBool = AtomicBool::new(false);

/// Whether database spans carry their SQL text.
pub fn statements() -> bool {
    STATEMENTS.load(Ordering::Relaxed)
}

/// Sets whether database spans carry their SQL text.
pub fn set_statements(on: bool) {
    STATEMENTS.store(on, Ordering::Relaxed);
}

/// The span of one database round trip, named `db.<operation>`: `db.query` (a
/// query's one statement), `db.transaction` (a mutation), `db.statement` (each
/// statement inside one). Only inside a traced request: elsewhere (tracing off,
/// or a request not sampled) it is `Span::none()`, which costs nothing.
pub fn span(dialect: grafton_sql::Dialect, operation: &str, sql: Option<&str>) -> tracing::Span {
    if tracing::Span::current().is_none() {
        return tracing::Span::none();
    }
    let system = match dialect {
        grafton_sql::Dialect::Postgres => "postgresql",
        grafton_sql::Dialect::Sqlite => "sqlite",
    };
    let span = tracing::info_span!(
        target: "grafton::trace",
        "db",
        otel.name = format!("db.{operation}"),
        otel.kind = "client",
        db.system.name = system,
        db.operation.name = operation,
        db.query.text = tracing::field::Empty,
    );
    if let Some(sql) = sql.filter(|_| statements()) {
        span.record("db.query.text", sql);
    }
    span
}
