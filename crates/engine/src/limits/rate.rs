//! Rate limits (Hasura's `rate_limit`, WSO2's operation-based throttling): requests
//! per minute per client, where a client is the role plus its IP or some of its
//! session variables, counted per request or per root field. GCRA from `governor`:
//! a client may spend a minute's allowance at once, then earns it back evenly.

use crate::shared::Shared;
use governor::clock::Clock;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use grafton_schema::api_limits::{RateLimit, UniqueParams};
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Counts kept in this process.
pub struct LocalRates {
    limiter: DefaultKeyedRateLimiter<String>,
    checks: AtomicU64,
}

/// How often (in checks) clients whose allowance is whole again are forgotten, so
/// the table holds only clients seen in about the last minute.
const SWEEP_EVERY: u64 = 1024;

impl LocalRates {
    /// An allowance of `per_minute` requests (at least 1).
    pub fn per_minute(per_minute: u64) -> Self {
        let n = NonZeroU32::new(u32::try_from(per_minute).unwrap_or(u32::MAX).max(1))
            .unwrap_or(NonZeroU32::MIN);
        Self {
            limiter: RateLimiter::keyed(Quota::per_minute(n)),
            checks: AtomicU64::new(0),
        }
    }
}

impl LocalRates {
    /// Takes `n` requests from `key`'s allowance; `Err(wait)` is how long until
    /// they would fit.
    pub fn take(&self, key: &str, n: u32) -> Result<(), Duration> {
        if self
            .checks
            .fetch_add(1, Ordering::Relaxed)
            .is_multiple_of(SWEEP_EVERY)
        {
            self.limiter.retain_recent();
        }
        let n = NonZeroU32::new(n).unwrap_or(NonZeroU32::MIN);
        match self.limiter.check_key_n(&key.to_owned(), n) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(not_until)) => Err(not_until.wait_time_from(self.limiter.clock().now())),
            // More than a whole minute's allowance in one request: never fits.
            Err(_) => Err(Duration::from_secs(60)),
        }
    }
}

/// A role's rate limit: where it is counted, who counts as one client, and what
/// one costs.
pub struct RoleRate {
    /// This instance's counts: the only ones without a shared store, the fallback
    /// while it does not answer.
    local: LocalRates,
    /// Counts shared with every instance (Redis), under this role's prefix.
    shared: Option<(Arc<Shared>, String)>,
    /// The allowance, for messages.
    pub per_minute: u64,
    unique: Option<UniqueParams>,
    /// Each root field counts as one request.
    pub per_root_field: bool,
}

impl RoleRate {
    /// `role`'s rate limit `limit` (`role` `None`: admin), counted in `shared` when
    /// there is one, else in this process.
    pub fn new(limit: &RateLimit, role: Option<&str>, shared: Option<&Arc<Shared>>) -> Self {
        Self {
            local: LocalRates::per_minute(limit.max_reqs_per_min),
            shared: shared.map(|s| (s.clone(), role.unwrap_or("admin").to_owned())),
            per_minute: limit.max_reqs_per_min,
            unique: limit.unique_params.clone(),
            per_root_field: limit.per_root_field,
        }
    }

    /// Takes `n` requests from the allowance of the client `key`; `Err(wait)` is
    /// how long until they would fit.
    pub async fn take(&self, key: &str, n: u32) -> Result<(), Duration> {
        if u64::from(n) > self.per_minute {
            // More than a whole minute's allowance in one request: never fits.
            return Err(Duration::from_secs(60));
        }
        if let Some((shared, role)) = &self.shared {
            let key = format!("{role}\u{0}{key}");
            if let Some(answer) = shared.take(&key, self.per_minute, n).await {
                return answer;
            }
        }
        self.local.take(key, n)
    }

    /// The client's key: its IP, the values of the named session variables, or
    /// (with no `unique_params`) one key for the whole role.
    pub fn key(
        &self,
        ip: Option<std::net::IpAddr>,
        session: &serde_json::Map<String, serde_json::Value>,
    ) -> String {
        match &self.unique {
            None => String::new(),
            Some(UniqueParams::Ip(_)) => ip.map(|a| a.to_string()).unwrap_or_default(),
            Some(UniqueParams::SessionVariables(names)) => {
                let mut key = String::new();
                for name in names {
                    let value = session.get(&name.to_ascii_lowercase());
                    match value {
                        Some(serde_json::Value::String(s)) => key.push_str(s),
                        Some(other) => key.push_str(&other.to_string()),
                        None => {}
                    }
                    key.push('\u{0}');
                }
                key
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_allowance_is_spent_then_refused_with_a_wait() {
        let rates = LocalRates::per_minute(3);
        assert_eq!(rates.take("a", 2), Ok(()));
        assert_eq!(rates.take("a", 1), Ok(()));
        let wait = rates.take("a", 1).expect_err("over the allowance");
        assert!(
            wait > Duration::ZERO && wait <= Duration::from_secs(20),
            "{wait:?}"
        );
        // Another client has its own allowance; more than a minute's never fits.
        assert_eq!(rates.take("b", 1), Ok(()));
        assert_eq!(rates.take("c", 4), Err(Duration::from_secs(60)));
    }
}
