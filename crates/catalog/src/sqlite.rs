//! SQLite introspection via `sqlite_schema` and the table-valued pragma functions.

use std::collections::HashMap;

use rusqlite::Connection;

use crate::{
    normalize, Catalog, CatalogError, Column, ForeignKey, Introspected, ScalarKind, Table,
    TableKind, UniqueConstraint, Writes,
};

/// The schema name SQLite tables are reported under.
const SCHEMA: &str = "main";

/// A foreign key as SQLite reports it, before referenced columns are resolved.
struct RawForeignKey {
    table: usize,
    columns: Vec<String>,
    ref_table: String,
    /// `None` when the FK omits them: they are the referenced table's primary key.
    ref_columns: Option<Vec<String>>,
}

/// Reads the catalog of the `main` database of a SQLite connection.
///
/// Tables and views come from `sqlite_schema` (internal `sqlite_*` tables and
/// Grafton's own `grafton_catalog_*`, the metadata store, are skipped), columns from `pragma_table_xinfo`, unique constraints and indexes
/// from `pragma_index_list`/`pragma_index_info`, and foreign keys from
/// `pragma_foreign_key_list`. SQLite does not name primary keys, unique
/// constraints and foreign keys, so they get Postgres-style names:
/// `<table>_pkey`, `<table>_<cols>_key` and `<table>_<cols>_fkey`.
pub fn introspect_sqlite(conn: &Connection) -> Result<Introspected, CatalogError> {
    let mut warnings = Vec::new();
    let mut catalog = Catalog::default();
    let mut raw_fks = Vec::new();

    let relations: Vec<(String, String)> = {
        let mut stmt = conn.prepare(
            "SELECT name, type FROM main.sqlite_schema \
             WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' \
             AND name NOT LIKE 'grafton\\_catalog\\_%' ESCAPE '\\' \
             ORDER BY name",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        rows.collect::<Result<_, _>>()?
    };

    let mut columns_stmt = conn.prepare(
        "SELECT name, type, \"notnull\", dflt_value IS NOT NULL, pk, hidden \
         FROM pragma_table_xinfo(?1, 'main') ORDER BY cid",
    )?;
    let mut indexes_stmt = conn.prepare(
        "SELECT name, \"unique\", origin, partial FROM pragma_index_list(?1, 'main') \
         ORDER BY name",
    )?;
    let mut index_columns_stmt =
        conn.prepare("SELECT cid, name FROM pragma_index_info(?1, 'main') ORDER BY seqno")?;
    let mut fks_stmt = conn.prepare(
        "SELECT id, \"table\", \"from\", \"to\" FROM pragma_foreign_key_list(?1, 'main') \
         ORDER BY id, seq",
    )?;

    for (name, kind) in relations {
        let kind = if kind == "view" {
            TableKind::View
        } else {
            TableKind::Table
        };

        // (name, declared type, not null, has default, pk position, hidden)
        let raw_columns: Vec<(String, String, bool, bool, i64, i64)> = columns_stmt
            .query_map([&name], |r| {
                Ok((
                    r.get(0)?,
                    r.get::<_, Option<String>>(1)?.unwrap_or_default(),
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                ))
            })?
            .collect::<Result<_, _>>()?;

        // Index origin 'pk' exists unless the key is the rowid itself.
        let indexes: Vec<(String, bool, String, bool)> = indexes_stmt
            .query_map([&name], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })?
            .collect::<Result<_, _>>()?;
        let has_pk_index = indexes.iter().any(|(_, _, origin, _)| origin == "pk");

        let mut pk: Vec<(i64, String)> = raw_columns
            .iter()
            .filter(|c| c.4 > 0 && c.5 != 1)
            .map(|c| (c.4, c.0.clone()))
            .collect();
        pk.sort();
        let primary_key: Vec<String> = pk.into_iter().map(|(_, n)| n).collect();

        let mut columns = Vec::with_capacity(raw_columns.len());
        for (col_name, decl, not_null, has_default, pk_pos, hidden) in raw_columns {
            // 1: hidden column of a virtual table.
            if hidden == 1 {
                continue;
            }
            let rowid_alias = kind == TableKind::Table
                && pk_pos == 1
                && primary_key.len() == 1
                && !has_pk_index
                && decl.eq_ignore_ascii_case("INTEGER");
            let (scalar, warn) = sqlite_scalar(&decl);
            if warn {
                warnings.push(format!(
                    "column {SCHEMA}.{name}.{col_name} has type {decl}, exposed as String"
                ));
            }
            columns.push(Column {
                name: col_name,
                db_type: decl,
                scalar,
                nullable: !(not_null || rowid_alias),
                // 2, 3: generated columns (virtual, stored).
                has_default: has_default || rowid_alias || hidden >= 2,
                comment: None,
            });
        }

        let mut unique_constraints = Vec::new();
        for (index_name, unique, origin, partial) in indexes {
            if !unique || partial || !(origin == "u" || origin == "c") {
                continue;
            }
            let index_columns: Vec<(i64, Option<String>)> = index_columns_stmt
                .query_map([&index_name], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<Result<_, _>>()?;
            // Only indexes on plain columns (cid -2: expression, -1: rowid).
            let Some(cols) = index_columns
                .into_iter()
                .map(|(cid, n)| n.filter(|_| cid >= 0))
                .collect::<Option<Vec<String>>>()
            else {
                continue;
            };
            // UNIQUE constraints get an automatic index name; name them like Postgres.
            let constraint_name = if origin == "u" && index_name.starts_with("sqlite_autoindex_") {
                format!("{name}_{}_key", cols.join("_"))
            } else {
                index_name
            };
            unique_constraints.push(UniqueConstraint {
                name: constraint_name,
                columns: cols,
            });
        }

        let table = catalog.tables.len();
        let mut fk_rows: Vec<(i64, String, String, Option<String>)> = fks_stmt
            .query_map([&name], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })?
            .collect::<Result<_, _>>()?;
        fk_rows.reverse();
        while let Some((id, ref_table, from, to)) = fk_rows.pop() {
            let mut fk = RawForeignKey {
                table,
                columns: vec![from],
                ref_table,
                ref_columns: to.map(|t| vec![t]),
            };
            while fk_rows.last().is_some_and(|r| r.0 == id) {
                if let Some((_, _, from, to)) = fk_rows.pop() {
                    fk.columns.push(from);
                    match (&mut fk.ref_columns, to) {
                        (Some(refs), Some(to)) => refs.push(to),
                        _ => fk.ref_columns = None,
                    }
                }
            }
            raw_fks.push(fk);
        }

        let writes = match kind {
            TableKind::Table => Writes::ALL,
            TableKind::View => view_writes(conn, &name)?,
        };
        catalog.tables.push(Table {
            writes,
            schema: SCHEMA.to_owned(),
            primary_key_name: (!primary_key.is_empty()).then(|| format!("{name}_pkey")),
            name,
            kind,
            columns,
            primary_key,
            unique_constraints,
            foreign_keys: Vec::new(),
            comment: None,
        });
    }

    resolve_foreign_keys(&mut catalog, raw_fks, &mut warnings);
    normalize(&mut catalog);
    tracing::debug!(
        tables = catalog.tables.len(),
        warnings = warnings.len(),
        "introspected sqlite"
    );
    Ok(Introspected { catalog, warnings })
}

/// Attaches foreign keys to their tables: resolves names case-insensitively (as
/// SQLite does), fills in omitted referenced columns from the referenced primary
/// key, and names each key `<table>_<cols>_fkey` (numbered when repeated).
fn resolve_foreign_keys(
    catalog: &mut Catalog,
    raw: Vec<RawForeignKey>,
    warnings: &mut Vec<String>,
) {
    let by_name: HashMap<String, usize> = catalog
        .tables
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name.to_lowercase(), i))
        .collect();
    for fk in raw {
        let table_name = catalog.tables[fk.table].name.clone();
        let Some(&target) = by_name.get(&fk.ref_table.to_lowercase()) else {
            warnings.push(format!(
                "foreign key on {SCHEMA}.{table_name} references missing table {}; ignored",
                fk.ref_table
            ));
            continue;
        };
        let target_table = &catalog.tables[target];
        let ref_columns = match fk.ref_columns {
            Some(cols) => cols
                .iter()
                .map(|c| canonical_column(target_table, c))
                .collect(),
            None => target_table.primary_key.clone(),
        };
        if ref_columns.len() != fk.columns.len() {
            warnings.push(format!(
                "foreign key on {SCHEMA}.{table_name} to {} does not match its referenced \
                 key; ignored",
                target_table.name
            ));
            continue;
        }
        let ref_table = target_table.name.clone();
        let table = &mut catalog.tables[fk.table];
        let columns: Vec<String> = fk
            .columns
            .iter()
            .map(|c| canonical_column(table, c))
            .collect();
        let base = format!("{}_{}_fkey", table.name, columns.join("_"));
        let mut name = base.clone();
        let mut n = 0;
        while table.foreign_keys.iter().any(|f| f.name == name) {
            n += 1;
            name = format!("{base}{n}");
        }
        table.foreign_keys.push(ForeignKey {
            name,
            columns,
            ref_schema: SCHEMA.to_owned(),
            ref_table,
            ref_columns,
            enforced: false,
        });
    }
}

/// The column's name as declared in `table` (SQLite names are case-insensitive).
fn canonical_column(table: &Table, name: &str) -> String {
    table
        .columns
        .iter()
        .find(|c| c.name.eq_ignore_ascii_case(name))
        .map_or_else(|| name.to_owned(), |c| c.name.clone())
}

/// Maps a declared SQLite column type to a scalar kind; the flag asks for a
/// warning (BLOB columns, exposed as text).
///
/// Well-known type names come first (`TIMESTAMPTZ`, `TIMESTAMP`/`DATETIME`,
/// `DATE`, `TIME`, `UUID`, `JSONB`, `JSON`, `BOOL`), then SQLite's affinity rules.
pub(crate) fn sqlite_scalar(declared: &str) -> (ScalarKind, bool) {
    let t = declared.to_ascii_uppercase();
    let has = |s: &str| t.contains(s);
    let scalar = if has("TIMESTAMPTZ") {
        ScalarKind::Timestamptz
    } else if has("TIMESTAMP") || has("DATETIME") {
        ScalarKind::Timestamp
    } else if has("DATE") {
        ScalarKind::Date
    } else if has("TIME") {
        ScalarKind::Time
    } else if has("UUID") {
        ScalarKind::Uuid
    } else if has("JSONB") {
        ScalarKind::Jsonb
    } else if has("JSON") {
        ScalarKind::Json
    } else if has("BOOL") {
        ScalarKind::Boolean
    } else if has("INT") {
        ScalarKind::Int
    } else if has("CHAR") || has("CLOB") || has("TEXT") {
        ScalarKind::Text
    } else if has("BLOB") {
        return (ScalarKind::Text, true);
    } else if t.trim().is_empty() {
        ScalarKind::Text
    } else if has("REAL") || has("FLOA") || has("DOUB") {
        ScalarKind::Float
    } else {
        ScalarKind::Numeric
    };
    (scalar, false)
}

/// The writes a SQLite view takes: those its `INSTEAD OF` triggers implement.
fn view_writes(conn: &Connection, view: &str) -> rusqlite::Result<Writes> {
    let mut stmt = conn
        .prepare("SELECT sql FROM main.sqlite_schema WHERE type = 'trigger' AND tbl_name = ?1")?;
    let mut writes = Writes::default();
    let rows = stmt.query_map([view], |r| r.get::<_, Option<String>>(0))?;
    for sql in rows {
        // Normalise case and whitespace: `INSTEAD   OF\n insert`.
        let sql = sql?.unwrap_or_default().to_ascii_uppercase();
        let words: Vec<&str> = sql.split_whitespace().collect();
        for w in words.windows(3) {
            if w[0] == "INSTEAD" && w[1] == "OF" {
                match w[2] {
                    "INSERT" => writes.insert = true,
                    "UPDATE" => writes.update = true,
                    "DELETE" => writes.delete = true,
                    _ => {}
                }
            }
        }
    }
    Ok(writes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_declared_types() {
        let cases = [
            ("timestamptz", ScalarKind::Timestamptz),
            ("DATETIME", ScalarKind::Timestamp),
            ("timestamp", ScalarKind::Timestamp),
            ("date", ScalarKind::Date),
            ("TIME", ScalarKind::Time),
            ("uuid", ScalarKind::Uuid),
            ("jsonb", ScalarKind::Jsonb),
            ("JSON", ScalarKind::Json),
            ("BOOLEAN", ScalarKind::Boolean),
            ("INTEGER", ScalarKind::Int),
            ("bigint", ScalarKind::Int),
            ("VARCHAR(20)", ScalarKind::Text),
            ("TEXT", ScalarKind::Text),
            ("", ScalarKind::Text),
            ("BLOB", ScalarKind::Text),
            ("REAL", ScalarKind::Float),
            ("double precision", ScalarKind::Float),
            ("NUMERIC(10,2)", ScalarKind::Numeric),
            ("DECIMAL", ScalarKind::Numeric),
        ];
        for (declared, expected) in cases {
            assert_eq!(sqlite_scalar(declared).0, expected, "{declared}");
        }
        assert!(sqlite_scalar("blob").1);
        assert!(!sqlite_scalar("").1);
        assert!(!sqlite_scalar("TEXT").1);
    }
}
