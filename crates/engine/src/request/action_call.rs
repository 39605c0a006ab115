//! One action handler called through the engine's one outgoing client, timed
//! and counted in `/metrics` (synchronous and asynchronous actions alike).

use crate::engine::Engine;
use grafton_remote::action::Output;
use grafton_remote::{ActionCall, ActionError};

impl Engine {
    /// Calls `call`'s handler; its 2xx answer, or the error to answer. Counted
    /// as `webhook_error` or `handler_error` when it fails; the caller counts
    /// the rest (`ok`, `invalid_answer`) with [`Engine::count_action`].
    pub(crate) async fn call_action(&self, call: ActionCall<'_>) -> Result<Output, ActionError> {
        let Some(client) = self.remote.as_ref() else {
            let why = "the outgoing HTTP client could not be built";
            return Err(ActionError::new(why, "action-webhook-error"));
        };
        let name = call.action.name.clone();
        let started = std::time::Instant::now();
        let output = grafton_remote::action::call(client, call).await;
        let metrics = &self.metrics().actions;
        let seconds = metrics.seconds.with_label_values(&[name.as_str()]);
        seconds.observe(started.elapsed().as_secs_f64());
        output.inspect_err(|e| match e.code() == "action-webhook-error" {
            true => self.count_action(&name, "webhook_error"),
            false => self.count_action(&name, "handler_error"),
        })
    }

    /// Counts one call of `action` that came to `result`.
    pub(crate) fn count_action(&self, action: &str, result: &str) {
        let metrics = &self.metrics().actions;
        metrics.calls.with_label_values(&[action, result]).inc();
    }
}
