//! Execution errors, classified so the HTTP edge can pick a stable error code.

/// What kind of database failure happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DbErrorKind {
    /// Invalid input value (bad uuid, out of range, invalid regex…): SQLSTATE class 22.
    DataException,
    /// A pattern ending in its escape character (`_like: "a\\"`, SQLSTATE 22025):
    /// Hasura answers it `bad-request` rather than as a data exception.
    InvalidEscape,
    /// A constraint rejected the statement: SQLSTATE class 23.
    ConstraintViolation,
    /// The database could not be reached or the pool timed out.
    Unavailable,
    /// The statement is too deep or too large for the database to compile (SQLite's
    /// expression-depth limit): the request, not the database, is at fault.
    TooComplex,
    /// The statement ran past its time limit and was cancelled.
    Timeout,
    /// Every connection stayed busy past the pool's wait: the server is overloaded.
    Busy,
    /// A serialization failure or deadlock (SQLSTATE 40001, 40P01), such as a hot
    /// standby cancelling a read that conflicts with replay: worth running again.
    Conflict,
    /// Anything else.
    Other,
}

/// Why a statement could not be executed.
#[derive(Debug, thiserror::Error)]
pub enum ExecuteError {
    /// The database URL or options are wrong.
    #[error("{0}")]
    Config(String),
    /// Could not connect.
    #[error("cannot connect to the database: {0}")]
    Connect(String),
    /// The database rejected or failed the statement.
    #[error("{message}")]
    Database {
        /// Classification for the error code.
        kind: DbErrorKind,
        /// The database's message.
        message: String,
    },
    /// A constraint rejected a write.
    #[error("{}", .0.message)]
    Constraint(Box<ConstraintViolation>),
    /// The statement ran past its time limit and was stopped in the database.
    #[error("the request ran past its time limit of {}s and was cancelled", .0.as_secs_f64())]
    Timeout(std::time::Duration),
    /// The response is larger than allowed (its size in bytes, as far as known).
    #[error("the response is {0} bytes, more than allowed")]
    TooLarge(u64),
    /// Reading the catalog failed.
    #[error("cannot read the database catalog: {0}")]
    Catalog(#[from] grafton_catalog::CatalogError),
}

/// Which constraint a write violated, as far as the database says.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ConstraintViolation {
    /// The database's message.
    pub message: String,
    /// The constraint's name, when known.
    pub constraint: Option<String>,
    /// The table, when known.
    pub table: Option<String>,
    /// The offending columns, when known.
    pub columns: Vec<String>,
}

/// `Key (a, b)=(1, 2) already exists.` → `[a, b]` (Postgres's unique and foreign key details).
fn key_columns(detail: &str) -> Vec<String> {
    let Some(rest) = detail.strip_prefix("Key (") else {
        return Vec::new();
    };
    let Some(end) = rest.find(")=(") else {
        return Vec::new();
    };
    rest[..end]
        .split(", ")
        .map(|c| c.trim_matches('"').to_owned())
        .collect()
}

/// SQLite's `UNIQUE constraint failed: t.a, t.b` / `NOT NULL constraint failed: t.a` /
/// `CHECK constraint failed: name`.
fn sqlite_constraint(message: &str) -> ConstraintViolation {
    let mut v = ConstraintViolation {
        message: message.to_owned(),
        ..Default::default()
    };
    let Some((kind, rest)) = message.split_once(" constraint failed: ") else {
        return v;
    };
    match kind {
        "UNIQUE" | "NOT NULL" | "PRIMARY KEY" => {
            for qualified in rest.split(", ") {
                if let Some((table, column)) = qualified.split_once('.') {
                    v.table = Some(table.to_owned());
                    v.columns.push(column.to_owned());
                }
            }
        }
        "CHECK" => v.constraint = Some(rest.to_owned()),
        _ => {}
    }
    v
}

impl ExecuteError {
    /// The classification, for errors that came from the database.
    pub fn kind(&self) -> DbErrorKind {
        match self {
            Self::Database { kind, .. } => *kind,
            Self::Constraint(_) => DbErrorKind::ConstraintViolation,
            Self::Connect(_) => DbErrorKind::Unavailable,
            Self::Timeout(_) => DbErrorKind::Timeout,
            _ => DbErrorKind::Other,
        }
    }
}

impl From<tokio_postgres::Error> for ExecuteError {
    fn from(e: tokio_postgres::Error) -> Self {
        let (kind, message) = match e.as_db_error() {
            Some(db) if db.code().code().starts_with("23") => {
                let mut columns: Vec<String> =
                    db.column().map(|c| vec![c.to_owned()]).unwrap_or_default();
                if columns.is_empty() {
                    columns = db.detail().map(key_columns).unwrap_or_default();
                }
                return Self::Constraint(Box::new(ConstraintViolation {
                    message: db.message().to_owned(),
                    constraint: db.constraint().map(str::to_owned),
                    table: db.table().map(str::to_owned),
                    columns,
                }));
            }
            Some(db) => {
                let code = db.code().code();
                // 08: connection exception; 57P01–57P03: the server is shutting down
                // or starting; 3D000: the database is gone.
                let gone = code.starts_with("08") || code.starts_with("57P0") || code == "3D000";
                let kind = if gone {
                    DbErrorKind::Unavailable
                } else if code == "40001" || code == "40P01" {
                    DbErrorKind::Conflict
                } else if code == "57014" {
                    // query_canceled: statement_timeout, or Grafton's own cancel.
                    DbErrorKind::Timeout
                } else if code == "22025" {
                    DbErrorKind::InvalidEscape
                } else if code.starts_with("22") {
                    DbErrorKind::DataException
                } else if code.starts_with("23") {
                    DbErrorKind::ConstraintViolation
                } else {
                    DbErrorKind::Other
                };
                (kind, db.message().to_owned())
            }
            // A closed connection, or an I/O failure talking to the server.
            None if e.is_closed() || io_failure(&e) => (DbErrorKind::Unavailable, e.to_string()),
            None => (DbErrorKind::Other, e.to_string()),
        };
        Self::Database { kind, message }
    }
}

/// SQLite's refusals of statements nested or sized past its compile-time limits.
fn too_complex(message: &str) -> bool {
    [
        "Expression tree is too large",
        "parser stack overflow",
        "too many terms in compound SELECT",
        "too many SQL variables",
        "variable number must be between",
    ]
    .iter()
    .any(|m| message.contains(m))
}

/// Whether a client error was caused by the connection's I/O (not by the server).
fn io_failure(e: &tokio_postgres::Error) -> bool {
    std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>())
}

/// SQLite's message without the statement: rusqlite's `SqlInputError` displays the
/// whole SQL text (other roles' permission rules included), which must never reach
/// a client. The statement is logged at debug level by the caller that ran it.
fn sqlite_message(e: &rusqlite::Error) -> String {
    match e {
        rusqlite::Error::SqlInputError { msg, .. } => msg.clone(),
        rusqlite::Error::SqliteFailure(_, Some(m)) => m.clone(),
        other => other.to_string(),
    }
}

impl From<rusqlite::Error> for ExecuteError {
    fn from(e: rusqlite::Error) -> Self {
        use rusqlite::ffi::ErrorCode;
        let message = sqlite_message(&e);
        let kind = match e.sqlite_error_code() {
            Some(ErrorCode::ConstraintViolation) => {
                return Self::Constraint(Box::new(sqlite_constraint(&message)));
            }
            Some(ErrorCode::TypeMismatch) | Some(ErrorCode::TooBig) => DbErrorKind::DataException,
            _ if message.contains(crate::sqlite_json::ERROR_PREFIX) => DbErrorKind::DataException,
            Some(ErrorCode::CannotOpen) | Some(ErrorCode::DatabaseBusy) => DbErrorKind::Unavailable,
            Some(ErrorCode::OperationInterrupted) => DbErrorKind::Timeout,
            _ if too_complex(&message) => DbErrorKind::TooComplex,
            _ => DbErrorKind::Other,
        };
        Self::Database { kind, message }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgres_key_details() {
        assert_eq!(key_columns("Key (name)=(x) already exists."), ["name"]);
        assert_eq!(
            key_columns("Key (a, \"B c\")=(1, 2) is not present in table \"t\"."),
            ["a", "B c"]
        );
        assert!(key_columns("Failing row contains (1).").is_empty());
    }

    #[test]
    fn sqlite_messages() {
        let v = sqlite_constraint("UNIQUE constraint failed: venues.name, venues.city");
        assert_eq!(v.table.as_deref(), Some("venues"));
        assert_eq!(v.columns, ["name", "city"]);
        let v = sqlite_constraint("CHECK constraint failed: positive_capacity");
        assert_eq!(v.constraint.as_deref(), Some("positive_capacity"));
        let v = sqlite_constraint("FOREIGN KEY constraint failed");
        assert!(v.constraint.is_none() && v.columns.is_empty());
    }
}
