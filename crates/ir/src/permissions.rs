//! A role's row rules: the config's permission filters, checks and presets, compiled
//! once at start-up against the admin model (table and relationship ids are the same
//! in every role's model). Values naming a session variable (`X-Hasura-User-Id`)
//! become bind parameters filled from the request's session.

use crate::build::{Builder, IrError};
use crate::input::Input;
use crate::types::BoolExp;
use grafton_schema::config::{Config, Permissions};
use grafton_schema::{SchemaModel, TableId};
use serde_json::{Map, Value as Json};
use std::collections::{BTreeMap, BTreeSet};

/// Whether a string names a session variable (`x-hasura-*`, any case).
pub fn is_session_var(s: &str) -> bool {
    s.len() > 9 && s[..9].eq_ignore_ascii_case("x-hasura-")
}

/// A session variable's canonical (lower-case) name. GraphQL variable names cannot
/// contain `-`, so these names never collide with the request's own variables.
pub fn session_var(s: &str) -> String {
    s.to_ascii_lowercase()
}

/// A value a permission forces on a column.
#[derive(Debug, Clone, PartialEq)]
pub enum Preset {
    /// A literal.
    Value(Json),
    /// The value of a session variable (canonical name).
    Session(String),
}

/// One table's rules for one role. `None` filters mean every row.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TableRules {
    /// Rows the role may read.
    pub select: Option<BoolExp>,
    /// Most rows one list returns.
    pub limit: Option<u64>,
    /// Every inserted row must satisfy this.
    pub insert_check: Option<BoolExp>,
    /// Column values forced on inserts.
    pub insert_set: Vec<(usize, Preset)>,
    /// Rows the role may update.
    pub update_filter: Option<BoolExp>,
    /// Every updated row must satisfy this afterwards.
    pub update_check: Option<BoolExp>,
    /// Column values forced on updates.
    pub update_set: Vec<(usize, Preset)>,
    /// Rows the role may delete.
    pub delete_filter: Option<BoolExp>,
}

/// Every table's rules for one role, by table id.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RoleRules {
    /// The role.
    pub role: String,
    /// Rules by table id.
    pub tables: Vec<TableRules>,
    /// Session variables the rules read (each request must provide them).
    pub session_vars: BTreeSet<String>,
}

/// Compiles `role`'s rules from the config, against the admin model.
pub fn compile(admin: &SchemaModel, config: &Config, role: &str) -> Result<RoleRules, IrError> {
    let empty = Map::new();
    let mut rules = RoleRules {
        role: role.to_owned(),
        tables: vec![TableRules::default(); admin.tables.len()],
        session_vars: BTreeSet::new(),
    };
    for (key, tc) in &config.tables {
        let Some(perms) = tc.permissions.get(role) else {
            continue;
        };
        let Some(table) = admin.table_by_config_key(key) else {
            continue;
        };
        let mut b = Builder::new(admin, None, &empty);
        b.vars.session = Some(BTreeSet::new());
        let context = |what: &str| format!("permissions of role '{role}' on '{key}', {what}");
        rules.tables[table] = table_rules(&mut b, table, perms, &context)?;
        if let Some(used) = b.vars.session.take() {
            rules.session_vars.extend(used);
        }
    }
    Ok(rules)
}

fn table_rules<'a>(
    b: &mut Builder<'a>,
    table: TableId,
    perms: &'a Permissions,
    context: &dyn Fn(&str) -> String,
) -> Result<TableRules, IrError> {
    let mut filter = |json: &'a Option<Json>, what: &str| -> Result<Option<BoolExp>, IrError> {
        match json {
            None => Ok(None),
            Some(Json::Object(m)) if m.is_empty() => Ok(None),
            Some(v) => b
                .bool_exp(table, Input::Json(v))
                .map(Some)
                .map_err(|e| IrError::Validation(format!("{}: {e}", context(what)))),
        }
    };
    let mut rules = TableRules::default();
    if let Some(p) = &perms.select {
        rules.select = filter(&p.filter, "select filter")?;
        rules.limit = p.limit;
    }
    if let Some(p) = &perms.insert {
        rules.insert_check = filter(&p.check, "insert check")?;
    }
    if let Some(p) = &perms.update {
        rules.update_filter = filter(&p.filter, "update filter")?;
        rules.update_check = filter(&p.check, "update check")?;
    }
    if let Some(p) = &perms.delete {
        rules.delete_filter = filter(&p.filter, "delete filter")?;
    }
    let model = b.model;
    let mut presets =
        |set: &BTreeMap<String, Json>, what: &str| -> Result<Vec<(usize, Preset)>, IrError> {
            let t = model.table(table);
            set.iter()
                .map(|(column, value)| {
                    let c = t
                        .columns
                        .iter()
                        .position(|c| &c.name == column)
                        .ok_or_else(|| {
                            IrError::Validation(format!("{}: no column '{column}'", context(what)))
                        })?;
                    let preset = match value {
                        Json::String(s) if is_session_var(s) => {
                            if let Some(used) = b.vars.session.as_mut() {
                                used.insert(session_var(s));
                            }
                            Preset::Session(session_var(s))
                        }
                        other => Preset::Value(other.clone()),
                    };
                    Ok((c, preset))
                })
                .collect()
        };
    if let Some(p) = &perms.insert {
        rules.insert_set = presets(&p.set, "insert set")?;
    }
    if let Some(p) = &perms.update {
        rules.update_set = presets(&p.set, "update set")?;
    }
    Ok(rules)
}
