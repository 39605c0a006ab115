//! Hasura's `HASURA_GRAPHQL_*` environment variables, read as aliases of Grafton's
//! own, so a Hasura deployment's docker-compose file or manifest moves unchanged.
//! Each known variable sets the `GRAFTON_*` one it means (a `GRAFTON_*` variable
//! or a flag wins), is noted as needing nothing, or is named in one start-up
//! warning as not served. None is dropped in silence. The README's "Moving from
//! Hasura" table lists them all (a test keeps the two in step).

use std::collections::BTreeMap;

/// What a Hasura variable means here.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Meaning {
    /// The same setting as this Grafton variable, its value converted.
    Alias(&'static str, Convert),
    /// Grafton does this anyway (or has nothing it would change); not warned about.
    Nothing,
    /// Not served (yet): named in the start-up warning.
    Unserved,
}

/// How a Hasura value becomes a Grafton one.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Convert {
    Same,
    /// Hasura's booleans (`true`, `t`, `yes`, `y`, any case) as `true` / `false`.
    Bool,
    /// Milliseconds to seconds.
    MillisToSeconds,
    /// `*` (every interface) as `0.0.0.0`.
    Host,
}

use Convert::*;
use Meaning::*;

/// Every Hasura server variable Grafton knows, in the README's order.
pub(crate) const VARIABLES: &[(&str, Meaning)] = &[
    (
        "HASURA_GRAPHQL_DATABASE_URL",
        Alias("GRAFTON_DATABASE_URL", Same),
    ),
    (
        "HASURA_GRAPHQL_METADATA_DIR",
        Alias("GRAFTON_HASURA_METADATA", Same),
    ),
    (
        "HASURA_GRAPHQL_ADMIN_SECRET",
        Alias("GRAFTON_ADMIN_SECRET", Same),
    ),
    (
        "HASURA_GRAPHQL_ACCESS_KEY",
        Alias("GRAFTON_ADMIN_SECRET", Same),
    ),
    (
        "HASURA_GRAPHQL_JWT_SECRET",
        Alias("GRAFTON_JWT_SECRET", Same),
    ),
    (
        "HASURA_GRAPHQL_JWT_SECRETS",
        Alias("GRAFTON_JWT_SECRETS", Same),
    ),
    ("HASURA_GRAPHQL_AUTH_HOOK", Alias("GRAFTON_AUTH_HOOK", Same)),
    (
        "HASURA_GRAPHQL_AUTH_HOOK_MODE",
        Alias("GRAFTON_AUTH_HOOK_MODE", Same),
    ),
    (
        "HASURA_GRAPHQL_AUTH_HOOK_TYPE",
        Alias("GRAFTON_AUTH_HOOK_MODE", Same),
    ),
    (
        "HASURA_GRAPHQL_AUTH_HOOK_SEND_REQUEST_BODY",
        Alias("GRAFTON_AUTH_HOOK_SEND_REQUEST_BODY", Bool),
    ),
    (
        "HASURA_GRAPHQL_UNAUTHORIZED_ROLE",
        Alias("GRAFTON_UNAUTHORIZED_ROLE", Same),
    ),
    ("HASURA_GRAPHQL_SERVER_HOST", Alias("GRAFTON_HOST", Host)),
    ("HASURA_GRAPHQL_SERVER_PORT", Alias("GRAFTON_PORT", Same)),
    (
        "HASURA_GRAPHQL_CORS_DOMAIN",
        Alias("GRAFTON_CORS_DOMAIN", Same),
    ),
    (
        "HASURA_GRAPHQL_DISABLE_CORS",
        Alias("GRAFTON_DISABLE_CORS", Bool),
    ),
    (
        "HASURA_GRAPHQL_WS_READ_COOKIE",
        Alias("GRAFTON_WS_READ_COOKIE", Bool),
    ),
    (
        "HASURA_GRAPHQL_ENABLE_CONSOLE",
        Alias("GRAFTON_ENABLE_CONSOLE", Bool),
    ),
    (
        "HASURA_GRAPHQL_ENABLED_APIS",
        Alias("GRAFTON_ENABLED_APIS", Same),
    ),
    (
        "HASURA_GRAPHQL_ENABLE_ALLOWLIST",
        Alias("GRAFTON_ENABLE_ALLOWLIST", Bool),
    ),
    (
        "HASURA_GRAPHQL_PG_CONNECTIONS",
        Alias("GRAFTON_POOL_SIZE", Same),
    ),
    (
        "HASURA_GRAPHQL_LIVE_QUERIES_MULTIPLEXED_REFETCH_INTERVAL",
        Alias("GRAFTON_LIVE_QUERY_INTERVAL", MillisToSeconds),
    ),
    (
        "HASURA_GRAPHQL_LIVE_QUERIES_MULTIPLEXED_BATCH_SIZE",
        Alias("GRAFTON_LIVE_QUERY_BATCH_SIZE", Same),
    ),
    (
        "HASURA_GRAPHQL_INFER_FUNCTION_PERMISSIONS",
        Alias("GRAFTON_INFER_FUNCTION_PERMISSIONS", Bool),
    ),
    (
        "HASURA_GRAPHQL_DEFAULT_NAMING_CONVENTION",
        Alias("GRAFTON_NAMING", Same),
    ),
    (
        "HASURA_GRAPHQL_GRACEFUL_SHUTDOWN_TIMEOUT",
        Alias("GRAFTON_SHUTDOWN_TIMEOUT", Same),
    ),
    (
        "HASURA_GRAPHQL_WEBSOCKET_KEEPALIVE",
        Alias("GRAFTON_WS_KEEP_ALIVE", Same),
    ),
    (
        "HASURA_GRAPHQL_WEBSOCKET_CONNECTION_INIT_TIMEOUT",
        Alias("GRAFTON_WS_INIT_TIMEOUT", Same),
    ),
    ("HASURA_GRAPHQL_ENABLE_TELEMETRY", Nothing),
    ("HASURA_GRAPHQL_EXPERIMENTAL_FEATURES", Nothing),
    ("HASURA_GRAPHQL_CONSOLE_ASSETS_DIR", Nothing),
    ("HASURA_GRAPHQL_LOG_LEVEL", Unserved),
    ("HASURA_GRAPHQL_ENABLED_LOG_TYPES", Unserved),
    ("HASURA_GRAPHQL_DEV_MODE", Unserved),
    ("HASURA_GRAPHQL_ADMIN_INTERNAL_ERRORS", Unserved),
    ("HASURA_GRAPHQL_STRINGIFY_NUMERIC_TYPES", Unserved),
    ("HASURA_GRAPHQL_TX_ISOLATION", Unserved),
    ("HASURA_GRAPHQL_PG_TIMEOUT", Unserved),
    ("HASURA_GRAPHQL_PG_CONN_LIFETIME", Unserved),
    ("HASURA_GRAPHQL_PG_POOL_TIMEOUT", Unserved),
    ("HASURA_GRAPHQL_USE_PREPARED_STATEMENTS", Nothing),
    ("HASURA_GRAPHQL_METADATA_DATABASE_URL", Unserved),
    ("HASURA_GRAPHQL_MIGRATIONS_DIR", Unserved),
    (
        "HASURA_GRAPHQL_EVENTS_HTTP_POOL_SIZE",
        Alias("GRAFTON_EVENTS_HTTP_POOL_SIZE", Same),
    ),
    (
        "HASURA_GRAPHQL_EVENTS_FETCH_INTERVAL",
        Alias("GRAFTON_EVENTS_FETCH_INTERVAL", MillisToSeconds),
    ),
    (
        "HASURA_GRAPHQL_EVENTS_FETCH_BATCH_SIZE",
        Alias("GRAFTON_EVENTS_FETCH_BATCH_SIZE", Same),
    ),
    (
        "HASURA_GRAPHQL_ASYNC_ACTIONS_FETCH_INTERVAL",
        Alias("GRAFTON_ASYNC_ACTIONS_FETCH_INTERVAL", MillisToSeconds),
    ),
    (
        "HASURA_GRAPHQL_ASYNC_ACTIONS_FETCH_BATCH_SIZE",
        Alias("GRAFTON_ASYNC_ACTIONS_FETCH_BATCH_SIZE", Same),
    ),
    (
        "HASURA_GRAPHQL_ENABLE_REMOTE_SCHEMA_PERMISSIONS",
        Alias("GRAFTON_ENABLE_REMOTE_SCHEMA_PERMISSIONS", Same),
    ),
    ("HASURA_GRAPHQL_SCHEMA_SYNC_POLL_INTERVAL", Unserved),
    ("HASURA_GRAPHQL_ENABLE_MAINTENANCE_MODE", Unserved),
    ("HASURA_GRAPHQL_ENABLE_APOLLO_FEDERATION", Unserved),
    (
        "HASURA_GRAPHQL_STREAMING_QUERIES_MULTIPLEXED_REFETCH_INTERVAL",
        Unserved,
    ),
    (
        "HASURA_GRAPHQL_STREAMING_QUERIES_MULTIPLEXED_BATCH_SIZE",
        Unserved,
    ),
    (
        "HASURA_GRAPHQL_CLOSE_WEBSOCKETS_ON_METADATA_CHANGE",
        Unserved,
    ),
];

/// What the environment asks for.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Plan {
    /// Grafton variables to set (none of them was set already).
    pub(crate) set: Vec<(String, String)>,
    /// One line for the start-up warning, when some variable is not served.
    pub(crate) warning: Option<String>,
    /// Whether Hasura's variables configure this server at all.
    pub(crate) hasura: bool,
    /// A line for the start-up log about a default taken from Hasura.
    pub(crate) note: Option<String>,
}

/// The plan for `env` (every variable of the process), or why a value is wrong.
pub(crate) fn plan(env: &BTreeMap<String, String>) -> Result<Plan, String> {
    let mut plan = Plan::default();
    let mut unserved = Vec::new();
    for (name, value) in env.range("HASURA_GRAPHQL_".to_owned()..) {
        if !name.starts_with("HASURA_GRAPHQL_") {
            break;
        }
        plan.hasura = true;
        match VARIABLES.iter().find(|(n, _)| n == name).map(|(_, m)| *m) {
            Some(Alias(grafton, convert)) => {
                // A Grafton variable (or an earlier alias of it) wins.
                if env.contains_key(grafton) || plan.set.iter().any(|(g, _)| g == grafton) {
                    continue;
                }
                plan.set
                    .push((grafton.to_owned(), converted(name, value, convert)?));
            }
            Some(Nothing) => {}
            Some(Unserved) | None => unserved.push(name.as_str()),
        }
    }
    // Hasura listens on every interface by default, and a deployment configured by
    // its variables (a container) counts on it; a flag or GRAFTON_HOST still wins.
    let host_given =
        env.contains_key("GRAFTON_HOST") || plan.set.iter().any(|(g, _)| g == "GRAFTON_HOST");
    if plan.hasura && !host_given {
        plan.set.push(("GRAFTON_HOST".into(), "0.0.0.0".into()));
        plan.note = Some(
            "HASURA_GRAPHQL_* variables configure this server: listening on every interface, as Hasura does \
             (HASURA_GRAPHQL_SERVER_HOST or --host narrows it)"
                .into(),
        );
    }
    if !unserved.is_empty() {
        plan.warning = Some(format!(
            "Hasura environment variables Grafton does not serve, ignored: {} (README, \"Moving from Hasura\")",
            unserved.join(", ")
        ));
    }
    Ok(plan)
}

fn converted(name: &str, value: &str, convert: Convert) -> Result<String, String> {
    let bad = |what: &str| format!("{name}={value:?}: {what}");
    Ok(match convert {
        Same => value.to_owned(),
        Bool => match value.trim().to_ascii_lowercase().as_str() {
            "true" | "t" | "yes" | "y" => "true".into(),
            "false" | "f" | "no" | "n" => "false".into(),
            _ => return Err(bad("expected true or false")),
        },
        MillisToSeconds => {
            let ms: u64 = value
                .trim()
                .parse()
                .map_err(|_| bad("expected milliseconds"))?;
            format!("{}", ms as f64 / 1000.0)
        }
        Host => match value.trim() {
            "*" => "0.0.0.0".into(),
            host => host.to_owned(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn aliases_convert_and_grafton_wins() {
        let plan = plan(&env(&[
            ("HASURA_GRAPHQL_DATABASE_URL", "postgres://h/db"),
            ("HASURA_GRAPHQL_ENABLE_CONSOLE", "True"),
            ("HASURA_GRAPHQL_SERVER_HOST", "*"),
            (
                "HASURA_GRAPHQL_LIVE_QUERIES_MULTIPLEXED_REFETCH_INTERVAL",
                "250",
            ),
            ("HASURA_GRAPHQL_ADMIN_SECRET", "from-hasura"),
            ("GRAFTON_ADMIN_SECRET", "from-grafton"),
            ("HASURA_GRAPHQL_ENABLE_TELEMETRY", "false"),
            ("PATH", "/bin"),
        ]))
        .unwrap();
        assert!(plan.hasura && plan.warning.is_none() && plan.note.is_none());
        assert_eq!(
            plan.set,
            [
                ("GRAFTON_DATABASE_URL", "postgres://h/db"),
                ("GRAFTON_ENABLE_CONSOLE", "true"),
                ("GRAFTON_LIVE_QUERY_INTERVAL", "0.25"),
                ("GRAFTON_HOST", "0.0.0.0"),
            ]
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
        );
    }

    #[test]
    fn hasuras_default_host_unless_one_is_given() {
        let plan = plan(&env(&[("HASURA_GRAPHQL_DATABASE_URL", "postgres://h/db")])).unwrap();
        assert!(plan
            .set
            .contains(&("GRAFTON_HOST".into(), "0.0.0.0".into())));
        assert!(plan.note.is_some());
        let given = super::plan(&env(&[
            ("HASURA_GRAPHQL_DATABASE_URL", "postgres://h/db"),
            ("GRAFTON_HOST", "127.0.0.1"),
        ]))
        .unwrap();
        assert!(given.set.iter().all(|(k, _)| k != "GRAFTON_HOST") && given.note.is_none());
    }

    #[test]
    fn the_old_access_key_is_the_admin_secret_unless_both_are_set() {
        let one = plan(&env(&[("HASURA_GRAPHQL_ACCESS_KEY", "k")])).unwrap();
        assert_eq!(
            one.set[0],
            ("GRAFTON_ADMIN_SECRET".to_owned(), "k".to_owned())
        );
        let both = plan(&env(&[
            ("HASURA_GRAPHQL_ACCESS_KEY", "old"),
            ("HASURA_GRAPHQL_ADMIN_SECRET", "new"),
        ]))
        .unwrap();
        // Sorted by name: ACCESS_KEY comes first and wins, as it would in Hasura.
        let secrets: Vec<_> = both
            .set
            .iter()
            .filter(|(k, _)| k == "GRAFTON_ADMIN_SECRET")
            .collect();
        assert_eq!(
            secrets,
            [&("GRAFTON_ADMIN_SECRET".to_owned(), "old".to_owned())]
        );
    }

    #[test]
    fn unserved_and_unknown_variables_are_named() {
        let plan = plan(&env(&[
            ("HASURA_GRAPHQL_STRINGIFY_NUMERIC_TYPES", "true"),
            ("HASURA_GRAPHQL_SOMETHING_NEW", "1"),
        ]))
        .unwrap();
        let warning = plan.warning.unwrap();
        assert!(
            warning.contains("HASURA_GRAPHQL_STRINGIFY_NUMERIC_TYPES"),
            "{warning}"
        );
        assert!(
            warning.contains("HASURA_GRAPHQL_SOMETHING_NEW"),
            "{warning}"
        );
        assert!(!super::plan(&env(&[("PATH", "/")])).unwrap().hasura);
    }

    /// The README's table names every variable (by its full name, or by its
    /// suffix in a row that starts with another of the same family).
    #[test]
    fn the_readme_lists_every_variable() {
        let readme = include_str!("../../../README.md");
        for (name, _) in VARIABLES {
            let short = name.trim_start_matches("HASURA_GRAPHQL");
            assert!(
                readme.contains(&format!("`{name}`")) || readme.contains(&format!("`{short}`")),
                "README's \"A Hasura deployment's environment\" table lacks {name}"
            );
        }
    }

    #[test]
    fn bad_values_are_refused() {
        let e = plan(&env(&[("HASURA_GRAPHQL_DISABLE_CORS", "maybe")])).unwrap_err();
        assert!(
            e.contains("HASURA_GRAPHQL_DISABLE_CORS") && e.contains("true or false"),
            "{e}"
        );
        assert!(plan(&env(&[(
            "HASURA_GRAPHQL_LIVE_QUERIES_MULTIPLEXED_REFETCH_INTERVAL",
            "1s"
        )]))
        .is_err());
    }
}
