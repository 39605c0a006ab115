//! Grafton's integration tests: one binary, one SQLite file and one
//! PostgreSQL database (see `common`), real servers over HTTP.

#[path = "../common/mod.rs"]
mod common;

mod cache;
mod edge_cases;
mod filters;
mod http;
mod naming;
mod ordering;
mod row_keys;
mod shapes;
mod startup;
