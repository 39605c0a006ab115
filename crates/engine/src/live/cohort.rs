//! One cohort: its subscribers (slots, each with the hash of the last answer it was
//! sent) and the task that polls for them.

use super::{lock, Delivery, LiveOptions, Resume, Sink};
use crate::error::EngineError;
use crate::planner::Plan;
use grafton_execute::Budget;
use grafton_sql::{Multiplexed, Statement};
use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;

mod poller;
mod streams;
pub(crate) use poller::Poller;

/// A slot's index and generation (a freed index is reused with a new generation,
/// so a late answer never reaches the next occupant).
pub(crate) type SlotId = (usize, u64);

struct Slot {
    generation: u64,
    /// The subscriber's row of values (JSON text), bound by every poll.
    values: String,
    sink: Sink,
    key: u64,
    /// Hash of the last answer delivered; `None` until the first.
    last: Option<u64>,
}

#[derive(Default)]
struct Slots {
    entries: Vec<Option<Slot>>,
    free: Vec<usize>,
    generation: u64,
    count: usize,
}

impl Slots {
    /// The subscriber in a slot, if it is still the one `id` names.
    fn get(&mut self, (index, generation): SlotId) -> Option<&mut Slot> {
        self.entries
            .get_mut(index)?
            .as_mut()
            .filter(|s| s.generation == generation)
    }
}

pub(crate) struct Cohort {
    /// Kept so the plan (and the cohort's key) outlive every subscriber.
    _plan: Arc<Plan>,
    statement: Statement,
    /// Names of the tables the statement reads.
    tables: HashSet<String>,
    budget: Budget,
    options: LiveOptions,
    slots: Mutex<Slots>,
    wake: Notify,
    /// A write touched a table the cohort reads: poll everyone.
    changed: AtomicBool,
    /// Someone joined: poll the subscribers without an answer yet.
    fresh: AtomicBool,
    /// A streaming subscription's cursor (else a live query).
    cursor: Option<super::stream::Cursor>,
    dialect: grafton_sql::Dialect,
    /// The process's budget for queued answers.
    memory: Arc<super::memory::Memory>,
}

impl Cohort {
    pub(crate) fn new(
        plan: Arc<Plan>,
        multiplexed: &Multiplexed,
        budget: Budget,
        options: LiveOptions,
        dialect: grafton_sql::Dialect,
        memory: Arc<super::memory::Memory>,
    ) -> Self {
        Self {
            memory,
            cursor: super::stream::Cursor::of(&multiplexed.statement),
            dialect,
            _plan: plan.clone(),
            statement: multiplexed.statement.clone(),
            tables: multiplexed.tables.iter().map(|(_, t)| t.clone()).collect(),
            budget,
            options,
            slots: Mutex::default(),
            wake: Notify::new(),
            changed: AtomicBool::new(false),
            fresh: AtomicBool::new(false),
        }
    }

    pub(crate) fn join(&self, values: String, sink: Sink, key: u64, resume: Resume) -> SlotId {
        // A re-planned stream goes on from its cursor, not its initial value.
        let values = match (&self.cursor, resume.cursor) {
            (Some(c), Some(at)) => {
                super::stream::with_value(&values, c.index, at).unwrap_or(values)
            }
            _ => values,
        };
        let mut slots = lock(&self.slots);
        slots.generation += 1;
        let generation = slots.generation;
        let slot = Slot {
            generation,
            values,
            sink,
            key,
            last: resume.last,
        };
        let index = match slots.free.pop() {
            Some(i) => {
                slots.entries[i] = Some(slot);
                i
            }
            None => {
                slots.entries.push(Some(slot));
                slots.entries.len() - 1
            }
        };
        slots.count += 1;
        drop(slots);
        self.fresh.store(true, Ordering::Release);
        self.wake.notify_one();
        (index, generation)
    }

    /// Where a subscriber is: its last answer's hash and a stream's cursor.
    pub(crate) fn resume(&self, id: SlotId) -> Resume {
        let mut slots = lock(&self.slots);
        let Some(slot) = slots.get(id) else {
            return Resume::default();
        };
        self.resume_of(slot.last, slot)
    }

    /// A subscriber's place: `last` (its last answer's hash, if any) and, for a
    /// stream, the cursor in its values.
    fn resume_of(&self, last: Option<u64>, slot: &Slot) -> Resume {
        let cursor =
            (self.cursor.as_ref()).and_then(|c| super::stream::value_at(&slot.values, c.index));
        Resume { last, cursor }
    }

    pub(crate) fn leave(&self, (index, generation): SlotId) {
        let mut slots = lock(&self.slots);
        if let Some(entry) = slots.entries.get_mut(index) {
            if entry.as_ref().is_some_and(|s| s.generation == generation) {
                *entry = None;
                slots.free.push(index);
                slots.count -= 1;
            }
        }
        let empty = slots.count == 0;
        drop(slots);
        if empty {
            // The poller ends the cohort.
            self.wake.notify_one();
        }
    }

    pub(crate) fn len(&self) -> usize {
        lock(&self.slots).count
    }

    pub(crate) fn reads(&self, table: &str) -> bool {
        self.tables.contains(table)
    }

    pub(crate) fn wake_for_change(&self) {
        self.changed.store(true, Ordering::Release);
        self.wake.notify_one();
    }

    /// The subscribers to poll (all, or only those without an answer yet), in
    /// batches: the JSON array of distinct values, and for each the slots that
    /// share it. Subscribers with the same values get the same answer, computed
    /// once; one whose connection cannot take an answer now is left out (it keeps
    /// its last answer's hash, so it is answered once its connection reads again).
    fn batches(&self, fresh_only: bool) -> Vec<(Vec<Vec<SlotId>>, String)> {
        let slots = lock(&self.slots);
        let mut groups: Vec<(&str, Vec<SlotId>)> = Vec::new();
        let mut by_values: HashMap<&str, usize> = HashMap::new();
        for (i, slot) in slots.entries.iter().enumerate() {
            let Some(slot) = slot.as_ref().filter(|s| !fresh_only || s.last.is_none()) else {
                continue;
            };
            if slot.sink.capacity() == 0 {
                continue;
            }
            let id = (i, slot.generation);
            match by_values.entry(slot.values.as_str()) {
                Entry::Occupied(g) => groups[*g.get()].1.push(id),
                Entry::Vacant(g) => {
                    g.insert(groups.len());
                    groups.push((slot.values.as_str(), vec![id]));
                }
            }
        }
        (groups.chunks(self.options.batch_size.max(1)))
            .map(|chunk| {
                let values: Vec<&str> = chunk.iter().map(|(v, _)| *v).collect();
                let ids = chunk.iter().map(|(_, ids)| ids.clone()).collect();
                (ids, format!("[{}]", values.join(",")))
            })
            .collect()
    }

    /// Sends each subscriber of a batch its answer, when it differs from the last
    /// one it was sent.
    fn deliver(
        &self,
        ids: &[Vec<SlotId>],
        answers: Result<Vec<grafton_execute::Answer>, EngineError>,
    ) {
        let answers = match (&self.cursor, answers) {
            (Some(cursor), Ok(answers)) => return self.deliver_batches(ids, answers, cursor),
            (_, answers) => answers,
        };
        let mut slots = lock(&self.slots);
        let mut ended = Vec::new();
        let mut send =
            |id: SlotId, hash: u64, body: &dyn Fn() -> Result<String, Arc<EngineError>>| {
                let Some(slot) = slots.get(id) else {
                    return;
                };
                // Unchanged, or nowhere to queue it (full: the next poll retries).
                if slot.last == Some(hash) || slot.sink.capacity() == 0 {
                    return;
                }
                let body = body();
                let bytes = body.as_ref().map_or(0, String::len);
                let (mut delivery, last) = match self.queue(&slot.sink, slot.key, body) {
                    Some(d) => (d, false),
                    // A connection holding little of the budget is not what fills it:
                    // it waits for the next poll.
                    None if !self.memory.heavy(slot.sink.holding()) => return,
                    None => (self.over_budget(slot.key, bytes), true),
                };
                // A stream's error (its poll failed) keeps its cursor too.
                delivery.before = Some(self.resume_of(slot.last, slot));
                // Closed, or filled meanwhile: not delivered, so not recorded (and
                // a subscription over the budget ends only once told so).
                if slot.sink.try_send(delivery) {
                    slot.last = Some(hash);
                    if last {
                        ended.push(id);
                    }
                }
            };
        match answers {
            Ok(answers) => {
                for (i, answer) in answers {
                    let Some(group) = ids.get(i) else { continue };
                    match answer {
                        Ok(text) => {
                            let hash = hash_of(&text);
                            for &id in group {
                                send(id, hash, &|| Ok(format!("{{\"data\":{text}}}")));
                            }
                        }
                        Err(bytes) => {
                            let error = Arc::new(EngineError::from(crate::LimitExceeded {
                                kind: crate::LimitKind::ResponseBytes,
                                limit: self.budget.max_bytes,
                                actual: bytes,
                            }));
                            for &id in group {
                                send(id, hash_of(&bytes), &|| Err(error.clone()));
                            }
                        }
                    }
                }
            }
            Err(e) => {
                let hash = hash_of(&e.to_string());
                let error = Arc::new(e);
                for &id in ids.iter().flatten() {
                    send(id, hash, &|| Err(error.clone()));
                }
            }
        }
        drop(slots);
        for id in ended {
            self.leave(id);
        }
    }

    /// A delivery of `result`, its answer's bytes held against the memory budget;
    /// `None` when they do not fit.
    fn queue(
        &self,
        sink: &Sink,
        key: u64,
        result: Result<String, Arc<EngineError>>,
    ) -> Option<Delivery> {
        let held = match &result {
            Ok(body) => Some(self.memory.hold(body.len(), &sink.holding)?),
            Err(_) => None,
        };
        Some(Delivery {
            key,
            result,
            last: false,
            held,
            before: None,
        })
    }

    /// The last delivery of a subscription whose answer (`bytes`) did not fit the
    /// budget.
    fn over_budget(&self, key: u64, bytes: usize) -> Delivery {
        let error = EngineError::from(crate::LimitExceeded {
            kind: crate::LimitKind::LiveMemory,
            limit: u64::try_from(self.memory.limit()).unwrap_or(u64::MAX),
            actual: u64::try_from(self.memory.used().saturating_add(bytes)).unwrap_or(u64::MAX),
        });
        Delivery {
            last: true,
            ..Delivery::error(key, Arc::new(error))
        }
    }
}

pub(super) fn hash_of(value: &impl Hash) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    value.hash(&mut h);
    h.finish()
}
