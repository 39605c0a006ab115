//! Step 9 for a mutation: the session check its rules need, the write in one
//! transaction, and what it tells the rest of the engine (read-your-writes, live
//! queries on the tables it wrote).

use crate::engine::{Caller, Engine};
use crate::error::EngineError;
use crate::planner::{missing_session, Planner};
use serde_json::Value;
use tracing::Instrument;

/// Runs `mutation` as `caller` and returns the response body's JSON text.
pub(super) async fn run(
    engine: &Engine,
    planner: &Planner,
    mutation: &grafton_ir::Mutation,
    prepared: &crate::planner::Prepared,
    caller: &Caller,
    info: &mut crate::RequestInfo,
    started: std::time::Instant,
) -> Result<String, EngineError> {
    let variables = &prepared.variables;
    // A mutation's statements are built as it runs; refuse up front, as queries
    // are, when the role's rules need a session variable the caller lacks.
    let rules = planner.rules.as_deref();
    let needed = rules.into_iter().flat_map(|r| &r.session_vars);
    if let Some(missing) = needed.into_iter().find(|v| !variables.contains_key(*v)) {
        return Err(missing_session(missing));
    }
    let db_started = std::time::Instant::now();
    info.planning = Some(db_started - started);
    let model = planner.model();
    let written = crate::mutate::tables_written(model, mutation);
    let changed = crate::mutate::changed_names(model, &written);
    // Whatever happens from here (an error, a lost COMMIT reply, the client
    // leaving mid-write), kept answers of these tables go stale when it ends.
    let mut stale = Stale {
        engine,
        tables: &changed,
        everything: crate::mutate::writes_unnamed(model, mutation, &written),
        armed: true,
    };
    let session = triggered_session(engine, model, &written, caller);
    let data = crate::mutate::run(
        model,
        planner.rules.as_deref(),
        &engine.db,
        mutation,
        variables,
        planner.limits().time,
        session.as_ref().map(|(s, t)| (s.as_str(), t.as_str())),
    )
    .instrument(grafton_execute::trace::span(
        engine.db.dialect(),
        "transaction",
        None,
    ))
    .await;
    info.database = Some(db_started.elapsed());
    let data = data?;
    engine.recent.wrote(caller);
    // Shared answers go stale before the mutation answers, as this instance's do.
    let everything = stale.everything;
    stale.armed = false;
    if let Some(shared) = engine.cache.load().shared() {
        match everything {
            true => shared.cache_everything_changed().await,
            false => shared.cache_written(&changed).await,
        }
    }
    engine.live.changed(&engine.db, changed.clone());
    if everything {
        engine.live.changed_everything(&engine.db);
    }
    // Remote relationships in the answer: joined after the commit (the remote
    // sees the rows as written).
    let sites = grafton_ir::mutation_joins(mutation);
    let data = match sites.is_empty() {
        true => data,
        false => {
            let text = super::remote_join::joined(engine, planner, prepared, caller, &sites, data);
            let (text, cookies) = text.await?;
            info.set_cookies.extend(cookies);
            text
        }
    };
    Ok(format!("{{\"data\":{data}}}"))
}

/// The caller's session and trace context as JSON (Hasura's `session_variables`
/// and `trace_context`), when a table the mutation writes has an event trigger:
/// its events carry them.
fn triggered_session(
    engine: &Engine,
    model: &grafton_schema::SchemaModel,
    written: &std::collections::BTreeSet<grafton_schema::TableId>,
    caller: &Caller,
) -> Option<(String, String)> {
    let schemas = engine.schemas();
    let triggers = schemas.event_triggers();
    let fires = written.iter().any(|&t| {
        let table = model.table(t);
        triggers
            .iter()
            .any(|e| e.schema == table.schema && e.table == table.name)
    });
    if !fires {
        return None;
    }
    let mut session = caller.vars.clone();
    let role = caller.role.clone().unwrap_or_else(|| "admin".to_owned());
    session.insert("x-hasura-role".into(), Value::String(role));
    let trace = crate::events::trace_context(caller.traceparent.as_deref());
    Some((Value::Object(session).to_string(), trace.to_string()))
}

/// Unless disarmed (the write succeeded and said so itself), makes the written
/// tables' kept answers stale when dropped, here, in Redis and on every instance
/// (every answer when the write may reach tables it does not name: a function,
/// a view): a failed write, a lost COMMIT reply, a client gone mid-write.
struct Stale<'a> {
    engine: &'a Engine,
    tables: &'a [String],
    everything: bool,
    armed: bool,
}

impl Drop for Stale<'_> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let (live, db) = (&self.engine.live, &self.engine.db);
        self.engine.cache.load().heard(self.tables);
        live.changed(db, self.tables.to_vec());
        if self.everything {
            live.changed_everything(db);
        }
    }
}
