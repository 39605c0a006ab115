//! From a database catalog, a config file and a naming convention to a GraphQL schema
//! (SDL + validated `apollo-compiler` schema) and the model that maps it back to SQL.

pub mod api_limits;
pub mod build;
mod compare_op;
pub mod config;
pub mod hasura;
pub mod inconsistent;
pub mod inherited;
pub mod model;
pub mod naming;
pub mod remote;
mod sdl;
pub mod trusted;

pub use build::{
    build, build_for_role, build_view, ops_for, SchemaError, View, NODE_ID, NO_QUERIES,
};
pub use config::Config;
pub use model::*;
pub use naming::{Arg, Combinator, CompareOp, Convention, Naming};
