//! Written rows found again by key columns: views have no `ctid`/`tableoid` or
//! `rowid`, so their writes return (and their follow-up reads match) the key.

use super::{Dialect, Renderer};
use crate::ast::{Param, TableRef};

impl Renderer {
    /// `FROM` the key lists joined to the table, numbered in list order.
    pub(super) fn key_ids_from(&mut self, t: &TableRef, ids: &[Param], key: &[String]) {
        let keys = format!("{}_k", t.alias);
        match self.dialect {
            Dialect::Postgres => {
                self.push("unnest(");
                self.comma_list(ids, |r, p| r.param(p));
                self.push(") WITH ORDINALITY AS ");
                self.ident(&keys);
                self.push("(");
                for i in 0..key.len() {
                    self.ident(&format!("k{i}"));
                    self.push(", ");
                }
                self.push("\"n\") JOIN ");
                self.table_ref(t);
                self.key_match(&t.alias, key, |r, i| {
                    r.ident(&keys);
                    r.push(".");
                    r.ident(&format!("k{i}"));
                });
            }
            Dialect::Sqlite => {
                self.push("json_each(");
                if let Some(p) = ids.first() {
                    self.param(p);
                }
                self.push(") AS ");
                self.ident(&keys);
                self.push(" JOIN ");
                self.table_ref(t);
                self.key_match(&t.alias, key, |r, i| {
                    r.ident(&keys);
                    r.push(&format!(".\"value\" ->> {i}"));
                });
            }
        }
    }

    /// ` ON (alias.k0 = <value 0> AND …)`.
    fn key_match(&mut self, alias: &str, key: &[String], value: impl Fn(&mut Self, usize)) {
        self.push(" ON (");
        for (i, column) in key.iter().enumerate() {
            if i > 0 {
                self.push(" AND ");
            }
            self.ident(alias);
            self.push(".");
            self.ident(column);
            self.push(" = ");
            value(self, i);
        }
        self.push(")");
    }

    /// The row (aliased) has one of these keys.
    pub(super) fn key_in(&mut self, alias: &str, ids: &[Param], key: &[String]) {
        self.push("((");
        for (i, column) in key.iter().enumerate() {
            if i > 0 {
                self.push(", ");
            }
            self.ident(alias);
            self.push(".");
            self.ident(column);
        }
        self.push(") IN (SELECT ");
        match self.dialect {
            Dialect::Postgres => {
                self.push("* FROM unnest(");
                self.comma_list(ids, |r, p| r.param(p));
                self.push(")");
            }
            Dialect::Sqlite => {
                for i in 0..key.len() {
                    if i > 0 {
                        self.push(", ");
                    }
                    self.push(&format!("\"value\" ->> {i}"));
                }
                self.push(" FROM json_each(");
                if let Some(p) = ids.first() {
                    self.param(p);
                }
                self.push(")");
            }
        }
        self.push("))");
    }
}
