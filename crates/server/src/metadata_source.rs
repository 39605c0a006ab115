//! Where a server's metadata comes from: the store in its database (with the
//! document `--metadata-from` gives an empty one), or read-only files; and the
//! engine the one-shot commands plan with, as `serve` would serve it.

use crate::{build_engine, options, Engine, Metadata, ServeOptions, StartError};
use grafton_metadata::Start;
use std::sync::Arc;

/// The engine a one-shot command (`grafton sql`, `schema`, `live-triggers`) plans
/// with: what `serve` would serve (the stored metadata, else `--metadata-from`),
/// nothing written.
pub async fn engine_as_served(options: &ServeOptions) -> Result<Arc<Engine>, StartError> {
    let (first, _) = first(options).await?;
    Ok(Arc::new(build_engine(&first).await?))
}

/// The options to build the engine with at start-up: with the store, its document
/// (or `--metadata-from`'s, for an empty one) under the settings, read over one
/// connection of its own before the engine is built, so the schemas are built once.
pub(crate) async fn first(options: &ServeOptions) -> Result<(ServeOptions, Start), StartError> {
    if !options.metadata_store {
        return Ok((options.clone(), Start::Empty));
    }
    let seed = seed(options)?;
    let target = grafton_execute::Target::parse(&options.database_url)?;
    let db =
        grafton_execute::Database::connect(&target, grafton_execute::PoolOptions::new(1)).await?;
    let store = grafton_metadata::Store::new(db);
    let (config, start) = grafton_metadata::first_metadata(&store, options.config.clone(), seed)
        .await
        .map_err(|message| StartError::Config {
            path: "the metadata store".into(),
            message,
        })?;
    let mut first = options.clone();
    first.config = config;
    Ok((first, start))
}

/// The document `--metadata-from` names, read.
fn seed(options: &ServeOptions) -> Result<Option<serde_json::Value>, StartError> {
    let Some(path) = &options.metadata_from else {
        return Ok(None);
    };
    let doc =
        grafton_schema::hasura::read_document(path).map_err(|message| StartError::Config {
            path: path.display().to_string(),
            message,
        })?;
    Ok(Some(doc))
}

/// Where the metadata of a server started with `options` comes from.
pub(crate) fn metadata_for(
    engine: Arc<Engine>,
    options: &ServeOptions,
) -> Result<Metadata, StartError> {
    let serve = options.clone();
    let engine_options: grafton_metadata::Options =
        Arc::new(move |config| options::engine_options(&serve, config));
    let (sources, fixed) = (options.sources.clone(), options.config.clone());
    let settings: grafton_metadata::Settings = Arc::new(move || match &sources {
        Some(sources) => sources.load().map_err(|e| e.to_string()),
        None => Ok(fixed.clone()),
    });
    let hasura = (options.sources.as_ref()).and_then(|s| s.hasura_metadata.clone());
    if !options.metadata_store {
        let described = match (
            &hasura,
            options.sources.as_ref().and_then(|s| s.config.as_ref()),
        ) {
            (Some(path), _) => format!(
                "the Hasura metadata at {} (--hasura-metadata)",
                path.display()
            ),
            (None, Some(path)) => format!("the config file {}", path.display()),
            (None, None) => "the config Grafton was started with".to_owned(),
        };
        let source = grafton_metadata::Source::Files { hasura, described };
        return Ok(Metadata::new(engine, source, settings, engine_options));
    }
    if hasura.is_some() {
        return Err(StartError::Config {
            path: "--hasura-metadata".into(),
            message: "serves read-only metadata from files; to start the metadata store \
                      from it, pass it as --metadata-from instead"
                .into(),
        });
    }
    let store = grafton_metadata::Store::new(engine.database().clone());
    let source = grafton_metadata::Source::Store(store);
    Ok(Metadata::new(engine, source, settings, engine_options))
}
