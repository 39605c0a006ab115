//! A streaming subscription's deliveries: each subscriber's next rows, its cursor
//! moved past them once they are queued.

use super::{hash_of, lock, Cohort, SlotId};
use crate::error::EngineError;
use crate::live::Delivery;
use std::sync::Arc;

impl Cohort {
    /// A stream's answers: each subscriber's new rows (if any), its cursor moved past
    /// them once they are queued; while rows keep coming, the cohort polls again.
    pub(super) fn deliver_batches(
        &self,
        ids: &[Vec<SlotId>],
        answers: Vec<grafton_execute::Answer>,
        cursor: &crate::live::stream::Cursor,
    ) {
        let mut more = false;
        let mut ended = Vec::new();
        let mut slots = lock(&self.slots);
        for (i, answer) in answers {
            let Some(group) = ids.get(i) else { continue };
            // The rows and the cursor past them, read once for the slots sharing them.
            let batch = answer
                .as_ref()
                .map(|text| crate::live::stream::batch(text))
                .map_err(|bytes| *bytes);
            for &id in group {
                let Some(slot) = slots.get(id) else {
                    continue;
                };
                // Whether it had an answer, before this poll marks it answered.
                let was = slot.last;
                let (body, last) = match &batch {
                    Err(bytes) => {
                        // Too large a batch: said once, and the cursor stays.
                        let hash = hash_of(bytes);
                        if slot.last != Some(hash) {
                            let error = EngineError::from(crate::LimitExceeded {
                                kind: crate::LimitKind::ResponseBytes,
                                limit: self.budget.max_bytes,
                                actual: *bytes,
                            });
                            let mut delivery = Delivery::error(slot.key, Arc::new(error));
                            delivery.before = Some(self.resume_of(was, slot));
                            if slot.sink.try_send(delivery) {
                                slot.last = Some(hash);
                            }
                        }
                        continue;
                    }
                    // An empty batch still counts as an answer (the subscriber is not new).
                    Ok(None) => {
                        slot.last.get_or_insert(0);
                        continue;
                    }
                    Ok(Some((body, last))) => {
                        slot.last.get_or_insert(0);
                        (body, last)
                    }
                };
                let value = grafton_execute::subscriber_value(self.dialect, &cursor.param, last);
                let Some(values) =
                    crate::live::stream::with_value(&slot.values, cursor.index, value)
                else {
                    continue;
                };
                if slot.sink.capacity() == 0 {
                    continue;
                }
                let Some(mut delivery) = self.queue(&slot.sink, slot.key, Ok(body.clone())) else {
                    // The stream ends (or, holding little, waits); its cursor never
                    // moves past rows it did not send.
                    let mut over = self.over_budget(slot.key, body.len());
                    over.before = Some(self.resume_of(was, slot));
                    if self.memory.heavy(slot.sink.holding()) && slot.sink.try_send(over) {
                        ended.push(id);
                    }
                    continue;
                };
                delivery.before = Some(self.resume_of(was, slot));
                // Not queued: the cursor stays, and the same rows come again.
                if slot.sink.try_send(delivery) {
                    slot.values = values;
                    more = true;
                }
            }
        }
        drop(slots);
        for id in ended {
            self.leave(id);
        }
        if more {
            self.wake_for_change();
        }
    }
}
