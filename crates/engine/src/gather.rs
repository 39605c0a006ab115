//! Multiplexed queries. When a query would wait for a database connection, the
//! queries of the same plan (document, operation, role, variables' shape) arriving
//! while it waits ride along: once it holds a connection it runs one statement
//! answering all of them (`grafton_sql::render_multiplexed`, each request's
//! variables and session variables bound for it alone), so PostgreSQL pays its
//! per-statement cost once for the batch. A query that finds a connection free
//! runs alone at once: only requests that were waiting anyway are grouped.
//! A heavy query (estimated cost over 1000) waits for the heavy lane as well: one
//! also waiting there leads a group, its members take no place of their own, and
//! the batch holds one place and one connection, as one heavy query does.
//!
//! Where there are fewer places for light queries' statements than connections
//! (`--query-concurrency`; by default two per core and one when the database shares
//! this machine), a light query that may be multiplexed waits at that gate the same
//! way: a query finding no place leads or joins a group, the group's statement
//! takes one place, and its members take none. Fewer statements at once make
//! bigger batches, and leave the database's cores to the statements it runs.
//!
//! A batch that fails or runs past half of one request's time is not the answer of
//! any of its requests: each runs again alone with the time the batch left it, so
//! only the one that must fails, and the plan runs alone for a second (a request
//! failing on purpose cannot keep taxing its neighbours). No connection (`Busy`,
//! `Unavailable`) or no lane place is the answer of the members that waited at
//! least half the queue timeout; later ones try again alone.

use crate::admission::{Gate, Overloaded, Waiting};
use crate::error::EngineError;
use grafton_execute::{Budget, Database, DbErrorKind, ExecuteError, GatherRead, Gathered, Route};
use grafton_sql::Statement;
use members::{batch, refuse, tell, Group, Member, Outcome, Refused};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

mod members;

/// The most requests one statement answers by default (`--query-batch-size`).
pub const DEFAULT_BATCH_SIZE: usize = 32;

/// How long a plan runs alone after one of its batches failed.
const COOL_DOWN: Duration = Duration::from_secs(1);

/// A group's plan (its address), route, and whether its requests are heavy (a
/// plan's cost depends on its variables: light and heavy requests never mix).
type Key = (usize, Route, bool);

/// The groups forming now: at most one open per plan and route.
pub(crate) struct Groups {
    open: Mutex<HashMap<Key, Arc<Group>>>,
    /// Plans whose batch failed lately, and until when they run alone.
    cooling: Mutex<HashMap<Key, Instant>>,
    /// The most requests one statement answers; 1: never gathered.
    max: usize,
    /// The places of light queries' statements, when fewer than the connections.
    light: Option<Gate>,
    metrics: crate::metrics::gather::GatherMetrics,
}

/// One query to run: its plan's identity, statements, values and limits.
#[derive(Clone, Copy)]
pub(crate) struct Query<'a> {
    /// The plan's address: the same plan, the same statements.
    pub plan: usize,
    pub single: &'a Statement,
    pub multiplexed: Option<&'a Statement>,
    pub variables: &'a Map<String, Value>,
    pub budget: Budget,
    pub route: Route,
    /// The heavy lane, for a heavy query.
    pub lane: Option<&'a Gate>,
    /// The longest a request waits for a connection or a lane place.
    pub queue_wait: Duration,
}

impl Groups {
    /// Statements answering at most `max` requests each (1: off), light queries'
    /// statements running at most as `light` lets in (none: as connections do).
    pub(crate) fn new(
        max: usize,
        light: Option<Gate>,
        metrics: crate::metrics::gather::GatherMetrics,
    ) -> Self {
        Self {
            open: Mutex::default(),
            cooling: Mutex::default(),
            max: max.max(1),
            light: light.filter(|_| max > 1),
            metrics,
        }
    }

    /// The most requests one statement answers.
    pub(crate) fn max(&self) -> usize {
        self.max
    }

    /// The places of light queries' statements, when gated.
    pub(crate) fn places(&self) -> Option<usize> {
        self.light.as_ref().map(Gate::size)
    }

    /// Runs `q`: alone when a connection is free or it cannot be gathered, else in
    /// (or at the head of) the group of its plan.
    pub(crate) async fn query(&self, db: &Database, q: &Query<'_>) -> Result<String, EngineError> {
        let Some(multiplexed) = q.multiplexed.filter(|_| self.max > 1) else {
            return alone(db, q).await;
        };
        let heavy = q.lane.is_some();
        let q = &Query {
            lane: q.lane.or(self.light.as_ref()),
            ..*q
        };
        let key = (q.plan, q.route, heavy);
        let waiting = db.saturated(q.route) || q.lane.is_some_and(Gate::full);
        if (!waiting && !lock(&self.open).contains_key(&key)) || self.cooling(&key) {
            return alone(db, q).await;
        }
        let values =
            grafton_execute::subscriber_values(db.dialect(), &multiplexed.params, q.variables);
        let role = {
            let mut open = lock(&self.open);
            let mut joined = None;
            if let Some(group) = open.get(&key) {
                let mut members = lock(&group.0);
                if members.len() + 1 < self.max {
                    // A heavy query rides along counted as waiting in the lane's queue
                    // (its cap bounds the memory of those waiting), though not in its
                    // expected wait: the batch needs one place, its leader's. A light
                    // one is queued as its batch is, by its leader.
                    let queued = q.lane.filter(|_| heavy).map(Gate::ride).transpose()?;
                    let (answer, rx) = oneshot::channel();
                    members.push(Member {
                        values: values.clone(),
                        answer,
                        joined: Instant::now(),
                    });
                    joined = Some((rx, queued));
                }
            }
            match joined {
                Some((rx, queued)) => Role::Member(rx, queued),
                None if waiting || open.contains_key(&key) => {
                    let group = Arc::new(Group::default());
                    open.insert(key, group.clone());
                    Role::Leader(group)
                }
                None => Role::Alone,
            }
        };
        match role {
            Role::Alone => alone(db, q).await,
            Role::Member(rx, queued) => {
                // A backstop: the leader's waits and its batch are bounded by these.
                let bound = 2 * q.queue_wait + q.budget.timeout + Duration::from_secs(1);
                let outcome = tokio::time::timeout(bound, rx).await;
                drop(queued);
                match outcome {
                    Ok(Ok(Outcome::Answer(answer))) => answer.map_err(|size| too_large(size, q)),
                    Ok(Ok(Outcome::Failed(refused))) => Err(refused.into()),
                    Ok(Ok(Outcome::Alone(spent))) => {
                        self.metrics.retries.inc();
                        alone_after(db, q, spent).await
                    }
                    // The leader went away before answering.
                    Ok(Err(_)) => alone(db, q).await,
                    Err(_) => Err(ExecuteError::Timeout(q.budget.timeout).into()),
                }
            }
            Role::Leader(group) => self.lead(db, q, multiplexed, key, group, values).await,
        }
    }

    /// Waits for a connection for `q`, then runs it with the group's members.
    async fn lead(
        &self,
        db: &Database,
        q: &Query<'_>,
        multiplexed: &Statement,
        key: Key,
        group: Arc<Group>,
        own: String,
    ) -> Result<String, EngineError> {
        // Closed (taken out of the open ones) when a connection is held, or when
        // this request ends first: its members then run alone.
        let closing = Closing {
            groups: self,
            key,
            group,
            taken: Mutex::new(None),
        };
        // When the batch started (its first try, when a replica fails): what a
        // failed batch spent of its requests' time.
        let started: Mutex<Option<Instant>> = Mutex::new(None);
        let gather = || {
            let mut taken = lock(&closing.taken);
            let members = taken.get_or_insert_with(|| closing.close());
            if members.is_empty() {
                return None;
            }
            lock(&started).get_or_insert_with(Instant::now);
            Some(batch(&own, members))
        };
        let read = GatherRead {
            single: q.single,
            variables: q.variables,
            multiplexed,
            budget: q.budget,
            gather: &gather,
        };
        let result = match q.lane.map(Gate::enter) {
            Some(entering) => match entering.await {
                Ok(_place) => db.query_gathered(&read, q.route).await,
                Err(Overloaded(why)) => {
                    let members = closing.close();
                    refuse(members, Refused::Overloaded(why.clone()), q.queue_wait);
                    return Err(Overloaded(why).into());
                }
            },
            None => db.query_gathered(&read, q.route).await,
        };
        let members = lock(&closing.taken)
            .take()
            .unwrap_or_else(|| closing.close());
        match result {
            Ok(Gathered::One(text)) => {
                tell(members, || Outcome::Alone(Duration::ZERO));
                Ok(text)
            }
            Ok(Gathered::Many(answers)) => {
                self.metrics.batches.inc();
                self.metrics.requests.inc_by(answers.len() as u64);
                let mut slots: Vec<Option<Member>> = members.into_iter().map(Some).collect();
                let mut own = None;
                for (i, answer) in answers {
                    match i.checked_sub(1) {
                        None => own = Some(answer),
                        Some(k) => {
                            if let Some(m) = slots.get_mut(k).and_then(Option::take) {
                                let _ = m.answer.send(Outcome::Answer(answer));
                            }
                        }
                    }
                }
                let missing = slots.into_iter().flatten().collect();
                tell(missing, || Outcome::Alone(Duration::ZERO));
                match own {
                    Some(answer) => answer.map_err(|size| too_large(size, q)),
                    None => alone(db, q).await,
                }
            }
            Err(e) if matches!(e.kind(), DbErrorKind::Busy | DbErrorKind::Unavailable) => {
                refuse(
                    members,
                    Refused::Database(e.kind(), e.to_string()),
                    q.queue_wait,
                );
                Err(e.into())
            }
            Err(e) if members.is_empty() => Err(too_large_error(e, q)),
            Err(e) => {
                tracing::debug!(
                    requests = members.len() + 1,
                    "a multiplexed query failed; each runs alone: {e}"
                );
                self.metrics.retries.inc();
                self.cool(key);
                let spent = lock(&started).map_or(Duration::ZERO, |t| t.elapsed());
                tell(members, || Outcome::Alone(spent));
                alone_after(db, q, spent).await
            }
        }
    }
}

impl Groups {
    /// Whether the plan of `key` runs alone for now (a batch of it failed lately).
    fn cooling(&self, key: &Key) -> bool {
        let mut cooling = lock(&self.cooling);
        match cooling.get(key) {
            Some(until) if *until > Instant::now() => true,
            Some(_) => {
                cooling.remove(key);
                false
            }
            None => false,
        }
    }

    /// The plan of `key` runs alone for [`COOL_DOWN`].
    fn cool(&self, key: Key) {
        let mut cooling = lock(&self.cooling);
        let now = Instant::now();
        // Bounded: past a few thousand plans, the ones done cooling go.
        if cooling.len() >= 4096 {
            cooling.retain(|_, until| *until > now);
        }
        cooling.insert(key, now + COOL_DOWN);
    }
}

/// What a request is in its plan's group.
enum Role<'a> {
    Alone,
    /// Its answer to come, and (heavy) its place in the lane's queue meanwhile.
    Member(oneshot::Receiver<Outcome>, Option<Waiting<'a>>),
    Leader(Arc<Group>),
}

/// A leader's group until it is closed: closing takes it out of the open ones (if
/// still there) and hands over its members; dropped unclosed, its members run alone.
struct Closing<'a> {
    groups: &'a Groups,
    key: Key,
    group: Arc<Group>,
    taken: Mutex<Option<Vec<Member>>>,
}

impl Closing<'_> {
    /// Takes the group out of the open ones and returns its members still waiting.
    fn close(&self) -> Vec<Member> {
        let mut open = lock(&self.groups.open);
        if open
            .get(&self.key)
            .is_some_and(|g| Arc::ptr_eq(g, &self.group))
        {
            open.remove(&self.key);
        }
        let members = std::mem::take(&mut *lock(&self.group.0));
        drop(open);
        members
            .into_iter()
            .filter(|m| !m.answer.is_closed())
            .collect()
    }
}

impl Drop for Closing<'_> {
    fn drop(&mut self) {
        let members = lock(&self.taken).take().unwrap_or_else(|| self.close());
        tell(members, || Outcome::Alone(Duration::ZERO));
    }
}

/// The query's own statement, alone (in the heavy lane when it is heavy).
async fn alone(db: &Database, q: &Query<'_>) -> Result<String, EngineError> {
    alone_after(db, q, Duration::ZERO).await
}

/// [`alone`], with `spent` of its time already used (by a failed batch).
async fn alone_after(db: &Database, q: &Query<'_>, spent: Duration) -> Result<String, EngineError> {
    let timeout = q.budget.timeout.saturating_sub(spent);
    if timeout.is_zero() {
        return Err(ExecuteError::Timeout(q.budget.timeout).into());
    }
    let _place = match q.lane {
        Some(lane) => Some(lane.enter().await?),
        None => None,
    };
    let budget = Budget {
        timeout,
        ..q.budget
    };
    let answer = db.query_json(q.single, q.variables, budget, q.route);
    answer.await.map_err(|e| too_large_error(e, q))
}

/// An answer of `size` bytes, past the role's limit.
fn too_large(size: u64, q: &Query<'_>) -> EngineError {
    crate::LimitExceeded {
        kind: crate::LimitKind::ResponseBytes,
        limit: q.budget.max_bytes,
        actual: size,
    }
    .into()
}

/// A response past the role's size limit is that limit's error.
fn too_large_error(e: ExecuteError, q: &Query<'_>) -> EngineError {
    match e {
        ExecuteError::TooLarge(size) => too_large(size, q),
        other => other.into(),
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Every critical section here leaves its data whole.
    m.lock().unwrap_or_else(|p| p.into_inner())
}
