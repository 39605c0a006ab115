//! SQL as data: an AST for the statements Grafton emits, and one renderer that
//! turns it into text plus ordered bind parameters for PostgreSQL or SQLite.
//!
//! No I/O happens here. Identifiers are always quoted and escaped, string
//! literals always escaped, and every request value is a [`Param`].

pub mod ast;
pub mod refs;
pub mod render;

pub use ast::*;
pub use refs::columns_of;
pub use render::{render, render_multiplexed, render_write, Dialect, Multiplexed, Statement};
