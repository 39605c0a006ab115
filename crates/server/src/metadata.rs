//! Hasura's metadata API, `POST /v1/metadata` (admin only): the request envelope
//! `{type, args, version?, resource_version?}`, `bulk` and `bulk_keep_going`, and
//! errors in Hasura's shape (`{path, error, code}`). Served: `reload_metadata` and
//! `get_inconsistent_metadata`; the other commands Hasura knows are answered
//! `not-supported` by name, and a command Hasura does not know is `parse-failed`.

use crate::state::{AppState, Peer};
use axum::extract::rejection::JsonRejection;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde_json::{json, Value};
use std::future::Future;
use std::pin::Pin;

/// A metadata command's refusal, in Hasura's shape.
#[derive(Debug)]
struct Refusal {
    status: StatusCode,
    code: &'static str,
    error: String,
    path: String,
}

impl Refusal {
    fn new(status: StatusCode, code: &'static str, error: impl Into<String>, path: &str) -> Self {
        Self {
            status,
            code,
            error: error.into(),
            path: path.to_owned(),
        }
    }

    fn body(&self) -> Value {
        json!({ "code": self.code, "error": self.error, "path": self.path })
    }

    fn response(&self) -> Response {
        (self.status, Json(self.body())).into_response()
    }

    /// The same refusal, for the command at `prefix` (an element of a bulk).
    fn within(mut self, prefix: &str) -> Self {
        self.path = format!("{prefix}{}", self.path.trim_start_matches('$'));
        self
    }
}

/// Commands of Hasura's metadata API Grafton does not serve yet (refused by name).
const KNOWN: &[&str] = &[
    "export_metadata",
    "replace_metadata",
    "clear_metadata",
    "drop_inconsistent_metadata",
    "get_catalog_state",
    "set_catalog_state",
    "test_webhook_transform",
    "bulk_atomic",
    "pg_track_table",
    "pg_untrack_table",
    "pg_track_tables",
    "pg_untrack_tables",
    "pg_set_table_customization",
    "pg_set_table_is_enum",
    "pg_set_table_custom_fields",
    "pg_create_object_relationship",
    "pg_create_array_relationship",
    "pg_drop_relationship",
    "pg_rename_relationship",
    "pg_set_relationship_comment",
    "pg_create_select_permission",
    "pg_create_insert_permission",
    "pg_create_update_permission",
    "pg_create_delete_permission",
    "pg_drop_select_permission",
    "pg_drop_insert_permission",
    "pg_drop_update_permission",
    "pg_drop_delete_permission",
    "pg_set_permission_comment",
    "pg_track_function",
    "pg_untrack_function",
    "pg_create_function_permission",
    "pg_drop_function_permission",
    "pg_add_computed_field",
    "pg_drop_computed_field",
    "pg_create_event_trigger",
    "pg_delete_event_trigger",
    "pg_redeliver_event",
    "pg_invoke_event_trigger",
    "pg_create_remote_relationship",
    "pg_update_remote_relationship",
    "pg_delete_remote_relationship",
    "pg_add_source",
    "pg_drop_source",
    "pg_update_source",
    "rename_source",
    "pg_get_viable_indexes",
    "pg_suggest_relationships",
    "add_inherited_role",
    "drop_inherited_role",
    "set_api_limits",
    "remove_api_limits",
    "create_query_collection",
    "drop_query_collection",
    "add_query_to_collection",
    "drop_query_from_collection",
    "add_collection_to_allowlist",
    "drop_collection_from_allowlist",
    "update_scope_of_collection_in_allowlist",
    "create_rest_endpoint",
    "drop_rest_endpoint",
    "create_action",
    "update_action",
    "drop_action",
    "create_action_permission",
    "drop_action_permission",
    "set_custom_types",
    "add_remote_schema",
    "update_remote_schema",
    "remove_remote_schema",
    "reload_remote_schema",
    "introspect_remote_schema",
    "add_remote_schema_permissions",
    "drop_remote_schema_permissions",
    "create_remote_schema_remote_relationship",
    "update_remote_schema_remote_relationship",
    "delete_remote_schema_remote_relationship",
    "create_cron_trigger",
    "delete_cron_trigger",
    "get_cron_triggers",
    "create_scheduled_event",
    "delete_scheduled_event",
    "get_scheduled_events",
    "get_scheduled_event_invocations",
    "get_event_logs",
    "get_event_invocation_logs",
    "get_event_by_id",
    "set_graphql_schema_introspection_options",
    "add_host_to_tls_allowlist",
    "drop_host_from_tls_allowlist",
    "set_query_tags",
    "set_opentelemetry_config",
    "set_opentelemetry_status",
    "set_metrics_config",
    "remove_metrics_config",
    "dump_internal_state",
    "get_source_tables",
    "get_table_info",
    "list_source_kinds",
];

/// `POST /v1/metadata`.
pub(crate) async fn handle(
    State(state): State<AppState>,
    peer: Option<Extension<Peer>>,
    headers: HeaderMap,
    body: Result<Json<Value>, JsonRejection>,
) -> Response {
    let peer = peer.map(|Extension(p)| p);
    let caller = match crate::caller::caller(&state.auth, &headers, peer).await {
        Ok(caller) => caller,
        Err(e) => return Refusal::new(e.status(false), e.code(), e.to_string(), "$").response(),
    };
    let body = match body {
        Ok(Json(body)) => body,
        Err(e) => {
            return Refusal::new(StatusCode::BAD_REQUEST, "invalid-json", e.body_text(), "$")
                .response()
        }
    };
    // Hasura reads the body before it checks the caller, and answers 400.
    if caller.role.is_some() {
        let refusal = Refusal::new(
            StatusCode::BAD_REQUEST,
            "access-denied",
            "restricted access : admin only",
            "$.args",
        );
        return refusal.response();
    }
    match command(&state, &body).await {
        Ok(answer) => Json(answer).into_response(),
        Err(refusal) => refusal.response(),
    }
}

type Answer<'a> = Pin<Box<dyn Future<Output = Result<Value, Refusal>> + Send + 'a>>;

/// One command: its answer, or its refusal (paths from `$`, the command itself).
fn command<'a>(state: &'a AppState, body: &'a Value) -> Answer<'a> {
    Box::pin(async move {
        let Some(kind) = body.get("type").and_then(Value::as_str) else {
            let error = "the request needs a \"type\" string and its \"args\"";
            return Err(Refusal::new(
                StatusCode::BAD_REQUEST,
                "parse-failed",
                error,
                "$",
            ));
        };
        let args = body.get("args").unwrap_or(&Value::Null);
        match kind {
            "reload_metadata" => reload(state).await,
            "get_inconsistent_metadata" => Ok(consistency(state.engine.schemas().left_out())),
            "bulk" | "bulk_keep_going" => {
                let Some(items) = args.as_array() else {
                    let error = format!("{kind} takes a list of commands as its args");
                    return Err(Refusal::new(StatusCode::BAD_REQUEST, "parse-failed", error, "$.args"));
                };
                let mut answers = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    match command(state, item).await {
                        Ok(answer) => answers.push(answer),
                        // `bulk` stops at the first error, which is its answer.
                        Err(refusal) if kind == "bulk" => {
                            return Err(refusal.within(&format!("$.args[{i}]")))
                        }
                        Err(refusal) => answers.push(refusal.within(&format!("$.args[{i}]")).body()),
                    }
                }
                Ok(Value::Array(answers))
            }
            known if KNOWN.contains(&known) => Err(Refusal::new(
                StatusCode::BAD_REQUEST,
                "not-supported",
                format!(
                    "Grafton's metadata API serves 'reload_metadata', 'get_inconsistent_metadata', \
                     'bulk' and 'bulk_keep_going', not '{known}' yet; the rest of the metadata lives \
                     in the config file or the Hasura metadata directory"
                ),
                "$.type",
            )),
            unknown => Err(Refusal::new(
                StatusCode::BAD_REQUEST,
                "parse-failed",
                format!("unknown metadata command \"{unknown}\""),
                "$",
            )),
        }
    })
}

/// `reload_metadata`: re-reads the config, re-introspects the database and swaps
/// the schema; answers whether everything is served, as Hasura does.
async fn reload(state: &AppState) -> Result<Value, Refusal> {
    match state.ops.reloader.reload("reload_metadata").await {
        Ok(_) => {
            let mut answer = consistency(state.engine.schemas().left_out());
            answer["message"] = json!("success");
            if answer["is_consistent"] == json!(true) {
                answer
                    .as_object_mut()
                    .map(|o| o.remove("inconsistent_objects"));
            }
            Ok(answer)
        }
        Err(e) => Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            "reload-failed",
            format!("{e}; the previous schema is still served"),
            "$",
        )),
    }
}

/// Hasura's answer to `get_inconsistent_metadata`: whether everything is served,
/// and each object left out.
fn consistency(left_out: &[grafton_schema::inconsistent::Inconsistency]) -> Value {
    json!({
        "is_consistent": left_out.is_empty(),
        "inconsistent_objects": left_out.iter().map(|i| i.to_json()).collect::<Vec<_>>(),
    })
}
