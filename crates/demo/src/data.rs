//! The dataset itself: table definitions and deterministic row generators.
//!
//! Both backends consume exactly these iterators (SQLite through prepared
//! inserts, PostgreSQL through `COPY` text), so the data is identical by
//! construction rather than by keeping two implementations in sync.
//!
//! Every row is a pure function of `(table, rows, position)`: each row seeds
//! its own PRNG from the table and its id, so the generator needs no state
//! carried across rows and any row can be computed on its own (tests use that
//! to spot-check single rows).

mod generate;

use generate::*;
use std::fmt;

/// One column value of a generated row.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Value {
    /// An integer (ids and foreign keys).
    Int(i64),
    /// Text, including timestamps in `YYYY-MM-DDTHH:MM:SS` form.
    Text(String),
    /// SQL `NULL`.
    Null,
}

impl fmt::Display for Value {
    /// Plain rendering for humans and tests; `NULL` prints as `NULL`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Text(s) => f.write_str(s),
            Value::Null => f.write_str("NULL"),
        }
    }
}

/// The logical type of a column, rendered per backend by the DDL writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    /// The integer surrogate primary key `id`.
    Id,
    /// A plain integer (foreign keys).
    Int,
    /// Free text.
    Text,
    /// A timestamp without time zone.
    Timestamp,
}

/// A column of one of the demo tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    /// Column name.
    pub name: &'static str,
    /// Logical type.
    pub ty: ColumnType,
    /// Whether the column is declared `NOT NULL`.
    pub not_null: bool,
    /// The table whose `id` this column references, if it is a foreign key.
    pub references: Option<&'static str>,
}

const fn col(name: &'static str, ty: ColumnType) -> Column {
    Column {
        name,
        ty,
        not_null: false,
        references: None,
    }
}

const fn fk(name: &'static str, table: &'static str, not_null: bool) -> Column {
    Column {
        name,
        ty: ColumnType::Int,
        not_null,
        references: Some(table),
    }
}

const ID: Column = Column {
    name: "id",
    ty: ColumnType::Id,
    not_null: true,
    references: None,
};

const MEMBERS_COLUMNS: &[Column] = &[
    ID,
    col("first_name", ColumnType::Text),
    col("last_name", ColumnType::Text),
    col("email", ColumnType::Text),
];
const GROUPS_COLUMNS: &[Column] = &[
    ID,
    col("name", ColumnType::Text),
    col("created_at", ColumnType::Timestamp),
];
const VENUES_COLUMNS: &[Column] = &[
    ID,
    col("name", ColumnType::Text),
    col("postal_code", ColumnType::Text),
    col("prefecture", ColumnType::Text),
    col("city", ColumnType::Text),
    col("street1", ColumnType::Text),
    col("street2", ColumnType::Text),
    col("building", ColumnType::Text),
];
const MEETUPS_COLUMNS: &[Column] = &[
    ID,
    Column {
        name: "title",
        ty: ColumnType::Text,
        not_null: true,
        references: None,
    },
    col("start_at", ColumnType::Timestamp),
    col("end_at", ColumnType::Timestamp),
    fk("venue_id", "venues", false),
    fk("group_id", "groups", false),
];
// Link-table key columns say NOT NULL explicitly: PostgreSQL implies it for
// primary-key columns but SQLite does not, and the catalog must see the same
// nullability (and so the same GraphQL types) on both backends.
const MEETUPS_MEMBERS_COLUMNS: &[Column] = &[
    fk("meetup_id", "meetups", true),
    fk("member_id", "members", true),
];
const GROUPS_MEMBERS_COLUMNS: &[Column] = &[
    fk("group_id", "groups", true),
    fk("member_id", "members", true),
];
const MEMBER_FOLLOW_COLUMNS: &[Column] = &[
    fk("created_by", "members", true),
    fk("member_id", "members", true),
];

/// The seven tables of the meetup schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Table {
    /// `members(id, first_name, last_name, email)`.
    Members,
    /// `groups(id, name, created_at)`.
    Groups,
    /// `venues(id, name, postal_code, prefecture, city, street1, street2, building)`.
    Venues,
    /// `meetups(id, title, start_at, end_at, venue_id, group_id)`.
    Meetups,
    /// `meetups_members(meetup_id, member_id)`.
    MeetupsMembers,
    /// `groups_members(group_id, member_id)`.
    GroupsMembers,
    /// `member_follow(created_by, member_id)`.
    MemberFollow,
}

impl Table {
    /// All tables, in an order where every table comes after the tables it
    /// references (the load order).
    pub const ALL: [Table; 7] = [
        Table::Members,
        Table::Groups,
        Table::Venues,
        Table::Meetups,
        Table::MeetupsMembers,
        Table::GroupsMembers,
        Table::MemberFollow,
    ];

    /// The SQL name of the table.
    pub fn name(self) -> &'static str {
        match self {
            Table::Members => "members",
            Table::Groups => "groups",
            Table::Venues => "venues",
            Table::Meetups => "meetups",
            Table::MeetupsMembers => "meetups_members",
            Table::GroupsMembers => "groups_members",
            Table::MemberFollow => "member_follow",
        }
    }

    /// The columns, in the order the generated rows carry their values.
    pub fn columns(self) -> &'static [Column] {
        match self {
            Table::Members => MEMBERS_COLUMNS,
            Table::Groups => GROUPS_COLUMNS,
            Table::Venues => VENUES_COLUMNS,
            Table::Meetups => MEETUPS_COLUMNS,
            Table::MeetupsMembers => MEETUPS_MEMBERS_COLUMNS,
            Table::GroupsMembers => GROUPS_MEMBERS_COLUMNS,
            Table::MemberFollow => MEMBER_FOLLOW_COLUMNS,
        }
    }

    /// The primary-key column names.
    pub fn primary_key(self) -> &'static [&'static str] {
        match self {
            Table::Members | Table::Groups | Table::Venues | Table::Meetups => &["id"],
            Table::MeetupsMembers => &["meetup_id", "member_id"],
            Table::GroupsMembers => &["group_id", "member_id"],
            Table::MemberFollow => &["created_by", "member_id"],
        }
    }

    /// Links generated per parent row for a link table, `None` for main tables.
    fn links_per_parent(self, rows: u64) -> Option<u64> {
        match self {
            Table::Members | Table::Groups | Table::Venues | Table::Meetups => None,
            Table::MeetupsMembers | Table::GroupsMembers => Some(rows.min(LINKS)),
            // One fewer candidate, because nobody follows themselves.
            Table::MemberFollow => Some(rows.saturating_sub(1).min(LINKS)),
        }
    }

    /// How many rows the table gets for a dataset of `rows` rows per main table.
    pub fn row_count(self, rows: u64) -> u64 {
        match self.links_per_parent(rows) {
            None => rows,
            Some(per) => rows.saturating_mul(per),
        }
    }

    /// The row at `position` (0-based, below [`Table::row_count`]) of the
    /// dataset with `rows` rows per main table.
    pub fn row(self, rows: u64, position: u64) -> Vec<Value> {
        match self.links_per_parent(rows) {
            None => {
                let id = position + 1;
                match self {
                    Table::Members => member(id),
                    Table::Groups => group(id),
                    Table::Venues => venue(id),
                    _ => meetup(rows, id),
                }
            }
            Some(per) => {
                // `per` is at least 1 whenever a position exists at all.
                let per = per.max(1);
                let parent = position / per + 1;
                // Targets sorted per parent, so rows come in primary-key
                // order (the order a dump `ORDER BY` the key shows them in).
                let mut targets = [0; LINKS as usize];
                let targets = &mut targets[..per as usize];
                for (k, t) in (0..).zip(targets.iter_mut()) {
                    *t = self.link_target(rows, parent, k);
                }
                targets.sort_unstable();
                let target = targets.get((position % per) as usize).copied().unwrap_or(0);
                vec![int(parent), int(target)]
            }
        }
    }

    /// The `k`-th linked id of `parent` in a link table. Distinct `k` below
    /// [`Table::links_per_parent`] give distinct targets.
    fn link_target(self, rows: u64, parent: u64, k: u64) -> u64 {
        match self {
            Table::MeetupsMembers => (parent.wrapping_mul(7) + k) % rows + 1,
            Table::GroupsMembers => (parent.wrapping_mul(13) + k) % rows + 1,
            _ => {
                // An offset in 1..rows, so the target is never the follower.
                let a = parent - 1;
                let offset = 1 + (a.wrapping_mul(31) + k) % (rows - 1);
                (a + offset) % rows + 1
            }
        }
    }

    /// All rows of the table, in primary-key order.
    pub fn rows(self, rows: u64) -> impl Iterator<Item = Vec<Value>> {
        (0..self.row_count(rows)).map(move |p| self.row(rows, p))
    }
}

/// Links per parent in the link tables (so they hold about 2×N rows).
const LINKS: u64 = 2;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(DAY_2015), (2015, 1, 1));
        assert_eq!(civil_from_days(DAY_2020), (2020, 1, 1));
        assert_eq!(civil_from_days(DAY_2020 + 59), (2020, 2, 29));
        assert_eq!(
            civil_from_days(DAY_2020 + DAYS_2020_2025 as i64 - 1),
            (2025, 12, 31)
        );
        assert_eq!(
            civil_from_days(DAY_2015 + DAYS_2015_2019 as i64),
            (2020, 1, 1)
        );
        assert_eq!(timestamp(DAY_2020, 3_661), "2020-01-01T01:01:01");
    }

    #[test]
    fn meetup_times_are_ordered_and_in_range() {
        for row in Table::Meetups.rows(2_000) {
            let (Value::Text(start), Value::Text(end)) = (&row[2], &row[3]) else {
                panic!("timestamps are text: {row:?}");
            };
            assert!(start < end, "{start} < {end}");
            assert_eq!(start[..10], end[..10]);
            assert!(start.as_str() >= "2020-01-01" && end.as_str() < "2026-01-01");
        }
    }

    #[test]
    fn link_tables_have_no_duplicates_or_self_follows() {
        for n in [0, 1, 2, 3, 7, 14, 100] {
            for table in [
                Table::MeetupsMembers,
                Table::GroupsMembers,
                Table::MemberFollow,
            ] {
                let rows: Vec<_> = table.rows(n).collect();
                assert_eq!(rows.len() as u64, table.row_count(n));
                let mut keys: Vec<_> = rows.iter().map(|r| (r[0].clone(), r[1].clone())).collect();
                for (a, b) in &keys {
                    for v in [a, b] {
                        assert!(matches!(v, Value::Int(i) if (1..=n as i64).contains(i)));
                    }
                    if table == Table::MemberFollow {
                        assert_ne!(a, b, "self-follow at n={n}");
                    }
                }
                keys.sort();
                keys.dedup();
                assert_eq!(keys.len(), rows.len(), "{table:?} n={n}");
            }
        }
        assert_eq!(Table::MemberFollow.row_count(100), 200);
        assert_eq!(Table::MemberFollow.row_count(2), 2);
    }

    #[test]
    fn rows_match_columns_and_pick_from_the_seed() {
        for table in Table::ALL {
            for row in table.rows(10) {
                assert_eq!(row.len(), table.columns().len(), "{table:?}");
            }
        }
        let m = Table::Meetups.row(10, 0);
        assert_eq!(m[0], Value::Int(1));
        assert!(matches!(&m[1], Value::Text(t) if t.starts_with("Meetup 1: ")));
    }
}
