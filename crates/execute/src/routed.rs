//! The PostgreSQL primary and its read replicas: where a read runs. The primary's
//! pool knows nothing of replicas, and each replica has a pool of its own, so the
//! path runs one way: `Database` → here → a replica or the primary.

use crate::error::ExecuteError;
use crate::postgres::PgDatabase;
use crate::replicas::{Read, Replicas, Route};
use std::sync::Arc;
use std::time::Duration;

/// The primary, and its read replicas when there are any.
#[derive(Clone)]
pub struct Routed {
    /// Writes, and reads that must see them, run here.
    pub(crate) primary: PgDatabase,
    /// Read replicas (`Database::with_read_replicas`).
    pub(crate) replicas: Option<Arc<Replicas>>,
}

impl Routed {
    /// The primary alone.
    pub(crate) fn new(primary: PgDatabase) -> Self {
        Self {
            primary,
            replicas: None,
        }
    }

    /// Runs `read` (a statement that writes nothing) where `route` says: on a
    /// replica when there are any and one is up, else on the primary.
    pub(crate) async fn read<R: Read>(
        &self,
        route: Route,
        timeout: Duration,
        read: &R,
    ) -> Result<R::Output, ExecuteError> {
        match (&self.replicas, route) {
            (Some(replicas), Route::Replica) => replicas.read(&self.primary, timeout, read).await,
            _ => read.run(&self.primary, timeout).await,
        }
    }
}
