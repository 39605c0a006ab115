//! Grafton's engine: documents and plans (with their caches), execution, the
//! mutation runner and permissions at run time. It speaks no transport: the server
//! crate feeds it requests from HTTP and maps its errors to responses.

pub mod action_log;
pub mod admission;
mod build;
mod caller;
mod consistent;
pub mod engine;
mod enum_tables;
pub mod error;
pub mod events;
mod explain;
pub mod gather;
mod lenient;
pub mod limits;
pub mod live;
pub mod metrics;
mod mutate;
mod options;
pub mod planner;
mod reads;
mod relay;
pub mod remotes;
pub mod request;
pub mod response_cache;
pub mod schedules;
pub mod schemas;
pub mod shared;
pub mod trusted;
mod webhooks;

pub use build::{build, schemas_from_catalog, BuildError, EngineOptions, Reloaded};
pub use engine::{Caller, Engine};
pub use error::EngineError;
pub use limits::{LimitExceeded, LimitKind, RoleLimits, ServerLimits};
pub use live::{Delivery, LiveOptions, Resume, Sink, Subscription};
pub use metrics::{Metrics, RequestInfo};
pub use planner::{Action, Checked, Explained, ExplainedFields, Plan, PlanKind, Planner, Prepared};
pub use request::types::RateLimited;
pub use request::types::{Answer, GraphqlRequest, ShapeError, Transport};
pub use schemas::{RoleSchema, Schemas, NO_PERMISSIONS};
