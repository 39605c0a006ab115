//! What a server serves first, found before its engine is built (so its schemas
//! are built once): the stored document, else `--metadata-from`'s, under the
//! settings.

use crate::store::Store;
use grafton_schema::Config;
use serde_json::Value;

/// The settings' config with a metadata document's under it (the settings win
/// where both say something).
pub fn with_document(mut config: Config, doc: &Value) -> Result<Config, String> {
    let imported = grafton_schema::hasura::to_config(doc)?;
    grafton_schema::hasura::merge(&mut config, imported);
    Ok(config)
}

/// What a server serves first, found before its engine is built (so it is built
/// once): nothing stored, the stored version, or the seed to store.
#[derive(Debug)]
pub enum Start {
    /// Nothing stored and no seed: the settings alone.
    Empty,
    /// The stored document, at this version.
    Stored(u64),
    /// `--metadata-from` over an empty store: stored once the engine serves it.
    Seed(Value),
}

/// What a store holds, and the config to build the engine with: the stored
/// document, else `seed`, under `settings`.
pub async fn first_metadata(
    store: &Store,
    settings: Config,
    seed: Option<Value>,
) -> Result<(Config, Start), String> {
    let stored = store.load().await.map_err(|e| e.to_string())?;
    match (stored.metadata, seed) {
        (Some(doc), seed) => {
            if seed.is_some() {
                tracing::info!(
                    version = stored.version,
                    "the metadata store already holds metadata: it is served, and \
                     --metadata-from is not read"
                );
            }
            Ok((
                with_document(settings, &doc)?,
                Start::Stored(stored.version),
            ))
        }
        (None, Some(seed)) => {
            let config = with_document(settings, &seed)
                .map_err(|e| format!("the metadata to start from: {e}"))?;
            Ok((config, Start::Seed(seed)))
        }
        (None, None) => Ok((settings, Start::Empty)),
    }
}
