//! Table changes between Grafton instances, through PostgreSQL `NOTIFY`: each
//! instance keeps one connection of its own (outside the pool) that `LISTEN`s on
//! [`CHANNEL`] and sends the tables its mutations wrote, so live queries on every
//! instance poll at once. Triggers from [`trigger_sql`] put external writers on
//! the same channel.

use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_postgres::AsyncMessage;

/// The notification channel.
pub const CHANNEL: &str = "grafton_changes";

/// What a change notification says: these tables changed, or (`None`) anything may
/// have (a notification that cannot be read, or a reconnection after which some
/// may have been missed).
pub type Changed = Option<Vec<String>>;

/// The sending half: tables written here, for the other instances.
#[derive(Clone)]
pub struct ChangeFeed {
    outgoing: mpsc::Sender<Vec<String>>,
}

/// Notifications waiting to be sent; past it, writes are announced together.
const OUTGOING: usize = 1024;
/// PostgreSQL refuses payloads of 8,000 bytes or more.
const MAX_PAYLOAD: usize = 7000;

impl ChangeFeed {
    /// Announces that `tables` changed (never waits: a full queue drops it, and
    /// the other instances see the change at their next interval). An empty list
    /// says anything may have (SQL run through the metadata API).
    pub fn publish(&self, tables: Vec<String>) {
        let _ = self.outgoing.try_send(tables);
    }
}

impl crate::Database {
    /// Starts the change feed on PostgreSQL (`None` on SQLite, where every writer
    /// is this process): `on_change` hears what other instances and triggers
    /// announce. The connection is reopened, with a growing pause, when it fails.
    pub fn change_feed(&self, on_change: Arc<dyn Fn(Changed) + Send + Sync>) -> Option<ChangeFeed> {
        let crate::Database::Postgres(db) = self else {
            return None;
        };
        let (outgoing, rx) = mpsc::channel(OUTGOING);
        tokio::spawn(run(db.primary.config().clone(), origin(), rx, on_change));
        Some(ChangeFeed { outgoing })
    }
}

/// This process's mark on its notifications, so it ignores its own.
fn origin() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    format!("{:016x}", h.finish())
}

async fn run(
    config: tokio_postgres::Config,
    origin: String,
    mut outgoing: mpsc::Receiver<Vec<String>>,
    on_change: Arc<dyn Fn(Changed) + Send + Sync>,
) {
    let mut pause = Duration::from_secs(1);
    // Announcements taken from the queue but not sent: owed as "anything" once
    // a connection is back.
    let mut owed = false;
    loop {
        match listen(&config, &origin, &mut outgoing, &on_change, &mut owed).await {
            Ok(()) => return,
            Err(e) => {
                // Writes go unheard from now until the next connection listens.
                on_change(None);
                tracing::warn!("change feed: {e}; reconnecting in {}s", pause.as_secs());
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(30));
            }
        }
    }
}

/// One connection's life: `LISTEN`, then relay both ways until it fails (`Err`)
/// or the engine is gone (`Ok`).
async fn listen(
    config: &tokio_postgres::Config,
    origin: &str,
    outgoing: &mut mpsc::Receiver<Vec<String>>,
    on_change: &Arc<dyn Fn(Changed) + Send + Sync>,
    owed: &mut bool,
) -> Result<(), String> {
    let (client, mut incoming, overflowed, _driver) = listening(config, CHANNEL).await?;
    // Changes made while no connection listened went unheard.
    on_change(None);
    let notify = |payload: String| {
        let client = &client;
        async move {
            (client.execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &payload]))
                .await
                .map_err(|e| e.to_string())
        }
    };
    if *owed {
        notify(json!({"origin": origin}).to_string()).await?;
        *owed = false;
    }
    loop {
        tokio::select! {
            payload = incoming.recv() => match payload {
                Some(payload) => {
                    if let Some(changed) = read(&payload, origin) {
                        on_change(changed);
                    }
                    // Notifications dropped by a full queue: anything may have changed.
                    if overflowed.swap(false, std::sync::atomic::Ordering::AcqRel) {
                        on_change(None);
                    }
                }
                None => return Err("the connection closed".into()),
            },
            tables = outgoing.recv() => {
                let Some(mut tables) = tables else { return Ok(()) };
                let mut everything = tables.is_empty();
                while let Ok(more) = outgoing.try_recv() {
                    everything |= more.is_empty();
                    tables.extend(more);
                }
                tables.sort();
                tables.dedup();
                // Taken from the queue: owed until sent.
                *owed = true;
                let sent = match everything {
                    // No `tables`: readers take it as "anything may have changed".
                    true => vec![json!({"origin": origin}).to_string()],
                    false => payloads(origin, &tables),
                };
                for payload in sent {
                    notify(payload).await?;
                }
                *owed = false;
            }
        }
    }
}

/// A connection of its own (outside the pool) that `LISTEN`s on `channel`, with
/// the notifications' payloads; it closes when the returned guard is dropped.
pub(crate) async fn listening(
    config: &tokio_postgres::Config,
    channel: &str,
) -> Result<
    (
        tokio_postgres::Client,
        mpsc::Receiver<String>,
        Arc<std::sync::atomic::AtomicBool>,
        AbortOnDrop,
    ),
    String,
> {
    let (client, mut connection) = config
        .connect(tokio_postgres::NoTls)
        .await
        .map_err(|e| e.to_string())?;
    let (incoming_tx, incoming) = mpsc::channel::<String>(OUTGOING);
    let overflowed = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = overflowed.clone();
    let driver = tokio::spawn(async move {
        while let Some(message) = std::future::poll_fn(|cx| connection.poll_message(cx)).await {
            match message {
                Ok(AsyncMessage::Notification(n)) => {
                    // A full queue: what was dropped is told as "anything changed".
                    if incoming_tx.try_send(n.payload().to_owned()).is_err() {
                        flag.store(true, std::sync::atomic::Ordering::Release);
                    }
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
    });
    let driver = AbortOnDrop(driver);
    client
        .batch_execute(&format!("LISTEN {channel}"))
        .await
        .map_err(|e| e.to_string())?;
    Ok((client, incoming, overflowed, driver))
}

/// Ends a connection's driver task when dropped.
pub(crate) struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// `{"origin": …, "tables": […]}` payloads under PostgreSQL's size limit.
fn payloads(origin: &str, tables: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut chunk: Vec<&String> = Vec::new();
    let mut size = 0;
    for t in tables {
        if size + t.len() + 4 > MAX_PAYLOAD && !chunk.is_empty() {
            out.push(json!({"origin": origin, "tables": chunk}).to_string());
            chunk.clear();
            size = 0;
        }
        size += t.len() + 4;
        chunk.push(t);
    }
    if !chunk.is_empty() {
        out.push(json!({"origin": origin, "tables": chunk}).to_string());
    }
    out
}

/// What a notification says; `None` for this instance's own. A payload that is not
/// Grafton's shape means anything may have changed.
fn read(payload: &str, origin: &str) -> Option<Changed> {
    let Ok(value) = serde_json::from_str::<Value>(payload) else {
        return Some(None);
    };
    if value["origin"].as_str() == Some(origin) {
        return None;
    }
    let tables = value["tables"].as_array().map(|ts| {
        ts.iter()
            .filter_map(|t| t.as_str().map(str::to_owned))
            .collect()
    });
    Some(tables)
}

/// SQL that makes writes from outside Grafton notify too: a function and, on each
/// table, a statement-level trigger calling it (`grafton live-triggers` prints it).
pub fn trigger_sql(tables: &[(String, String)]) -> String {
    let mut sql = format!(
        "-- Live queries see writes made outside Grafton at once (else at their next interval).\n\
         CREATE OR REPLACE FUNCTION grafton_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$\n\
         BEGIN\n  \
           PERFORM pg_notify('{CHANNEL}', json_build_object('tables', json_build_array(TG_TABLE_NAME))::text);\n  \
           RETURN NULL;\n\
         END $$;\n"
    );
    for (schema, name) in tables {
        let table = format!("{}.{}", ident(schema), ident(name));
        sql.push_str(&format!(
            "DROP TRIGGER IF EXISTS grafton_notify_change ON {table};\n\
             CREATE TRIGGER grafton_notify_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {table} \
             FOR EACH STATEMENT EXECUTE FUNCTION grafton_notify_change();\n"
        ));
    }
    sql
}

fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_notifications_are_ignored_and_others_read() {
        let mine = payloads("me", &["a".into(), "b".into()]);
        assert_eq!(read(&mine[0], "me"), None);
        assert_eq!(
            read(&mine[0], "you"),
            Some(Some(vec!["a".into(), "b".into()]))
        );
        // A trigger's payload has no origin.
        assert_eq!(
            read(r#"{"tables": ["t"]}"#, "me"),
            Some(Some(vec!["t".into()]))
        );
        // Anything else: everything may have changed.
        assert_eq!(read("venues", "me"), Some(None));
    }

    #[test]
    fn long_lists_are_split_under_the_payload_limit() {
        let tables: Vec<String> = (0..2000).map(|i| format!("table_{i}")).collect();
        let all = payloads("me", &tables);
        assert!(all.len() > 1);
        assert!(all.iter().all(|p| p.len() < 8000));
        let back: Vec<String> = all
            .iter()
            .flat_map(|p| read(p, "other").flatten().unwrap_or_default())
            .collect();
        assert_eq!(back, tables);
    }

    #[test]
    fn triggers_quote_their_tables() {
        let sql = trigger_sql(&[("public".into(), "my \"t\"".into())]);
        assert!(
            sql.contains(r#"ON "public"."my ""t""" FOR EACH STATEMENT"#),
            "{sql}"
        );
    }
}
