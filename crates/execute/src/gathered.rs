//! A query that gathers the requests of its shape waiting behind it: it holds a
//! connection first, then asks who is waiting, and runs either its own statement or
//! the multiplexed one (`grafton_sql::render_multiplexed`) answering all of them.

use crate::error::ExecuteError;
use crate::poll::Answer;
use crate::postgres::PgDatabase;
use crate::{Budget, Database, Route};
use grafton_sql::Statement;
use serde_json::{Map, Value};
use std::time::Duration;

/// What a gathered query answered.
#[derive(Debug)]
pub enum Gathered {
    /// Nobody else was waiting: its own statement's JSON.
    One(String),
    /// The batch's answers, by index (0: the caller's own).
    Many(Vec<Answer>),
}

/// The statements of a query that may be gathered, and what it may take.
pub struct GatherRead<'a> {
    /// The query's own statement.
    pub single: &'a Statement,
    /// Its variables (session variables included), for the statement alone.
    pub variables: &'a Map<String, Value>,
    /// The same query for many requests at once.
    pub multiplexed: &'a Statement,
    /// The time and bytes of one request.
    pub budget: Budget,
    /// Called once a connection is held (again after a replica failed): `None`
    /// runs the statement alone, `Some(batch)` runs the multiplexed one for it.
    pub gather: &'a (dyn Fn() -> Option<String> + Sync),
}

impl Database {
    /// Whether a read sent where `route` says would wait for a connection now (every
    /// connection of its pool open and in use). SQLite: never gathered, so false.
    pub fn saturated(&self, route: Route) -> bool {
        match self {
            Self::Postgres(db) => match (&db.replicas, route) {
                (Some(replicas), Route::Replica) => {
                    (replicas.saturated()).unwrap_or_else(|| db.primary.saturated())
                }
                _ => db.primary.saturated(),
            },
            Self::Sqlite(_) => false,
        }
    }

    /// Runs `read` where `route` says: its own statement, or, when `gather` brings
    /// others, the multiplexed statement. A batch gets half of one request's time
    /// (it is stopped past it; the caller then runs each request alone, so only a
    /// slow one fails). SQLite runs its own statement.
    pub async fn query_gathered(
        &self,
        read: &GatherRead<'_>,
        route: Route,
    ) -> Result<Gathered, ExecuteError> {
        match self {
            Self::Postgres(db) => db.read(route, read.budget.timeout, read).await,
            Self::Sqlite(db) => {
                let answer = db.query_json(read.single, read.variables, read.budget);
                answer.await.map(Gathered::One)
            }
        }
    }
}

impl crate::replicas::Read for GatherRead<'_> {
    type Output = Gathered;

    async fn run(&self, db: &PgDatabase, timeout: Duration) -> Result<Gathered, ExecuteError> {
        let held = db.hold().await?;
        let max = self.budget.max_bytes;
        match (self.gather)() {
            None => {
                let work = async |client: &crate::pg_pool::Object| {
                    crate::postgres::query_json_on(client, self.single, self.variables, max).await
                };
                held.run(timeout, work).await.map(Gathered::One)
            }
            Some(batch) => {
                let work = async |client: &crate::pg_pool::Object| {
                    let st = self.multiplexed;
                    crate::poll::poll_on(client, st, &batch, max, usize::MAX).await
                };
                held.run(timeout / 2, work).await.map(Gathered::Many)
            }
        }
    }
}

impl PgDatabase {
    /// Every connection open and none idle.
    pub(crate) fn saturated(&self) -> bool {
        let s = self.pool_status();
        s.available == 0 && s.size >= s.max_size
    }
}
