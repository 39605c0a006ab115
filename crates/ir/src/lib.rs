//! The query IR: a tree of selections over tables, built from a validated operation.
//!
//! Leaf values written as variables stay variables (bind parameters), so one plan
//! serves every request of the same shape. Variables that decide the *shape* (a whole
//! `where` object, an `@include(if:)`, an `order_by` enum) are inlined and reported in
//! [`Query::shape_vars`], so callers can key their plan cache on their values.

mod build;
mod error;
mod input;
mod joins;
mod json_path;
pub mod permissions;
pub mod relay;
mod rules;
mod types;

pub use build::{
    build_mutation, build_query, build_related, related_var, IrError, RELATED_ROOT,
    STREAM_CURSOR_FIELD, STREAM_CURSOR_VAR,
};
pub use joins::{mutation_joins, remote_joins, JoinSite};
pub use types::*;
