//! GraphQL's names: what a remote sends is written into the schema's SDL only
//! once checked to be one.

/// GraphQL's own scalars: never renamed (by a prefix or suffix), never declared.
const BUILT_IN: [&str; 5] = ["String", "Int", "Float", "Boolean", "ID"];

/// Whether `name` is one of GraphQL's own scalars.
pub(crate) fn is_built_in(name: &str) -> bool {
    BUILT_IN.contains(&name)
}

/// `text` when it is a GraphQL name: what a remote sends is written into the
/// schema's SDL only once checked.
pub(crate) fn checked_name(text: &str) -> Result<&str, String> {
    let mut chars = text.chars();
    let first = chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic());
    match first && chars.all(|c| c == '_' || c.is_ascii_alphanumeric()) {
        true => Ok(text),
        false => Err(format!("'{text}' is not a GraphQL name")),
    }
}
