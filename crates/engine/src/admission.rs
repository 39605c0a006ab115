//! Admission control: how many requests run at once, and which ones wait.
//!
//! Two lanes share the database pool. A request whose estimated cost is at most
//! [`LIGHT_COST`] (a `_by_pk`, a page of rows, a mutation) takes a connection as
//! soon as one is free. A heavier one must first enter the heavy lane, which holds
//! fewer places than the pool has connections, so heavy queries can never take every
//! connection: cheap requests keep flowing while they run. A role with
//! `max_concurrent` has a gate of its own as well.
//!
//! A gate's queue is bounded by time, not by a count tuned for one load: a request
//! that would wait longer than its gate's longest wait (`--queue-timeout`, by default
//! [`QUEUE_WAIT`]; the requests ahead of it times the
//! recent mean time a place is held, over the places) is refused at once as
//! `overloaded`, and one that waits that long anyway is refused then. A hard cap
//! ([`queue_for`]) bounds the memory of the waiting requests.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

/// The largest cost estimate that still takes the light lane.
pub const LIGHT_COST: u64 = 1000;

/// The longest a request waits at a gate unless `--queue-timeout` says otherwise.
pub const QUEUE_WAIT: Duration = Duration::from_secs(2);

/// Why a request was not admitted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the server is overloaded: {0}; retry later")]
pub struct Overloaded(pub String);

/// A limit on requests running at once, with a bounded queue in front of it.
#[derive(Debug)]
pub struct Gate {
    places: Arc<Semaphore>,
    size: usize,
    waiting: AtomicUsize,
    /// Of those, the ones riding along in a waiting batch ([`Gate::ride`]): they take
    /// no place of their own, so they count against the queue's cap but are ahead of
    /// no one in its expected wait.
    riding: AtomicUsize,
    /// The most requests that may wait, whatever their expected wait.
    queue: usize,
    /// The longest a request waits, expected or actual.
    max_wait: Duration,
    /// The recent mean time a place was held, in microseconds (0: none yet).
    held_us: Arc<AtomicU64>,
    what: &'static str,
}

/// A place at a gate, released when dropped (and timed, for the expected wait).
#[derive(Debug)]
pub struct Permit {
    _place: OwnedSemaphorePermit,
    since: Instant,
    held_us: Arc<AtomicU64>,
}

impl Drop for Permit {
    fn drop(&mut self) {
        let sample = u64::try_from(self.since.elapsed().as_micros()).unwrap_or(u64::MAX);
        // An exponential mean over about the last 16 holds; a lost race between two
        // releases loses one sample, which an estimate can afford.
        let old = self.held_us.load(Ordering::Relaxed);
        let new = if old == 0 {
            sample.max(1)
        } else {
            (old.saturating_mul(15).saturating_add(sample) / 16).max(1)
        };
        self.held_us.store(new, Ordering::Relaxed);
    }
}

impl Gate {
    /// A gate for `size` requests at once and at most [`queue_for`]`(size)` waiting.
    pub fn new(size: usize, what: &'static str) -> Self {
        let size = size.max(1);
        Self::with_queue(size, queue_for(size), what)
    }

    /// A gate for `size` requests at once and at most `queue` waiting.
    pub fn with_queue(size: usize, queue: usize, what: &'static str) -> Self {
        Self {
            places: Arc::new(Semaphore::new(size.max(1))),
            size: size.max(1),
            waiting: AtomicUsize::new(0),
            riding: AtomicUsize::new(0),
            queue,
            max_wait: QUEUE_WAIT,
            held_us: Arc::new(AtomicU64::new(0)),
            what,
        }
    }

    /// The same gate, with requests waiting at most `max_wait` (not zero).
    pub fn waiting_at_most(mut self, max_wait: Duration) -> Self {
        if !max_wait.is_zero() {
            self.max_wait = max_wait;
        }
        self
    }

    fn permit(&self, place: OwnedSemaphorePermit) -> Permit {
        Permit {
            _place: place,
            since: Instant::now(),
            held_us: self.held_us.clone(),
        }
    }

    /// How long the `ahead`-th request in the queue can expect to wait.
    fn expected_wait(&self, ahead: usize) -> Duration {
        let held = self.held_us.load(Ordering::Relaxed);
        let ahead = u64::try_from(ahead).unwrap_or(u64::MAX);
        let places = u64::try_from(self.size).unwrap_or(u64::MAX);
        Duration::from_micros(held.saturating_mul(ahead) / places)
    }

    /// How many requests it lets in at once.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The longest a request waits here.
    pub fn max_wait(&self) -> Duration {
        self.max_wait
    }

    /// Whether every place is taken now (one more request would wait).
    pub fn full(&self) -> bool {
        self.places.available_permits() == 0
    }

    /// Takes a place in the queue, or refuses at once when it is full or its wait
    /// is expected to be too long. The place is left when the guard is dropped.
    pub fn queue(&self) -> Result<Waiting<'_>, Overloaded> {
        self.wait_in_queue(false)
    }

    /// Counts a request that waits here inside a batch (whose leader waits for the
    /// batch's one place) while the guard lives: refused at once when the queue is
    /// at its cap, or when its leader, one of those ahead that need a place, may
    /// wait too long.
    pub fn ride(&self) -> Result<Waiting<'_>, Overloaded> {
        self.wait_in_queue(true)
    }

    fn wait_in_queue(&self, riding: bool) -> Result<Waiting<'_>, Overloaded> {
        let ahead = self.waiting.fetch_add(1, Ordering::AcqRel);
        // Leaves the queue however the wait ends (admitted, refused, timed out, dropped).
        let (waiting, riders) = match riding {
            true => {
                let riders = self.riding.fetch_add(1, Ordering::AcqRel);
                (Waiting(&self.waiting, Some(&self.riding)), riders)
            }
            false => (
                Waiting(&self.waiting, None),
                self.riding.load(Ordering::Acquire),
            ),
        };
        // Those riding in a batch wait for its one place: only the others need one.
        // A rider gets in with its leader, one of them; anyone else after them.
        let places_ahead = ahead.saturating_sub(riders) + usize::from(!riding);
        let expected = self.expected_wait(places_ahead);
        if ahead >= self.queue || expected > self.max_wait {
            return Err(Overloaded(format!(
                "{} requests already run and {ahead} wait, about {} ms ahead ({})",
                self.size,
                expected.as_millis(),
                self.what
            )));
        }
        Ok(waiting)
    }

    /// Enters the gate, waiting in its queue if the wait is expected to be short.
    pub async fn enter(&self) -> Result<Permit, Overloaded> {
        if let Ok(place) = self.places.clone().try_acquire_owned() {
            return Ok(self.permit(place));
        }
        let _waiting = self.queue()?;
        match tokio::time::timeout(self.max_wait, self.places.clone().acquire_owned()).await {
            Ok(Ok(place)) => Ok(self.permit(place)),
            _ => Err(Overloaded(format!(
                "{} requests ran for the {} ms this one waited ({})",
                self.size,
                self.max_wait.as_millis(),
                self.what
            ))),
        }
    }
}

/// A request counted as waiting at a gate (and, riding in a batch, as riding)
/// while it lives.
#[derive(Debug)]
pub struct Waiting<'a>(&'a AtomicUsize, Option<&'a AtomicUsize>);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if let Some(riding) = self.1 {
            riding.fetch_sub(1, Ordering::AcqRel);
        }
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The most that may wait at a gate for `size`: 64 times its places, at least 256.
/// What bounds a queue in practice is the expected wait; this bounds its memory.
pub fn queue_for(size: usize) -> usize {
    size.saturating_mul(64).max(256)
}

/// The most requests waiting at the light queries' gate: as many as connections
/// may be open (`--max-connections`' ceiling). Requests of distinct plans each
/// wait there, where they would otherwise wait for a connection, which has no cap
/// but time; time bounds this queue too.
const LIGHT_QUEUE: usize = 100_000;

/// The gate of light queries' statements (`gather`) on `db`: `places` at once
/// (`None`: [`default_light_places`]), when fewer than its pool's connections (else
/// none: the pool is the gate), and only on PostgreSQL, the one that gathers;
/// requests wait at most `max_wait`.
pub fn light_gate(
    db: &grafton_execute::Database,
    places: Option<usize>,
    max_wait: Duration,
) -> Option<Gate> {
    if db.dialect() != grafton_sql::Dialect::Postgres {
        return None;
    }
    let pool_size = db.max_connections();
    let places = places
        .unwrap_or_else(|| default_light_places(pool_size, db.on_this_host()))
        .max(1);
    (places < pool_size).then(|| {
        Gate::with_queue(
            places,
            LIGHT_QUEUE,
            "light queries' statements (--query-concurrency)",
        )
        .waiting_at_most(max_wait)
    })
}

/// Light queries' statements at once by default: one per connection, or, for a
/// database whose cores are this machine's, two per core and one when that is
/// fewer (PostgreSQL's rule of thumb for active connections).
fn default_light_places(pool_size: usize, on_this_host: bool) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    match on_this_host {
        true => pool_size.min(2 * cores + 1),
        false => pool_size,
    }
}

/// The heavy lane for a pool of `pool_size` connections: all but a fifth of them
/// (at least one kept back), or the one connection of a pool of one. When light
/// queries' statements are capped at `light` places (`--query-concurrency`), at
/// most half of those, rounded up: heavy statements are what keeps PostgreSQL's
/// cores busy, and the fewer run at once, the bigger the batches of those waiting.
/// Requests wait at most `max_wait` in it.
pub fn heavy_lane(pool_size: usize, light: Option<usize>, max_wait: Duration) -> Gate {
    let reserved = (pool_size / 5).max(1);
    let places = pool_size.saturating_sub(reserved).max(1);
    Gate::new(
        light.map_or(places, |light| places.min(light.div_ceil(2)).max(1)),
        "heavy queries (estimated cost over 1000)",
    )
    .waiting_at_most(max_wait)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_full_gate_queues_then_refuses() {
        let gate = Arc::new(Gate::with_queue(1, 1, "test"));
        let first = gate.enter().await.expect("a free place");
        // One may wait; it gets in when the first leaves.
        let waiter = {
            let gate = gate.clone();
            tokio::spawn(async move { gate.enter().await.map(|_| ()) })
        };
        tokio::task::yield_now().await;
        while gate.waiting.load(Ordering::Acquire) == 0 {
            tokio::task::yield_now().await;
        }
        // The queue is full: refused at once.
        let refused = gate.enter().await.expect_err("queue full");
        assert!(refused.0.contains("1 requests already run"), "{refused}");
        drop(first);
        assert_eq!(waiter.await.expect("task"), Ok(()));
        assert_eq!(gate.waiting.load(Ordering::Acquire), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_queue_is_bounded_by_the_expected_wait() {
        let gate = Arc::new(Gate::with_queue(1, 100, "test"));
        // One hold of 1.5 s teaches the gate how long a place is kept.
        let first = gate.enter().await.expect("a free place");
        tokio::time::advance(Duration::from_millis(1500)).await;
        drop(first);
        assert_eq!(gate.expected_wait(1), Duration::from_millis(1500));
        let _running = gate.enter().await.expect("a free place");
        // The first in the queue expects 1.5 s: it waits.
        let waiter = {
            let gate = gate.clone();
            tokio::spawn(async move { gate.enter().await.map(|_| ()) })
        };
        while gate.waiting.load(Ordering::Acquire) == 0 {
            tokio::task::yield_now().await;
        }
        // The second would expect 3 s, over the default 2 s: refused at once, though the
        // hard cap has room for 99 more.
        let refused = gate.enter().await.expect_err("expected wait too long");
        assert!(refused.0.contains("about 3000 ms ahead"), "{refused}");
        assert_eq!(gate.waiting.load(Ordering::Acquire), 1);
        // The first waits its 2 s out while the place stays held, and is refused then.
        let timed_out = waiter.await.expect("task").expect_err("waited too long");
        assert!(timed_out.0.contains("for the 2000 ms"), "{timed_out}");
        assert_eq!(gate.waiting.load(Ordering::Acquire), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_longer_queue_timeout_lets_more_wait() {
        let wait = Duration::from_secs(4);
        let gate = Arc::new(Gate::with_queue(1, 100, "test").waiting_at_most(wait));
        let first = gate.enter().await.expect("a free place");
        tokio::time::advance(Duration::from_millis(1500)).await;
        drop(first);
        let running = gate.enter().await.expect("a free place");
        let spawn_waiter = || {
            let gate = gate.clone();
            tokio::spawn(async move { gate.enter().await.map(|_| ()) })
        };
        // Expected 1.5 s and 3 s: both under 4 s, so both wait (at 2 s the second
        // would have been refused at once).
        let one = spawn_waiter();
        while gate.waiting.load(Ordering::Acquire) < 1 {
            tokio::task::yield_now().await;
        }
        let two = spawn_waiter();
        while gate.waiting.load(Ordering::Acquire) < 2 {
            tokio::task::yield_now().await;
        }
        // A third would expect 4.5 s: refused at once.
        let refused = gate.enter().await.expect_err("over 4 s");
        assert!(refused.0.contains("about 4500 ms ahead"), "{refused}");
        drop(running);
        assert_eq!(one.await.expect("task"), Ok(()));
        assert_eq!(two.await.expect("task"), Ok(()));
    }

    #[test]
    fn the_heavy_lane_leaves_connections_for_light_requests() {
        let lane = |n| heavy_lane(n, None, QUEUE_WAIT);
        assert_eq!(lane(10).size, 8);
        assert_eq!(lane(2).size, 1);
        assert_eq!(lane(1).size, 1);
        assert_eq!((lane(20).size, lane(20).queue), (16, 1024));
        assert_eq!(
            heavy_lane(20, None, Duration::from_secs(9)).max_wait,
            Duration::from_secs(9)
        );
    }

    #[test]
    fn riders_count_against_the_cap_not_in_the_wait() {
        let gate = Gate::with_queue(1, 7, "test").waiting_at_most(Duration::from_millis(100));
        // A place is held 60 ms: one request ahead makes the next wait 120 ms.
        gate.held_us.store(60_000, Ordering::Relaxed);
        let riders: Vec<_> = (0..5).map(|_| gate.ride().expect("room")).collect();
        let leader = gate.queue().expect("riders are not ahead of it");
        let refused = gate.queue().expect_err("a second leader would wait 120 ms");
        assert!(refused.0.contains("about 120 ms ahead"), "{refused}");
        // The cap counts everyone: 6 riders and a leader fill it.
        let seventh = gate.ride().expect("room for a seventh");
        assert!(gate.ride().is_err());
        drop((riders, leader, seventh));
        assert_eq!(gate.waiting.load(Ordering::Acquire), 0);
        assert_eq!(gate.riding.load(Ordering::Acquire), 0);
    }

    #[test]
    fn capped_light_queries_cap_the_heavy_lane_at_half() {
        let lane = |pool, light| heavy_lane(pool, Some(light), QUEUE_WAIT).size;
        // A 2-core machine's default: 5 light places, 3 heavy.
        assert_eq!(lane(10, 5), 3);
        assert_eq!(lane(10, 1), 1);
        assert_eq!(lane(20, 8), 4);
        // Never more than the lane without the cap.
        assert_eq!(lane(4, 7), 3);
    }
}
