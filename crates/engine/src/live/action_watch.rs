//! A subscription to an asynchronous action's result: one task per subscriber
//! reads the call from the action log (within the live queries' shared poll
//! budget) on the live interval, and at once when this instance finishes a
//! call; it sends the answer when it changed, and stops reading once the call
//! is over and its answer reads no table (it can no longer change).

use super::{Delivery, Sink};
use crate::planner::{Planner, Prepared};
use crate::request::async_actions::{result, Reader};
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::Duration;

/// Everything the task reads with, its own.
pub(crate) struct Watch {
    pub(crate) db: grafton_execute::Database,
    pub(crate) ready: Arc<tokio::sync::OnceCell<()>>,
    pub(crate) planner: Arc<Planner>,
    pub(crate) prepared: Prepared,
    pub(crate) admin: bool,
    pub(crate) session: Map<String, Value>,
    /// The root field's response key.
    pub(crate) response_key: String,
    pub(crate) root: grafton_ir::ActionRoot,
    /// Moves when this instance finishes a call.
    pub(crate) finished: tokio::sync::watch::Receiver<u64>,
    pub(crate) sink: Sink,
    pub(crate) key: u64,
}

/// The running task, aborted when the subscription is dropped.
pub(crate) struct Running(tokio::task::JoinHandle<()>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Watch {
    pub(super) fn start(self, polls: Arc<tokio::sync::Semaphore>, interval: Duration) -> Running {
        Running(tokio::spawn(self.run(polls, interval)))
    }

    async fn run(mut self, polls: Arc<tokio::sync::Semaphore>, interval: Duration) {
        let mut last = None;
        loop {
            let answer = {
                let Ok(_permit) = polls.acquire().await else {
                    return;
                };
                self.answer().await
            };
            match answer {
                Ok((body, done)) => {
                    let hash = super::cohort::hash_of(&body);
                    if last != Some(hash) {
                        let sent = self.sink.try_send(Delivery {
                            key: self.key,
                            result: Ok(body),
                            last: false,
                            held: None,
                            before: None,
                        });
                        // A full channel: sent again at the next look.
                        if sent {
                            last = Some(hash);
                        }
                    }
                    if done && last == Some(hash) {
                        return;
                    }
                }
                Err(e) => {
                    self.sink.try_send(Delivery {
                        key: self.key,
                        result: Err(Arc::new(e)),
                        last: true,
                        held: None,
                        before: None,
                    });
                    return;
                }
            }
            tokio::select! {
                () = tokio::time::sleep(interval) => {}
                Ok(()) = self.finished.changed() => {}
            }
        }
    }

    /// The response body now, within the role's size; and whether it is final.
    async fn answer(&self) -> Result<(String, bool), crate::error::EngineError> {
        let model = self.planner.model();
        let Some(action) = model.actions.get(self.root.action) else {
            let why = "the action is no longer served";
            return Err(grafton_remote::ActionError::new(why, "not-supported").into());
        };
        let reader = Reader {
            db: &self.db,
            ready: &self.ready,
            planner: &self.planner,
            prepared: &self.prepared,
            admin: self.admin,
            session: &self.session,
        };
        let (value, done) = result(&reader, &self.root, action).await?;
        let mut data = Map::new();
        data.insert(self.response_key.clone(), value);
        let mut body = Map::new();
        body.insert("data".into(), Value::Object(data));
        let body = Value::Object(body).to_string();
        let max = self.planner.limits().max_response_bytes;
        crate::limits::check(
            crate::LimitKind::ResponseBytes,
            Some(max),
            body.len() as u64,
        )?;
        Ok((body, done))
    }
}
