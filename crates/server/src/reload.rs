//! Schema reload without a restart: the metadata is read again (the store, or the
//! config files), the database introspected again, and the new schemas swapped in
//! whole (requests already running finish on the old ones). Asked for by `POST
//! /v1/metadata` (`reload_metadata`), SIGHUP, a change on another instance or,
//! with `--watch`, DDL on PostgreSQL; `grafton_metadata::Metadata` does the work.

pub use crate::options::ConfigSources;
use grafton_metadata::Metadata;
use std::sync::Arc;
use std::time::Duration;

/// Reloads after each notification, once the burst is over: a migration is often
/// several transactions in a row.
pub(crate) fn on_notify(
    metadata: Arc<Metadata>,
    notify: Arc<tokio::sync::Notify>,
    why: &'static str,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            notify.notified().await;
            quiet(&notify).await;
            let _ = metadata.reload(why).await;
        }
    })
}

/// Waits until no notification came for 100 ms, or a second at most: a steady
/// stream of changes cannot postpone the reload for ever.
async fn quiet(notify: &tokio::sync::Notify) {
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
}

/// Follows the metadata other instances store: on PostgreSQL a notification after
/// each change (and after each reconnection), on SQLite a look four times a
/// second (a one-row read).
pub(crate) async fn follow(
    metadata: Arc<Metadata>,
) -> Result<tokio::task::JoinHandle<()>, crate::StartError> {
    let changed = Arc::new(tokio::sync::Notify::new());
    let db = metadata.engine().database();
    let watch = match db.backend() {
        grafton_catalog::Backend::Postgres => Some(
            db.watch_channel(grafton_metadata::store::CHANNEL, changed.clone())
                .await?,
        ),
        _ => None,
    };
    Ok(tokio::spawn(async move {
        let _watch = watch;
        loop {
            if _watch.is_some() {
                changed.notified().await;
            } else {
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
            metadata.follow().await;
        }
    }))
}
