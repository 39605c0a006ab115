//! Read replicas (PostgreSQL streaming standbys). Each has its own pool; a read goes
//! to the replica with the fewest reads in flight (round-robin among equals). A
//! replica that fails a health check or a statement for want of a connection is
//! taken out, and the read is retried on another replica or on the primary; the
//! health check (every [`CHECK_EVERY`]) puts it back once it answers again. Writes
//! never come here: only `Database::query_json` and `Database::poll` route.

use crate::error::{DbErrorKind, ExecuteError};
use crate::postgres::PgDatabase;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

/// How often each replica is checked (and its lag measured).
pub const CHECK_EVERY: Duration = Duration::from_secs(1);

/// How long a check may take before the replica counts as down.
const CHECK_TIMEOUT: Duration = Duration::from_secs(1);

/// A statement that writes nothing, which a replica or the primary can run within
/// a time limit (two kinds: a query's JSON, a subscription poll's answers).
pub(crate) trait Read: Sync {
    /// What it returns.
    type Output: Send;
    /// Runs it on `db` for at most `timeout`.
    fn run<'a>(
        &'a self,
        db: &'a PgDatabase,
        timeout: Duration,
    ) -> impl std::future::Future<Output = Result<Self::Output, ExecuteError>> + Send + 'a;
}

/// Where a read may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Route {
    /// On a replica when one is up, else on the primary.
    Replica,
    /// On the primary (a read that must see a write just made).
    Primary,
}

/// One replica's state, for `/metrics` and `/readyz`.
#[derive(Debug, Clone)]
pub struct ReplicaStatus {
    /// `host:port/database`, never the credentials.
    pub name: String,
    /// Serving reads now.
    pub up: bool,
    /// Seconds of the primary's commits it has not replayed (0 when caught up).
    pub lag_seconds: f64,
    /// Bytes of the primary's WAL it has not replayed.
    pub lag_bytes: u64,
    /// Reads it answered.
    pub reads: u64,
    /// Failed checks and statements (each takes it out, or keeps it out).
    pub failures: u64,
    /// Its pool.
    pub pool: crate::PoolStatus,
}

/// A replica and what is known of it.
struct Replica {
    name: String,
    db: PgDatabase,
    up: AtomicBool,
    in_flight: AtomicUsize,
    /// `f64` bits.
    lag_seconds: AtomicU64,
    lag_bytes: AtomicU64,
    reads: AtomicU64,
    failures: AtomicU64,
}

impl Replica {
    /// Takes it out until a check passes; logs only the change.
    fn take_out(&self, why: &str) {
        self.failures.fetch_add(1, Ordering::Relaxed);
        if self.up.swap(false, Ordering::Relaxed) {
            tracing::warn!(replica = %self.name, "read replica taken out: {why}");
        }
    }
}

/// Every replica of one primary.
pub(crate) struct Replicas {
    list: Vec<Replica>,
    next: AtomicUsize,
}

/// Counts a read in flight on a replica while it lives.
struct InFlight<'a>(&'a AtomicUsize);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Replicas {
    /// Pools for `urls` (connections are made on first use: a replica that is down
    /// at start-up is only taken out), checked once now and then every
    /// [`CHECK_EVERY`] by a task that ends with them.
    pub(crate) async fn open(
        urls: &[String],
        options: crate::PoolOptions,
        primary: &PgDatabase,
    ) -> Result<Arc<Self>, ExecuteError> {
        let mut list = Vec::with_capacity(urls.len());
        for url in urls {
            list.push(Replica {
                name: display_name(url),
                db: PgDatabase::lazy(url, options)?,
                up: AtomicBool::new(false),
                in_flight: AtomicUsize::new(0),
                lag_seconds: AtomicU64::new(0),
                lag_bytes: AtomicU64::new(0),
                reads: AtomicU64::new(0),
                failures: AtomicU64::new(0),
            });
        }
        let replicas = Arc::new(Self {
            list,
            next: AtomicUsize::new(0),
        });
        replicas.check(primary).await;
        for r in &replicas.list {
            if !r.up.load(Ordering::Relaxed) {
                tracing::warn!(replica = %r.name, "read replica not answering at start-up; reads go to the primary until it does");
            }
        }
        tokio::spawn(watch(Arc::downgrade(&replicas), primary.clone()));
        Ok(replicas)
    }

    /// Checks every replica once, measuring its lag behind `primary`.
    async fn check(&self, primary: &PgDatabase) {
        let lsn = tokio::time::timeout(CHECK_TIMEOUT, primary.current_lsn())
            .await
            .ok()
            .and_then(Result::ok);
        let checks = self.list.iter().map(|r| async {
            match tokio::time::timeout(CHECK_TIMEOUT, r.db.replay_lag(lsn.as_deref())).await {
                Ok(Ok((seconds, bytes))) => {
                    r.lag_seconds.store(seconds.to_bits(), Ordering::Relaxed);
                    r.lag_bytes.store(bytes, Ordering::Relaxed);
                    if !r.up.swap(true, Ordering::Relaxed) {
                        tracing::info!(replica = %r.name, "read replica serving reads");
                    }
                }
                Ok(Err(e)) => r.take_out(&e.to_string()),
                Err(_) => r.take_out("its health check timed out"),
            }
        });
        futures_util::future::join_all(checks).await;
    }

    /// The replica to read from next, among those up and not in `tried`: the fewest
    /// reads in flight, starting the scan at a rotating place so equals take turns.
    fn pick(&self, tried: &[usize]) -> Option<usize> {
        let n = self.list.len();
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        (0..n)
            .map(|k| (start + k) % n)
            .filter(|i| !tried.contains(i) && self.list[*i].up.load(Ordering::Relaxed))
            .min_by_key(|i| self.list[*i].in_flight.load(Ordering::Relaxed))
    }

    /// Whether every replica up has every connection in use; `None` when none is
    /// up (the primary serves).
    pub(crate) fn saturated(&self) -> Option<bool> {
        let mut up = (self.list.iter()).filter(|r| r.up.load(Ordering::Relaxed));
        let first = up.next()?;
        Some(first.db.saturated() && up.all(|r| r.db.saturated()))
    }

    /// Runs `read` on a replica, moving to the next one (and at last to `primary`)
    /// when a replica cannot serve it; each try gets the time left of `timeout`.
    pub(crate) async fn read<R: Read>(
        &self,
        primary: &PgDatabase,
        timeout: Duration,
        read: &R,
    ) -> Result<R::Output, ExecuteError> {
        let deadline = Instant::now() + timeout;
        let mut tried = Vec::new();
        while let Some(i) = self.pick(&tried) {
            let replica = &self.list[i];
            replica.in_flight.fetch_add(1, Ordering::Relaxed);
            let _counted = InFlight(&replica.in_flight);
            let left = deadline.saturating_duration_since(Instant::now());
            match read.run(&replica.db, left).await {
                Err(e) if e.kind() == DbErrorKind::Unavailable => {
                    replica.take_out(&e.to_string());
                    tried.push(i);
                }
                // A hot standby cancels a read whose rows replay must remove: the
                // replica is fine, the primary answers this one.
                Err(e) if e.kind() == DbErrorKind::Conflict => break,
                answer => {
                    replica.reads.fetch_add(1, Ordering::Relaxed);
                    return answer;
                }
            }
        }
        let left = deadline.saturating_duration_since(Instant::now());
        read.run(primary, left).await
    }

    /// Each replica's state.
    pub(crate) fn status(&self) -> Vec<ReplicaStatus> {
        self.list
            .iter()
            .map(|r| {
                let s = r.db.pool_status();
                ReplicaStatus {
                    name: r.name.clone(),
                    up: r.up.load(Ordering::Relaxed),
                    lag_seconds: f64::from_bits(r.lag_seconds.load(Ordering::Relaxed)),
                    lag_bytes: r.lag_bytes.load(Ordering::Relaxed),
                    reads: r.reads.load(Ordering::Relaxed),
                    failures: r.failures.load(Ordering::Relaxed),
                    pool: crate::PoolStatus {
                        max: s.max_size,
                        open: s.size,
                        idle: s.available,
                        waiting: s.waiting,
                    },
                }
            })
            .collect()
    }
}

/// Checks the replicas every [`CHECK_EVERY`] until they are dropped.
async fn watch(replicas: Weak<Replicas>, primary: PgDatabase) {
    let mut tick = tokio::time::interval(CHECK_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await;
    loop {
        tick.tick().await;
        let Some(replicas) = replicas.upgrade() else {
            return;
        };
        replicas.check(&primary).await;
    }
}

impl PgDatabase {
    /// The primary's current WAL position (`0/3000148`).
    async fn current_lsn(&self) -> Result<String, ExecuteError> {
        let client = self.client().await?;
        let row = client
            .query_one("SELECT pg_current_wal_lsn()::text", &[])
            .await?;
        Ok(row.try_get(0)?)
    }

    /// How far this replica is behind: seconds since the last commit it replayed
    /// (0 when it has replayed everything it knows of) and bytes of WAL it has not
    /// replayed, measured against `primary_lsn` when known, else against what it
    /// has received. A server not in recovery is not behind.
    async fn replay_lag(&self, primary_lsn: Option<&str>) -> Result<(f64, u64), ExecuteError> {
        let client = self.client().await?;
        let row = client
            .query_one(
                "SELECT CASE WHEN NOT pg_is_in_recovery() THEN 0 ELSE \
                   greatest(pg_wal_lsn_diff(coalesce($1::text::pg_lsn, pg_last_wal_receive_lsn()), \
                            pg_last_wal_replay_lsn()), 0) END::float8, \
                 CASE WHEN NOT pg_is_in_recovery() \
                        OR pg_last_wal_replay_lsn() >= coalesce($1::text::pg_lsn, pg_last_wal_receive_lsn()) \
                      THEN 0 \
                      ELSE coalesce(extract(epoch FROM now() - pg_last_xact_replay_timestamp()), 0) END::float8",
                &[&primary_lsn],
            )
            .await?;
        let bytes: f64 = row.try_get(0)?;
        let seconds: f64 = row.try_get(1)?;
        Ok((seconds.max(0.0), bytes as u64))
    }
}

/// `host:port/database` of a PostgreSQL URL: what logs and metrics may show.
pub fn display_name(url: &str) -> String {
    let Ok(config) = url.parse::<tokio_postgres::Config>() else {
        return "replica".to_owned();
    };
    let host = config
        .get_hosts()
        .first()
        .map(|h| match h {
            tokio_postgres::config::Host::Tcp(h) => h.clone(),
            tokio_postgres::config::Host::Unix(p) => p.display().to_string(),
        })
        .unwrap_or_default();
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!("{host}:{port}/{}", config.get_dbname().unwrap_or(""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_show_no_credentials() {
        assert_eq!(
            display_name("postgres://u:secret@db2.internal:5433/app?sslmode=disable"),
            "db2.internal:5433/app"
        );
        assert_eq!(display_name("not a url"), "replica");
    }
}
