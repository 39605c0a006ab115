//! Remote schemas' introspections, fetched before a build (all at once, each
//! within its timeout and at most [`INTROSPECTION_TIMEOUT`]) and kept between
//! builds while a remote's definition is unchanged; `reload_remote_schema`
//! forgets one. A remote that cannot be introspected is left out, reported.

use grafton_schema::config::Config;
use grafton_schema::remote::{RemoteIntrospected, RemoteViews};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The longest an introspection may take during a build (a metadata change
/// waits for it).
pub const INTROSPECTION_TIMEOUT: Duration = Duration::from_secs(10);

/// Introspections kept between builds, by remote name and the definition they
/// were fetched under (a change tried and refused does not replace the one
/// served: at most [`KEPT_PER_REMOTE`] are kept per name, the newest).
#[derive(Default)]
pub struct RemoteCache(Mutex<Kept>);

/// Introspections kept per remote name.
const KEPT_PER_REMOTE: usize = 2;

type Kept = HashMap<String, Vec<(String, Arc<RemoteIntrospected>)>>;

impl RemoteCache {
    fn lock(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Forgets `name`'s introspections: the next build fetches it again.
    pub fn forget(&self, name: &str) {
        self.lock().remove(name);
    }

    /// Forgets every introspection (`reload_metadata`).
    pub fn forget_all(&self) {
        self.lock().clear();
    }

    /// `name`'s introspection under `definition`, if one is kept.
    pub fn get(
        &self,
        name: &str,
        definition: &grafton_schema::config::RemoteSchemaDefinition,
    ) -> Option<Arc<RemoteIntrospected>> {
        let key = serde_json::to_string(definition).unwrap_or_default();
        let kept = self.lock();
        let list = kept.get(name)?;
        list.iter().find(|(k, _)| *k == key).map(|(_, r)| r.clone())
    }

    fn keep(&self, name: &str, key: String, introspected: Arc<RemoteIntrospected>) {
        let mut kept = self.lock();
        let list = kept.entry(name.to_owned()).or_default();
        list.retain(|(k, _)| *k != key);
        list.push((key, introspected));
        let extra = list.len().saturating_sub(KEPT_PER_REMOTE);
        list.drain(..extra);
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
        let kept = cache.get(&r.name, &r.definition);
        if let Some(kept) = kept {
            return (r, Ok(kept));
        }
        let timeout = Duration::from_secs(r.definition.timeout().max(1)).min(INTROSPECTION_TIMEOUT);
        let fetched = grafton_remote::introspection::fetch(client, r, timeout).await;
        let fetched = fetched
            .map(Arc::new)
            .map_err(|e| format!("introspecting it: {e}"));
        if let Ok(introspected) = &fetched {
            let key = serde_json::to_string(&r.definition).unwrap_or_default();
            cache.keep(&r.name, key, introspected.clone());
        }
        (r, fetched)
    });
    let fetched = futures_util::future::join_all(fetches).await;
    let mut views = std::collections::BTreeMap::new();
    let mut bad = Vec::new();
    for (r, whole) in fetched {
        if let Ok(whole) = &whole {
            let custom = r.definition.customization.as_ref();
            let unknown = grafton_remote::introspection::unknown_names(&whole.raw, custom);
            if !unknown.is_empty() {
                tracing::warn!(
                    remote = %r.name,
                    "its customization names types it does not have (they rename nothing): {}",
                    unknown.join(", ")
                );
            }
        }
        let view = whole.map(|whole| role_views(r, whole, &mut bad));
        views.insert(r.name.clone(), view);
    }
    config.remotes_introspected = views;
    config.left_out.extend(bad);
}

/// Each role's part of remote `r` (a permission that does not fit the remote
/// leaves the role none of it, reported in `bad`).
fn role_views(
    r: &grafton_schema::config::RemoteSchemaConfig,
    whole: Arc<RemoteIntrospected>,
    bad: &mut Vec<grafton_schema::inconsistent::Inconsistency>,
) -> RemoteViews {
    let custom = r.definition.customization.as_ref();
    let mut roles = std::collections::BTreeMap::new();
    for p in &r.permissions {
        let part = match roles.contains_key(&p.role) {
            true => Err(format!("role \"{}\" has two permissions on it", p.role)),
            false => grafton_remote::permissions::restrict(&whole.raw, &p.definition.schema)
                .and_then(|(answer, presets)| {
                    grafton_remote::introspection::read_with(&answer, custom, presets)
                })
                .map(Arc::new)
                .map_err(|e| {
                    format!("validation for the given role-based schema failed because {e}")
                }),
        };
        if let Err(why) = &part {
            let kind = grafton_schema::inconsistent::ObjectKind::RemoteSchemaPermission;
            let name = format!("{}.{}", r.name, p.role);
            bad.push(grafton_schema::inconsistent::Inconsistency::new(
                kind,
                &name,
                why.clone(),
            ));
        }
        roles.insert(p.role.clone(), part);
    }
    RemoteViews { whole, roles }
}
