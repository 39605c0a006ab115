//! Where a mutation's statements go: a transaction, or (to explain a mutation
//! without a database) a list, each statement answered with made-up rows so the
//! next one can be built.

use super::one_statement::{one_statement, statement};
use super::Run;
use crate::error::EngineError;
use grafton_execute::{ExecuteError, Tx};
use grafton_ir::permissions::RoleRules;
use grafton_ir::Mutation;
use grafton_schema::SchemaModel;
use grafton_sql::{render, render_write, Select, Statement, Write};
use serde_json::{Map, Value};
use std::future::Future;

/// The statements `mutation` runs, and whether they are one plain write (an
/// insert of flat rows, an update, a delete, returning only columns) or a
/// transaction. A transaction's statements are built from the rows the ones before
/// wrote: here each is answered by a dry run's made-up row instead.
pub(crate) fn explain(
    model: &SchemaModel,
    rules: Option<&RoleRules>,
    mutation: &Mutation,
    variables: &Map<String, Value>,
) -> Result<(bool, Vec<Statement>), EngineError> {
    if let Some(one) = one_statement(model, rules, mutation) {
        return Ok((true, vec![statement(model, rules, &one)?]));
    }
    let mut list = Vec::new();
    dry_run(model, rules, mutation, variables, &mut list)?;
    Ok((false, list))
}

/// Builds `mutation`'s statements into `list`, without a database.
fn dry_run(
    model: &SchemaModel,
    rules: Option<&RoleRules>,
    mutation: &Mutation,
    variables: &Map<String, Value>,
    list: &mut Vec<Statement>,
) -> Result<(), EngineError> {
    let mut run = Run {
        model,
        rules,
        variables,
        tx: Statements::DryRun(list),
        writing: None,
    };
    // A dry run never waits: one poll finishes it.
    let mut all = std::pin::pin!(run.all(mutation));
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match all.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(result) => result.map(|_| ()),
        std::task::Poll::Pending => Err(EngineError::validation(
            "a dry run of a mutation waited for something",
        )),
    }
}

/// A transaction, or a dry run's list.
pub(super) enum Statements<'a> {
    /// Runs each statement in the mutation's transaction.
    Tx(&'a mut Tx),
    /// Keeps each statement and answers it with [`DRY_ROW`].
    DryRun(&'a mut Vec<Statement>),
}

/// A dry run's answer to every statement: one row of zeros, wide enough for any
/// identity and the key values a nested insert reads. A count of failing rows
/// reads 0, so a dry run goes on past permission checks.
const DRY_ROW_WIDTH: usize = 16;

impl Statements<'_> {
    /// The statement's rows (see [`Tx::rows`]).
    pub(super) async fn rows(
        &mut self,
        statement: &Statement,
        variables: &Map<String, Value>,
    ) -> Result<Vec<Vec<Value>>, ExecuteError> {
        match self {
            Self::Tx(tx) => tx.rows(statement, variables).await,
            Self::DryRun(list) => {
                list.push(statement.clone());
                Ok(vec![vec![Value::from(0); DRY_ROW_WIDTH]])
            }
        }
    }

    /// The statement's one JSON value, as text (see [`Tx::json`]).
    pub(super) async fn json(
        &mut self,
        statement: &Statement,
        variables: &Map<String, Value>,
    ) -> Result<String, ExecuteError> {
        match self {
            Self::Tx(tx) => tx.json(statement, variables).await,
            Self::DryRun(list) => {
                list.push(statement.clone());
                Ok("null".to_owned())
            }
        }
    }
}

/// A statement as translate builds it, to render in the database's dialect.
pub(super) enum Sql {
    Read(Box<Select>),
    Write(Box<Write>),
}

impl std::convert::From<Select> for Sql {
    fn from(select: Select) -> Self {
        Self::Read(Box::new(select))
    }
}

impl std::convert::From<Write> for Sql {
    fn from(write: Write) -> Self {
        Self::Write(Box::new(write))
    }
}

impl Run<'_> {
    /// Runs `sql` and returns its rows.
    pub(super) async fn rows(
        &mut self,
        sql: impl Into<Sql>,
    ) -> Result<Vec<Vec<Value>>, ExecuteError> {
        let statement = self.render(sql.into());
        self.tx.rows(&statement, self.variables).await
    }

    /// Runs `sql`, whose one row and column is JSON, and returns that JSON's text.
    pub(super) async fn json(&mut self, sql: impl Into<Sql>) -> Result<String, ExecuteError> {
        let statement = self.render(sql.into());
        self.tx.json(&statement, self.variables).await
    }

    fn render(&self, sql: Sql) -> Statement {
        let dialect = self.model.dialect();
        match sql {
            Sql::Read(select) => render(&select, dialect),
            Sql::Write(write) => render_write(&write, dialect),
        }
    }
}
