//! A command that changes the metadata: applied to the stored document, built into
//! schemas, and kept (stored as the next version, then served) only if it adds
//! nothing that cannot be served. A drop that leaves other objects dangling is a
//! `dependency-error`, or with `cascade` takes them too, as Hasura's does.

use crate::answers::{build_refusal, consistency, inconsistent, store_refusal};
use crate::commands;
use crate::service::{Metadata, Source};
use crate::store::StoreError;
use crate::Refusal;
use grafton_engine::Schemas;
use grafton_schema::inconsistent::Inconsistency;
use serde_json::Value;
use std::collections::HashSet;

/// How many rounds a cascade follows (each drops what the last left dangling).
const CASCADE_ROUNDS: usize = 8;

impl Metadata {
    async fn build(&self, doc: &Value) -> Result<Schemas, Refusal> {
        let config = self.config_for(Some(doc))?;
        (self.engine.build_schemas(&(self.options)(config)).await).map_err(build_refusal)
    }

    /// Applies the command `body`, builds, stores and serves the result.
    pub(crate) async fn change(&self, body: &Value) -> Result<Value, Refusal> {
        let store = match &self.source {
            Source::Store(store) => store,
            Source::Files { described, .. } => {
                return Err(Refusal::new(
                    "not-supported",
                    format!(
                        "the metadata is read-only here: it comes from {described}; change \
                         those files and reload_metadata, or start with --metadata-from to \
                         keep the metadata in the database and change it through this API"
                    ),
                    "$.type",
                ))
            }
        };
        let named = match body.get("resource_version") {
            None | Some(Value::Null) => None,
            Some(v) => Some(v.as_u64().ok_or_else(|| {
                Refusal::new(
                    "parse-failed",
                    "resource_version must be a whole number",
                    "$.resource_version",
                )
            })?),
        };
        let _one = self.lock.lock().await;
        let stored = store.load().await.map_err(store_refusal)?;
        if let Some(named) = named.filter(|n| *n != stored.version) {
            return Err(store_refusal(StoreError::Conflict { expected: named }));
        }
        let served = self.engine.schemas();
        let original = match &stored.metadata {
            Some(doc) => doc.clone(),
            None => crate::generated::document(&served),
        };
        let mut doc = original.clone();
        let outcome = commands::apply(&mut doc, body, served.left_out())?;
        let key = |i: &Inconsistency| i.to_json().to_string();
        // What is not served already is not this change's doing: what the served
        // schemas leave out, and (asked for once something new shows) what the
        // unchanged document leaves out over the database as it is now, which may
        // have changed since it was served.
        let mut before: HashSet<String> = served.left_out().iter().map(key).collect();
        let mut rebuilt_before = false;
        let mut schemas = self.build(&doc).await?;
        for round in 0..=CASCADE_ROUNDS {
            // A replaced whole must be consistent whole.
            let mut dangling: Vec<Inconsistency> = (schemas.left_out().iter())
                .filter(|i| outcome.replaced || !before.contains(&key(i)))
                .cloned()
                .collect();
            if !dangling.is_empty() && !rebuilt_before && !outcome.replaced {
                rebuilt_before = true;
                if let Ok(unchanged) = self.build(&original).await {
                    before.extend(unchanged.left_out().iter().map(key));
                    dangling.retain(|i| !before.contains(&key(i)));
                }
            }
            let Some(cascade) = outcome.drops.filter(|_| !dangling.is_empty()) else {
                break;
            };
            // A drop's dependents were there before it; what the change itself adds
            // that cannot be served is refused below, never dropped.
            let theirs = |i: &Inconsistency| commands::drop_object(&mut original.clone(), i);
            if round == CASCADE_ROUNDS || !dangling.iter().all(theirs) {
                break;
            }
            if !cascade {
                let mut names: Vec<String> = dangling.iter().map(commands::dependent).collect();
                names.sort();
                return Err(Refusal::new(
                    "dependency-error",
                    format!(
                        "cannot drop due to the following dependent objects: {}",
                        names.join(", ")
                    ),
                    "$.args",
                ));
            }
            for i in &dangling {
                commands::drop_object(&mut doc, i);
            }
            schemas = self.build(&doc).await?;
        }
        let mut added: Vec<Inconsistency> = (schemas.left_out().iter())
            .filter(|i| outcome.replaced || !before.contains(&key(i)))
            .cloned()
            .collect();
        if outcome.replaced && !added.is_empty() && !outcome.allow_inconsistent {
            // What the settings files leave out on their own is not the document's.
            let settings = self.config_for(None)?;
            if let Ok(alone) = self.engine.build_schemas(&(self.options)(settings)).await {
                let theirs: HashSet<String> = alone.left_out().iter().map(key).collect();
                added.retain(|i| !theirs.contains(&key(i)));
            }
        }
        if !added.is_empty() && !outcome.allow_inconsistent {
            let kind = body.get("type").and_then(Value::as_str).unwrap_or("");
            let added: Vec<&Inconsistency> = added.iter().collect();
            return Err(inconsistent(&added, outcome.replaced, kind));
        }
        self.install_triggers_of(&schemas).await?;
        let version = (store.save(&doc, stored.version).await).map_err(store_refusal)?;
        let left_out = schemas.left_out().to_vec();
        self.serve(schemas, version);
        self.engine.metrics().reload(true);
        tracing::info!(version, command = %body["type"], "metadata changed");
        if outcome.answer_consistency {
            return Ok(consistency(&left_out));
        }
        Ok(outcome.answer)
    }
}
