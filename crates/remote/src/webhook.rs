//! A webhook's URL and headers, resolved from the environment as Hasura resolves
//! them (`webhook_from_env`, `{{ENV}}` templates, `value_from_env`), and call
//! errors described without the URL (which may hold a secret). Shared by event
//! triggers, scheduled events and actions.

use grafton_schema::config::{EventTriggerConfig, HeaderConf};

/// `text` with each `{{NAME}}` replaced by the environment variable's value.
pub fn templated(text: &str) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            return Err("a '{{' without its '}}' in the webhook".into());
        };
        let name = after[..end].trim();
        let value = std::env::var(name)
            .map_err(|_| format!("the environment variable {name} (in the webhook) is not set"))?;
        out.push_str(&value);
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The webhook's URL.
pub fn url(trigger: &EventTriggerConfig) -> Result<String, String> {
    match (&trigger.webhook, &trigger.webhook_from_env) {
        (Some(url), _) => templated(url),
        (None, Some(var)) => std::env::var(var)
            .map_err(|_| format!("the environment variable {var} (webhook_from_env) is not set")),
        (None, None) => Err("the trigger has no webhook".into()),
    }
}

/// A header's value.
pub fn header_value(header: &HeaderConf) -> Result<String, String> {
    match (&header.value, &header.value_from_env) {
        (Some(v), _) => Ok(v.clone()),
        (None, Some(var)) => std::env::var(var).map_err(|_| {
            format!(
                "the environment variable {var} (header {}) is not set",
                header.name
            )
        }),
        (None, None) => Err(format!("header {} has no value", header.name)),
    }
}

/// A failed call, said without its URL.
pub fn describe(e: &reqwest::Error) -> String {
    let kind = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "could not connect"
    } else if e.is_redirect() {
        "answered with a redirect, which is not followed"
    } else {
        "failed"
    };
    let e = e.to_string();
    format!(
        "the webhook call {kind}: {}",
        e.split(" for url").next().unwrap_or(&e)
    )
}
