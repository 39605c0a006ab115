//! A role's row rules: the config's permission filters, checks and presets, compiled
//! once at start-up against the admin model (table and relationship ids are the same
//! in every role's model). Values naming a session variable (`X-Hasura-User-Id`)
//! become bind parameters filled from the request's session.

use crate::error::IrError;
use crate::rules::RuleReader;
use crate::types::BoolExp;
use grafton_schema::config::{Config, Permissions};
use grafton_schema::inconsistent::{Inconsistency, ObjectKind};
use grafton_schema::{SchemaModel, TableId};
use serde_json::Value as Json;
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

/// The variable a session variable used as a list (`_in: X-Hasura-Allowed-Ids`) binds:
/// its canonical name plus `[]`, filled by [`session_array`] from the text value.
pub fn session_array_var(s: &str) -> String {
    format!("{}[]", session_var(s))
}

/// A session variable's text as a list: a PostgreSQL array literal (`{1,2,"a b"}`, as
/// Hasura and JWT claims write them) or a JSON array (`[1,2]`).
pub fn session_array(text: &str) -> Result<Vec<Json>, String> {
    let t = text.trim();
    if t.starts_with('[') {
        return match serde_json::from_str::<Json>(t) {
            Ok(Json::Array(items)) => Ok(items),
            _ => Err(format!("'{text}' is not a JSON array")),
        };
    }
    let inner = t
        .strip_prefix('{')
        .and_then(|r| r.strip_suffix('}'))
        .ok_or_else(|| format!("'{text}' is not an array (expected {{1,2,3}} or [1,2,3])"))?;
    let mut items = Vec::new();
    if inner.trim().is_empty() {
        return Ok(items);
    }
    let mut chars = inner.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut item = String::new();
        let quoted = chars.next_if_eq(&'"').is_some();
        if quoted {
            loop {
                match chars.next() {
                    Some('\\') => item.extend(chars.next()),
                    Some('"') => break,
                    Some(c) => item.push(c),
                    None => return Err(format!("'{text}': unterminated quoted element")),
                }
            }
            while chars.next_if(|c| c.is_whitespace()).is_some() {}
        } else {
            while let Some(c) = chars.next_if(|c| *c != ',') {
                if c == '{' || c == '}' || c == '"' {
                    return Err(format!("'{text}': nested arrays are not supported"));
                }
                item.push(c);
            }
        }
        let item = if quoted { item } else { item.trim().to_owned() };
        items.push(if !quoted && item.eq_ignore_ascii_case("null") {
            Json::Null
        } else {
            Json::String(item)
        });
        match chars.next() {
            Some(',') => continue,
            None => return Ok(items),
            Some(c) => return Err(format!("'{text}': unexpected '{c}'")),
        }
    }
}

/// Adds, for every session variable the rules use as a list, its parsed value under
/// [`session_array_var`]'s name, from the text value already in `variables`. An
/// absent variable is left absent (the caller reports it as missing).
pub fn bind_session_arrays(
    rules: &RoleRules,
    variables: &mut serde_json::Map<String, Json>,
) -> Result<(), IrError> {
    for name in rules.session_vars.iter().filter(|n| n.ends_with("[]")) {
        let base = name.trim_end_matches("[]");
        let items = match variables.get(base) {
            Some(Json::String(text)) => session_array(text)
                .map_err(|e| IrError::DataException(format!("session variable {base}: {e}")))?,
            Some(Json::Array(items)) => items.clone(),
            Some(other) => vec![other.clone()],
            None => continue,
        };
        variables.insert(name.clone(), Json::Array(items));
    }
    Ok(())
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
    /// Columns shown only on the rows where the condition holds, NULL elsewhere (an
    /// inherited role's columns that only some of its roles read).
    pub redact: Vec<(usize, BoolExp)>,
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

/// Compiles `role`'s rules from the config, against the admin model (a hasura-default
/// one: rules use Hasura's names whatever naming the API serves).
pub fn compile(admin: &SchemaModel, config: &Config, role: &str) -> Result<RoleRules, IrError> {
    let mut rules = RoleRules {
        role: role.to_owned(),
        tables: vec![TableRules::default(); admin.tables.len()],
        session_vars: BTreeSet::new(),
    };
    for (key, tc) in &config.tables {
        let Some(perms) = tc.permissions.get(role) else {
            continue;
        };
        let table = admin.table_by_config_key(key).ok_or_else(|| {
            IrError::Validation(format!(
                "permissions of role '{role}' on '{key}': no such table or view"
            ))
        })?;
        let mut reader = RuleReader::new(admin);
        let context = format!("permissions of role '{role}' on '{key}'");
        rules.tables[table] = table_rules(&mut reader, table, perms)
            .map_err(|e| IrError::Validation(format!("{context}: {e}")))?;
        rules.session_vars.extend(reader.session);
    }
    Ok(rules)
}

/// Each of `role`'s permissions whose rules cannot be read against `admin`, with
/// why. Every kind is read on its own, so one bad rule leaves out only its own
/// permission (inconsistent metadata); tables the model lacks are skipped (they
/// were left out before).
pub fn problems(admin: &SchemaModel, config: &Config, role: &str) -> Vec<Inconsistency> {
    let mut out = Vec::new();
    for (key, tc) in &config.tables {
        let (Some(perms), Some(table)) = (tc.permissions.get(role), admin.table_by_config_key(key))
        else {
            continue;
        };
        let none = Permissions::default();
        let kinds = [
            (
                "select",
                Permissions {
                    select: perms.select.clone(),
                    ..none.clone()
                },
            ),
            (
                "insert",
                Permissions {
                    insert: perms.insert.clone(),
                    ..none.clone()
                },
            ),
            (
                "update",
                Permissions {
                    update: perms.update.clone(),
                    ..none.clone()
                },
            ),
            (
                "delete",
                Permissions {
                    delete: perms.delete.clone(),
                    ..none
                },
            ),
        ];
        for (kind, only) in kinds {
            let defined = only.select.is_some()
                || only.insert.is_some()
                || only.update.is_some()
                || only.delete.is_some();
            let Some(object) = ObjectKind::permission(kind).filter(|_| defined) else {
                continue;
            };
            if let Err(why) = table_rules(&mut RuleReader::new(admin), table, &only) {
                out.push(Inconsistency::of_table(object, key, role, why));
            }
        }
    }
    out
}

fn table_rules(
    reader: &mut RuleReader<'_>,
    table: TableId,
    perms: &Permissions,
) -> Result<TableRules, String> {
    let mut filter = |json: &Option<Json>, what: &str| -> Result<Option<BoolExp>, String> {
        match json {
            None => Ok(None),
            Some(Json::Object(m)) if m.is_empty() => Ok(None),
            Some(v) => reader.read(table, v, what).map(Some),
        }
    };
    let mut rules = TableRules::default();
    if let Some(p) = &perms.select {
        rules.select = filter(&p.filter, "select.filter")?;
        rules.limit = p.limit;
    }
    if let Some(p) = &perms.insert {
        rules.insert_check = filter(&p.check, "insert.check")?;
    }
    if let Some(p) = &perms.update {
        rules.update_filter = filter(&p.filter, "update.filter")?;
        rules.update_check = filter(&p.check, "update.check")?;
    }
    if let Some(p) = &perms.delete {
        rules.delete_filter = filter(&p.filter, "delete.filter")?;
    }
    if let Some(p) = &perms.select {
        for (column, when) in &p.redact {
            let c = reader
                .model()
                .table(table)
                .columns
                .iter()
                .position(|c| &c.name == column)
                .ok_or_else(|| format!("select.columns: no column '{column}'"))?;
            let when = reader.read(table, when, &format!("select.columns.{column}"))?;
            rules.redact.push((c, when));
        }
    }
    if let Some(p) = &perms.insert {
        rules.insert_set = presets(reader, table, &p.set, "insert.set")?;
    }
    if let Some(p) = &perms.update {
        rules.update_set = presets(reader, table, &p.set, "update.set")?;
    }
    Ok(rules)
}

/// A permission's `set`: column → literal or session variable.
fn presets(
    reader: &mut RuleReader<'_>,
    table: TableId,
    set: &BTreeMap<String, Json>,
    what: &str,
) -> Result<Vec<(usize, Preset)>, String> {
    let t = reader.model().table(table);
    set.iter()
        .map(|(column, value)| {
            let c = t
                .columns
                .iter()
                .position(|c| &c.name == column)
                .ok_or_else(|| format!("{what}.{column}: no such column"))?;
            let preset = match value {
                Json::String(s) if is_session_var(s) => {
                    reader.session.insert(session_var(s));
                    Preset::Session(session_var(s))
                }
                other => Preset::Value(other.clone()),
            };
            Ok((c, preset))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::session_array;
    use serde_json::json;

    #[test]
    fn session_arrays_in_both_notations() {
        assert_eq!(
            session_array("{1,2,3}"),
            Ok(vec![json!("1"), json!("2"), json!("3")])
        );
        assert_eq!(
            session_array(" { a , \"b,c\" ,NULL,\"x\\\"y\"} "),
            Ok(vec![json!("a"), json!("b,c"), json!(null), json!("x\"y")])
        );
        assert_eq!(session_array("{}"), Ok(vec![]));
        assert_eq!(session_array("[1, \"a\"]"), Ok(vec![json!(1), json!("a")]));
        for bad in ["1,2", "{1,2", "{{1},{2}}", "[1", "{\"a}", "{\"a\" b}"] {
            assert!(session_array(bad).is_err(), "{bad}");
        }
    }
}
