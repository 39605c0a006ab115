//! Read-your-writes with read replicas: after a caller's mutation, that caller's
//! reads go to the primary for a window (`--primary-after-write-ms`), so a client
//! that writes then reads sees its write even while the replicas replay it. A
//! caller is its role and session variables (its IP when it has none), as rate
//! limits count it; the window is kept per instance.

use crate::caller::Caller;
use grafton_execute::Route;
use std::hash::{Hash, Hasher};
use std::time::{Duration, Instant};

/// Callers remembered at once; past it the least recently seen are forgotten (their
/// reads may then reach a replica before the window ends).
const CALLERS: usize = 100_000;

/// When each recent writer last wrote.
pub(crate) struct RecentWrites {
    window: Duration,
    last: Option<quick_cache::sync::Cache<u64, Instant>>,
}

impl RecentWrites {
    /// Reads follow writes to the primary for `window` (zero: never).
    pub(crate) fn new(window: Duration) -> Self {
        Self {
            window,
            last: (!window.is_zero()).then(|| quick_cache::sync::Cache::new(CALLERS)),
        }
    }

    /// Whether reads ever follow writes.
    pub(crate) fn on(&self) -> bool {
        self.last.is_some()
    }

    /// `caller` has just written.
    pub(crate) fn wrote(&self, caller: &Caller) {
        if let Some(last) = &self.last {
            last.insert(key(caller), Instant::now());
        }
    }

    /// Where `caller`'s next read goes.
    pub(crate) fn route(&self, caller: &Caller) -> Route {
        match &self.last {
            Some(last) => match last.get(&key(caller)) {
                Some(at) if at.elapsed() < self.window => Route::Primary,
                _ => Route::Replica,
            },
            None => Route::Replica,
        }
    }
}

/// A caller's identity: role and session variables in name order (a JWT's claims
/// and a request's headers come in any order), or the IP when there are none.
fn key(caller: &Caller) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    caller.role.hash(&mut h);
    let mut vars: Vec<(&String, &serde_json::Value)> = caller.vars.iter().collect();
    vars.sort_unstable_by_key(|(k, _)| k.as_str());
    for (name, value) in &vars {
        name.hash(&mut h);
        value.to_string().hash(&mut h);
    }
    if vars.is_empty() {
        caller.ip.hash(&mut h);
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn caller(user: &str, role: &str) -> Caller {
        let mut vars = serde_json::Map::new();
        vars.insert("x-hasura-role".into(), json!(role));
        vars.insert("x-hasura-user-id".into(), json!(user));
        Caller {
            role: Some(role.into()),
            vars,
            ..Caller::default()
        }
    }

    #[test]
    fn a_writer_reads_from_the_primary_for_the_window_only() {
        let recent = RecentWrites::new(Duration::from_millis(50));
        let (alice, bob) = (caller("1", "user"), caller("2", "user"));
        assert_eq!(recent.route(&alice), Route::Replica);
        recent.wrote(&alice);
        assert_eq!(recent.route(&alice), Route::Primary);
        assert_eq!(recent.route(&bob), Route::Replica, "only the writer");
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(recent.route(&alice), Route::Replica, "the window passed");
    }

    #[test]
    fn session_variables_in_another_order_are_the_same_caller() {
        let recent = RecentWrites::new(Duration::from_secs(60));
        let alice = caller("1", "user");
        let mut reordered = alice.clone();
        reordered.vars = alice
            .vars
            .iter()
            .rev()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        recent.wrote(&alice);
        assert_eq!(recent.route(&reordered), Route::Primary);
    }

    #[test]
    fn a_zero_window_never_routes_to_the_primary() {
        let recent = RecentWrites::new(Duration::ZERO);
        let alice = caller("1", "user");
        recent.wrote(&alice);
        assert!(!recent.on());
        assert_eq!(recent.route(&alice), Route::Replica);
    }
}
