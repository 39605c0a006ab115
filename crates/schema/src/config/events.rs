//! Event triggers (Hasura's `event_triggers` on a table, the same shape in the
//! config file): which writes to a table call which webhook, how often to retry.

use serde::{Deserialize, Serialize};

/// One event trigger on a table.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EventTriggerConfig {
    /// Its name: unique across the source, at most 42 characters, as Hasura's.
    pub name: String,
    /// Which operations fire it.
    pub definition: EventDefinition,
    /// How often, and how far apart, a failed delivery is tried again.
    #[serde(default)]
    pub retry_conf: RetryConf,
    /// The webhook's URL (`{{ENV}}` templates as Hasura's).
    #[serde(default)]
    pub webhook: Option<String>,
    /// The environment variable holding the webhook's URL.
    #[serde(default)]
    pub webhook_from_env: Option<String>,
    /// Headers sent with each delivery.
    #[serde(default)]
    pub headers: Vec<HeaderConf>,
    /// Request and response transforms: not served yet (the trigger is then left
    /// out, and reported).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_transform: Option<serde_json::Value>,
    /// See `request_transform`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_transform: Option<serde_json::Value>,
    /// Its own clean-up of the log, on a schedule, instead of the default
    /// retention (Hasura's `cleanup_config`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cleanup_config: Option<CleanupConfig>,
    /// A comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

/// The operations that fire a trigger.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EventDefinition {
    /// Inserts fire it.
    #[serde(default)]
    pub insert: Option<OperationSpec>,
    /// Updates of these columns fire it.
    #[serde(default)]
    pub update: Option<OperationSpec>,
    /// Deletes fire it.
    #[serde(default)]
    pub delete: Option<OperationSpec>,
    /// It may be invoked by hand (`pg_invoke_event_trigger`).
    #[serde(default)]
    pub enable_manual: bool,
}

/// An operation's columns: `"*"` or a list (for updates: those whose change fires).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OperationSpec {
    /// The columns.
    pub columns: Columns,
    /// Columns sent in the payload (Hasura's `payload`; all when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Columns>,
}

/// `"*"` or a list of columns.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum Columns {
    /// Every column.
    All(AllColumns),
    /// These columns.
    Some(Vec<String>),
}

/// The `"*"` of [`Columns`].
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
pub enum AllColumns {
    /// `"*"`.
    #[serde(rename = "*")]
    All,
}

/// Retries (Hasura's `retry_conf`).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RetryConf {
    /// How many times a failed delivery is tried again (0: once in all).
    #[serde(default)]
    pub num_retries: u32,
    /// Seconds between tries (a `Retry-After` answer may ask for more).
    #[serde(default = "ten")]
    pub interval_sec: u32,
    /// Seconds a delivery may take.
    #[serde(default = "sixty")]
    pub timeout_sec: u32,
    /// Tolerance in seconds for cron events (cron triggers' key; unused here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance_seconds: Option<u32>,
}

fn ten() -> u32 {
    10
}

fn sixty() -> u32 {
    60
}

impl Default for RetryConf {
    fn default() -> Self {
        Self {
            num_retries: 0,
            interval_sec: ten(),
            timeout_sec: sixty(),
            tolerance_seconds: None,
        }
    }
}

/// A header sent with each delivery: a value, or the environment variable holding it.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HeaderConf {
    /// The header's name.
    pub name: String,
    /// Its value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// The environment variable holding its value (never logged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_from_env: Option<String>,
}

/// A trigger's own clean-up of its events (Hasura's `cleanup_config`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CleanupConfig {
    /// When it runs: cron syntax in UTC.
    pub schedule: String,
    /// Events deleted per statement.
    #[serde(default = "ten_thousand")]
    pub batch_size: u32,
    /// Delivered and dead events older than this many hours are deleted.
    pub clear_older_than: u32,
    /// Seconds one batch may take.
    #[serde(default = "sixty")]
    pub timeout: u32,
    /// Whether the deleted events' invocation logs go too.
    #[serde(default)]
    pub clean_invocation_logs: bool,
    /// Paused: it does not run (`pause_event_trigger_cleanups`).
    #[serde(default)]
    pub paused: bool,
}

fn ten_thousand() -> u32 {
    10_000
}

/// The environment variables a webhook's `{{NAME}}` template reads.
pub fn template_vars(text: &str) -> Vec<String> {
    let mut vars = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else { break };
        vars.push(after[..end].trim().to_owned());
        rest = &after[end + 2..];
    }
    vars
}
