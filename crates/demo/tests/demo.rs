//! End-to-end checks of the demo dataset on a real SQLite file, and of the
//! PostgreSQL script against it.

use std::process::Command;

use grafton_demo::{
    create_sqlite, postgres_sql, write_postgres_copy, DemoError, DemoOptions, Table, Value,
};
use rusqlite::types::ValueRef;
use rusqlite::Connection;

fn opts(rows: u64) -> DemoOptions {
    DemoOptions {
        rows,
        progress: false,
    }
}

/// Every table as text lines, ordered by primary key, one value per field:
/// `\N` for NULL, so it can be compared with `COPY` text.
fn dump(conn: &Connection) -> Vec<(String, Vec<String>)> {
    Table::ALL
        .iter()
        .map(|t| {
            let cols: Vec<&str> = t.columns().iter().map(|c| c.name).collect();
            let sql = format!(
                "SELECT {} FROM \"{}\" ORDER BY {}",
                cols.join(", "),
                t.name(),
                t.primary_key().join(", ")
            );
            let mut stmt = conn.prepare(&sql).unwrap();
            let lines = stmt
                .query_map([], |r| {
                    let fields: Vec<String> = (0..cols.len())
                        .map(|i| match r.get_ref(i).unwrap() {
                            ValueRef::Null => "\\N".to_owned(),
                            ValueRef::Integer(v) => v.to_string(),
                            ValueRef::Text(s) => String::from_utf8(s.to_vec()).unwrap(),
                            other => panic!("unexpected {other:?}"),
                        })
                        .collect();
                    Ok(fields.join("\t"))
                })
                .unwrap()
                .collect::<Result<Vec<_>, _>>()
                .unwrap();
            (t.name().to_owned(), lines)
        })
        .collect()
}

/// A 64-bit FNV-1a checksum of the whole dump.
fn checksum(conn: &Connection) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (table, lines) in dump(conn) {
        for line in std::iter::once(&table).chain(&lines) {
            for b in line.bytes().chain([b'\n']) {
                h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
            }
        }
    }
    h
}

/// The `COPY … FROM STDIN` blocks of a script, by table, lines verbatim.
fn copy_blocks(script: &str) -> Vec<(String, Vec<String>)> {
    let mut blocks = Vec::new();
    let mut lines = script.lines();
    while let Some(line) = lines.next() {
        if let Some(rest) = line.strip_prefix("COPY \"") {
            let table = rest.split('"').next().unwrap().to_owned();
            let data: Vec<String> = lines
                .by_ref()
                .take_while(|l| *l != "\\.")
                .map(str::to_owned)
                .collect();
            blocks.push((table, data));
        }
    }
    blocks
}

/// Equal dumps, reporting the first difference rather than both dumps.
fn assert_same(left: &[(String, Vec<String>)], right: &[(String, Vec<String>)]) {
    let names = |d: &[(String, Vec<String>)]| d.iter().map(|(t, _)| t.clone()).collect::<Vec<_>>();
    assert_eq!(names(left), names(right));
    for ((table, l), (_, r)) in left.iter().zip(right) {
        for (i, (a, b)) in l.iter().zip(r).enumerate() {
            assert_eq!(a, b, "{table} line {i}");
        }
        assert_eq!(l.len(), r.len(), "{table} line count");
    }
}

fn count(conn: &Connection, sql: &str) -> i64 {
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

#[test]
fn creates_counts_and_keeps_referential_integrity() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("demo.db");
    let summary = create_sqlite(&path, &opts(500)).unwrap();
    assert!(summary.created);
    let expected: Vec<(String, u64)> = [
        ("members", 500),
        ("groups", 500),
        ("venues", 500),
        ("meetups", 500),
        ("meetups_members", 1000),
        ("groups_members", 1000),
        ("member_follow", 1000),
    ]
    .iter()
    .map(|(t, n)| (t.to_string(), *n))
    .collect();
    assert_eq!(summary.rows_per_table, expected);

    let conn = Connection::open(&path).unwrap();
    for (table, n) in &expected {
        assert_eq!(
            count(&conn, &format!("SELECT count(*) FROM \"{table}\"")),
            *n as i64
        );
    }
    assert_eq!(count(&conn, "SELECT min(id) FROM members"), 1);
    assert_eq!(count(&conn, "SELECT max(id) FROM meetups"), 500);

    // SQLite's own check of every declared foreign key…
    let violations: Vec<String> = conn
        .prepare("PRAGMA foreign_key_check")
        .unwrap()
        .query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(violations.is_empty(), "{violations:?}");
    // …and explicit orphan queries, which also catch NULL foreign keys.
    for sql in [
        "SELECT count(*) FROM meetups WHERE venue_id IS NULL OR venue_id NOT IN (SELECT id FROM venues)",
        "SELECT count(*) FROM meetups WHERE group_id IS NULL OR group_id NOT IN (SELECT id FROM groups)",
        "SELECT count(*) FROM meetups_members WHERE meetup_id NOT IN (SELECT id FROM meetups) OR member_id NOT IN (SELECT id FROM members)",
        "SELECT count(*) FROM groups_members WHERE group_id NOT IN (SELECT id FROM groups) OR member_id NOT IN (SELECT id FROM members)",
        "SELECT count(*) FROM member_follow WHERE created_by NOT IN (SELECT id FROM members) OR member_id NOT IN (SELECT id FROM members)",
        "SELECT count(*) FROM member_follow WHERE created_by = member_id",
        "SELECT count(*) FROM meetups WHERE title IS NULL OR end_at <= start_at",
        "SELECT count(*) FROM meetups WHERE start_at < '2020-01-01' OR end_at >= '2026-01-01'",
    ] {
        assert_eq!(count(&conn, sql), 0, "{sql}");
    }
    // Timestamps are stored as text in the agreed format.
    let start: String = conn
        .query_row("SELECT start_at FROM meetups WHERE id = 1", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(start.len(), 19);
    assert_eq!(&start[10..11], "T");
    // Some optional address parts are NULL, some are not.
    let nulls = count(&conn, "SELECT count(*) FROM venues WHERE street2 IS NULL");
    assert!(nulls > 100 && nulls < 400, "{nulls}");

    assert_eq!(
        conn.query_row("PRAGMA journal_mode", [], |r| r.get::<_, String>(0))
            .unwrap(),
        "wal"
    );
    // Relationship lookups are index searches, not scans.
    for (table, column) in [
        ("meetups", "venue_id"),
        ("meetups", "group_id"),
        ("meetups_members", "meetup_id"),
        ("meetups_members", "member_id"),
        ("groups_members", "member_id"),
        ("member_follow", "member_id"),
        ("member_follow", "created_by"),
    ] {
        let plan: String = conn
            .query_row(
                &format!("EXPLAIN QUERY PLAN SELECT * FROM \"{table}\" WHERE \"{column}\" = 3"),
                [],
                |r| r.get(3),
            )
            .unwrap();
        assert!(plan.contains("USING"), "{table}.{column}: {plan}");
    }
    // ANALYZE ran.
    assert!(count(&conn, "SELECT count(*) FROM sqlite_stat1") > 0);
}

#[test]
fn same_rows_give_identical_data_and_a_second_call_is_a_no_op() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.db");
    let b = dir.path().join("b.db");
    create_sqlite(&a, &opts(500)).unwrap();
    create_sqlite(&b, &opts(500)).unwrap();
    let sum_a = checksum(&Connection::open(&a).unwrap());
    assert_eq!(sum_a, checksum(&Connection::open(&b).unwrap()));

    let c = dir.path().join("c.db");
    create_sqlite(&c, &opts(501)).unwrap();
    assert_ne!(sum_a, checksum(&Connection::open(&c).unwrap()));

    // Asked again, even for another size: left alone, actual counts reported.
    let again = create_sqlite(&a, &opts(900)).unwrap();
    assert!(!again.created);
    assert_eq!(again.rows_per_table[0], ("members".to_owned(), 500));
    assert_eq!(again.rows_per_table[6], ("member_follow".to_owned(), 1000));
    assert_eq!(sum_a, checksum(&Connection::open(&a).unwrap()));
}

#[test]
fn foreign_tables_of_the_same_name_are_not_touched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.db");
    Connection::open(&path)
        .unwrap()
        .execute_batch("CREATE TABLE members (x TEXT); INSERT INTO members VALUES ('mine');")
        .unwrap();
    let err = create_sqlite(&path, &opts(10)).unwrap_err();
    assert!(matches!(&err, DemoError::Conflict { tables, .. } if tables == &["members"]));
    assert!(err.to_string().contains("members"), "{err}");
    let conn = Connection::open(&path).unwrap();
    assert_eq!(count(&conn, "SELECT count(*) FROM sqlite_master"), 1);
}

#[test]
fn postgres_script_carries_the_same_rows_as_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("demo.db");
    create_sqlite(&path, &opts(50)).unwrap();
    let from_sqlite = dump(&Connection::open(&path).unwrap());

    let script = postgres_sql(&opts(50));
    let blocks = copy_blocks(&script);
    // Rows are written in primary-key order, so the blocks compare line by
    // line with the ordered SQLite dump: every value of every row.
    assert_same(&blocks, &from_sqlite);

    // Spot-check a row by value, independent of either rendering.
    let meetup = Table::Meetups.row(50, 0);
    assert_eq!(meetup[0], Value::Int(1));
    let first = &blocks[3].1[0];
    assert!(first.starts_with("1\tMeetup 1: "), "{first}");

    let mut streamed = Vec::new();
    write_postgres_copy(&mut streamed, &opts(50)).unwrap();
    assert_eq!(String::from_utf8(streamed).unwrap(), script);

    for needle in [
        "CREATE TABLE \"meetups\"",
        "ALTER TABLE \"meetups\" ADD FOREIGN KEY (\"venue_id\") REFERENCES \"venues\" (\"id\");",
        "CREATE INDEX \"meetups_venue_id_idx\"",
        "ALTER TABLE \"members\" ALTER COLUMN \"id\" RESTART WITH 51;",
        "ANALYZE \"member_follow\";",
    ] {
        assert!(script.contains(needle), "missing {needle}");
    }
}

/// Loads the script with `psql` into a fresh database on a real PostgreSQL (the
/// testkit's throwaway cluster, or `GRAFTON_TEST_DATABASE_URL` when set) and
/// compares every row with SQLite.
#[test]
fn postgres_loads_the_same_data() {
    let url = grafton_testkit::fresh_database("demo");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("demo.db");
    create_sqlite(&db, &opts(300)).unwrap();
    let from_sqlite = dump(&Connection::open(&db).unwrap());

    let psql = |args: &[&str]| {
        let out = Command::new("psql")
            .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-At", &url])
            .args(args)
            .output()
            .expect("psql runs (install the PostgreSQL client)");
        assert!(
            out.status.success(),
            "psql {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let script_path = dir.path().join("demo.sql");
    let mut file = std::fs::File::create(&script_path).unwrap();
    write_postgres_copy(&mut file, &opts(300)).unwrap();
    drop(file);
    psql(&["-f", script_path.to_str().unwrap()]);

    let mut from_postgres = Vec::new();
    for table in Table::ALL {
        // Timestamps rendered like SQLite's text; NULL as COPY's \N.
        let cols: Vec<String> = table
            .columns()
            .iter()
            .map(|c| match c.ty {
                grafton_demo::ColumnType::Timestamp => format!(
                    "coalesce(to_char({0}, 'YYYY-MM-DD\"T\"HH24:MI:SS'), '\\N')",
                    c.name
                ),
                _ => format!("coalesce({}::text, '\\N')", c.name),
            })
            .collect();
        let out = psql(&[
            "-F",
            "\t",
            "-c",
            &format!(
                "SELECT {} FROM {} ORDER BY {}",
                cols.join(", "),
                table.name(),
                table.primary_key().join(", ")
            ),
        ]);
        from_postgres.push((
            table.name().to_owned(),
            out.lines().map(str::to_owned).collect::<Vec<_>>(),
        ));
    }
    // Inserts without an id continue after the loaded ones.
    let next = psql(&[
        "-c",
        "INSERT INTO members (first_name) VALUES ('x') RETURNING id",
    ]);
    assert_same(&from_postgres, &from_sqlite);
    assert_eq!(next.trim(), "301");
}
