//! Kriti, the template language of Hasura's request and response transforms:
//! read once ([`parse`]), evaluated per call over JSON ([`eval`]); and the
//! transforms of an action's, an event trigger's or a cron trigger's call
//! ([`transform`]), read when the metadata is (one that cannot be read is
//! refused there) and again, with the values, at each call.

pub mod eval;
pub mod parse;
pub mod transform;

pub use eval::Scope;
pub use parse::{Node, Part};
pub use transform::{Outgoing, RequestTransform, ResponseTransform};
