//! Test harness for Grafton's integration tests: a real, throwaway PostgreSQL
//! cluster and fresh SQLite files. No mocks.
//!
//! * [`postgres_url`] returns `GRAFTON_TEST_DATABASE_URL` when set; otherwise it
//!   starts (once per test process) a private cluster with `initdb` + `pg_ctl` on
//!   a free `127.0.0.1` port in a temporary directory. As root, the server
//!   binaries run as the `postgres` user. A detached watchdog stops the cluster
//!   and deletes its directory when the test process exits, however it exits.
//! * [`fresh_database`] creates a new, uniquely named database on that server.
//! * [`sqlite_path`] returns a fresh SQLite file path in a per-process temp dir.
//! * [`Cluster`] is a cluster a test owns: stopped, started again, or copied into
//!   a streaming replica; [`Redis`] a throwaway `redis-server`.
//!
//! This crate is for tests only: on failure it panics with a clear message.

#![warn(missing_docs)]

mod cluster;
pub mod node;
mod redis;
mod server;

use cluster::*;
pub use redis::Redis;
pub use server::Cluster;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

/// Environment variable naming an existing server to use instead of a throwaway one.
pub const DATABASE_URL_ENV: &str = "GRAFTON_TEST_DATABASE_URL";

/// The unprivileged OS user that runs the cluster when tests run as root.
const DB_OS_USER: &str = "postgres";

const INSTALL_HINT: &str = "install PostgreSQL server binaries: apt-get install postgresql \
     (or set GRAFTON_TEST_DATABASE_URL to an existing server)";

/// Returns the URL of the test PostgreSQL server (connecting as a superuser to its
/// default database).
///
/// Uses `GRAFTON_TEST_DATABASE_URL` when set; otherwise starts a throwaway cluster
/// the first time it is called in this process and reuses it afterwards.
pub fn postgres_url() -> String {
    if let Some(url) = std::env::var(DATABASE_URL_ENV)
        .ok()
        .filter(|u| !u.trim().is_empty())
    {
        return url;
    }
    // Never dropped (a static): the watchdog removes it when the process exits.
    static CLUSTER: OnceLock<Cluster> = OnceLock::new();
    CLUSTER.get_or_init(Cluster::start).url()
}

/// Creates a new, uniquely named database (named after `prefix`) on the test
/// server and returns its URL.
pub fn fresh_database(prefix: &str) -> String {
    let admin_url = postgres_url();
    let name = unique_db_name(prefix);
    let sql = format!("CREATE DATABASE {}", quote_ident(&name));
    if let Err(e) = with_client(&admin_url, |client| client.batch_execute(&sql)) {
        panic!("grafton-testkit: {sql} failed: {e}");
    }
    with_database(&admin_url, &name)
}

/// Returns a fresh SQLite database file path (the file does not exist yet) in a
/// temporary directory that lives as long as the test process.
pub fn sqlite_path(prefix: &str) -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let dir = make_temp_dir("grafton-sqlite-");
        spawn_watchdog(&format!("rm -rf {}", sh_quote(dir.as_os_str())));
        dir
    });
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    dir.join(format!("{}-{n}.db", sanitize(prefix)))
}

/// The first column of the first row of `sql` on `url`, as text ("" for none).
pub fn query_one(url: &str, sql: &str) -> String {
    let rows = with_client(url, |c| c.simple_query(sql))
        .unwrap_or_else(|e| panic!("grafton-testkit: {sql} on {url} failed: {e}"));
    rows.iter()
        .find_map(|m| match m {
            postgres::SimpleQueryMessage::Row(r) => Some(r.get(0).unwrap_or("").to_owned()),
            _ => None,
        })
        .unwrap_or_default()
}

// ---------------------------------------------------------------------------
// Helpers

/// Runs `f` with a short-lived synchronous connection to `url`.
///
/// The `postgres` crate drives its own runtime, which must not run inside a
/// tokio runtime: doing it on a plain thread makes this safe from `#[tokio::test]`.
fn with_client<T: Send>(
    url: &str,
    f: impl FnOnce(&mut postgres::Client) -> Result<T, postgres::Error> + Send,
) -> Result<T, postgres::Error> {
    std::thread::scope(|s| {
        let handle = s.spawn(|| {
            let mut client = postgres::Client::connect(url, postgres::NoTls)?;
            let result = f(&mut client);
            let _ = client.close();
            result
        });
        match handle.join() {
            Ok(result) => result,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

fn unique_db_name(prefix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let suffix = format!("_{}_{nanos:x}_{n}", std::process::id());
    let mut base = sanitize(prefix).to_lowercase();
    // Postgres identifiers are at most 63 bytes (ASCII here).
    base.truncate(63 - suffix.len().min(63));
    format!("{base}{suffix}")
}

fn sanitize(prefix: &str) -> String {
    let s: String = prefix
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() {
        "test".to_owned()
    } else {
        s
    }
}

fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// `url` with its database replaced by `db` (URL or `key=value` form).
fn with_database(url: &str, db: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return format!("{url} dbname={db}");
    };
    let rest = &url[scheme_end + 3..];
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (head, tail) = url.split_at(scheme_end + 3 + authority_end);
    let query = tail.find('?').map(|i| &tail[i..]).unwrap_or("");
    format!("{head}/{db}{query}")
}

/// Runs an SQL script through `psql` (`ON_ERROR_STOP`, unaligned tuples-only output)
/// against `url` and returns its output; panics with psql's message on failure.
pub fn psql(url: &str, script: &[u8]) -> String {
    use std::io::Write;
    let mut child = Command::new("psql")
        .args([url, "-X", "-v", "ON_ERROR_STOP=1", "-q", "-At", "-f", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("psql runs (install the PostgreSQL client: apt-get install postgresql-client)");
    let mut stdin = child.stdin.take().expect("psql stdin");
    let script = script.to_vec();
    // Write from another thread so a large script cannot deadlock on a full stdout pipe.
    let writer = std::thread::spawn(move || stdin.write_all(&script));
    let out = child.wait_with_output().expect("psql finishes");
    writer
        .join()
        .expect("psql writer thread")
        .expect("write to psql");
    assert!(
        out.status.success(),
        "psql failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A fresh database with every `up.sql` of a Hasura project's migrations
/// (`<project>/migrations/default/*/up.sql`) applied, in the order of their
/// timestamped directory names, as `hasura migrate apply` does.
pub fn migrated(prefix: &str, project: &std::path::Path) -> String {
    let url = fresh_database(prefix);
    let dir = project.join("migrations/default");
    let mut steps: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("migrations")
        .flatten()
        .map(|e| e.path().join("up.sql"))
        .filter(|p| p.is_file())
        .collect();
    steps.sort();
    assert!(!steps.is_empty(), "no migrations under {}", dir.display());
    for step in steps {
        let sql = std::fs::read(&step).expect("up.sql");
        psql(&url, &sql);
    }
    url
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn replaces_database_in_urls() {
        assert_eq!(
            with_database("postgres://u:p@h:5432/postgres?sslmode=disable", "x"),
            "postgres://u:p@h:5432/x?sslmode=disable"
        );
        assert_eq!(with_database("postgres://h:1", "x"), "postgres://h:1/x");
        assert_eq!(
            with_database("host=h user=u", "x"),
            "host=h user=u dbname=x"
        );
    }

    #[test]
    fn database_names_are_unique_and_short() {
        let long = "p".repeat(100);
        let a = unique_db_name(&long);
        let b = unique_db_name(&long);
        assert_ne!(a, b);
        assert!(a.len() <= 63);
        assert!(unique_db_name("My-Test").starts_with("my_test_"));
    }

    #[test]
    fn quoting() {
        assert_eq!(sh_quote(OsStr::new("a'b")), r"'a'\''b'");
        assert_eq!(quote_ident("a\"b"), "\"a\"\"b\"");
    }
}
