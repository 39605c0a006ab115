//! Calls out of a GraphQL request. An action's root field is answered by its
//! handler: Hasura's payload POSTed through one bounded client ([`Client`]), the
//! answer read up to a byte cap, checked against the action's output type and
//! shaped to the selection ([`output`]); a handler's error becomes Hasura's
//! GraphQL error ([`ActionError`]). A remote schema is introspected
//! ([`introspection`]) and a request's part for it sent to it ([`forward`]).

pub mod action;
mod client;
pub mod forward;
pub mod holes;
mod input_presets;
pub mod introspection;
pub mod join;
mod names;
pub mod output;
pub mod permissions;
mod print;
mod typenames;
pub mod webhook;

pub use action::{ActionCall, ActionError};
pub use client::{transformed, Answer, Client, ClientOptions};
