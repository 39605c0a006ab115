//! Admission control: how many requests run at once, and which ones wait.
//!
//! Two lanes share the database pool. A request whose estimated cost is at most
//! [`LIGHT_COST`] (a `_by_pk`, a page of rows, a mutation) takes a connection as
//! soon as one is free. A heavier one must first enter the heavy lane, which holds
//! fewer places than the pool has connections, so heavy queries can never take every
//! connection: cheap requests keep flowing while they run. A role with
//! `max_concurrent` has a gate of its own as well. Every gate has a bounded queue;
//! past it, or after waiting [`QUEUE_WAIT`], a request is refused at once as
//! `overloaded` rather than stalled.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The largest cost estimate that still takes the light lane.
pub const LIGHT_COST: u64 = 1000;

/// The longest a request waits at a gate.
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
    /// The most requests that may wait.
    queue: usize,
    what: &'static str,
}

/// A place at a gate, released when dropped.
pub type Permit = OwnedSemaphorePermit;

impl Gate {
    /// A gate for `size` requests at once and [`queue_for`]`(size)` waiting.
    pub fn new(size: usize, what: &'static str) -> Self {
        let size = size.max(1);
        Self::with_queue(size, queue_for(size), what)
    }

    /// A gate for `size` requests at once and `queue` waiting.
    pub fn with_queue(size: usize, queue: usize, what: &'static str) -> Self {
        Self {
            places: Arc::new(Semaphore::new(size.max(1))),
            size: size.max(1),
            waiting: AtomicUsize::new(0),
            queue,
            what,
        }
    }

    /// Enters the gate, waiting in its queue if there is room there.
    pub async fn enter(&self) -> Result<Permit, Overloaded> {
        if let Ok(permit) = self.places.clone().try_acquire_owned() {
            return Ok(permit);
        }
        let refused = || {
            Overloaded(format!(
                "{} requests already run and {} wait ({})",
                self.size, self.queue, self.what
            ))
        };
        if self.waiting.fetch_add(1, Ordering::AcqRel) >= self.queue {
            self.waiting.fetch_sub(1, Ordering::AcqRel);
            return Err(refused());
        }
        // Leaves the queue however the wait ends (admitted, timed out, or dropped).
        struct Waiting<'a>(&'a AtomicUsize);
        impl Drop for Waiting<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::AcqRel);
            }
        }
        let _waiting = Waiting(&self.waiting);
        match tokio::time::timeout(QUEUE_WAIT, self.places.clone().acquire_owned()).await {
            Ok(Ok(permit)) => Ok(permit),
            _ => Err(refused()),
        }
    }
}

/// How many may wait at a gate for `size`: eight times its places, at least 64.
/// A closed-loop load of a few hundred clients queues briefly instead of being
/// refused; what bounds a wait is [`QUEUE_WAIT`].
pub fn queue_for(size: usize) -> usize {
    size.saturating_mul(8).max(64)
}

/// The heavy lane for a pool of `pool_size` connections: all but a fifth of them
/// (at least one kept back), or the one connection of a pool of one.
pub fn heavy_lane(pool_size: usize) -> Gate {
    let reserved = (pool_size / 5).max(1);
    Gate::new(
        pool_size.saturating_sub(reserved).max(1),
        "heavy queries (estimated cost over 1000)",
    )
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

    #[test]
    fn the_heavy_lane_leaves_connections_for_light_requests() {
        assert_eq!(heavy_lane(10).size, 8);
        assert_eq!(heavy_lane(2).size, 1);
        assert_eq!(heavy_lane(1).size, 1);
        assert_eq!((heavy_lane(20).size, heavy_lane(20).queue), (16, 128));
    }
}
