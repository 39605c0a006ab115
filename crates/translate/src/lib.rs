//! IR → SQL AST. One statement per operation: every root field is a scalar subquery
//! of one `SELECT`, and the database builds the whole `data` object as JSON.

mod aggregate;
mod aggregate_filter;
mod aggregate_rows;
mod connection;
mod ctx;
mod extension_ops;
mod filter;
mod key_path;
mod keyset;
pub mod mutation;
mod order;
mod read_columns;
mod record;
mod select;
mod source;

pub use select::{translate_query, translate_query_calling};
