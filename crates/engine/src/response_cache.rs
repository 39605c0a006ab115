//! `@cached` (Hasura's directive on a query): answers kept in memory, bounded in
//! bytes (least recently used go first), each keyed by everything that shapes it
//! ([`key`]) and dropped as soon as a table it read is written.
//!
//! Freshness without a scan: every table has a write generation, moved by each
//! write this instance makes or hears of (the change feed: other instances, and
//! any client once the live triggers are installed). An entry keeps the
//! generations of the tables it read as they were when its statement started, and
//! a lookup serves it only while they are unchanged; an answer whose tables moved
//! while it ran is not stored at all. A plan that calls SQL functions or reads a
//! view depends on tables it does not name, so it keeps the count of every write
//! instead. `ttl` bounds what no write announces (an external writer without the
//! triggers, a materialized view's refresh).

pub mod key;

use crate::metrics::response_cache::ResponseCacheMetrics;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

pub use key::CacheKey;

/// The engine's cache, shared with what hears of writes; replaced whole when the
/// server sets its bounds.
pub(crate) type Shared = Arc<arc_swap::ArcSwap<ResponseCache>>;

/// The default bound on the bytes of answers kept (`--cache-max-bytes`).
pub const DEFAULT_MAX_BYTES: u64 = 64 * 1024 * 1024;
/// The default longest `ttl` (`--cache-max-ttl`), Hasura's.
pub const DEFAULT_MAX_TTL: Duration = Duration::from_secs(3600);

/// Hasura's response headers for an `@cached` answer: `X-Hasura-Query-Cache-Key`,
/// `X-Hasura-Query-Family-Cache-Key` and `Cache-Control: max-age`.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheHeaders {
    /// The answer's key, as the cache API takes it.
    pub key: String,
    /// Its family's key.
    pub family: String,
    /// Seconds it may still be served.
    pub max_age: u64,
}

/// What a plan's answer depends on.
#[derive(Debug, Clone, PartialEq)]
pub enum Reads {
    /// These tables (and views' base tables are not among them), by name.
    Tables(Vec<String>),
    /// Tables it does not name (a function's, a view's): every write counts.
    Any,
}

/// Where the moves that invalidate entries stood when a statement started.
#[derive(Debug, Clone)]
pub(crate) struct Snapshot {
    epoch: u64,
    family: u64,
    /// Each table read and its generation; `None` for [`Reads::Any`].
    tables: Option<Vec<(String, u64)>>,
    /// The count of every write, for [`Reads::Any`].
    writes: u64,
}

/// One kept answer.
#[derive(Clone)]
pub(crate) struct Entry {
    body: Arc<str>,
    snapshot: Arc<Snapshot>,
    family: CacheKey,
    expires: Instant,
}

/// An answer served from the cache, and how long it may still be kept.
pub(crate) struct Hit {
    pub(crate) body: Arc<str>,
    pub(crate) max_age: Duration,
}

#[derive(Clone)]
struct Bytes;

impl quick_cache::Weighter<CacheKey, Entry> for Bytes {
    fn weight(&self, key: &CacheKey, entry: &Entry) -> u64 {
        let tables = (entry.snapshot.tables.iter().flatten())
            .map(|(name, _)| name.len() + 32)
            .sum::<usize>();
        (entry.body.len() + tables + std::mem::size_of_val(key) + 128) as u64
    }
}

/// Counts what the byte bound pushed out.
#[derive(Clone)]
struct Evictions(prometheus::IntCounter);

impl quick_cache::Lifecycle<CacheKey, Entry> for Evictions {
    type RequestState = ();

    fn begin_request(&self) -> Self::RequestState {}

    fn on_evict(&self, _: &mut Self::RequestState, _: CacheKey, _: Entry) {
        self.0.inc();
    }
}

type Entries =
    quick_cache::sync::Cache<CacheKey, Entry, Bytes, quick_cache::DefaultHashBuilder, Evictions>;

/// The kept answers of one engine.
pub struct ResponseCache {
    entries: Entries,
    /// An answer larger than this is served but not kept (a share of the bound,
    /// so one answer cannot push out all others).
    max_entry: usize,
    max_ttl: Duration,
    generations: RwLock<HashMap<String, u64>>,
    families: RwLock<HashMap<CacheKey, u64>>,
    writes: AtomicU64,
    epoch: AtomicU64,
    metrics: ResponseCacheMetrics,
    /// Redis, where instances share answers (`--redis-url`).
    shared: Option<Arc<crate::shared::Shared>>,
}

impl ResponseCache {
    /// A cache of at most `max_bytes` of answers, none kept past `max_ttl`.
    pub(crate) fn new(
        max_bytes: u64,
        max_ttl: Duration,
        metrics: ResponseCacheMetrics,
        shared: Option<Arc<crate::shared::Shared>>,
    ) -> Self {
        let options = quick_cache::OptionsBuilder::new()
            .estimated_items_capacity(usize::try_from(max_bytes / 4096).unwrap_or(1).max(16))
            .weight_capacity(max_bytes.max(1))
            // Few shards: each holds a share of the bound, and an answer must fit one.
            .shards(4)
            .build();
        let evictions = Evictions(metrics.evictions.clone());
        let entries = match options {
            Ok(options) => Entries::with_options(
                options,
                Bytes,
                quick_cache::DefaultHashBuilder::default(),
                evictions,
            ),
            Err(_) => Entries::with(16, 1, Bytes, Default::default(), evictions),
        };
        Self {
            entries,
            max_entry: usize::try_from(max_bytes / 16).unwrap_or(usize::MAX),
            max_ttl,
            generations: RwLock::default(),
            families: RwLock::default(),
            writes: AtomicU64::new(0),
            epoch: AtomicU64::new(0),
            metrics,
            shared,
        }
    }

    /// Redis, when instances share answers.
    pub(crate) fn shared(&self) -> Option<&Arc<crate::shared::Shared>> {
        self.shared.as_ref()
    }

    /// Runs `call` on Redis in the background (a sync caller's invalidation).
    fn in_redis<F, Fut>(&self, call: F)
    where
        F: FnOnce(Arc<crate::shared::Shared>) -> Fut,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        if let (Some(shared), Ok(rt)) = (&self.shared, tokio::runtime::Handle::try_current()) {
            rt.spawn(call(shared.clone()));
        }
    }

    /// `ttl` within the bound (`--cache-max-ttl`).
    pub(crate) fn ttl(&self, asked: Duration) -> Duration {
        asked.min(self.max_ttl)
    }

    /// Where invalidations stand now, for an answer about to be computed.
    pub(crate) fn snapshot(&self, reads: &Reads, family: &CacheKey) -> Snapshot {
        let tables = match reads {
            Reads::Tables(names) => {
                let generations = read(&self.generations);
                let of = |n: &String| (n.clone(), generations.get(n).copied().unwrap_or(0));
                Some(names.iter().map(of).collect())
            }
            Reads::Any => None,
        };
        Snapshot {
            epoch: self.epoch.load(Ordering::Acquire),
            family: read(&self.families).get(family).copied().unwrap_or(0),
            tables,
            writes: self.writes.load(Ordering::Acquire),
        }
    }

    /// Whether nothing `snapshot` depends on has moved since it was taken.
    fn fresh(&self, snapshot: &Snapshot, family: &CacheKey) -> bool {
        if self.epoch.load(Ordering::Acquire) != snapshot.epoch {
            return false;
        }
        if read(&self.families).get(family).copied().unwrap_or(0) != snapshot.family {
            return false;
        }
        match &snapshot.tables {
            Some(tables) => {
                let generations = read(&self.generations);
                (tables.iter()).all(|(n, g)| generations.get(n).copied().unwrap_or(0) == *g)
            }
            None => self.writes.load(Ordering::Acquire) == snapshot.writes,
        }
    }

    /// The kept answer under `key`, if one is and nothing it read has changed.
    pub(crate) fn get(&self, key: &CacheKey) -> Option<Hit> {
        let entry = self.entries.get(key)?;
        let now = Instant::now();
        if now >= entry.expires || !self.fresh(&entry.snapshot, &entry.family) {
            if self.entries.remove(key).is_some() && now < entry.expires {
                self.metrics.invalidations.inc();
            }
            self.bytes();
            return None;
        }
        self.metrics.hits.inc();
        Some(Hit {
            body: entry.body,
            max_age: entry.expires - now,
        })
    }

    /// Counts a request served from Redis.
    pub(crate) fn shared_hit(&self) {
        self.metrics.hits.inc();
    }

    /// Counts a request the cache had no fresh answer for.
    pub(crate) fn missed(&self) {
        self.metrics.misses.inc();
    }

    /// Keeps `body` for `ttl`, unless something it read moved while it was
    /// computed (then the next request computes it again) or it is too large.
    pub(crate) fn put(
        &self,
        key: CacheKey,
        family: CacheKey,
        body: &str,
        snapshot: Snapshot,
        ttl: Duration,
    ) -> bool {
        if body.len() > self.max_entry || ttl.is_zero() || !self.fresh(&snapshot, &family) {
            return false;
        }
        let entry = Entry {
            body: Arc::from(body),
            snapshot: Arc::new(snapshot),
            family,
            expires: Instant::now() + ttl,
        };
        self.entries.insert(key, entry);
        self.bytes();
        true
    }

    /// Another instance or a trigger says these tables changed: answers that read
    /// them go stale here, and in Redis (the writer may be no instance).
    pub(crate) fn heard(&self, tables: &[String]) {
        self.written(tables);
        let tables = tables.to_vec();
        self.in_redis(|s| async move { s.cache_written(&tables).await });
    }

    /// A write through this instance changed these tables (by name): answers that
    /// read them go stale here (the writer moves Redis's generations itself).
    pub(crate) fn written(&self, tables: &[String]) {
        {
            let mut generations = write(&self.generations);
            for t in tables {
                *generations.entry(t.clone()).or_insert(0) += 1;
            }
        }
        self.writes.fetch_add(1, Ordering::AcqRel);
    }

    /// Something changed that no table names (the change feed reconnected and
    /// may have missed writes, the schema was reloaded): every answer goes stale.
    pub fn changed_everything(&self) {
        self.changed_here();
        self.in_redis(|s| async move { s.cache_everything_changed().await });
    }

    /// This instance may have missed writes (its change feed was down): its own
    /// answers go stale; Redis's generations were moved by the writers.
    pub(crate) fn changed_here(&self) {
        self.epoch.fetch_add(1, Ordering::AcqRel);
    }

    /// Drops one answer (the cache API's `key`); whether one was kept.
    pub fn clear_key(&self, key: &CacheKey) -> bool {
        let k = *key;
        self.in_redis(|s| async move { s.cache_clear_key(&k).await });
        let removed = self.entries.remove(key).is_some();
        self.bytes();
        removed
    }

    /// Drops a family's answers (every variable set of one document and role).
    pub fn clear_family(&self, family: &CacheKey) {
        *write(&self.families).entry(*family).or_insert(0) += 1;
        let f = *family;
        self.in_redis(|s| async move { s.cache_clear_family(&f).await });
    }

    /// Drops every answer.
    pub fn clear(&self) {
        self.entries.clear();
        write(&self.families).clear();
        self.changed_everything();
        self.bytes();
    }

    /// Answers and bytes kept now.
    pub fn usage(&self) -> (usize, u64) {
        (self.entries.len(), self.entries.weight())
    }

    fn bytes(&self) {
        let bytes = self.entries.weight();
        self.metrics
            .bytes
            .set(i64::try_from(bytes).unwrap_or(i64::MAX));
    }
}

fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    // Every critical section leaves the map whole: a panic cannot break it.
    lock.read().unwrap_or_else(|p| p.into_inner())
}

fn write<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests;
