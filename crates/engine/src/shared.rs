//! What several instances behind one load balancer share through Redis
//! (`--redis-url`): rate-limit counts (GCRA, computed atomically in Redis by one
//! script, on Redis's clock) and automatic persisted queries. Every call is
//! bounded by [`CALL_TIMEOUT`]; when Redis does not answer, the instance falls
//! back to its own counts and documents (each instance then limits on its own)
//! and logs it, rather than refusing or stalling requests. After [`TRIP_AFTER`]
//! failures in a row a circuit breaker opens: requests stop asking Redis at all
//! (no request pays the timeout) while one background task probes it every
//! [`PROBE_EVERY`], and closes the breaker once it answers.

mod response_cache;
pub(crate) use response_cache::Deps;

use sha2::{Digest, Sha256};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The longest a request waits for Redis.
const CALL_TIMEOUT: Duration = Duration::from_millis(250);

/// Failed calls in a row that open the circuit breaker.
const TRIP_AFTER: u32 = 3;

/// How often an open breaker checks whether Redis answers again.
const PROBE_EVERY: Duration = Duration::from_secs(1);

/// How long a persisted query stays in Redis after it was last registered.
const DOCUMENT_TTL_SECONDS: u64 = 24 * 60 * 60;

/// GCRA: `KEYS[1]` holds the theoretical arrival time (µs, Redis's clock). ARGV:
/// the interval per request (µs), the burst tolerance (µs), the requests taken.
/// Answers 0 when they fit (and records them), else the µs to wait.
const GCRA: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local tau = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local new_tat = tat + interval * tonumber(ARGV[3])
local allow_at = new_tat - tau
if allow_at > now then return math.ceil(allow_at - now) end
redis.call('SET', KEYS[1], string.format('%d', new_tat), 'PX', math.ceil((new_tat - now) / 1000) + 1)
return 0
";

/// Why the shared store could not be opened.
#[derive(Debug, thiserror::Error)]
#[error("cannot connect to Redis at {url}: {message}")]
pub struct SharedError {
    url: String,
    message: String,
}

/// A connection to Redis (reconnected when lost) and the scripts it runs.
pub struct Shared {
    conn: redis::aio::ConnectionManager,
    gcra: redis::Script,
    /// `@cached`'s scripts: serve an entry, keep one.
    cache_get: redis::Script,
    cache_put: redis::Script,
    cache_deps: redis::Script,
    /// Calls that failed or timed out (the instance answered alone).
    failures: AtomicU64,
    /// Whether Redis is skipped for now.
    breaker: Arc<Breaker>,
    /// What `@cached`'s keys in Redis start with: this database's (instances of
    /// another deployment sharing the Redis never meet them).
    namespace: String,
    /// A write's generations could not be moved in Redis: its answers might be
    /// served as fresh, so the next call moves the epoch first.
    cache_lost: AtomicBool,
}

/// The circuit breaker's state.
#[derive(Default)]
struct Breaker {
    /// Failed calls since the last that succeeded.
    in_a_row: AtomicU32,
    /// Open: calls are not made; a probe task is running.
    open: AtomicBool,
}

impl Shared {
    /// Connects to `url` (`redis://host:port/db`); `database` (its URL) names the
    /// namespace of its cached answers.
    pub async fn connect(url: &str, database: &str) -> Result<Arc<Self>, SharedError> {
        let error = |e: redis::RedisError| SharedError {
            url: redact(url),
            message: e.to_string(),
        };
        let client = redis::Client::open(url).map_err(error)?;
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(2)))
            .set_response_timeout(Some(CALL_TIMEOUT))
            .set_number_of_retries(1);
        let conn = redis::aio::ConnectionManager::new_with_config(client, config)
            .await
            .map_err(error)?;
        let (cache_get, cache_put, cache_deps) = response_cache::scripts();
        Ok(Arc::new(Self {
            conn,
            gcra: redis::Script::new(GCRA),
            cache_get,
            cache_put,
            cache_deps,
            failures: AtomicU64::new(0),
            breaker: Arc::default(),
            namespace: digest(database),
            cache_lost: AtomicBool::new(false),
        }))
    }

    /// Takes `n` requests from the allowance of `per_minute` under `key`: `Ok` when
    /// they fit, `Err(wait)` otherwise; `None` when Redis did not answer.
    pub(crate) async fn take(
        &self,
        key: &str,
        per_minute: u64,
        n: u32,
    ) -> Option<Result<(), Duration>> {
        let interval = 60_000_000 / per_minute.max(1);
        let tau = interval.saturating_mul(per_minute.max(1));
        let mut conn = self.conn.clone();
        let mut invocation = self.gcra.prepare_invoke();
        invocation
            .key(format!("grafton:rate:{}", digest(key)))
            .arg(interval)
            .arg(tau)
            .arg(n);
        let call = invocation.invoke_async::<u64>(&mut conn);
        let wait = self.bounded("rate limit", call).await?;
        Some(match wait {
            0 => Ok(()),
            us => Err(Duration::from_micros(us)),
        })
    }

    /// The persisted document with this hash, if Redis knows it.
    pub(crate) async fn document(&self, hash: &str) -> Option<String> {
        let mut conn = self.conn.clone();
        let key = format!("grafton:apq:{hash}");
        let mut get = redis::cmd("GET");
        get.arg(key);
        let call = get.query_async::<Option<String>>(&mut conn);
        self.bounded("persisted query", call).await.flatten()
    }

    /// Remembers a persisted document for every instance.
    pub(crate) async fn put_document(&self, hash: &str, document: &str) {
        let mut conn = self.conn.clone();
        let key = format!("grafton:apq:{hash}");
        let mut set = redis::cmd("SET");
        set.arg(key)
            .arg(document)
            .arg("EX")
            .arg(DOCUMENT_TTL_SECONDS);
        let call = set.query_async::<()>(&mut conn);
        self.bounded("persisted query", call).await;
    }

    /// `call`'s answer, or `None` (counted, logged) when it failed or took too long.
    async fn bounded<T>(
        &self,
        what: &str,
        call: impl std::future::Future<Output = redis::RedisResult<T>>,
    ) -> Option<T> {
        if self.breaker.open.load(Ordering::Acquire) {
            return None;
        }
        let error = match tokio::time::timeout(CALL_TIMEOUT, call).await {
            Ok(Ok(answer)) => {
                self.breaker.in_a_row.store(0, Ordering::Release);
                return Some(answer);
            }
            Ok(Err(e)) => e.to_string(),
            Err(_) => format!("no answer in {} ms", CALL_TIMEOUT.as_millis()),
        };
        let in_a_row = self.breaker.in_a_row.fetch_add(1, Ordering::AcqRel) + 1;
        if in_a_row >= TRIP_AFTER
            && self
                .breaker
                .open
                .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        {
            tracing::warn!(
                "Redis failed {in_a_row} times in a row ({error}): not asked again until it \
                 answers a probe; this instance answers on its own meanwhile"
            );
            let epoch = response_cache::epoch(&self.namespace);
            tokio::spawn(probe(self.conn.clone(), self.breaker.clone(), epoch));
        }
        // Logged once per hundred failures: an outage must not flood the log.
        if self
            .failures
            .fetch_add(1, Ordering::Relaxed)
            .is_multiple_of(100)
        {
            tracing::warn!("Redis ({what}): {error}; this instance answers on its own meanwhile");
        }
        None
    }
}

/// Pings Redis every [`PROBE_EVERY`] until it answers, then closes the breaker;
/// first it moves `@cached`'s `epoch`: writes made meanwhile moved no generation.
async fn probe(mut conn: redis::aio::ConnectionManager, breaker: Arc<Breaker>, epoch: String) {
    loop {
        tokio::time::sleep(PROBE_EVERY).await;
        let mut command = redis::cmd("INCR");
        command.arg(&epoch);
        let ping = command.query_async::<i64>(&mut conn);
        if let Ok(Ok(_)) = tokio::time::timeout(CALL_TIMEOUT, ping).await {
            breaker.in_a_row.store(0, Ordering::Release);
            breaker.open.store(false, Ordering::Release);
            tracing::info!("Redis answers again: instances share their state once more");
            return;
        }
    }
}

impl Shared {
    /// Whether the circuit breaker is open (Redis is not asked).
    pub fn is_open(&self) -> bool {
        self.breaker.open.load(Ordering::Acquire)
    }
}

/// A bounded, uniform Redis key for a client's key (any length, any bytes).
fn digest(key: &str) -> String {
    Sha256::digest(key.as_bytes())
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `url` without its password.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            format!("{}***{}", &url[..scheme + 3], &url[at..])
        }
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_their_credentials() {
        assert_eq!(
            redact("redis://:secret@cache:6379/0"),
            "redis://***@cache:6379/0"
        );
        assert_eq!(redact("redis://cache:6379"), "redis://cache:6379");
    }

    #[test]
    fn keys_are_bounded() {
        assert_eq!(digest(&"x".repeat(10_000)).len(), 32);
        assert_ne!(digest("a"), digest("b"));
    }
}
