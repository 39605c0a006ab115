//! The steps that may refuse a request for what its caller has spent: the role's
//! rate limit (per request before the body is read, per root field once the
//! document is known) and its `max_concurrent` gate.

use super::trace_span;
use super::types::RateLimited;
use crate::engine::Caller;
use crate::limits::rate::RoleRate;
use crate::planner::{Checked, Planner};
use tracing::Instrument;

/// Step 2: one request from the caller's allowance, when the role's rate limit
/// counts requests (per root field, [`spend`] counts once the document says how many).
pub(super) async fn admit(planner: &Planner, caller: &Caller) -> Result<(), RateLimited> {
    match planner.rate.as_ref().filter(|r| !r.per_root_field) {
        Some(rate) => {
            take(rate, caller, 1)
                .instrument(trace_span!("graphql.admit"))
                .await
        }
        None => Ok(()),
    }
}

/// Step 6: a per-root-field rate limit, counted once the (cached) document says
/// how many, before its variables are read or its plan looked up.
pub(super) async fn spend(
    planner: &Planner,
    caller: &Caller,
    checked: &Checked,
) -> Result<(), RateLimited> {
    match planner.rate.as_ref().filter(|r| r.per_root_field) {
        Some(rate) => {
            let n = u32::try_from(checked.shape.root_fields).unwrap_or(u32::MAX);
            take(rate, caller, n)
                .instrument(trace_span!("graphql.admit"))
                .await
        }
        None => Ok(()),
    }
}

/// Step 8: a place under the role's `max_concurrent`, admitted only now, with the
/// plan's cost known; held until the answer.
pub(super) async fn queue(
    planner: &Planner,
) -> Result<Option<crate::admission::Permit>, crate::admission::Overloaded> {
    match &planner.gate {
        Some(gate) => Ok(Some(
            gate.enter()
                .instrument(trace_span!("graphql.queue"))
                .await?,
        )),
        None => Ok(None),
    }
}

/// Takes `n` requests from the caller's allowance.
pub(crate) async fn take(rate: &RoleRate, caller: &Caller, n: u32) -> Result<(), RateLimited> {
    let key = rate.key(caller.ip, &caller.vars);
    rate.take(&key, n).await.map_err(|wait| RateLimited {
        per_minute: rate.per_minute,
        wait,
    })
}
