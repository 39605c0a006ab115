//! A group's parts: the requests riding along with a leader, what each is told,
//! and the batch's values.

use crate::admission::Overloaded;
use crate::error::EngineError;
use grafton_execute::{DbErrorKind, ExecuteError};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// Requests riding along with the one waiting for a connection.
#[derive(Default)]
pub(super) struct Group(pub(super) Mutex<Vec<Member>>);

/// A request riding along: its row of values, where its answer goes, and since
/// when it waits.
pub(super) struct Member {
    pub(super) values: String,
    pub(super) answer: oneshot::Sender<Outcome>,
    pub(super) joined: Instant,
}

/// What a member is told.
pub(super) enum Outcome {
    /// Its answer (or the size it had past the limit).
    Answer(Result<String, u64>),
    /// Every request's error: no connection, or no place in the heavy lane.
    Failed(Refused),
    /// Run alone, with this much of its time already spent by the batch.
    Alone(Duration),
}

/// Why every request of a group failed, as each member is told it.
#[derive(Clone)]
pub(super) enum Refused {
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

/// The batch's values: the leader's row first, then each member's, as one JSON
/// array (each row is already JSON).
pub(super) fn batch(own: &str, members: &[Member]) -> String {
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

pub(super) fn tell(members: Vec<Member>, outcome: impl Fn() -> Outcome) {
    for m in members {
        let _ = m.answer.send(outcome());
    }
}

/// `refused` for the members that waited at least half of `queue_wait` (the
/// longest a request waits alone); the ones that joined later try again alone, so
/// none waits more than one and a half times it, nor is refused after a moment.
pub(super) fn refuse(members: Vec<Member>, refused: Refused, queue_wait: Duration) {
    for m in members {
        let outcome = match m.joined.elapsed() >= queue_wait / 2 {
            true => Outcome::Failed(refused.clone()),
            false => Outcome::Alone(Duration::ZERO),
        };
        let _ = m.answer.send(outcome);
    }
}
