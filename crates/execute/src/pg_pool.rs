//! The PostgreSQL pool: deadpool-postgres's manager, with each connection's
//! prepared statements bounded by a least-recently-used order. A backend keeps
//! every statement prepared on it until it is closed, so 2,000 query shapes would
//! grow each backend by hundreds of MB; past [`STATEMENT_CACHE_SIZE`] the
//! statement used longest ago is closed, and the ones in use stay prepared.

use deadpool::managed::{self, Metrics, RecycleResult};
use deadpool_postgres::ClientWrapper;
use std::num::NonZeroUsize;
use std::sync::Mutex;
use tokio_postgres::types::Type;

/// The most statements one pooled connection keeps prepared.
pub const STATEMENT_CACHE_SIZE: usize = 256;

/// A pooled connection and the order in which its statements were last used.
pub struct PgConn {
    client: ClientWrapper,
    /// SQL text → its parameter types, least recently used first out.
    used: Mutex<lru::LruCache<String, Vec<Type>>>,
}

impl std::ops::Deref for PgConn {
    type Target = ClientWrapper;

    fn deref(&self) -> &ClientWrapper {
        &self.client
    }
}

/// deadpool-postgres's manager, making [`PgConn`]s.
pub struct Manager(pub deadpool_postgres::Manager);

impl managed::Manager for Manager {
    type Type = PgConn;
    type Error = tokio_postgres::Error;

    async fn create(&self) -> Result<PgConn, Self::Error> {
        let size = NonZeroUsize::new(STATEMENT_CACHE_SIZE).unwrap_or(NonZeroUsize::MIN);
        Ok(PgConn {
            client: self.0.create().await?,
            used: Mutex::new(lru::LruCache::new(size)),
        })
    }

    async fn recycle(&self, conn: &mut PgConn, metrics: &Metrics) -> RecycleResult<Self::Error> {
        self.0.recycle(&mut conn.client, metrics).await
    }
}

/// The pool.
pub type Pool = managed::Pool<Manager>;

/// A pooled connection.
pub type Object = managed::Object<Manager>;

/// `sql` prepared on `conn` with parameters of `types`: from the connection's
/// cache, or prepared now, closing the statement used longest ago when the cache
/// is full.
pub async fn prepare(
    conn: &PgConn,
    sql: &str,
    types: &[Type],
) -> Result<tokio_postgres::Statement, tokio_postgres::Error> {
    let evicted = {
        let mut used = conn.used.lock().unwrap_or_else(|p| p.into_inner());
        if used.get(sql).is_some() {
            None
        } else {
            used.push(sql.to_owned(), types.to_vec())
                .filter(|(old, _)| old != sql)
        }
    };
    if let Some((old, old_types)) = evicted {
        // Dropping the last handle of a statement closes it on the server.
        conn.client.statement_cache.remove(&old, &old_types);
    }
    conn.client.prepare_typed_cached(sql, types).await
}
