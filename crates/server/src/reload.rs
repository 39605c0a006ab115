//! Schema reload without a restart: the config files are read again, the database
//! introspected again, and the new schemas swapped in whole (requests already
//! running finish on the old ones). Asked for by `POST /v1/metadata`
//! (`reload_metadata`), SIGHUP, or, with `--watch`, DDL on PostgreSQL.

pub use crate::options::ConfigSources;
use crate::{Engine, ServeOptions, StartError};
use std::sync::Arc;
use std::time::Duration;

/// Reloads one engine's schemas the way it was started.
pub struct Reloader {
    engine: Arc<Engine>,
    options: ServeOptions,
}

/// Why a reload failed; the old schemas keep serving.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ReloadError(String);

impl Reloader {
    pub(crate) fn new(engine: Arc<Engine>, options: ServeOptions) -> Self {
        Self { engine, options }
    }

    /// Reads the config again (from its files, else the one started with),
    /// introspects and swaps. Logs the outcome either way.
    pub async fn reload(&self, why: &str) -> Result<grafton_engine::Reloaded, ReloadError> {
        let result = async {
            let config = match &self.options.sources {
                Some(sources) => sources.load()?,
                None => self.options.config.clone(),
            };
            let options = crate::options::engine_options(&self.options, config);
            Ok::<_, StartError>(self.engine.reload(&options).await?)
        }
        .await;
        self.engine.metrics().reload(result.is_ok());
        match result {
            Ok(done) => {
                tracing::info!(
                    why,
                    tables = done.tables,
                    roles = done.roles,
                    elapsed_ms = done.elapsed.as_secs_f64() * 1000.0,
                    "schema reloaded"
                );
                Ok(done)
            }
            Err(e) => {
                tracing::error!(why, error = %e, "reload failed; still serving the previous schema");
                Err(ReloadError(e.to_string()))
            }
        }
    }
}

/// Reloads after each notification, once the burst is over: a migration is often
/// several transactions in a row.
pub(crate) fn on_notify(
    reloader: Arc<Reloader>,
    notify: Arc<tokio::sync::Notify>,
    why: &'static str,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            notify.notified().await;
            // Quiet for 100 ms, or a second at most: a steady stream of changes
            // cannot postpone the reload for ever.
            let deadline = tokio::time::Instant::now() + Duration::from_secs(1);
            while tokio::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(100)).await;
                // Another notification meanwhile: wait for quiet again.
                if tokio::time::timeout(Duration::ZERO, notify.notified())
                    .await
                    .is_err()
                {
                    break;
                }
            }
            let _ = reloader.reload(why).await;
        }
    })
}
