//! Remote schemas' introspections, fetched before a build (all at once, each
//! within its timeout and at most [`INTROSPECTION_TIMEOUT`]) and kept between
//! builds while a remote's definition is unchanged; `reload_remote_schema`
//! forgets one. A remote that cannot be introspected is left out, reported.

use grafton_schema::config::Config;
use grafton_schema::remote::RemoteIntrospected;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The longest an introspection may take during a build (a metadata change
/// waits for it).
pub const INTROSPECTION_TIMEOUT: Duration = Duration::from_secs(10);

/// Introspections kept between builds, by remote name, with the definition
/// they were fetched under.
#[derive(Default)]
pub struct RemoteCache(Mutex<HashMap<String, (String, Arc<RemoteIntrospected>)>>);

impl RemoteCache {
    fn lock(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<String, (String, Arc<RemoteIntrospected>)>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Forgets `name`'s introspection: the next build fetches it again.
    pub fn forget(&self, name: &str) {
        self.lock().remove(name);
    }

    /// Forgets every introspection (`reload_metadata`).
    pub fn forget_all(&self) {
        self.lock().clear();
    }

    /// `name`'s introspection, if one is kept.
    pub fn get(&self, name: &str) -> Option<Arc<RemoteIntrospected>> {
        self.lock().get(name).map(|(_, r)| r.clone())
    }
}

/// Fills `config.remotes_introspected`: each remote's introspection, from
/// `cache` when its definition is the one it was fetched under.
pub(crate) async fn introspect(
    config: &mut Config,
    client: &grafton_remote::Client,
    cache: &RemoteCache,
) {
    let fetches = config.remote_schemas.iter().map(|r| async move {
        let key = serde_json::to_string(&r.definition).unwrap_or_default();
        let kept = cache
            .lock()
            .get(&r.name)
            .filter(|(k, _)| *k == key)
            .map(|(_, v)| v.clone());
        if let Some(kept) = kept {
            return (r.name.clone(), Ok(kept));
        }
        let timeout = Duration::from_secs(r.definition.timeout().max(1)).min(INTROSPECTION_TIMEOUT);
        let fetched = grafton_remote::introspection::fetch(client, r, timeout).await;
        let fetched = fetched
            .map(Arc::new)
            .map_err(|e| format!("introspecting it: {e}"));
        if let Ok(introspected) = &fetched {
            cache
                .lock()
                .insert(r.name.clone(), (key, introspected.clone()));
        }
        (r.name.clone(), fetched)
    });
    let fetched = futures_util::future::join_all(fetches).await;
    config.remotes_introspected = fetched.into_iter().collect();
}
