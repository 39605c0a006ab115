//! The config's `database` section.

use serde::Deserialize;

/// The `database` section: read replicas and read-your-writes. The command line's
/// `--read-replica-url` and `--primary-after-write-ms` win over it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatabaseConfig {
    /// PostgreSQL streaming replicas that serve queries and subscription polls.
    #[serde(default)]
    pub read_replicas: Vec<String>,
    /// After a caller's mutation, its reads go to the primary for this long.
    #[serde(default)]
    pub primary_after_write_ms: Option<u64>,
}
