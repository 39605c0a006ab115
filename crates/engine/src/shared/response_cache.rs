//! `@cached` answers shared through Redis: every instance finds what any one
//! computed. Freshness works as in memory, with the generations in Redis: a write
//! moves `grafton:<db>:cgen:t:<table>` (and the count of every write), a reload or
//! an unknown change the epoch, a cleared family its own; an entry carries the
//! generations it was computed under and a script serves it only while Redis still
//! holds those. A counter is created at a random value and a missing one matches
//! nothing, so one evicted and made again never revives an old entry. Keys are in
//! the database's namespace. Every call is bounded like the rest of [`Shared`]:
//! when Redis does not answer, each instance caches on its own, and a write whose
//! generations could not be moved moves the epoch at the next call.

use super::Shared;
use crate::response_cache::{key::to_hex, CacheKey, Reads};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// `KEYS[1]`: the entry (`<deps JSON>\n<body>`). Answers the body and its
/// remaining milliseconds while every generation it names is unchanged, else nil.
const GET: &str = r"
local v = redis.call('GET', KEYS[1])
if not v then return false end
local nl = string.find(v, '\n', 1, true)
if not nl then return false end
local deps = cjson.decode(string.sub(v, 1, nl - 1))
for _, d in ipairs(deps) do
  local g = redis.call('GET', d[1])
  if not g or tonumber(g) ~= d[2] then return false end
end
return {string.sub(v, nl + 1), redis.call('PTTL', KEYS[1])}
";

/// `KEYS[1]`: the entry; ARGV: deps JSON, body, ttl in ms. Keeps it only if the
/// generations it was computed under still hold.
const PUT: &str = r"
local deps = cjson.decode(ARGV[1])
for _, d in ipairs(deps) do
  local g = redis.call('GET', d[1])
  if not g or tonumber(g) ~= d[2] then return 0 end
end
redis.call('SET', KEYS[1], ARGV[1] .. '\n' .. ARGV[2], 'PX', ARGV[3])
return 1
";

/// `KEYS`: generations. Each one's value, made (at `ARGV[1]`, a random start,
/// plus its position) when missing.
const DEPS: &str = r"
local out = {}
for i, k in ipairs(KEYS) do
  redis.call('SET', k, tonumber(ARGV[1]) + i, 'NX')
  out[i] = tonumber(redis.call('GET', k))
end
return out
";

/// The generations an answer is computed under, as Redis held them.
pub(crate) type Deps = Vec<(String, i64)>;

/// The epoch's key in `namespace`.
pub(super) fn epoch(namespace: &str) -> String {
    format!("grafton:{namespace}:cgen:@epoch")
}

impl Shared {
    fn writes(&self) -> String {
        format!("grafton:{}:cgen:@writes", self.namespace)
    }

    fn table(&self, name: &str) -> String {
        format!("grafton:{}:cgen:t:{name}", self.namespace)
    }

    fn family(&self, family: &CacheKey) -> String {
        format!("grafton:{}:cgen:f:{}", self.namespace, to_hex(family))
    }

    fn entry(&self, key: &CacheKey) -> String {
        format!("grafton:{}:cached:{}", self.namespace, to_hex(key))
    }

    /// Moves the epoch when a write's generations were not moved (Redis failed).
    async fn settle(&self) {
        if self.cache_lost.swap(false, Ordering::AcqRel) {
            self.incr(epoch(&self.namespace)).await;
        }
    }

    /// The kept answer under `key` and how long it may still be served, if Redis
    /// has one whose generations still hold.
    pub(crate) async fn cached(&self, key: &CacheKey) -> Option<(String, Duration)> {
        self.settle().await;
        let mut conn = self.conn.clone();
        let mut invocation = self.cache_get.prepare_invoke();
        invocation.key(self.entry(key));
        let call = invocation.invoke_async::<Option<(String, i64)>>(&mut conn);
        let (body, ms) = self.bounded("response cache", call).await.flatten()?;
        Some((body, Duration::from_millis(u64::try_from(ms).unwrap_or(0))))
    }

    /// The generations `reads` and `fam` stand at now (made when missing).
    pub(crate) async fn cache_deps(&self, reads: &Reads, fam: &CacheKey) -> Option<Deps> {
        self.settle().await;
        let mut keys = vec![epoch(&self.namespace), self.family(fam)];
        match reads {
            Reads::Tables(names) => keys.extend(names.iter().map(|n| self.table(n))),
            Reads::Any => keys.push(self.writes()),
        }
        let mut conn = self.conn.clone();
        let mut invocation = self.cache_deps.prepare_invoke();
        for k in &keys {
            invocation.key(k);
        }
        invocation.arg(rand_start());
        let call = invocation.invoke_async::<Vec<i64>>(&mut conn);
        let values = self.bounded("response cache", call).await?;
        Some(keys.into_iter().zip(values).collect())
    }

    /// Keeps `body` for every instance, unless a generation moved since `deps`.
    pub(crate) async fn keep_cached(&self, key: &CacheKey, deps: &Deps, body: &str, ttl: Duration) {
        let deps = serde_json::to_string(deps).unwrap_or_else(|_| "[]".into());
        let mut conn = self.conn.clone();
        let mut invocation = self.cache_put.prepare_invoke();
        invocation
            .key(self.entry(key))
            .arg(deps)
            .arg(body)
            .arg(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1));
        let call = invocation.invoke_async::<i64>(&mut conn);
        self.bounded("response cache", call).await;
    }

    /// These tables were written: answers that read them go stale everywhere.
    pub(crate) async fn cache_written(&self, tables: &[String]) {
        let mut pipe = redis::pipe();
        for t in tables {
            pipe.cmd("INCR").arg(self.table(t)).ignore();
        }
        pipe.cmd("INCR").arg(self.writes()).ignore();
        let mut conn = self.conn.clone();
        let call = pipe.query_async::<()>(&mut conn);
        if self.bounded("response cache", call).await.is_none() {
            self.cache_lost.store(true, Ordering::Release);
        }
    }

    /// Every shared answer goes stale (a reload, an unknown change, a clear).
    pub(crate) async fn cache_everything_changed(&self) {
        self.incr(epoch(&self.namespace)).await;
    }

    /// A family's shared answers go stale.
    pub(crate) async fn cache_clear_family(&self, fam: &CacheKey) {
        self.incr(self.family(fam)).await;
    }

    /// Drops one shared answer.
    pub(crate) async fn cache_clear_key(&self, key: &CacheKey) {
        let mut conn = self.conn.clone();
        let mut del = redis::cmd("DEL");
        del.arg(self.entry(key));
        let call = del.query_async::<i64>(&mut conn);
        self.bounded("response cache", call).await;
    }

    /// Moves a generation; when Redis fails, the epoch moves at the next call.
    async fn incr(&self, key: String) {
        let mut conn = self.conn.clone();
        let mut incr = redis::cmd("INCR");
        incr.arg(key);
        let call = incr.query_async::<i64>(&mut conn);
        if self.bounded("response cache", call).await.is_none() {
            self.cache_lost.store(true, Ordering::Release);
        }
    }
}

/// A counter's random start, below 2^40: Lua's doubles stay exact past any
/// number of writes a counter will see.
fn rand_start() -> i64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    h.write_u128(now.map_or(0, |d| d.as_nanos()));
    i64::try_from(h.finish() >> 24).unwrap_or(0)
}

/// The scripts, compiled once per connection: serve, keep, read generations.
pub(super) fn scripts() -> (redis::Script, redis::Script, redis::Script) {
    (
        redis::Script::new(GET),
        redis::Script::new(PUT),
        redis::Script::new(DEPS),
    )
}
