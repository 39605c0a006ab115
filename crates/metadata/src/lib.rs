//! Hasura's metadata API over metadata stored in the database: the metadata
//! document and the commands that change it (`commands`), the store that keeps it
//! versioned and shared by every instance on the database (`store`), and the
//! service that tries each change before it is kept and keeps every instance
//! serving the latest version (`service`).

mod answers;
mod change;
pub mod commands;
pub mod document;
mod event_log;
mod generated;
mod query;
mod refusal;
mod scheduled_events;
pub mod service;
mod start;
pub mod store;

pub use answers::consistency;
pub use query::{RUN_SQL_MAX_BYTES, RUN_SQL_TIMEOUT};
pub use refusal::Refusal;
pub use service::{Metadata, Options, ReloadError, Settings, Source};
pub use start::{first_metadata, with_document, Start};
pub use store::{Store, StoreError};
