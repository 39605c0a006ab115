//! One synchronous action call: Hasura's payload POSTed to the handler with the
//! action's headers (and the client's, when it forwards them), and the answer
//! read as Hasura reads it: a 2xx body is the output (checked by the caller
//! against the output type), a 4xx body is `{message, extensions}` (or the older
//! `{message, code}`), anything else is an error.

use crate::client::{CallError, Client};
use grafton_auth::IGNORED_CLIENT_HEADERS;
use grafton_kriti::{RequestTransform, ResponseTransform};
use grafton_schema::config::ActionConfig;
use serde_json::{json, Map, Value};
use std::time::Duration;

/// What the calls say they are.
pub(crate) const USER_AGENT: &str = concat!("grafton/", env!("CARGO_PKG_VERSION"));

/// What an action is called with.
pub struct ActionCall<'a> {
    /// The action.
    pub action: &'a ActionConfig,
    /// Its arguments (`input`).
    pub input: Value,
    /// The caller's session variables (lower-case names).
    pub session: &'a Map<String, Value>,
    /// The request's document (`request_query`): `None` for an asynchronous
    /// action, called after its request (sent as `null`, as Hasura's).
    pub request_query: Option<&'a str>,
    /// The client's request headers, sent on when the action forwards them.
    pub client_headers: &'a [(String, String)],
    /// The most the call may take: the action's `timeout`, or less when the
    /// request's own time limit is shorter.
    pub timeout: Duration,
}

/// An action that gave no output: Hasura's GraphQL error for it.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct ActionError {
    /// The error's message.
    pub message: String,
    /// Its `extensions` (with `code`).
    pub extensions: Map<String, Value>,
}

impl ActionError {
    /// An error of Grafton's, with `code`.
    pub fn new(message: impl Into<String>, code: &str) -> Self {
        let mut extensions = Map::new();
        extensions.insert("code".into(), Value::String(code.into()));
        Self {
            message: message.into(),
            extensions,
        }
    }

    /// Its `extensions.code`.
    pub fn code(&self) -> &str {
        self.extensions
            .get("code")
            .and_then(Value::as_str)
            .unwrap_or("unexpected")
    }
}

/// Hop-by-hop headers, the connection's own: never sent on either.
const HOP_BY_HOP: &[&str] = &[
    "keep-alive",
    "transfer-encoding",
    "upgrade",
    "te",
    "trailer",
    "proxy-authorization",
];

/// The client's headers as Hasura forwards them: `X-Forwarded-Host`,
/// `X-Forwarded-User-Agent` and `X-Forwarded-Origin` from theirs, then every
/// header but those above.
pub fn forwarded(client: &[(String, String)]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (from, to) in [
        ("host", "X-Forwarded-Host"),
        ("user-agent", "X-Forwarded-User-Agent"),
        ("origin", "X-Forwarded-Origin"),
    ] {
        if let Some((_, v)) = client.iter().find(|(n, _)| n.eq_ignore_ascii_case(from)) {
            out.push((to.to_owned(), v.clone()));
        }
    }
    let kept = client.iter().filter(|(n, _)| {
        let n = n.to_ascii_lowercase();
        // Hasura's list, and every `x-hasura-*` and `x-grafton-*` (the admin
        // secret, the role).
        !IGNORED_CLIENT_HEADERS.contains(&n.as_str())
            && !HOP_BY_HOP.contains(&n.as_str())
            && !n.starts_with("x-hasura-")
            && !n.starts_with("x-grafton-")
    });
    out.extend(kept.cloned());
    out
}

/// A handler's 2xx answer.
#[derive(Debug)]
pub struct Output {
    /// Its JSON.
    pub value: Value,
    /// Its `Set-Cookie` headers, for the client's response (as Hasura passes
    /// them on for synchronous actions).
    pub set_cookies: Vec<String>,
}

/// Calls `call`'s handler; its 2xx answer, or the error to answer.
pub async fn call(client: &Client, call: ActionCall<'_>) -> Result<Output, ActionError> {
    let a = call.action;
    let d = &a.definition;
    let url = crate::webhook::templated(&d.handler).map_err(|e| {
        ActionError::new(format!("action '{}': {e}", a.name), "action-webhook-error")
    })?;
    let mut headers = vec![("User-Agent".to_owned(), USER_AGENT.to_owned())];
    if d.forward_client_headers {
        headers.extend(forwarded(call.client_headers));
    }
    // The action's own headers win over the client's.
    for h in &d.headers {
        let value = crate::webhook::header_value(h).map_err(|e| {
            ActionError::new(format!("action '{}': {e}", a.name), "action-webhook-error")
        })?;
        headers.retain(|(n, _)| !n.eq_ignore_ascii_case(&h.name));
        headers.push((h.name.clone(), value));
    }
    let payload = json!({
        "action": {"name": a.name},
        "session_variables": call.session,
        "input": call.input,
        "request_query": call.request_query,
    });
    let failed = |stage: &str, why: String| {
        let mut e = ActionError::new(format!("{stage} Transformation Failed"), "unexpected");
        e.extensions
            .insert("internal".into(), json!([{"message": why}]));
        e
    };
    let answer = match &d.request_transform {
        Some(t) => {
            let t = RequestTransform::read(t).map_err(|why| failed("Request", why))?;
            let outgoing = (t.apply(&payload, call.session, &url, headers))
                .map_err(|why| failed("Request", why))?;
            client.send(&outgoing, call.timeout).await
        }
        None => {
            client
                .post_json(&url, &headers, call.timeout, &payload)
                .await
        }
    };
    let answer = answer.map_err(|e| {
        let message = match e {
            CallError::Timeout(s) => format!("the action's handler did not answer within {s} s"),
            CallError::TooLarge(n) => format!("the action's handler answered more than {n} bytes"),
            CallError::Failed(why) => format!("the action's handler could not be called: {why}"),
        };
        ActionError::new(message, "action-webhook-error")
    })?;
    let mut body: Option<Value> = serde_json::from_slice(&answer.body).ok();
    // The handler's body reshaped (any status: an error's too) before it is read.
    if let (Some(t), Some(b)) = (&d.response_transform, body.as_ref()) {
        let t = ResponseTransform::read(t).map_err(|why| failed("Response", why))?;
        let response = json!({"status": answer.status, "body": b});
        body = Some(
            (t.apply(b, &payload, call.session, &response))
                .map_err(|why| failed("Response", why))?,
        );
    }
    match (answer.status, body) {
        (200..=299, Some(value)) => Ok(Output {
            value,
            set_cookies: answer.set_cookies,
        }),
        (200..=299, None) => Err(ActionError::new(
            "the action's handler answered a body that is not JSON",
            "action-webhook-error",
        )),
        (400..=499, Some(Value::Object(e))) if e.get("message").is_some_and(Value::is_string) => {
            Err(handler_error(e))
        }
        (400..=499, _) => Err(ActionError::new(
            format!(
                "the action's handler answered {} without an error object ({{\"message\": …}})",
                answer.status
            ),
            "action-webhook-error",
        )),
        (status, _) => Err(ActionError::new(
            format!("the action's handler answered {status}: expected a 2xx or a 4xx status"),
            "action-webhook-error",
        )),
    }
}

/// A handler's 4xx `{message, extensions}` (or the older `{message, code}`), as
/// Hasura passes it on: its `extensions` verbatim when it has them, else
/// `{path: "$", code}` with `code` defaulting to `unexpected`.
fn handler_error(mut e: Map<String, Value>) -> ActionError {
    let message = match e.remove("message") {
        Some(Value::String(m)) => m,
        _ => String::new(),
    };
    let extensions = match e.remove("extensions") {
        Some(Value::Object(x)) => x,
        _ => {
            let code = match e.remove("code") {
                Some(Value::String(c)) => c,
                _ => "unexpected".to_owned(),
            };
            let mut x = Map::new();
            x.insert("path".into(), Value::String("$".into()));
            x.insert("code".into(), Value::String(code));
            x
        }
    };
    ActionError {
        message,
        extensions,
    }
}
