//! Queries, as the README's "The GraphQL surface" describes them: one binary, one
//! SQLite file and one PostgreSQL database (the demo dataset and
//! `fixtures/sql/queries.sql`, see `common`), real servers over HTTP, one file per
//! feature.

#[path = "../common/mod.rs"]
mod common;

/// The WebSocket client the live-query cases use.
#[path = "../subscriptions/client.rs"]
#[allow(dead_code)]
mod client;

mod aggregate_predicates;
mod aggregates;
mod cache;
mod distinct_on;
mod documents;
mod errors;
mod filters;
mod fresh_server;
mod http;
mod introspection;
mod ltree;
mod multiplexed;
mod naming;
mod nesting;
mod ordering;
mod pagination;
mod postgis;
mod postgres_types;
mod raster;
mod relationships;
mod relay;
mod response_cache;
mod row_keys;
mod startup;
mod tables;
mod values;
mod wide_objects;

/// The WebSocket client's admin secret (`postgres_types`' servers have none: all
/// is admin).
pub const ADMIN_SECRET: &str = "unused";
