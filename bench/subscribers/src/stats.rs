//! What the run measures: delivery latencies, counts, and Grafton's and
//! PostgreSQL's resources while the updates run.

use serde_json::{json, Value};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Shared by every subscriber.
pub struct Shared {
    /// When each round's update committed (index: the round).
    commits: Mutex<Vec<Option<Instant>>>,
    /// Commit → receipt, in microseconds.
    latencies: Mutex<Vec<u32>>,
    first: AtomicUsize,
    messages: AtomicU64,
    skipped: AtomicU64,
    repeated: AtomicU64,
    errors: AtomicU64,
    first_error: Mutex<Option<String>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Shared {
    pub fn new(rounds: usize) -> Self {
        Self {
            commits: Mutex::new(vec![None; rounds + 1]),
            latencies: Mutex::new(Vec::new()),
            first: AtomicUsize::new(0),
            messages: AtomicU64::new(0),
            skipped: AtomicU64::new(0),
            repeated: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            first_error: Mutex::new(None),
        }
    }

    /// Round `round`'s update has committed.
    pub fn committed(&self, round: usize) {
        if let Some(slot) = lock(&self.commits).get_mut(round) {
            *slot = Some(Instant::now());
        }
    }

    /// A subscriber that had `last` received `v`.
    pub fn received(&self, last: i64, v: i64) {
        if last < 0 {
            self.first.fetch_add(1, Ordering::Relaxed);
            return;
        }
        self.messages.fetch_add(1, Ordering::Relaxed);
        if v <= last {
            // The same value again (or an older one): not a delivery of an update.
            self.repeated.fetch_add(1, Ordering::Relaxed);
            return;
        }
        if v > last + 1 {
            self.skipped
                .fetch_add(u64::try_from(v - last - 1).unwrap_or(0), Ordering::Relaxed);
        }
        let commit = usize::try_from(v)
            .ok()
            .and_then(|r| lock(&self.commits).get(r).copied().flatten());
        // A result can arrive before the updater has read its own commit back:
        // that counts as no wait at all.
        let micros = commit.map_or(0, |c| c.elapsed().as_micros());
        lock(&self.latencies).push(u32::try_from(micros).unwrap_or(u32::MAX));
    }

    pub fn error(&self, e: String) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        lock(&self.first_error).get_or_insert(e);
    }

    pub fn first_results(&self) -> usize {
        self.first.load(Ordering::Relaxed)
    }

    pub fn messages(&self) -> u64 {
        self.messages.load(Ordering::Relaxed)
    }

    pub fn skipped(&self) -> u64 {
        self.skipped.load(Ordering::Relaxed)
    }

    pub fn repeated(&self) -> u64 {
        self.repeated.load(Ordering::Relaxed)
    }

    pub fn errors(&self) -> u64 {
        self.errors.load(Ordering::Relaxed)
    }

    pub fn first_error(&self) -> Option<String> {
        lock(&self.first_error).clone()
    }

    /// p50, p95, p99 and max of the delivery latencies, in ms.
    pub fn latency_ms(&self) -> Value {
        let mut all = lock(&self.latencies).clone();
        all.sort_unstable();
        let at = |q: f64| -> f64 {
            if all.is_empty() {
                return 0.0;
            }
            let i = ((all.len() as f64 - 1.0) * q).round() as usize;
            f64::from(all[i.min(all.len() - 1)]) / 1000.0
        };
        json!({"p50": at(0.50), "p95": at(0.95), "p99": at(0.99), "max": at(1.0), "n": all.len()})
    }
}

/// Grafton's CPU and RSS (from /proc), the CPU of this client and of PostgreSQL's
/// processes, and PostgreSQL's transactions, over the updates: on a shared machine
/// they say which of the three is the limit.
pub struct Sampler {
    pid: Option<u32>,
    started: Instant,
    cpu_ticks: Option<u64>,
    client_ticks: Option<u64>,
    /// PostgreSQL's postmaster (the parent of this client's backend) and the ticks
    /// of its process tree at the start.
    postmaster: Option<u32>,
    postgres_ticks: Option<u64>,
    xacts: Option<i64>,
    rss_max_kb: AtomicU64,
}

/// What [`Sampler::finish`] measured.
pub struct Resources {
    pub grafton: Value,
    pub postgres: Value,
    /// This load client's own CPU.
    pub client: Value,
}

const XACTS: &str = "SELECT (sum(xact_commit) + sum(xact_rollback))::int8 FROM pg_stat_database";

impl Sampler {
    pub async fn start(pid: Option<u32>, db: &tokio_postgres::Client) -> Self {
        let xacts = db.query_one(XACTS, &[]).await.ok().and_then(|r| r.get(0));
        let backend: Option<i32> = (db.query_one("SELECT pg_backend_pid()", &[]).await)
            .ok()
            .and_then(|r| r.get(0));
        let postmaster = backend.and_then(|b| parent(u32::try_from(b).ok()?));
        let s = Self {
            pid,
            started: Instant::now(),
            cpu_ticks: pid.and_then(cpu_ticks),
            client_ticks: cpu_ticks(std::process::id()),
            postmaster,
            postgres_ticks: postmaster.and_then(tree_ticks),
            xacts,
            rss_max_kb: AtomicU64::new(0),
        };
        s.sample();
        s
    }

    /// Notes Grafton's RSS now.
    pub fn sample(&self) {
        if let Some(kb) = self.pid.and_then(rss_kb) {
            self.rss_max_kb.fetch_max(kb, Ordering::Relaxed);
        }
    }

    pub async fn finish(self, db: &tokio_postgres::Client) -> Resources {
        self.sample();
        let seconds = self.started.elapsed().as_secs_f64();
        // USER_HZ is 100 on Linux.
        let percent = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (Some(a), Some(b)) => Some((b.saturating_sub(a)) as f64 / 100.0 / seconds * 100.0),
            _ => None,
        };
        let cpu = percent(self.cpu_ticks, self.pid.and_then(cpu_ticks));
        let client = percent(self.client_ticks, cpu_ticks(std::process::id()));
        let postgres = percent(self.postgres_ticks, self.postmaster.and_then(tree_ticks));
        let rss_now = self.pid.and_then(rss_kb).map(|kb| kb as f64 / 1024.0);
        let xacts: Option<i64> = db.query_one(XACTS, &[]).await.ok().and_then(|r| r.get(0));
        let per_s = match (self.xacts, xacts) {
            (Some(a), Some(b)) => Some((b - a) as f64 / seconds),
            _ => None,
        };
        Resources {
            grafton: json!({
                "cpu_percent": cpu,
                "rss_mb_max": self.rss_max_kb.load(Ordering::Relaxed) as f64 / 1024.0,
                "rss_mb_end": rss_now,
            }),
            postgres: json!({
                "transactions_per_s": per_s,
                "cpu_percent": postgres,
            }),
            client: json!({ "cpu_percent": client }),
        }
    }
}

/// utime + stime of a process, in clock ticks.
fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name, which may contain spaces, in parentheses.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

/// A process's parent.
fn parent(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// The ticks of PostgreSQL's processes: the postmaster's own and those of the
/// children it has reaped (backends that ended), and every live child's. Only this
/// cluster's, and nothing when /proc does not show it (another container).
fn tree_ticks(postmaster: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{postmaster}/stat")).ok()?;
    let fields: Vec<u64> = (stat.rsplit_once(')')?.1.split_whitespace())
        .skip(11)
        .take(4)
        .filter_map(|f| f.parse().ok())
        .collect();
    let own: u64 = fields.iter().sum();
    let children: u64 = (std::fs::read_dir("/proc").ok()?)
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| parent(pid) == Some(postmaster))
        .filter_map(cpu_ticks)
        .sum();
    Some(own + children)
}

/// Resident memory of a process, in kB.
fn rss_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
