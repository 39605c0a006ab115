//! Cron triggers: which of the config's are served (PostgreSQL, a schedule that
//! parses, every environment variable set, no transform), and their schedules'
//! instants. The others are left out and reported, never dropped in silence.

use chrono::{DateTime, Utc};
use grafton_catalog::Backend;
use grafton_schema::config::CronTriggerConfig;
use grafton_schema::inconsistent::{Inconsistency, ObjectKind};
use grafton_schema::Config;

/// A parsed cron schedule, in UTC.
#[derive(Debug, Clone)]
pub struct Schedule(croner::Cron);

impl Schedule {
    /// `text` read as cron syntax: five fields (minute to weekday), or six with
    /// seconds first, or an alias such as `@hourly`. Hasura's `0/5` (from 0,
    /// every 5) is read as Hasura reads it; a year field is not cron's.
    pub fn parse(text: &str) -> Result<Self, String> {
        let parser = croner::parser::CronParser::builder()
            .seconds(croner::parser::Seconds::Optional)
            .year(croner::parser::Year::Disallowed)
            .sloppy_ranges(true)
            .build();
        parser
            .parse(text.trim())
            .map(Schedule)
            .map_err(|e| format!("its schedule '{text}' is not cron syntax: {e}"))
    }

    /// The first `n` instants strictly after `after` and no later than `until`.
    pub fn instants(
        &self,
        after: DateTime<Utc>,
        until: DateTime<Utc>,
        n: usize,
    ) -> Vec<DateTime<Utc>> {
        self.0
            .iter_after(after)
            .take_while(|t| *t <= until)
            .take(n)
            .collect()
    }
}

/// The cron triggers of `config` served on `backend`, and those left out.
pub(crate) fn served(
    config: &Config,
    backend: Backend,
) -> (Vec<CronTriggerConfig>, Vec<Inconsistency>) {
    let (mut served, mut left_out): (Vec<CronTriggerConfig>, _) = (Vec::new(), Vec::new());
    for cron in &config.cron_triggers {
        let refuse = |why: String| Inconsistency::new(ObjectKind::CronTrigger, &cron.name, why);
        let why = if backend != Backend::Postgres {
            Some("cron triggers are served on PostgreSQL (SQLite's are not yet)".to_owned())
        } else if cron.name.trim().is_empty() {
            Some("its name is empty".to_owned())
        } else if served.iter().any(|c| c.name == cron.name) {
            Some("another cron trigger has its name".to_owned())
        } else if cron.response_transform.is_some() {
            Some("a response transform is not served for cron triggers".to_owned())
        } else if let Some(Err(why)) =
            (cron.request_transform.as_ref()).map(grafton_kriti::RequestTransform::read)
        {
            Some(format!("its request_transform: {why}"))
        } else if let Err(e) = Schedule::parse(&cron.schedule) {
            Some(e)
        } else {
            let vars = crate::webhooks::template_vars(&cron.webhook)
                .into_iter()
                .chain(cron.headers.iter().filter_map(|h| h.value_from_env.clone()));
            let missing = vars.into_iter().find(|v| std::env::var(v).is_err());
            missing.map(|var| format!("the environment variable {var} it reads is not set"))
        };
        match why {
            Some(why) => left_out.push(refuse(why)),
            None => served.push(cron.clone()),
        }
    }
    (served, left_out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> DateTime<Utc> {
        text.parse().expect("a time")
    }

    #[test]
    fn five_fields_fire_on_the_minute_in_utc() {
        let s = Schedule::parse("*/15 * * * *").expect("parses");
        let got = s.instants(at("2026-01-01T10:07:30Z"), at("2026-01-01T11:00:00Z"), 10);
        let want: Vec<_> = ["10:15", "10:30", "10:45", "11:00"]
            .iter()
            .map(|t| at(&format!("2026-01-01T{t}:00Z")))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn six_fields_have_seconds_first_and_aliases_are_read() {
        let s = Schedule::parse("*/2 * * * * *").expect("parses");
        let got = s.instants(at("2026-01-01T10:00:00Z"), at("2026-01-01T10:00:05Z"), 10);
        assert_eq!(got.len(), 2, "{got:?}");
        let hourly = Schedule::parse("@hourly").expect("parses");
        let got = hourly.instants(at("2026-01-01T10:00:00Z"), at("2026-01-02T00:00:00Z"), 3);
        assert_eq!(got[0], at("2026-01-01T11:00:00Z"));
        assert_eq!(got.len(), 3);
    }

    /// Steps from a number, as Hasura's parser reads them (`0/5`: 0, 5, 10, …).
    #[test]
    fn steps_from_a_number_are_hasuras() {
        let s = Schedule::parse("5/15 * * * *").expect("parses");
        let got = s.instants(at("2026-01-01T10:00:00Z"), at("2026-01-01T11:00:00Z"), 10);
        let minutes: Vec<u32> = got.iter().map(chrono::Timelike::minute).collect();
        assert_eq!(minutes, [5, 20, 35, 50]);
        assert!(Schedule::parse("0 0/2 * * *").is_ok());
        assert!(Schedule::parse("0 0 1 1 * 2030").is_err(), "no year field");
    }

    #[test]
    fn nonsense_is_refused_with_the_schedule_named() {
        let e = Schedule::parse("every day at noon").expect_err("refused");
        assert!(e.contains("'every day at noon'"), "{e}");
        assert!(Schedule::parse("61 * * * *").is_err());
    }
}
