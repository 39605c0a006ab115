//! Hasura's `/v1/graphql/explain`: for each root field of a query, planned for a
//! role and session, the SQL that reads it and the database's plan of that SQL
//! (`EXPLAIN` on PostgreSQL, `EXPLAIN QUERY PLAN` on SQLite). Nothing is run.

use crate::error::EngineError;
use crate::{Caller, Engine, GraphqlRequest};
use grafton_sql::{Dialect, Statement};
use serde_json::{json, Value};
use std::time::Duration;

/// How long the database may take to plan one field.
const PLAN_TIMEOUT: Duration = Duration::from_secs(10);

impl Engine {
    /// `[{field, sql, plan: [lines]}]` for the query `req`, as `caller` would run it.
    pub async fn explain(
        &self,
        caller: &Caller,
        req: &GraphqlRequest,
    ) -> Result<Vec<Value>, EngineError> {
        let planner = self.planner_for(caller.role.as_deref(), caller.backend_only)?;
        let explained = planner.explain_fields(req, &caller.vars)?;
        let mut out = Vec::with_capacity(explained.fields.len());
        for (field, statement) in explained.fields {
            let plan = self.plan_of(&statement, &explained.variables).await?;
            out.push(json!({"field": field, "sql": statement.sql, "plan": plan}));
        }
        Ok(out)
    }

    /// The database's plan of `statement`, one line per element.
    async fn plan_of(
        &self,
        statement: &Statement,
        variables: &serde_json::Map<String, Value>,
    ) -> Result<Vec<String>, EngineError> {
        let dialect = self.database().dialect();
        let (prefix, column) = match dialect {
            Dialect::Postgres => ("EXPLAIN ", 0),
            Dialect::Sqlite => ("EXPLAIN QUERY PLAN ", 3),
        };
        let explain = Statement {
            sql: format!("{prefix}{}", statement.sql),
            params: statement.params.clone(),
            compact: false,
        };
        let mut tx = self.database().autocommit(PLAN_TIMEOUT).await?;
        let rows = tx.rows(&explain, variables).await?;
        tx.commit().await?;
        let line = |row: &Vec<Value>| match row.get(column) {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        };
        Ok(rows.iter().map(line).collect())
    }
}
