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
//! A batch that fails or runs past half of one request's time is not the answer of
//! any of its requests: each runs again alone, so only the one that must fails
//! (`Busy` and `Unavailable` excepted: they are every request's answer).

use crate::admission::{Gate, Overloaded, Waiting};
use crate::error::EngineError;
use grafton_execute::{Budget, Database, DbErrorKind, ExecuteError, GatherRead, Gathered, Route};
use grafton_sql::Statement;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

/// The most requests one statement answers by default (`--query-batch-size`).
pub const DEFAULT_BATCH_SIZE: usize = 32;

/// The groups forming now: at most one open per plan and route.
pub(crate) struct Groups {
    open: Mutex<HashMap<(usize, Route), Arc<Group>>>,
    /// The most requests one statement answers; 1: never gathered.
    max: usize,
    metrics: crate::metrics::gather::GatherMetrics,
}

/// Requests riding along with the one waiting for a connection.
#[derive(Default)]
struct Group(Mutex<Vec<Member>>);

/// A request riding along: its row of values, and where its answer goes.
struct Member {
    values: String,
    answer: oneshot::Sender<Outcome>,
}

/// What a member is told.
enum Outcome {
    /// Its answer (or the size it had past the limit).
    Answer(Result<String, u64>),
    /// Every request's error: no connection, or no place in the heavy lane.
    Failed(Refused),
    /// Run alone.
    Alone,
}

/// Why every request of a group failed, as each member is told it.
#[derive(Clone)]
enum Refused {
    Database(DbErrorKind, String),
    Overloaded(String),
}

impl From<Refused> for EngineError {
    fn from(r: Refused) -> Self {
        match r {
            Refused::Database(kind, message) => ExecuteError::Database { kind, message }.into(),
            Refused::Overloaded(why) => Overloaded(why).into(),
        }
    }
}

/// One query to run: its plan's identity, statements, values and limits.
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
}

impl Groups {
    /// Statements answering at most `max` requests each (1: off).
    pub(crate) fn new(max: usize, metrics: crate::metrics::gather::GatherMetrics) -> Self {
        Self {
            open: Mutex::default(),
            max: max.max(1),
            metrics,
        }
    }

    /// Runs `q`: alone when a connection is free or it cannot be gathered, else in
    /// (or at the head of) the group of its plan.
    pub(crate) async fn query(&self, db: &Database, q: &Query<'_>) -> Result<String, EngineError> {
        let Some(multiplexed) = q.multiplexed.filter(|_| self.max > 1) else {
            return alone(db, q).await;
        };
        let key = (q.plan, q.route);
        let waiting = db.saturated(q.route) || q.lane.is_some_and(Gate::full);
        if !waiting && !lock(&self.open).contains_key(&key) {
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
                    // A heavy query rides along only where the lane's queue would take
                    // it, counted as waiting there: its refusals hold as without batches.
                    let queued = q.lane.map(Gate::queue).transpose()?;
                    let (answer, rx) = oneshot::channel();
                    members.push(Member {
                        values: values.clone(),
                        answer,
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
                let outcome = rx.await;
                drop(queued);
                match outcome {
                    Ok(Outcome::Answer(answer)) => answer.map_err(|size| too_large(size, q)),
                    Ok(Outcome::Failed(refused)) => Err(refused.into()),
                    // Told to, or the leader went away before answering.
                    Ok(Outcome::Alone) | Err(_) => {
                        self.metrics.retries.inc();
                        alone(db, q).await
                    }
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
        key: (usize, Route),
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
        let gather = || {
            let mut taken = lock(&closing.taken);
            let members = taken.get_or_insert_with(|| closing.close());
            (!members.is_empty()).then(|| batch(&own, members))
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
                    tell(members, || {
                        Outcome::Failed(Refused::Overloaded(why.clone()))
                    });
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
                tell(members, || Outcome::Alone);
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
                tell(slots.into_iter().flatten().collect(), || Outcome::Alone);
                match own {
                    Some(answer) => answer.map_err(|size| too_large(size, q)),
                    None => alone(db, q).await,
                }
            }
            Err(e) if matches!(e.kind(), DbErrorKind::Busy | DbErrorKind::Unavailable) => {
                let refused = Refused::Database(e.kind(), e.to_string());
                tell(members, || Outcome::Failed(refused.clone()));
                Err(e.into())
            }
            Err(e) if members.is_empty() => Err(too_large_error(e, q)),
            Err(e) => {
                tracing::debug!(
                    requests = members.len() + 1,
                    "a multiplexed query failed; each runs alone: {e}"
                );
                self.metrics.retries.inc();
                tell(members, || Outcome::Alone);
                alone(db, q).await
            }
        }
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
    key: (usize, Route),
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
        tell(members, || Outcome::Alone);
    }
}

/// The batch's values: the leader's row first, then each member's, as one JSON
/// array (each row is already JSON).
fn batch(own: &str, members: &[Member]) -> String {
    let len = own.len() + members.iter().map(|m| m.values.len() + 1).sum::<usize>();
    let mut out = String::with_capacity(len + 2);
    out.push('[');
    out.push_str(own);
    for m in members {
        out.push(',');
        out.push_str(&m.values);
    }
    out.push(']');
    out
}

fn tell(members: Vec<Member>, outcome: impl Fn() -> Outcome) {
    for m in members {
        let _ = m.answer.send(outcome());
    }
}

/// The query's own statement, alone (in the heavy lane when it is heavy).
async fn alone(db: &Database, q: &Query<'_>) -> Result<String, EngineError> {
    let _place = match q.lane {
        Some(lane) => Some(lane.enter().await?),
        None => None,
    };
    let answer = db.query_json(q.single, q.variables, q.budget, q.route);
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
