//! The live-query memory budget: bytes of answers queued for subscribers (in their
//! connections' channels and being written), over every connection of the process,
//! and counted per connection too. An answer is held from the moment it is queued
//! until its connection has written it. One that would pass the budget is not
//! queued (see `Cohort::deliver`): its subscription ends when its own connection
//! holds an eighth of the budget or more (a client that does not keep up), or
//! waits for the next poll otherwise, so clients that stop reading can neither grow
//! the process nor end the subscriptions of clients that read.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Bytes queued now, and the most there may be.
#[derive(Debug)]
pub(crate) struct Memory {
    used: AtomicUsize,
    limit: usize,
}

/// Bytes of one queued answer, given back when it is dropped (written or discarded).
#[derive(Debug)]
pub struct Held {
    memory: Arc<Memory>,
    /// Its connection's count.
    connection: Arc<AtomicUsize>,
    bytes: usize,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.memory.used.fetch_sub(self.bytes, Ordering::AcqRel);
        self.connection.fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

impl Memory {
    pub(crate) fn new(limit: usize) -> Arc<Self> {
        Arc::new(Self {
            used: AtomicUsize::new(0),
            limit,
        })
    }

    /// Holds `bytes` for a connection (counted in `connection` too) if they fit
    /// under the budget.
    pub(crate) fn hold(
        self: &Arc<Self>,
        bytes: usize,
        connection: &Arc<AtomicUsize>,
    ) -> Option<Held> {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(bytes).filter(|&total| total <= self.limit)
            })
            .ok()?;
        connection.fetch_add(bytes, Ordering::AcqRel);
        Some(Held {
            memory: self.clone(),
            connection: connection.clone(),
            bytes,
        })
    }

    /// Whether a connection holding `bytes` is one of those filling the budget (an
    /// eighth of it or more): its subscriptions end rather than wait.
    pub(crate) fn heavy(&self, bytes: usize) -> bool {
        bytes >= self.limit / 8
    }

    /// Bytes still free under the budget.
    pub(crate) fn free(&self) -> usize {
        self.limit.saturating_sub(self.used())
    }

    /// Bytes queued now.
    pub(crate) fn used(&self) -> usize {
        self.used.load(Ordering::Acquire)
    }

    /// The budget.
    pub(crate) fn limit(&self) -> usize {
        self.limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_held_within_the_budget_and_given_back_on_drop() {
        let memory = Memory::new(100);
        let (one, two) = (Arc::default(), Arc::default());
        let a = memory.hold(60, &one).expect("fits");
        assert!(memory.hold(41, &two).is_none());
        let b = memory.hold(40, &two).expect("fits exactly");
        assert_eq!(memory.used(), 100);
        assert_eq!(
            (one.load(Ordering::Acquire), two.load(Ordering::Acquire)),
            (60, 40)
        );
        drop(a);
        assert_eq!(memory.used(), 40);
        assert_eq!(one.load(Ordering::Acquire), 0);
        drop(b);
        assert_eq!(memory.used(), 0);
        assert!(memory.hold(101, &one).is_none());
    }
}
