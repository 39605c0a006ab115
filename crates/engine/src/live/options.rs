//! How live queries run: the server's settings for them.

use std::time::Duration;

/// How live queries run.
#[derive(Debug, Clone, Copy)]
pub struct LiveOptions {
    /// How often every cohort polls (`--live-query-interval`).
    pub interval: Duration,
    /// Subscribers answered by one statement (`--live-query-batch-size`).
    pub batch_size: usize,
    /// Poll statements running at once, over all cohorts: the rest of the pool is
    /// left to queries and mutations.
    pub concurrency: usize,
    /// After a write, the shortest time between two polls of one cohort.
    pub debounce: Duration,
    /// A poll woken by a write reads on the primary, not a replica that may not
    /// have replayed the write yet (set with `Engine::with_primary_after_write`).
    pub primary_after_change: bool,
    /// Bytes of answers queued for subscribers at once, over every connection
    /// (`--live-query-max-bytes`): an answer that would pass it ends its subscription.
    pub max_bytes: usize,
}

impl Default for LiveOptions {
    fn default() -> Self {
        Self {
            interval: Duration::from_secs(1),
            batch_size: 100,
            concurrency: 2,
            debounce: Duration::from_millis(20),
            primary_after_change: false,
            max_bytes: 256 * 1024 * 1024,
        }
    }
}
