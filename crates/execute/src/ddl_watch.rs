//! Watching PostgreSQL for schema changes (`--watch`): an event trigger sends a
//! notification on [`CHANNEL`] when a transaction with DDL commits, and a
//! connection of the watcher's own `LISTEN`s for it.

use crate::changes::listening;
use crate::ExecuteError;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

/// The notification channel.
pub const CHANNEL: &str = "grafton_ddl";

/// Installs the event trigger when it is missing. Notifications with equal
/// payloads in one transaction are sent once, so a migration is one notification.
/// Only a superuser may create an event trigger; once it exists, any role may watch.
pub const EVENT_TRIGGER_SQL: &str = "DO $grafton$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'grafton_notify_ddl') THEN
    CREATE OR REPLACE FUNCTION grafton_notify_ddl() RETURNS event_trigger LANGUAGE plpgsql AS $f$
    BEGIN
      PERFORM pg_notify('grafton_ddl', '');
    END $f$;
    CREATE EVENT TRIGGER grafton_notify_ddl ON ddl_command_end EXECUTE FUNCTION grafton_notify_ddl();
  END IF;
END $grafton$";

/// The running watcher; dropping it stops it.
pub struct DdlWatch(tokio::task::JoinHandle<()>);

impl Drop for DdlWatch {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl crate::Database {
    /// Installs the event trigger (when absent) and starts listening: `changed` is
    /// notified after each transaction that ran DDL, and after each reconnection
    /// (a change may have been missed while no connection listened).
    pub async fn watch_ddl(&self, changed: Arc<Notify>) -> Result<DdlWatch, ExecuteError> {
        let crate::Database::Postgres(db) = self else {
            return Err(ExecuteError::Config(
                "--watch needs PostgreSQL: a SQLite schema changes only through this process; reload it with SIGHUP or reload_metadata".into(),
            ));
        };
        let config = db.primary.config().clone();
        let (client, _) = config
            .connect(tokio_postgres::NoTls)
            .await
            .map(|(client, connection)| (client, tokio::spawn(connection)))
            .map_err(|e| ExecuteError::Connect(e.to_string()))?;
        client.batch_execute(EVENT_TRIGGER_SQL).await.map_err(|e| {
            ExecuteError::Config(format!(
                "--watch: cannot install the event trigger grafton_notify_ddl (creating one needs a superuser, once): {e}"
            ))
        })?;
        drop(client);
        Ok(DdlWatch(tokio::spawn(run(config, CHANNEL, changed, false))))
    }

    /// Listens on `channel` (PostgreSQL only): `changed` is notified for each
    /// notification, and once listening starts and after each reconnection (one may
    /// have been missed before).
    pub async fn watch_channel(
        &self,
        channel: &'static str,
        changed: Arc<Notify>,
    ) -> Result<DdlWatch, ExecuteError> {
        let crate::Database::Postgres(db) = self else {
            return Err(ExecuteError::Config(format!(
                "{channel}: notifications need PostgreSQL"
            )));
        };
        let config = db.primary.config().clone();
        Ok(DdlWatch(tokio::spawn(run(config, channel, changed, true))))
    }
}

async fn run(
    config: tokio_postgres::Config,
    channel: &'static str,
    changed: Arc<Notify>,
    notify_first: bool,
) {
    let mut pause = Duration::from_secs(1);
    let mut first = !notify_first;
    loop {
        match listening(&config, channel).await {
            Ok((_client, mut incoming, _overflowed, _driver)) => {
                if !first {
                    changed.notify_one();
                }
                first = false;
                pause = Duration::from_secs(1);
                while incoming.recv().await.is_some() {
                    changed.notify_one();
                }
                tracing::warn!(channel, "listening: the connection closed; reconnecting");
                tokio::time::sleep(pause).await;
            }
            Err(e) => {
                tracing::warn!(
                    channel,
                    "listening: {e}; reconnecting in {}s",
                    pause.as_secs()
                );
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(30));
            }
        }
    }
}
