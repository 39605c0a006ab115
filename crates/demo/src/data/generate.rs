//! The row generators: a seeded PRNG per row, word lists, dates.

use super::Value;

/// SplitMix64: a tiny, well-mixed PRNG, so the dataset needs no `rand` and
/// can never change under us with a dependency upgrade.
#[derive(Debug, Clone)]
pub(super) struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator for one row: the table seed mixed with the row id, so rows
    /// are independent of each other and of generation order.
    pub(super) fn for_row(table_seed: u64, id: u64) -> Self {
        SplitMix64(table_seed ^ id.wrapping_mul(0xD1B5_4A32_D192_ED03))
    }

    pub(super) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`); the modulo bias is irrelevant here.
    pub(super) fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// True with probability `percent`/100.
    pub(super) fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    pub(super) fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        // `below` never returns len or more, so the index is in range.
        items
            .get(self.below(items.len() as u64) as usize)
            .copied()
            .unwrap_or_default()
    }
}

pub(super) const SEED_MEMBERS: u64 = 0x6D65_6D62_6572_7301;
pub(super) const SEED_GROUPS: u64 = 0x6772_6F75_7073_0002;
pub(super) const SEED_VENUES: u64 = 0x7665_6E75_6573_0003;
pub(super) const SEED_MEETUPS: u64 = 0x6D65_6574_7570_7304;

pub(super) fn int(v: u64) -> Value {
    // Ids never get near i64::MAX; saturate rather than wrap if they did.
    Value::Int(i64::try_from(v).unwrap_or(i64::MAX))
}

pub(super) fn text(s: impl Into<String>) -> Value {
    Value::Text(s.into())
}

pub(super) const FIRST_NAMES: &[&str] = &[
    "Haruto", "Yuto", "Sota", "Yuki", "Hayato", "Haruki", "Ryusei", "Koki", "Sora", "Sosuke",
    "Riku", "Kaito", "Ren", "Takumi", "Daiki", "Kenta", "Shota", "Hiroshi", "Takeshi", "Akira",
    "Yui", "Hina", "Sakura", "Aoi", "Rin", "Mei", "Yuna", "Honoka", "Saki", "Miyu", "Nanami",
    "Akari", "Misaki", "Emi", "Ayaka", "Haruka", "Kaori", "Naoko", "Yoko", "Keiko",
];
pub(super) const LAST_NAMES: &[&str] = &[
    "Sato",
    "Suzuki",
    "Takahashi",
    "Tanaka",
    "Watanabe",
    "Ito",
    "Yamamoto",
    "Nakamura",
    "Kobayashi",
    "Kato",
    "Yoshida",
    "Yamada",
    "Sasaki",
    "Yamaguchi",
    "Matsumoto",
    "Inoue",
    "Kimura",
    "Hayashi",
    "Shimizu",
    "Yamazaki",
    "Mori",
    "Abe",
    "Ikeda",
    "Hashimoto",
    "Yamashita",
    "Ishikawa",
    "Nakajima",
    "Maeda",
    "Fujita",
    "Ogawa",
    "Goto",
    "Okada",
    "Hasegawa",
    "Murakami",
    "Kondo",
    "Ishii",
    "Saito",
    "Sakamoto",
    "Endo",
    "Aoki",
];
pub(super) const PLACES: &[&str] = &[
    "Tokyo",
    "Shibuya",
    "Shinjuku",
    "Akihabara",
    "Osaka",
    "Kyoto",
    "Kobe",
    "Nagoya",
    "Fukuoka",
    "Sapporo",
    "Sendai",
    "Yokohama",
    "Hiroshima",
    "Naha",
    "Kanazawa",
    "Matsuyama",
];
pub(super) const TOPICS: &[&str] = &[
    "Rust",
    "Clojure",
    "Haskell",
    "GraphQL",
    "PostgreSQL",
    "SQLite",
    "Go",
    "TypeScript",
    "Python",
    "Kotlin",
    "Elixir",
    "OCaml",
    "Data",
    "Cloud",
    "Security",
    "Frontend",
    "DevOps",
    "Machine Learning",
    "Embedded",
    "Game Dev",
];
pub(super) const GROUP_KINDS: &[&str] = &[
    "Meetup",
    "Users Group",
    "Study Group",
    "Community",
    "Hackers",
    "Circle",
    "Club",
    "Guild",
];
pub(super) const TITLE_WORDS: &[&str] = &[
    "Night",
    "Workshop",
    "Lightning Talks",
    "Hack Day",
    "Study Session",
    "Reading Club",
    "Conference",
    "Mob Programming",
    "Beginners Day",
    "Code Review",
    "Social",
    "Deep Dive",
];
pub(super) const VENUE_WORDS: &[&str] = &[
    "Sakura", "Fuji", "Midori", "Hikari", "Aozora", "Kaze", "Minato", "Hoshi", "Tsubasa", "Yume",
];
pub(super) const VENUE_KINDS: &[&str] = &[
    "Hall",
    "Hub",
    "Space",
    "Lab",
    "Center",
    "Studio",
    "Office",
    "Coworking",
];
pub(super) const PREFECTURES: &[&str] = &[
    "Tokyo",
    "Osaka",
    "Kyoto",
    "Hokkaido",
    "Kanagawa",
    "Aichi",
    "Fukuoka",
    "Hyogo",
    "Miyagi",
    "Hiroshima",
    "Okinawa",
    "Ishikawa",
    "Ehime",
    "Shizuoka",
    "Saitama",
    "Chiba",
];
pub(super) const CITIES: &[&str] = &[
    "Chiyoda",
    "Minato",
    "Shibuya",
    "Shinjuku",
    "Kita",
    "Chuo",
    "Naka",
    "Nishi",
    "Higashi",
    "Minami",
    "Sakyo",
    "Aoba",
    "Hakata",
    "Kohoku",
    "Sumiyoshi",
    "Tennoji",
];
pub(super) const TOWNS: &[&str] = &[
    "Marunouchi",
    "Jingumae",
    "Nishishinjuku",
    "Umeda",
    "Sakae",
    "Tenjin",
    "Ginza",
    "Roppongi",
    "Honmachi",
    "Kyomachi",
    "Ichibancho",
    "Motomachi",
];
pub(super) const BUILDINGS: &[&str] = &[
    "Sunshine",
    "Garden",
    "Central",
    "Tower",
    "Plaza",
    "Riverside",
    "Park",
    "Forest",
];

/// Days from 1970-01-01 to 2015-01-01 and to 2020-01-01.
pub(super) const DAY_2015: i64 = 16_436;
pub(super) const DAY_2020: i64 = 18_262;
/// Days in 2015–2019 and in 2020–2025 (2016, 2020 and 2024 are leap years).
pub(super) const DAYS_2015_2019: u64 = 1_826;
pub(super) const DAYS_2020_2025: u64 = 2_192;

/// Civil date (year, month, day) from days since 1970-01-01: Howard
/// Hinnant's `civil_from_days`, exact for the proleptic Gregorian calendar.
pub(crate) fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    // d is in 1..=31 and m in 1..=12 by construction.
    (y, m as u32, d as u32)
}

/// `YYYY-MM-DDTHH:MM:SS` for a day (since 1970-01-01) and a second of that day.
/// This text is read as the same `timestamp` by PostgreSQL and stored as is
/// by SQLite, so both backends hold the same instant.
pub(crate) fn timestamp(days: i64, second_of_day: u64) -> String {
    let (y, m, d) = civil_from_days(days);
    let (h, min, s) = (
        second_of_day / 3_600,
        second_of_day / 60 % 60,
        second_of_day % 60,
    );
    format!("{y:04}-{m:02}-{d:02}T{h:02}:{min:02}:{s:02}")
}

pub(super) fn member(id: u64) -> Vec<Value> {
    let mut rng = SplitMix64::for_row(SEED_MEMBERS, id);
    let first = rng.pick(FIRST_NAMES);
    let last = rng.pick(LAST_NAMES);
    // The id makes every email unique, as real emails would be.
    let email = format!(
        "{}.{}.{id}@example.com",
        first.to_ascii_lowercase(),
        last.to_ascii_lowercase()
    );
    vec![int(id), text(first), text(last), text(email)]
}

pub(super) fn group(id: u64) -> Vec<Value> {
    let mut rng = SplitMix64::for_row(SEED_GROUPS, id);
    let name = format!(
        "{} {} {} {id}",
        rng.pick(PLACES),
        rng.pick(TOPICS),
        rng.pick(GROUP_KINDS)
    );
    let day = DAY_2015 + rng.below(DAYS_2015_2019) as i64;
    let created_at = timestamp(day, rng.below(86_400));
    vec![int(id), text(name), text(created_at)]
}

pub(super) fn venue(id: u64) -> Vec<Value> {
    let mut rng = SplitMix64::for_row(SEED_VENUES, id);
    let name = format!("{} {} {id}", rng.pick(VENUE_WORDS), rng.pick(VENUE_KINDS));
    let postal_code = format!("{:03}-{:04}", rng.below(1_000), rng.below(10_000));
    let prefecture = rng.pick(PREFECTURES);
    let city = rng.pick(CITIES);
    let street1 = format!(
        "{} {}-{}-{}",
        rng.pick(TOWNS),
        1 + rng.below(9),
        1 + rng.below(30),
        1 + rng.below(30)
    );
    // Optional address parts are NULL often enough that null handling
    // (`_is_null`, nulls ordering) is exercised by real data.
    let street2 = if rng.chance(50) {
        Value::Null
    } else {
        text(format!("Annex {}", 1 + rng.below(5)))
    };
    let building = if rng.chance(40) {
        Value::Null
    } else {
        text(format!(
            "{} Building {}F",
            rng.pick(BUILDINGS),
            1 + rng.below(30)
        ))
    };
    vec![
        int(id),
        text(name),
        text(postal_code),
        text(prefecture),
        text(city),
        text(street1),
        street2,
        building,
    ]
}

pub(super) fn meetup(rows: u64, id: u64) -> Vec<Value> {
    let mut rng = SplitMix64::for_row(SEED_MEETUPS, id);
    let title = format!(
        "Meetup {id}: {} {}",
        rng.pick(TOPICS),
        rng.pick(TITLE_WORDS)
    );
    let day = DAY_2020 + rng.below(DAYS_2020_2025) as i64;
    // Starts 09:00–20:45 on the quarter hour and lasts 1–3 hours, so it
    // always ends the same day.
    let start = (9 + rng.below(12)) * 3_600 + rng.below(4) * 900;
    let end = start + (2 + rng.below(5)) * 1_800;
    let venue_id = 1 + rng.below(rows);
    let group_id = 1 + rng.below(rows);
    vec![
        int(id),
        text(title),
        text(timestamp(day, start)),
        text(timestamp(day, end)),
        int(venue_id),
        int(group_id),
    ]
}
