//! The live-query memory budget: bytes of answers queued for subscribers (in their
//! connections' channels and being written), over every connection of the process.
//! An answer is held from the moment it is queued until its connection has written
//! it; one that would pass the budget ends its subscription instead (see
//! `Cohort::deliver`), so clients that stop reading cannot grow the process.

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
    bytes: usize,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.memory.used.fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

impl Memory {
    pub(crate) fn new(limit: usize) -> Arc<Self> {
        Arc::new(Self {
            used: AtomicUsize::new(0),
            limit,
        })
    }

    /// Holds `bytes` if they fit under the budget.
    pub(crate) fn hold(self: &Arc<Self>, bytes: usize) -> Option<Held> {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(bytes).filter(|&total| total <= self.limit)
            })
            .ok()?;
        Some(Held {
            memory: self.clone(),
            bytes,
        })
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
        let a = memory.hold(60).expect("fits");
        assert!(memory.hold(41).is_none());
        let b = memory.hold(40).expect("fits exactly");
        assert_eq!(memory.used(), 100);
        drop(a);
        assert_eq!(memory.used(), 40);
        drop(b);
        assert_eq!(memory.used(), 0);
        assert!(memory.hold(101).is_none());
    }
}
