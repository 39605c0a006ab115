//! Asynchronous actions: the mutation writes the call to the action log and
//! answers its id; a worker (the events crate's) claims it and calls the handler
//! through [`Engine::process_async_action`]; the result is read by id, by the
//! session that made the call (admin: any), shaped to the selection with the
//! output's relationships answered by the database.

use crate::action_log::{self, Claimed};
use crate::engine::Engine;
use crate::error::EngineError;
use grafton_remote::output::Shaper;
use grafton_remote::{ActionCall, ActionError};
use grafton_schema::config::ActionConfig;
use serde_json::{json, Map, Value};

impl Engine {
    /// The database, with the action log created on first use.
    pub async fn action_log(&self) -> Result<&grafton_execute::Database, EngineError> {
        (self.action_log_ready)
            .get_or_try_init(|| action_log::create(&self.db))
            .await?;
        Ok(&self.db)
    }

    /// What reading a result as `caller` needs.
    pub(crate) fn reader<'a>(
        &'a self,
        planner: &'a crate::planner::Planner,
        prepared: &'a crate::planner::Prepared,
        caller: &crate::engine::Caller,
        session: &'a Map<String, Value>,
    ) -> Reader<'a> {
        Reader {
            db: &self.db,
            ready: &self.action_log_ready,
            planner,
            prepared,
            admin: caller.role.is_none(),
            session,
        }
    }

    /// Notified when a call is written to the action log (the worker looks at
    /// once, not at its next interval).
    pub fn async_actions_written(&self) -> std::sync::Arc<tokio::sync::Notify> {
        self.async_written.clone()
    }

    /// Moves when a call is finished by this instance (subscriptions to a
    /// result look again at once).
    pub(crate) fn async_finished(&self) -> tokio::sync::watch::Receiver<u64> {
        self.async_done.subscribe()
    }

    /// The asynchronous actions served now (the worker claims only theirs).
    pub fn async_actions(&self) -> Vec<String> {
        let schemas = self.schemas();
        let actions = &schemas.admin_model().actions;
        (actions.iter())
            .filter(|a| a.definition.kind == grafton_schema::config::ActionKind::Asynchronous)
            .map(|a| a.name.clone())
            .collect()
    }

    /// Calls one claimed call's handler (for at most the action's timeout, and
    /// at most `most`: within the claim) and records its checked output, or its
    /// error, as Hasura's log holds one (`{path, error, code}`).
    pub async fn process_async_action(
        &self,
        call: Claimed,
        most: std::time::Duration,
    ) -> Result<(), EngineError> {
        let schemas = self.schemas();
        let model = schemas.admin_model();
        let outcome = match model.actions.iter().find(|a| a.name == call.action) {
            Some(action) => self.call_async(model, action, &call, most).await,
            None => Err(ActionError::new(
                "the action is no longer served",
                "not-supported",
            )),
        };
        let outcome = outcome.map_err(|e| {
            let code = e.code().to_owned();
            json!({"path": "$", "error": e.message, "code": code})
        });
        let db = self.action_log().await?;
        action_log::finish(db, &call.id, outcome).await?;
        self.async_done.send_modify(|n| *n = n.wrapping_add(1));
        Ok(())
    }

    async fn call_async(
        &self,
        model: &grafton_schema::SchemaModel,
        action: &ActionConfig,
        call: &Claimed,
        most: std::time::Duration,
    ) -> Result<Value, ActionError> {
        let timeout = std::time::Duration::from_secs(action.definition.timeout.max(1)).min(most);
        let request = ActionCall {
            action,
            input: call.input.clone(),
            session: &call.session,
            request_query: None,
            client_headers: &call.headers,
            timeout,
        };
        let output = self.call_action(request).await?;
        let count = |result: &str| self.count_action(&action.name, result);
        // The output type as declared (the result object's `output` field is
        // nullable: null until the handler answers).
        let ty = apollo_compiler::ast::Type::parse(&action.definition.output_type, "output");
        let Ok(ty) = ty else {
            return Err(ActionError::new(
                "the action's output type does not parse",
                "unexpected",
            ));
        };
        let related = |object: &str, field: &str| {
            (model.action_relationships.iter()).any(|r| r.object == object && r.field == field)
        };
        let document = apollo_compiler::ExecutableDocument::new();
        let variables = Map::new();
        let shaper = Shaper {
            schema: &model.schema,
            document: &document,
            variables: &variables,
            related: &related,
            holes: Default::default(),
        };
        let checked = shaper.check(&ty, &output.value).map_err(|why| {
            count("invalid_answer");
            ActionError::new(
                format!("the action's handler answered a value that does not fit its output type: {why}"),
                "unexpected",
            )
        })?;
        count("ok");
        Ok(checked)
    }
}

/// An asynchronous action's mutation as `caller` (its `session`): the call
/// written to the log; its id.
pub(super) async fn enqueue(
    engine: &Engine,
    caller: &crate::engine::Caller,
    session: &Map<String, Value>,
    action: &ActionConfig,
    input: Value,
) -> Result<Value, EngineError> {
    // Only the headers the handler will be sent are kept (never the admin
    // secret, the role, or a client's credentials the action does not forward).
    let headers = match action.definition.forward_client_headers {
        true => grafton_remote::action::forwarded(&caller.headers),
        false => Vec::new(),
    };
    let db = engine.action_log().await?;
    let id = action_log::enqueue(db, &action.name, &input, &headers, session).await?;
    engine.async_written.notify_one();
    Ok(Value::String(id))
}

/// What reading an asynchronous action's result needs (a subscription's task
/// holds its own).
pub(crate) struct Reader<'a> {
    pub(crate) db: &'a grafton_execute::Database,
    /// Whether the action log was made sure of.
    pub(crate) ready: &'a tokio::sync::OnceCell<()>,
    pub(crate) planner: &'a crate::planner::Planner,
    pub(crate) prepared: &'a crate::planner::Prepared,
    /// Whether the caller is admin (who reads every call).
    pub(crate) admin: bool,
    /// The caller's session, as the call's was written.
    pub(crate) session: &'a Map<String, Value>,
}

/// An asynchronous action's result, `{id, created_at, errors, output}` shaped
/// to the selection (`null` when no call of it has that id for this session);
/// and whether it is final (the call is over and no table is read).
pub(crate) async fn result(
    r: &Reader<'_>,
    root: &grafton_ir::ActionRoot,
    action: &ActionConfig,
) -> Result<(Value, bool), EngineError> {
    let Some(field) = root.fields.first() else {
        return Ok((Value::Null, true));
    };
    let model = r.planner.model();
    let related = |object: &str, field: &str| {
        (model.action_relationships.iter()).any(|r| r.object == object && r.field == field)
    };
    let shaper = Shaper {
        schema: &model.schema,
        document: r.prepared.document(),
        variables: &r.prepared.variables,
        related: &related,
        holes: Default::default(),
    };
    let id = (field.arguments.iter())
        .find(|a| a.name == "id")
        .and_then(|a| shaper.argument(&a.value));
    let id = id.as_ref().and_then(Value::as_str).unwrap_or_default();
    if !action_log::is_uuid(id) {
        let message = format!("invalid uuid for the argument \"id\": '{id}'");
        return Err(ActionError::new(message, "parse-failed").into());
    }
    r.ready.get_or_try_init(|| action_log::create(r.db)).await?;
    let session = (!r.admin).then_some(r.session);
    let Some(stored) = action_log::read(r.db, &action.name, id, session).await? else {
        return Ok((Value::Null, true));
    };
    let done = stored.done();
    let value = json!({
        "id": id, "created_at": stored.created_at,
        "errors": stored.errors, "output": stored.output,
    });
    let fields: Vec<_> = root.fields.iter().collect();
    let mut answer = shaper
        .shape(&field.definition.ty, &value, &fields, "$")
        .map_err(|why| {
            let message = format!("the action's stored output no longer fits its type: {why}");
            EngineError::from(ActionError::new(message, "unexpected"))
        })?;
    let holes = (shaper.holes.into_inner()).unwrap_or_else(|p| p.into_inner());
    let reads_tables = !holes.is_empty();
    if reads_tables {
        super::action_related::fill(r.db, r.planner, r.prepared, &mut answer, holes).await?;
    }
    Ok((answer, done && !reads_tables))
}
