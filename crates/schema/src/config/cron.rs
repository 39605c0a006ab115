//! Cron triggers (Hasura's `cron_triggers`, the same shape in the config file): a
//! webhook called on a schedule, in UTC, with a fixed payload.

use super::events::HeaderConf;
use serde::{Deserialize, Serialize};

/// One cron trigger.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CronTriggerConfig {
    /// Its name, unique among cron triggers.
    pub name: String,
    /// The webhook's URL (`{{ENV}}` templates as Hasura's).
    pub webhook: String,
    /// When it fires: cron syntax in UTC (five fields, as Hasura's; a sixth,
    /// leading, field of seconds is Grafton's addition).
    pub schedule: String,
    /// The JSON sent as the payload's `payload`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<serde_json::Value>,
    /// Retries and how late a firing may still be delivered.
    #[serde(default)]
    pub retry_conf: ScheduleRetryConf,
    /// Headers sent with each delivery.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<HeaderConf>,
    /// Whether `export_metadata` lists it (Hasura's; Grafton keeps it either way).
    #[serde(default)]
    pub include_in_metadata: bool,
    /// A comment, sent in the payload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// Request and response transforms: not served yet (the trigger is then left
    /// out, and reported).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_transform: Option<serde_json::Value>,
    /// See `request_transform`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_transform: Option<serde_json::Value>,
}

/// Retries of a cron trigger or scheduled event (Hasura's `retry_conf` for them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScheduleRetryConf {
    /// How many times a failed delivery is tried again.
    #[serde(default)]
    pub num_retries: u32,
    /// Seconds between tries (a `Retry-After` answer may ask for more).
    #[serde(default = "ten")]
    pub retry_interval_seconds: u32,
    /// Seconds a delivery may take.
    #[serde(default = "sixty")]
    pub timeout_seconds: u32,
    /// How late an event may still be delivered the first time; later, it is
    /// dead, never called (after downtime, a stale firing is not sent).
    #[serde(default = "six_hours")]
    pub tolerance_seconds: u32,
}

fn ten() -> u32 {
    10
}

fn sixty() -> u32 {
    60
}

fn six_hours() -> u32 {
    21_600
}

impl Default for ScheduleRetryConf {
    fn default() -> Self {
        Self {
            num_retries: 0,
            retry_interval_seconds: ten(),
            timeout_seconds: sixty(),
            tolerance_seconds: six_hours(),
        }
    }
}
