//! `@cached` on the request path: a fresh kept answer is served before the query
//! queues for a connection; a miss runs as any query does and keeps its answer.
//! Only answers the database alone gives are kept: a plan with actions, remote
//! schemas or remote relationships runs uncached, since no write announces what
//! their sources change.

use crate::engine::{Caller, Engine};
use crate::planner::{Action, Plan, PlanKind, Planner, Prepared};
use crate::response_cache::CacheHeaders;
use crate::response_cache::{key, CacheKey, ResponseCache, Snapshot};
use crate::shared::Deps;
use crate::RequestInfo;
use std::sync::Arc;
use std::time::Duration;

use super::types::GraphqlRequest;

/// What the cache does for one request.
pub(super) enum Cached {
    /// Served from the cache: the answer's text.
    Hit(String),
    /// Run it, then keep the answer.
    Miss(Pending),
    /// Not an `@cached` query the cache can keep.
    No,
}

/// A miss's key and where invalidations stood before it ran (here, and in Redis
/// when instances share answers).
pub(super) struct Pending {
    cache: Arc<ResponseCache>,
    headers: CacheHeaders,
    key: CacheKey,
    family: CacheKey,
    snapshot: Snapshot,
    deps: Option<Deps>,
    ttl: Duration,
}

impl Pending {
    /// Keeps `body`, unless something it read changed while it ran or the
    /// schemas were reloaded since its planner was taken (new rules may answer
    /// otherwise); the cache headers when it was kept.
    pub(super) async fn keep(
        self,
        engine: &Engine,
        caller: &Caller,
        planner: &Planner,
        body: &str,
    ) -> Option<CacheHeaders> {
        let current = engine.role(caller).await.ok();
        if !current.is_some_and(|p| std::ptr::eq(&*p, planner)) {
            return None;
        }
        if !(self.cache).put(self.key, self.family, body, self.snapshot, self.ttl) {
            return None;
        }
        if let (Some(shared), Some(deps)) = (self.cache.shared(), &self.deps) {
            shared.keep_cached(&self.key, deps, body, self.ttl).await;
        }
        Some(self.headers)
    }
}

/// Looks the request up when its operation says `@cached`; the response's cache
/// headers go into `info`.
pub(super) async fn lookup(
    engine: &Engine,
    planner: &Planner,
    prepared: &Prepared,
    req: &GraphqlRequest,
    caller: &Caller,
    info: &mut RequestInfo,
) -> Cached {
    let Action::Plan(plan) = &prepared.action else {
        return Cached::No;
    };
    let Some(operation) = prepared.operation() else {
        return Cached::No;
    };
    let Some(directive) = key::directive(operation, &prepared.variables) else {
        return Cached::No;
    };
    if !keepable(plan) {
        return Cached::No;
    }
    // Other instances' and triggers' writes arrive through the change feed
    // (PostgreSQL); when it (re)connects, what it may have missed drops everything.
    engine.live.listen(&engine.db);
    let cache = engine.cache.load_full();
    let ttl = cache.ttl(directive.ttl);
    let operation_name = req.operation_name.as_deref();
    let key = key::key(
        caller,
        &req.query,
        operation_name,
        &req.variables,
        &plan.session_vars,
        &prepared.variables,
        &key::fingerprint(planner),
    );
    let family = key::family(caller, &req.query, operation_name);
    let headers = |max_age: Duration| CacheHeaders {
        key: key::to_hex(&key),
        family: key::to_hex(&family),
        max_age: max_age.as_secs(),
    };
    if !directive.refresh {
        if let Some(hit) = cache.get(&key) {
            info.cache = Some(headers(hit.max_age));
            return Cached::Hit(hit.body.to_string());
        }
        if let Some(shared) = cache.shared() {
            if let Some((body, left)) = shared.cached(&key).await {
                cache.shared_hit();
                info.cache = Some(headers(left));
                return Cached::Hit(body);
            }
        }
    }
    cache.missed();
    let snapshot = cache.snapshot(&plan.reads, &family);
    let deps = match cache.shared() {
        Some(shared) => shared.cache_deps(&plan.reads, &family).await,
        None => None,
    };
    Cached::Miss(Pending {
        headers: headers(ttl),
        cache,
        key,
        family,
        snapshot,
        deps,
        ttl,
    })
}

/// Whether the database alone answers the plan (what a write can make stale).
fn keepable(plan: &Plan) -> bool {
    matches!(plan.kind, PlanKind::Query(_))
        && !plan.has_actions
        && !plan.has_remotes
        && plan.joins.is_empty()
}
