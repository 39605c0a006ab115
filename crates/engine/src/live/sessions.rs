//! `subscription_limit`: live subscriptions counted per session of a role (its
//! session variables, or the client's address when it has none), over every
//! connection, so one user holding the quota cannot lock out the role's others.

use crate::limits::{LimitExceeded, LimitKind};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// One role's live subscriptions, by session. Entries at zero are removed, so the
/// table holds only sessions with a live subscription.
#[derive(Debug, Default)]
pub(crate) struct SessionCounts(Mutex<HashMap<String, u64>>);

/// A counted subscription; dropping it gives its place back.
#[derive(Debug)]
pub(crate) struct Counted {
    counts: Arc<SessionCounts>,
    session: String,
}

impl Drop for Counted {
    fn drop(&mut self) {
        let mut counts = self.counts.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = counts.get_mut(&self.session) {
            *n -= 1;
            if *n == 0 {
                counts.remove(&self.session);
            }
        }
    }
}

impl SessionCounts {
    /// Counts one more subscription of `session`, unless that passes `limit`.
    pub(crate) fn take(
        self: &Arc<Self>,
        session: String,
        limit: Option<u64>,
    ) -> Result<Counted, LimitExceeded> {
        let mut counts = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let now = counts.get(&session).copied().unwrap_or(0) + 1;
        crate::limits::check(LimitKind::Subscriptions, limit, now)?;
        counts.insert(session.clone(), now);
        Ok(Counted {
            counts: self.clone(),
            session,
        })
    }
}

/// Who counts as one session: the caller's session variables, or without any its
/// address (each anonymous client its own quota).
pub(crate) fn session_key(
    vars: &serde_json::Map<String, serde_json::Value>,
    ip: Option<std::net::IpAddr>,
) -> String {
    let named = vars.keys().any(|k| k != ROLE_VAR);
    match (named, ip) {
        // Sorted, so the order of a token's claims does not make another session.
        (true, _) => {
            let sorted: std::collections::BTreeMap<_, _> = vars.iter().collect();
            serde_json::to_string(&sorted).unwrap_or_default()
        }
        (false, Some(ip)) => ip.to_string(),
        (false, None) => String::new(),
    }
}

/// The session variable that names the role: the same for every session of a role.
const ROLE_VAR: &str = "x-hasura-role";

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_session_has_its_own_quota() {
        let counts = Arc::new(SessionCounts::default());
        let a1 = counts.take("a".into(), Some(2)).expect("first");
        let _a2 = counts.take("a".into(), Some(2)).expect("second");
        assert!(counts.take("a".into(), Some(2)).is_err());
        let _b = counts.take("b".into(), Some(2)).expect("another session");
        drop(a1);
        let _a3 = counts
            .take("a".into(), Some(2))
            .expect("a place given back");
        assert!(counts.take("a".into(), Some(2)).is_err());
    }

    #[test]
    fn sessions_are_their_variables_or_their_address() {
        let ip = Some("10.0.0.1".parse().expect("ip"));
        let user = |id: &str| {
            json!({"x-hasura-role": "user", "x-hasura-user-id": id})
                .as_object()
                .cloned()
                .unwrap_or_default()
        };
        assert_ne!(session_key(&user("1"), ip), session_key(&user("2"), ip));
        let anonymous = json!({"x-hasura-role": "anon"})
            .as_object()
            .cloned()
            .unwrap_or_default();
        assert_eq!(session_key(&anonymous, ip), "10.0.0.1");
    }
}
