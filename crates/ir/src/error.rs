//! The IR layer's errors.

/// Why an operation could not be turned into IR.
#[derive(Debug, thiserror::Error)]
pub enum IrError {
    /// The operation is valid GraphQL but asks for something Grafton rejects.
    #[error("{0}")]
    Validation(String),
    /// The operation kind is not served yet.
    #[error("{0}")]
    NotSupported(String),
    /// A value written to a column does not match the column's JSON Schema.
    #[error("{message}")]
    InvalidInput {
        /// What is wrong, with where.
        message: String,
        /// Where in the operation's input (`insert_t.objects[0].details`).
        path: String,
        /// JSON pointer into the value where validation failed.
        pointer: String,
    },
    /// A value is not valid for its column's type (checked where the database does not).
    #[error("{0}")]
    DataException(String),
    /// A mutation with an action and another root field (an action's handler
    /// cannot take part in the database's transaction).
    #[error("a mutation with an action or a remote schema's field may have no database mutation beside it: neither can take part in the database's transaction, so a failure could not undo the rest")]
    MixedActions,
    /// A permission rule needs a session variable the request does not carry.
    #[error("missing session variable: \"{0}\"")]
    MissingSession(String),
}
