//! The metadata store: Hasura's metadata document and its `resource_version`, in a
//! schema of Grafton's own on PostgreSQL (`grafton_catalog`) or in tables beside
//! the data in a SQLite file (`grafton_catalog_*`, never served). Nothing is
//! created until the first write, so a database whose metadata is never changed
//! through the API is never touched. Each write is one transaction, guarded by the
//! version it read: a crash leaves the old document or the new one, and a writer
//! that lost a race is told so.

use grafton_catalog::Backend;
use grafton_execute::{Budget, Database, ExecuteError, Route, Tx};
use grafton_sql::{Param, ParamValue, SqlType, Statement};
use serde_json::{Map, Value};
use std::time::Duration;

/// The PostgreSQL channel a write notifies, with the new version as its payload.
pub const CHANNEL: &str = "grafton_metadata";

/// The version of a store nothing was ever written to (Hasura's first).
pub const FIRST_VERSION: u64 = 1;

/// How long one store statement may run.
const TIMEOUT: Duration = Duration::from_secs(10);

/// The largest stored document read back.
const MAX_BYTES: u64 = 64 * 1024 * 1024;

/// What the store holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Stored {
    /// The metadata document; `None` until one is written.
    pub metadata: Option<Value>,
    /// Hasura's `resource_version`: one more after each write.
    pub version: u64,
}

/// Why the store could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database refused or failed.
    #[error("the metadata store: {0}")]
    Database(#[from] ExecuteError),
    /// Another write came first: the version read (or named) is not the stored one.
    #[error("metadata resource version referenced ({expected}) did not match current version")]
    Conflict {
        /// The version the writer read (or named).
        expected: u64,
    },
    /// A stored value is not what Grafton writes.
    #[error("the metadata store holds {0}")]
    Corrupt(String),
}

/// The store of one database.
#[derive(Clone)]
pub struct Store {
    db: Database,
}

fn param(value: Value, ty: &'static str) -> Param {
    Param {
        value: ParamValue::Literal(value),
        ty: SqlType::Builtin(ty),
        list: false,
    }
}

fn statement(sql: &str, params: Vec<Param>) -> Statement {
    Statement {
        sql: sql.to_owned(),
        params,
        compact: false,
    }
}

impl Store {
    /// The store of `db`.
    pub fn new(db: Database) -> Self {
        Self { db }
    }

    fn postgres(&self) -> bool {
        self.db.backend() == Backend::Postgres
    }

    /// Where the document lives, for messages.
    pub fn location(&self) -> &'static str {
        if self.postgres() {
            "the table grafton_catalog.metadata"
        } else {
            "the table grafton_catalog_metadata of the SQLite file"
        }
    }

    /// One JSON value read on the primary (never under SQLite's writer lock).
    async fn read_json(&self, sql: &str) -> Result<Value, StoreError> {
        let budget = Budget {
            timeout: TIMEOUT,
            max_bytes: MAX_BYTES,
        };
        let text = (self.db)
            .query_json(&statement(sql, vec![]), &Map::new(), budget, Route::Primary)
            .await?;
        serde_json::from_str(&text).map_err(|e| StoreError::Corrupt(format!("not JSON: {e}")))
    }

    async fn exists(&self) -> Result<bool, StoreError> {
        let sql = if self.postgres() {
            "SELECT to_json(to_regclass('grafton_catalog.metadata') IS NOT NULL)"
        } else {
            "SELECT json(CASE WHEN count(*) > 0 THEN 'true' ELSE 'false' END) \
             FROM main.sqlite_schema WHERE name = 'grafton_catalog_metadata'"
        };
        Ok(self.read_json(sql).await? == Value::Bool(true))
    }

    /// The stored document and its version (an empty store: none, version 1).
    pub async fn load(&self) -> Result<Stored, StoreError> {
        let empty = Stored {
            metadata: None,
            version: FIRST_VERSION,
        };
        if !self.exists().await? {
            return Ok(empty);
        }
        let sql = if self.postgres() {
            "SELECT coalesce((SELECT json_build_object('metadata', metadata, 'version', \
             resource_version) FROM grafton_catalog.metadata), 'null'::json)"
        } else {
            "SELECT coalesce((SELECT json_object('metadata', json(metadata), 'version', \
             resource_version) FROM grafton_catalog_metadata), 'null')"
        };
        let row = self.read_json(sql).await?;
        if row.is_null() {
            return Ok(empty);
        }
        let version = (row.get("version").and_then(Value::as_u64))
            .ok_or_else(|| StoreError::Corrupt("a version that is not a number".into()))?;
        let metadata = row.get("metadata").filter(|m| m.is_object()).cloned();
        Ok(Stored { metadata, version })
    }

    /// Stores `metadata` as the version after `expected`, which must be the version
    /// stored now (else [`StoreError::Conflict`], and nothing changes); returns the
    /// new version. On PostgreSQL every instance listening on [`CHANNEL`] is told
    /// once the write commits.
    pub async fn save(&self, metadata: &Value, expected: u64) -> Result<u64, StoreError> {
        let missing = !self.exists().await?;
        let mut tx = self.db.begin(TIMEOUT).await?;
        if missing {
            self.create(&mut tx).await?;
        }
        let version = expected + 1;
        let text = Value::String(metadata.to_string());
        // The guard is on the write itself: of two writers that read one version,
        // the second finds the first's row changed and writes nothing (a first
        // write too, where there was no row to lock when it was read).
        let sql = if self.postgres() {
            "INSERT INTO grafton_catalog.metadata (id, metadata, resource_version) \
             VALUES (1, $1::json, $2::int8) ON CONFLICT (id) DO UPDATE \
             SET metadata = excluded.metadata, resource_version = excluded.resource_version, \
             updated_at = now() WHERE grafton_catalog.metadata.resource_version = $3::int8 \
             RETURNING resource_version::text"
        } else {
            "INSERT INTO grafton_catalog_metadata (id, metadata, resource_version) \
             VALUES (1, ?1, ?2) ON CONFLICT (id) DO UPDATE \
             SET metadata = excluded.metadata, resource_version = excluded.resource_version, \
             updated_at = CURRENT_TIMESTAMP WHERE grafton_catalog_metadata.resource_version = ?3 \
             RETURNING resource_version"
        };
        let params = vec![
            param(text, "text"),
            param(Value::from(version), "int8"),
            param(Value::from(expected), "int8"),
        ];
        let written = tx.rows(&statement(sql, params), &Map::new()).await?;
        if written.is_empty() {
            tx.rollback().await;
            return Err(StoreError::Conflict { expected });
        }
        if self.postgres() {
            tx.batch(&format!("NOTIFY {CHANNEL}, '{version}'")).await?;
        }
        tx.commit().await?;
        Ok(version)
    }

    /// The catalog states (`cli`, `console`) and the store's `id`, created the
    /// first time it is asked for.
    pub async fn catalog_state(&self) -> Result<Map<String, Value>, StoreError> {
        if !self.exists().await? {
            let mut tx = self.db.begin(TIMEOUT).await?;
            self.create(&mut tx).await?;
            tx.commit().await?;
        }
        let sql = if self.postgres() {
            "SELECT coalesce(json_object_agg(kind, state), '{}'::json) FROM grafton_catalog.catalog_state"
        } else {
            "SELECT coalesce(json_group_object(kind, json(state)), '{}') FROM grafton_catalog_state"
        };
        let mut states = match self.read_json(sql).await? {
            Value::Object(states) => states,
            _ => Map::new(),
        };
        if !states.contains_key("id") {
            let id = self.new_id().await?;
            self.set_catalog_state("id", &Value::String(id.clone()))
                .await?;
            states.insert("id".into(), Value::String(id));
        }
        Ok(states)
    }

    /// A fresh id, in a UUID's shape, from the database's random numbers.
    async fn new_id(&self) -> Result<String, StoreError> {
        let sql = if self.postgres() {
            "SELECT to_json(md5(random()::text || clock_timestamp()::text))"
        } else {
            "SELECT json_quote(lower(hex(randomblob(16))))"
        };
        let hex = self.read_json(sql).await?;
        let hex = hex.as_str().unwrap_or_default();
        if hex.len() < 32 {
            return Err(StoreError::Corrupt("a random id that is too short".into()));
        }
        let part = |a: usize, b: usize| &hex[a..b];
        Ok(format!(
            "{}-{}-{}-{}-{}",
            part(0, 8),
            part(8, 12),
            part(12, 16),
            part(16, 20),
            part(20, 32)
        ))
    }

    /// Stores one catalog state (`cli`, `console`, `id`) whole.
    pub async fn set_catalog_state(&self, kind: &str, state: &Value) -> Result<(), StoreError> {
        let missing = !self.exists().await?;
        let mut tx = self.db.begin(TIMEOUT).await?;
        if missing {
            self.create(&mut tx).await?;
        }
        let sql = if self.postgres() {
            "INSERT INTO grafton_catalog.catalog_state (kind, state) VALUES ($1::text, $2::json) \
             ON CONFLICT (kind) DO UPDATE SET state = excluded.state"
        } else {
            "INSERT INTO grafton_catalog_state (kind, state) VALUES (?1, ?2) \
             ON CONFLICT (kind) DO UPDATE SET state = excluded.state"
        };
        let params = vec![
            param(Value::String(kind.to_owned()), "text"),
            param(Value::String(state.to_string()), "text"),
        ];
        tx.rows(&statement(sql, params), &Map::new()).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Creates the store's tables when they are missing.
    async fn create(&self, tx: &mut Tx) -> Result<(), StoreError> {
        if self.postgres() {
            let lock = grafton_execute::CATALOG_DDL_LOCK;
            tx.batch(&format!("SELECT pg_advisory_xact_lock({lock})"))
                .await?;
        }
        let ddl = if self.postgres() {
            "CREATE SCHEMA IF NOT EXISTS grafton_catalog;
             CREATE TABLE IF NOT EXISTS grafton_catalog.metadata (
               id int PRIMARY KEY DEFAULT 1 CHECK (id = 1),
               metadata json NOT NULL,
               resource_version bigint NOT NULL,
               updated_at timestamptz NOT NULL DEFAULT now());
             CREATE TABLE IF NOT EXISTS grafton_catalog.catalog_state (
               kind text PRIMARY KEY,
               state json NOT NULL)"
        } else {
            "CREATE TABLE IF NOT EXISTS grafton_catalog_metadata (
               id integer PRIMARY KEY CHECK (id = 1),
               metadata text NOT NULL,
               resource_version integer NOT NULL,
               updated_at text NOT NULL DEFAULT CURRENT_TIMESTAMP);
             CREATE TABLE IF NOT EXISTS grafton_catalog_state (
               kind text PRIMARY KEY,
               state text NOT NULL)"
        };
        tx.batch(ddl).await?;
        Ok(())
    }
}
