//! Live queries. Subscribers of the same plan (document, operation, role and
//! variable shape) form a cohort; one task per cohort polls the database with one
//! multiplexed statement per batch of subscribers and sends each subscriber its
//! answer only when it changed. Polls run on an interval and at once after a write
//! through Grafton to a table the cohort reads.

mod action_watch;
mod cohort;
mod memory;
mod options;
pub(crate) mod sessions;
mod stream;

pub(crate) use action_watch::Watch;
pub use memory::Held;
pub use options::LiveOptions;

use crate::error::EngineError;
use crate::planner::Plan;
use cohort::Cohort;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, Weak};

/// What a subscriber receives: its key (chosen by the transport) and a response
/// body's JSON text, or the error a poll met.
#[derive(Debug)]
pub struct Delivery {
    /// The key the subscriber was registered with.
    pub key: u64,
    /// `{"data": …}` text, or what went wrong.
    pub result: Result<String, Arc<EngineError>>,
    /// The subscription is over: this error is its last message.
    pub last: bool,
    /// The answer's bytes, held against the live-query memory budget until this
    /// delivery is dropped: keep it until the answer is written.
    pub held: Option<memory::Held>,
    /// Where its subscription was before this delivery was counted as sent. A
    /// transport that drops it unwritten (after a reload) resubscribes from here,
    /// so the answer is sent again and a stream's rows are not skipped.
    pub before: Option<Resume>,
}

impl Delivery {
    fn error(key: u64, error: Arc<EngineError>) -> Self {
        Self {
            key,
            result: Err(error),
            last: false,
            held: None,
            before: None,
        }
    }
}

/// Where a connection's deliveries go: one channel, shared by its subscriptions (a
/// full channel skips the delivery; the changed answer is sent again at the next
/// poll), and the bytes of answers the connection holds against the memory budget.
/// Deliveries travel boxed: a channel's slots are allocated up front, and every
/// idle connection has one.
#[derive(Debug, Clone)]
pub struct Sink {
    tx: tokio::sync::mpsc::Sender<Box<Delivery>>,
    holding: Arc<std::sync::atomic::AtomicUsize>,
}

impl Sink {
    /// The sink of a connection's channel.
    pub fn new(tx: tokio::sync::mpsc::Sender<Box<Delivery>>) -> Self {
        Self {
            tx,
            holding: Arc::default(),
        }
    }

    fn capacity(&self) -> usize {
        self.tx.capacity()
    }

    fn try_send(&self, delivery: Delivery) -> bool {
        self.tx.try_send(Box::new(delivery)).is_ok()
    }

    /// Bytes of this connection's answers queued or being written now.
    fn holding(&self) -> usize {
        self.holding.load(std::sync::atomic::Ordering::Acquire)
    }
}

/// Identifies a cohort: the role's planner, the document and the plan's key (its
/// operation and variable shape).
type CohortKey = (u64, String);

type Cohorts = Arc<Mutex<HashMap<CohortKey, Arc<Cohort>>>>;

/// Every cohort of one engine.
pub(crate) struct Live {
    options: LiveOptions,
    cohorts: Cohorts,
    /// Poll statements running at once, over all cohorts.
    polls: Arc<tokio::sync::Semaphore>,
    /// PostgreSQL's change feed (other instances, triggers), opened on first use.
    feed: std::sync::OnceLock<Option<grafton_execute::changes::ChangeFeed>>,
    /// Each poll statement's time, for metrics.
    poll_seconds: prometheus::Histogram,
    /// Answers queued for subscribers, over every cohort.
    memory: Arc<memory::Memory>,
    /// Enum tables (by name), whose writes change the schema: told to `enum_written`.
    enum_tables: Arc<std::sync::RwLock<HashSet<String>>>,
    enum_written: Arc<tokio::sync::Notify>,
    /// `@cached`'s answers, which the same writes make stale.
    cache: crate::response_cache::Shared,
}

/// A live subscription; dropping it unsubscribes.
pub struct Subscription {
    inner: Inner,
    /// Its place in its session's count of live subscriptions, given back on drop.
    _counted: sessions::Counted,
    /// The document it runs (a persisted query's, resolved).
    document: String,
}

/// Where a subscription was when a reload replaced its plan: the hash of the last
/// answer it was sent, and a stream's cursor, so that its new plan repeats neither
/// an unchanged answer nor a stream's rows.
#[derive(Debug, Default, Clone)]
pub struct Resume {
    last: Option<u64>,
    cursor: Option<serde_json::Value>,
}

/// What answers a subscription.
enum Inner {
    /// A slot of a cohort's statement.
    Cohort {
        cohort: Weak<Cohort>,
        slot: cohort::SlotId,
    },
    /// A task reading an asynchronous action's result (ended with it).
    Watch { _task: action_watch::Running },
}

impl Subscription {
    /// The document it runs (a persisted query's text, when it came as a hash).
    pub fn document(&self) -> &str {
        &self.document
    }

    /// Where it is now (see [`Resume`]).
    pub fn resume(&self) -> Resume {
        match &self.inner {
            Inner::Cohort { cohort, slot } => (cohort.upgrade())
                .map(|c| c.resume(*slot))
                .unwrap_or_default(),
            Inner::Watch { .. } => Resume::default(),
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        if let Inner::Cohort { cohort, slot } = &self.inner {
            if let Some(cohort) = cohort.upgrade() {
                cohort.leave(*slot);
            }
        }
    }
}

/// What a new subscriber brings: its plan, its values and where answers go.
pub(crate) struct Joining<'a> {
    pub planner: &'a crate::Planner,
    /// The document's text.
    pub document: &'a str,
    pub plan: Arc<Plan>,
    pub values: String,
    pub sink: Sink,
    pub key: u64,
    /// Who counts as one session for `subscription_limit`.
    pub session: String,
    /// Where a re-planned subscription was.
    pub resume: Resume,
}

impl Live {
    pub(crate) fn new(
        options: LiveOptions,
        poll_seconds: prometheus::Histogram,
        cache: crate::response_cache::Shared,
    ) -> Self {
        Self {
            cache,
            polls: Arc::new(tokio::sync::Semaphore::new(options.concurrency.max(1))),
            memory: memory::Memory::new(options.max_bytes),
            enum_tables: Arc::default(),
            enum_written: Arc::default(),
            options,
            cohorts: Default::default(),
            feed: std::sync::OnceLock::new(),
            poll_seconds,
        }
    }

    /// Polls woken by a write read on the primary from now on (`on`), for cohorts
    /// started after this.
    pub(crate) fn primary_after_change(&mut self, on: bool) {
        self.options.primary_after_change = on;
    }

    /// The change feed, started on first use (PostgreSQL only): what it hears
    /// wakes the cohorts reading the tables named.
    pub(crate) fn feed(
        &self,
        db: &grafton_execute::Database,
    ) -> Option<&grafton_execute::changes::ChangeFeed> {
        self.feed
            .get_or_init(|| {
                let cohorts = self.cohorts.clone();
                let (enums, written) = (self.enum_tables.clone(), self.enum_written.clone());
                let cache = self.cache.clone();
                db.change_feed(Arc::new(move |changed| match changed {
                    Some(tables) => {
                        cache.load().heard(&tables);
                        wake(&cohorts, tables.iter().map(String::as_str));
                        enum_writes(&enums, &written, &tables);
                    }
                    None => {
                        // Writes may have been missed: nothing kept here can be trusted.
                        cache.load().changed_here();
                        lock(&cohorts).values().for_each(|c| c.wake_for_change())
                    }
                }))
            })
            .as_ref()
    }

    /// Adds a subscriber to its plan's cohort (starting the cohort's poller if it is
    /// the first); its first answer comes with the next poll, which it triggers.
    pub(crate) fn join(
        &self,
        db: &grafton_execute::Database,
        joining: Joining<'_>,
    ) -> Result<Subscription, EngineError> {
        let crate::planner::PlanKind::Subscription { multiplexed, .. } = &joining.plan.kind else {
            return Err(EngineError::validation(
                "a subscription must select a field of a table",
            ));
        };
        // Counted before joining, so racing subscribers cannot pass the limit.
        let counted =
            (joining.planner.live).take(joining.session, joining.planner.limits().subscriptions)?;
        let key = (
            joining.planner.id,
            format!("{}\u{0}{}", joining.document, joining.plan.key),
        );
        self.feed(db);
        let mut cohorts = lock(&self.cohorts);
        let cohort = match cohorts.get(&key) {
            Some(c) => c.clone(),
            None => {
                let c = Arc::new(Cohort::new(
                    joining.plan.clone(),
                    multiplexed,
                    joining.planner.budget(),
                    self.options,
                    db.dialect(),
                    self.memory.clone(),
                ));
                cohorts.insert(key.clone(), c.clone());
                let poller = cohort::Poller {
                    cohort: c.clone(),
                    db: db.clone(),
                    polls: self.polls.clone(),
                    cohorts: Arc::downgrade(&self.cohorts),
                    key: key.clone(),
                    poll_seconds: self.poll_seconds.clone(),
                };
                tokio::spawn(poller.run());
                c
            }
        };
        let slot = cohort.join(joining.values, joining.sink, joining.key, joining.resume);
        Ok(Subscription {
            inner: Inner::Cohort {
                cohort: Arc::downgrade(&cohort),
                slot,
            },
            _counted: counted,
            document: joining.document.to_owned(),
        })
    }

    /// Starts the task answering a subscription to an asynchronous action's
    /// result, counted against the session's subscriptions as any other.
    pub(crate) fn watch(
        &self,
        planner: &crate::Planner,
        session: String,
        document: &str,
        watch: action_watch::Watch,
    ) -> Result<Subscription, EngineError> {
        let counted = (planner.live).take(session, planner.limits().subscriptions)?;
        let running = watch.start(self.polls.clone(), self.options.interval);
        Ok(Subscription {
            inner: Inner::Watch { _task: running },
            _counted: counted,
            document: document.to_owned(),
        })
    }

    /// A write through this instance changed these tables (by name): cohorts that
    /// read one of them poll now, and other instances are told.
    pub(crate) fn changed(&self, db: &grafton_execute::Database, tables: Vec<String>) {
        if tables.is_empty() {
            // An empty list on the feed says "anything changed": never by accident.
            return;
        }
        self.cache.load().written(&tables);
        wake(&self.cohorts, tables.iter().map(String::as_str));
        enum_writes(&self.enum_tables, &self.enum_written, &tables);
        if let Some(feed) = self.feed(db) {
            feed.publish(tables);
        }
    }

    /// Anything may have changed (SQL run through the metadata API, a write through
    /// a function): kept answers go stale here and on every instance.
    pub(crate) fn changed_everything(&self, db: &grafton_execute::Database) {
        self.cache.load().changed_everything();
        if let Some(feed) = self.feed(db) {
            feed.publish(Vec::new());
        }
    }

    /// The enum tables of the schemas served now (by name).
    pub(crate) fn set_enum_tables(&self, tables: HashSet<String>) {
        *self.enum_tables.write().unwrap_or_else(|p| p.into_inner()) = tables;
    }

    /// Notified when a write (through any instance, or a trigger's notification)
    /// changed an enum table: the schema's enum must be read again.
    pub(crate) fn enum_written(&self) -> Arc<tokio::sync::Notify> {
        self.enum_written.clone()
    }

    /// Opens the change feed now (PostgreSQL), not at the first subscription.
    pub(crate) fn listen(&self, db: &grafton_execute::Database) {
        self.feed(db);
    }

    /// Bytes of answers queued for subscribers now, for metrics.
    pub(crate) fn queued_bytes(&self) -> usize {
        self.memory.used()
    }

    /// Cohorts and subscribers, for tests and metrics.
    pub(crate) fn counts(&self) -> (usize, usize) {
        let cohorts = lock(&self.cohorts);
        let subscribers = cohorts.values().map(|c| c.len()).sum();
        (cohorts.len(), subscribers)
    }
}

/// Tells `written` when one of `tables` is an enum table.
fn enum_writes(
    enums: &std::sync::RwLock<HashSet<String>>,
    written: &tokio::sync::Notify,
    tables: &[String],
) {
    let enums = enums.read().unwrap_or_else(|p| p.into_inner());
    if tables.iter().any(|t| enums.contains(t)) {
        written.notify_one();
    }
}

/// Wakes the cohorts that read one of `tables`.
fn wake<'t>(cohorts: &Cohorts, tables: impl Iterator<Item = &'t str> + Clone) {
    for cohort in lock(cohorts).values() {
        if tables.clone().any(|t| cohort.reads(t)) {
            cohort.wake_for_change();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Every critical section leaves the data consistent; a panic cannot break it.
    m.lock().unwrap_or_else(|p| p.into_inner())
}
