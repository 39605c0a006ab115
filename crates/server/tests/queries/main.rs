//! Queries, as the README's "The GraphQL surface" describes them: one binary, one
//! SQLite file and one PostgreSQL database (the demo dataset and
//! `fixtures/sql/queries.sql`, see `common`), real servers over HTTP, one file per
//! feature.

#[path = "../common/mod.rs"]
mod common;

mod aggregates;
mod cache;
mod distinct_on;
mod documents;
mod errors;
mod filters;
mod http;
mod introspection;
mod naming;
mod nesting;
mod ordering;
mod pagination;
mod relationships;
mod row_keys;
mod startup;
mod tables;
mod values;
