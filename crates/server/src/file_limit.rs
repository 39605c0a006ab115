//! The open-files limit, and the connection cap that follows from it: each client
//! connection is a file, so the default `--max-connections` is what the limit
//! leaves after the database pools and Grafton's own files, not a fixed number
//! that refuses the 1,025th subscriber of a machine that could hold 20,000.

/// The default cap never passes this, whatever the file limit: at the ~20 KB an idle
/// WebSocket costs (docs/performance.md), about 2 GB of sockets.
pub const MAX_DEFAULT_CONNECTIONS: usize = 100_000;

/// Files kept for everything but clients and the database: the listeners, logs,
/// SQLite's files, and the HTTP clients of JWKS, auth hook, Redis and traces.
const RESERVED_FILES: u64 = 64;

/// The soft limit is raised no further than this (some systems' hard limit is
/// effectively unbounded).
const MOST_FILES: u64 = 1 << 20;

/// Raises the soft `RLIMIT_NOFILE` to the hard limit (at most 2^20); the soft limit
/// now in force, or `None` where it cannot be read.
pub fn raise_file_limit() -> Option<u64> {
    match rlimit::increase_nofile_limit(MOST_FILES) {
        Ok(soft) => Some(soft),
        Err(e) => {
            tracing::warn!("cannot raise the open-files limit: {e}");
            rlimit::Resource::NOFILE.get().ok().map(|(soft, _)| soft)
        }
    }
}

/// The default `--max-connections` under a soft limit of `files`, with `database`
/// connections (the pools, replicas' included) open besides.
pub fn default_max_connections(files: u64, database: usize) -> usize {
    usize::try_from(room_for_clients(files, database))
        .unwrap_or(usize::MAX)
        .clamp(16, MAX_DEFAULT_CONNECTIONS)
}

/// The most clients a soft limit of `files` leaves room for (what an explicit cap
/// above it cannot reach).
pub fn room_for_clients(files: u64, database: usize) -> u64 {
    files.saturating_sub(RESERVED_FILES + database as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_follows_the_file_limit() {
        // A common default soft limit of 1,024 leaves less than it: the pool and
        // Grafton's own files come first.
        assert_eq!(default_max_connections(1024, 10), 950);
        assert_eq!(default_max_connections(20_000, 30), 19_906);
        assert_eq!(
            default_max_connections(1 << 20, 10),
            MAX_DEFAULT_CONNECTIONS
        );
        assert_eq!(default_max_connections(50, 10), 16);
        assert_eq!(room_for_clients(1024, 10), 950);
    }

    #[test]
    fn raising_reaches_the_hard_limit() {
        let soft = raise_file_limit().expect("the limit is readable here");
        let (now, hard) = rlimit::Resource::NOFILE.get().expect("limit");
        assert_eq!(soft, now);
        assert_eq!(now, hard.min(MOST_FILES));
    }
}
