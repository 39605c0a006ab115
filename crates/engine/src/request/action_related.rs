//! Relationships from an action's answer to tables: each relationship field the
//! selection asks for is one multiplexed statement for every object of the
//! answer (each object's mapped values bound for it alone), under the role's
//! row and column rules, run on the primary (the handler may have just written).

use crate::error::EngineError;
use crate::planner::{Planner, Prepared};
use grafton_remote::output::Hole;
use grafton_sql::Dialect;
use serde_json::{Map, Value};

/// Fills each hole of `answer` with its related rows.
pub(super) async fn fill(
    db: &grafton_execute::Database,
    planner: &Planner,
    prepared: &Prepared,
    answer: &mut Value,
    holes: Vec<Hole>,
) -> Result<(), EngineError> {
    // One statement per relationship field of the document, whatever the rows.
    for group in grouped(holes) {
        let rows = related(db, planner, prepared, &group).await?;
        for (hole, value) in group.iter().zip(rows) {
            if let Some(slot) = answer.pointer_mut(&hole.pointer) {
                *slot = value;
            }
        }
    }
    Ok(())
}

/// `holes` by relationship field of the document.
pub(super) fn grouped(holes: Vec<Hole>) -> Vec<Vec<Hole>> {
    let mut groups: Vec<Vec<Hole>> = Vec::new();
    for hole in holes {
        // The same document fields (by identity): the same merged selection.
        let same = |g: &&mut Vec<Hole>| {
            let first = &g[0];
            first.object == hole.object
                && first.field == hole.field
                && first.fields.len() == hole.fields.len()
                && (first.fields.iter().zip(&hole.fields)).all(|(a, b)| std::ptr::eq(&**a, &**b))
        };
        match groups.iter_mut().find(same) {
            Some(group) => group.push(hole),
            None => groups.push(vec![hole]),
        }
    }
    groups
}

/// The related rows of each hole of one relationship field, in order.
async fn related(
    db: &grafton_execute::Database,
    planner: &Planner,
    prepared: &Prepared,
    group: &[Hole],
) -> Result<Vec<Value>, EngineError> {
    let model = planner.model();
    let first = &group[0];
    let Some(rel) = (model.action_relationships.iter())
        .find(|r| r.object == first.object && r.field == first.field)
    else {
        return Ok(vec![Value::Null; group.len()]);
    };
    let fields: Vec<_> = first.fields.iter().collect();
    let columns: Vec<usize> = rel.mapping.iter().map(|(_, c)| *c).collect();
    let mut query = grafton_ir::build_related(
        model,
        prepared.document(),
        &fields,
        &prepared.variables,
        rel.table,
        rel.single,
        &columns,
    )?;
    if !grafton_ir::remote_joins(&query).is_empty() {
        return Err(EngineError::validation(
            "a remote relationship under an action's relationship is not served: query the table instead",
        ));
    }
    // The checks every other statement passes: the default limit, limits and
    // offsets not negative, the role's cost (this field's rows, per object).
    if let Some(rows) = planner.default_limit {
        crate::limits::default_limit(&mut query, rows);
    }
    for name in &query.non_negative_vars {
        let v = prepared.variables.get(name).and_then(Value::as_i64);
        if v.is_some_and(|n| n < 0) {
            return Err(EngineError::validation(format!(
                "variable \"{name}\" is used as a limit or offset and must not be negative"
            )));
        }
    }
    let cost = crate::limits::cost::Cost::of(&query, planner.rules.as_deref(), 0);
    let cost = cost
        .eval(&prepared.variables)
        .saturating_mul(group.len() as u64);
    crate::limits::check(crate::LimitKind::Cost, planner.limits().cost, cost)?;
    let empty = || match rel.single {
        true => Value::Null,
        false => Value::Array(Vec::new()),
    };
    let Some(select) = grafton_translate::translate_query(model, planner.rules.as_deref(), &query)
    else {
        return Ok(group.iter().map(|_| empty()).collect());
    };
    let dialect = db.dialect();
    let mut statement = grafton_sql::render_multiplexed(&select, dialect).statement;
    if dialect == Dialect::Postgres {
        let max = planner.limits().max_response_bytes;
        statement = grafton_sql::render::size_guard_multiplexed(&statement, max);
    }
    // A session variable the role's rules read and the caller lacks refuses the
    // request (never bound as null), as for every other statement.
    let session = (statement.params.iter()).filter_map(|p| match &p.value {
        grafton_sql::ParamValue::Variable(v) if v.contains('-') => Some(v),
        _ => None,
    });
    for v in session {
        if !v.starts_with("_related.") && !prepared.variables.contains_key(v) {
            return Err(crate::planner::missing_session(v));
        }
    }
    // Each object's values over the request's (session variables included).
    let mut vars: Map<String, Value> = prepared.variables.clone();
    grafton_ir::bind_derived(&query.derived, &mut vars).map_err(EngineError::validation)?;
    let mut batch = Vec::with_capacity(group.len());
    for hole in group {
        for (i, (field, _)) in rel.mapping.iter().enumerate() {
            let v = hole.source.get(field).cloned().unwrap_or(Value::Null);
            vars.insert(grafton_ir::related_var(i), v);
        }
        let params = &statement.params;
        batch.push(grafton_execute::subscriber_values(dialect, params, &vars));
    }
    let batch = format!("[{}]", batch.join(","));
    let route = grafton_execute::Route::Primary;
    // At most the response's size held: past it, the request is over its limit.
    let max = planner.limits().max_response_bytes;
    let room = usize::try_from(max).unwrap_or(usize::MAX);
    let answers = db
        .poll(&statement, batch, planner.budget(), route, room)
        .await?;
    if answers.len() < group.len() {
        let limit = crate::LimitExceeded {
            kind: crate::LimitKind::ResponseBytes,
            limit: max,
            actual: max.saturating_add(1),
        };
        return Err(limit.into());
    }
    let mut out = vec![empty(); group.len()];
    for (i, answer) in answers {
        let text = answer.map_err(|bytes| crate::LimitExceeded {
            kind: crate::LimitKind::ResponseBytes,
            limit: planner.limits().max_response_bytes,
            actual: bytes,
        })?;
        let data: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        if let Some(slot) = out.get_mut(i) {
            *slot = match data.get(grafton_ir::RELATED_ROOT) {
                Some(v) => v.clone(),
                None => empty(),
            };
        }
    }
    Ok(out)
}
