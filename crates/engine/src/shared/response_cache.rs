//! `@cached` answers shared through Redis: every instance finds what any one
//! computed. Freshness works as in memory, with the generations in Redis: a write
//! moves `grafton:cgen:t:<table>` (and the count of every write), a reload or an
//! unknown change the epoch, a cleared family its own; an entry carries the
//! generations it was computed under and a script serves it only while Redis still
//! holds those. Every call is bounded like the rest of [`Shared`]: when Redis does
//! not answer, each instance caches on its own.

use super::Shared;
use crate::response_cache::{key::to_hex, CacheKey, Reads};
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
  if tonumber(redis.call('GET', d[1]) or '0') ~= d[2] then return false end
end
return {string.sub(v, nl + 1), redis.call('PTTL', KEYS[1])}
";

/// `KEYS[1]`: the entry; ARGV: deps JSON, body, ttl in ms. Keeps it only if the
/// generations it was computed under still hold.
const PUT: &str = r"
local deps = cjson.decode(ARGV[1])
for _, d in ipairs(deps) do
  if tonumber(redis.call('GET', d[1]) or '0') ~= d[2] then return 0 end
end
redis.call('SET', KEYS[1], ARGV[1] .. '\n' .. ARGV[2], 'PX', ARGV[3])
return 1
";

/// The generations an answer is computed under, as Redis held them.
pub(crate) type Deps = Vec<(String, i64)>;

const EPOCH: &str = "grafton:cgen:@epoch";
const WRITES: &str = "grafton:cgen:@writes";

fn table(name: &str) -> String {
    format!("grafton:cgen:t:{name}")
}

fn family(family: &CacheKey) -> String {
    format!("grafton:cgen:f:{}", to_hex(family))
}

fn entry(key: &CacheKey) -> String {
    format!("grafton:cached:{}", to_hex(key))
}

impl Shared {
    /// The kept answer under `key` and how long it may still be served, if Redis
    /// has one whose generations still hold.
    pub(crate) async fn cached(&self, key: &CacheKey) -> Option<(String, Duration)> {
        let mut conn = self.conn.clone();
        let mut invocation = self.cache_get.prepare_invoke();
        invocation.key(entry(key));
        let call = invocation.invoke_async::<Option<(String, i64)>>(&mut conn);
        let (body, ms) = self.bounded("response cache", call).await.flatten()?;
        Some((body, Duration::from_millis(u64::try_from(ms).unwrap_or(0))))
    }

    /// The generations `reads` and `fam` stand at now.
    pub(crate) async fn cache_deps(&self, reads: &Reads, fam: &CacheKey) -> Option<Deps> {
        let mut keys = vec![EPOCH.to_owned(), family(fam)];
        match reads {
            Reads::Tables(names) => keys.extend(names.iter().map(|n| table(n))),
            Reads::Any => keys.push(WRITES.to_owned()),
        }
        let mut conn = self.conn.clone();
        let mut mget = redis::cmd("MGET");
        mget.arg(&keys);
        let call = mget.query_async::<Vec<Option<i64>>>(&mut conn);
        let values = self.bounded("response cache", call).await?;
        Some(
            keys.into_iter()
                .zip(values.into_iter().map(|v| v.unwrap_or(0)))
                .collect(),
        )
    }

    /// Keeps `body` for every instance, unless a generation moved since `deps`.
    pub(crate) async fn keep_cached(&self, key: &CacheKey, deps: &Deps, body: &str, ttl: Duration) {
        let deps = serde_json::to_string(deps).unwrap_or_else(|_| "[]".into());
        let mut conn = self.conn.clone();
        let mut invocation = self.cache_put.prepare_invoke();
        invocation
            .key(entry(key))
            .arg(deps)
            .arg(body)
            .arg(ttl.as_millis().max(1) as u64);
        let call = invocation.invoke_async::<i64>(&mut conn);
        self.bounded("response cache", call).await;
    }

    /// These tables were written: answers that read them go stale everywhere.
    pub(crate) async fn cache_written(&self, tables: &[String]) {
        let mut pipe = redis::pipe();
        for t in tables {
            pipe.cmd("INCR").arg(table(t)).ignore();
        }
        pipe.cmd("INCR").arg(WRITES).ignore();
        let mut conn = self.conn.clone();
        let call = pipe.query_async::<()>(&mut conn);
        self.bounded("response cache", call).await;
    }

    /// Every shared answer goes stale (a reload, an unknown change, a clear).
    pub(crate) async fn cache_everything_changed(&self) {
        self.incr(EPOCH.to_owned()).await;
    }

    /// A family's shared answers go stale.
    pub(crate) async fn cache_clear_family(&self, fam: &CacheKey) {
        self.incr(family(fam)).await;
    }

    /// Drops one shared answer.
    pub(crate) async fn cache_clear_key(&self, key: &CacheKey) {
        let mut conn = self.conn.clone();
        let mut del = redis::cmd("DEL");
        del.arg(entry(key));
        let call = del.query_async::<i64>(&mut conn);
        self.bounded("response cache", call).await;
    }

    async fn incr(&self, key: String) {
        let mut conn = self.conn.clone();
        let mut incr = redis::cmd("INCR");
        incr.arg(key);
        let call = incr.query_async::<i64>(&mut conn);
        self.bounded("response cache", call).await;
    }
}

/// The scripts, compiled once per connection.
pub(super) fn scripts() -> (redis::Script, redis::Script) {
    (redis::Script::new(GET), redis::Script::new(PUT))
}
