//! Tracked functions in Hasura metadata: a source's `functions` (in a directory,
//! `databases/<db>/functions/<file>.yaml` listed by that directory's
//! `functions.yaml`, or the entries of a v2 project's `functions.yaml`).

use super::TableName;
use crate::config::ExposedAs;
use crate::config::{Config, FunctionConfig, FunctionPermission, FunctionRootFields};
use serde::Deserialize;

/// A tracked function's entry.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Entry {
    function: TableName,
    #[serde(default, deserialize_with = "super::null_default")]
    configuration: Configuration,
    #[serde(default, deserialize_with = "super::null_default")]
    permissions: Vec<FunctionPermission>,
    #[serde(default)]
    comment: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Configuration {
    #[serde(default)]
    exposed_as: Option<ExposedAs>,
    #[serde(default)]
    session_argument: Option<String>,
    #[serde(default)]
    custom_name: Option<String>,
    #[serde(default)]
    custom_root_fields: FunctionRootFields,
}

/// Adds the tracked functions `entries` to `config`.
pub(super) fn apply(entries: Vec<Entry>, config: &mut Config) {
    for e in entries {
        let c = e.configuration;
        config.functions.insert(
            e.function.key(),
            FunctionConfig {
                exposed_as: c.exposed_as,
                session_argument: c.session_argument,
                custom_name: c.custom_name,
                custom_root_fields: c.custom_root_fields,
                comment: e.comment,
                permissions: e.permissions,
            },
        );
    }
}
