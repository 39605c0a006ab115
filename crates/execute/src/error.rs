//! Execution errors, classified so the HTTP edge can pick a stable error code.

/// What kind of database failure happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DbErrorKind {
    /// Invalid input value (bad uuid, out of range, invalid regex…): SQLSTATE class 22.
    DataException,
    /// A constraint rejected the statement: SQLSTATE class 23.
    ConstraintViolation,
    /// The database could not be reached or the pool timed out.
    Unavailable,
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
    /// Reading the catalog failed.
    #[error("cannot read the database catalog: {0}")]
    Catalog(#[from] grafton_catalog::CatalogError),
}

impl ExecuteError {
    /// The classification, for errors that came from the database.
    pub fn kind(&self) -> DbErrorKind {
        match self {
            Self::Database { kind, .. } => *kind,
            Self::Connect(_) => DbErrorKind::Unavailable,
            _ => DbErrorKind::Other,
        }
    }
}

impl From<tokio_postgres::Error> for ExecuteError {
    fn from(e: tokio_postgres::Error) -> Self {
        let (kind, message) = match e.as_db_error() {
            Some(db) => {
                let code = db.code().code();
                let kind = if code.starts_with("22") {
                    DbErrorKind::DataException
                } else if code.starts_with("23") {
                    DbErrorKind::ConstraintViolation
                } else {
                    DbErrorKind::Other
                };
                (kind, db.message().to_owned())
            }
            None if e.is_closed() => (DbErrorKind::Unavailable, e.to_string()),
            None => (DbErrorKind::Other, e.to_string()),
        };
        Self::Database { kind, message }
    }
}

impl From<rusqlite::Error> for ExecuteError {
    fn from(e: rusqlite::Error) -> Self {
        use rusqlite::ffi::ErrorCode;
        let kind = match e.sqlite_error_code() {
            Some(ErrorCode::ConstraintViolation) => DbErrorKind::ConstraintViolation,
            Some(ErrorCode::TypeMismatch) | Some(ErrorCode::TooBig) => DbErrorKind::DataException,
            Some(ErrorCode::CannotOpen) | Some(ErrorCode::DatabaseBusy) => DbErrorKind::Unavailable,
            _ => DbErrorKind::Other,
        };
        Self::Database {
            kind,
            message: e.to_string(),
        }
    }
}
