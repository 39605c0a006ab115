//! One webhook call, for an event trigger's event or a scheduled one: a POST
//! under a timeout held inside the claim, no redirect followed, at most
//! `max_response_bytes` of the answer read; and what came of it, as the record
//! the recorder writes.

use crate::Events;
use grafton_schema::config::HeaderConf;
use serde_json::{json, Value};
use std::time::Duration;

/// The longest an event waits before it is tried again.
const MAX_WAIT_SECS: u64 = 24 * 3600;

/// What a call came to.
pub(crate) struct Outcome {
    pub(crate) status: Option<u16>,
    pub(crate) ok: bool,
    pub(crate) retry_after: Option<u64>,
    pub(crate) response: String,
}

impl Outcome {
    /// A call that was not made, or got no answer.
    pub(crate) fn failed(response: String) -> Self {
        Self {
            status: None,
            ok: false,
            retry_after: None,
            response,
        }
    }
}

/// Which log an event is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Log {
    /// `event_log` (event triggers).
    Table,
    /// `scheduled_events` (cron triggers and one-off events).
    Scheduled,
}

impl Log {
    /// Its table in `grafton_catalog` (and its metrics' `log` label).
    pub(crate) fn table(self) -> &'static str {
        match self {
            Log::Table => "event_log",
            Log::Scheduled => "scheduled_events",
        }
    }
}

/// What one delivery came to, for the recorder.
pub(crate) struct Record {
    pub(crate) log: Log,
    pub(crate) row: Value,
}

impl Record {
    /// The record of `outcome` for event `id` of `trigger`, delivered if it was.
    pub(crate) fn new(
        log: Log,
        id: &str,
        trigger: &str,
        request: &Value,
        outcome: &Outcome,
    ) -> Self {
        let row = json!({
            "id": id, "trigger": trigger, "status": outcome.status,
            "request": request, "response": outcome.response,
            "ok": outcome.ok, "dead": false, "wait": outcome.retry_after.unwrap_or(0),
        });
        Self { log, row }
    }

    /// Dead when `dead` (its last try failed), else due again after
    /// `interval` seconds, or the answer's longer `Retry-After` held to a day.
    pub(crate) fn retry(mut self, dead: bool, interval: u32) -> Self {
        let asked = self.row["wait"].as_u64().unwrap_or(0);
        let wait = asked.max(u64::from(interval)).min(MAX_WAIT_SECS);
        self.row["wait"] = json!(wait);
        self.row["dead"] = json!(dead && self.row["ok"] != true);
        self
    }
}

impl Events {
    /// POSTs `payload` to `url` with `headers`, under `timeout_secs`; reads at
    /// most `max_response_bytes` of the answer.
    pub(crate) async fn call(
        &self,
        log: Log,
        url: Result<String, String>,
        headers: &[HeaderConf],
        timeout_secs: u32,
        payload: &Value,
        transform: Option<&Value>,
    ) -> Outcome {
        let url = match url {
            Ok(url) => url,
            Err(e) => return Outcome::failed(e),
        };
        let Ok(_permit) = self.calls.acquire().await else {
            return Outcome::failed("the delivery pool is closed".into());
        };
        let in_flight = &self.engine.metrics().events.in_flight;
        let _counted = InFlight::new(in_flight.with_label_values(&[log.table()]));
        // Within the claim: a slower call would see its event claimed again.
        let most = self
            .options
            .claim_timeout
            .saturating_sub(Duration::from_secs(60));
        let asked = Duration::from_secs(u64::from(timeout_secs.max(1)));
        let timeout = asked.min(most.max(Duration::from_secs(1)));
        let mut resolved = Vec::with_capacity(headers.len());
        for h in headers {
            match crate::webhook::header_value(h) {
                Ok(v) => resolved.push((h.name.clone(), v)),
                Err(e) => return Outcome::failed(e),
            }
        }
        let request = match transform {
            None => {
                let mut request = self.client.post(&url).json(payload);
                for (name, value) in &resolved {
                    request = request.header(name.as_str(), value.as_str());
                }
                request
            }
            Some(t) => match transformed(&self.client, t, payload, &url, resolved) {
                Ok(request) => request,
                Err(why) => {
                    return Outcome::failed(format!("Request Transformation Failed: {why}"))
                }
            },
        };
        let request = request.timeout(timeout);
        let mut response = match request.send().await {
            Ok(r) => r,
            Err(e) => return Outcome::failed(crate::webhook::describe(&e)),
        };
        let status = response.status();
        let retry_after = (response.headers().get("retry-after"))
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        let mut body = Vec::new();
        let cap = self.options.max_response_bytes;
        while body.len() < cap {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    body.extend_from_slice(&chunk[..chunk.len().min(cap - body.len())])
                }
                Ok(None) | Err(_) => break,
            }
        }
        Outcome {
            status: Some(status.as_u16()),
            ok: status.is_success(),
            retry_after,
            response: String::from_utf8_lossy(&body).into_owned(),
        }
    }
}

/// The call `transform` (Hasura's `request_transform`) makes of `payload` to
/// `url`; the session it reads is the event's (`event.session_variables`).
fn transformed(
    client: &reqwest::Client,
    transform: &Value,
    payload: &Value,
    url: &str,
    headers: Vec<(String, String)>,
) -> Result<reqwest::RequestBuilder, String> {
    let t = grafton_kriti::RequestTransform::read(transform)?;
    let session = (payload.pointer("/event/session_variables"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let out = t.apply(payload, &session, url, headers)?;
    grafton_remote::transformed(client, &out)
}

/// One call counted in flight while it lasts.
struct InFlight(grafton_engine::metrics::Gauge);

impl InFlight {
    fn new(gauge: grafton_engine::metrics::Gauge) -> Self {
        gauge.inc();
        Self(gauge)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// The invocation log's `request`: the payload and the headers' names (never
/// their values), in Hasura's version of the log (`2` for event triggers, `1`
/// for scheduled events).
pub(crate) fn logged_request(payload: &Value, headers: &[HeaderConf], version: &str) -> Value {
    json!({
        "payload": payload,
        "headers": headers.iter().map(|h| json!({"name": h.name})).collect::<Vec<_>>(),
        "version": version,
    })
}
