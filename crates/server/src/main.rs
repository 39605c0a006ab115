//! The `grafton` command: `serve`, `demo` and `schema`.

use clap::{Args, Parser, Subcommand};
use grafton_server::start;
use std::path::PathBuf;
use std::process::ExitCode;

mod cli_access;
mod cli_options;
mod hasura_env;
use cli_options::{options, ListenOptions, SchemaOptions};

// glibc's malloc kept ~100 MB resident after a 100-client load that needs a few MB
// live (fragmentation across threads); jemalloc returns freed memory to the OS.
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Instant GraphQL over PostgreSQL and SQLite, with Hasura's API conventions.
#[derive(Parser)]
#[command(
    name = "grafton",
    version,
    about = "Instant GraphQL over PostgreSQL and SQLite, with Hasura's API conventions.",
    after_help = "Examples:\n  grafton demo                                   serve the SQLite meetup demo\n  grafton serve --database-url postgres://user@localhost/db\n  grafton serve --database-url ./app.db --naming graphql-default\n  grafton schema --database-url ./app.db         print the schema (SDL)\n\nGraphQL is served at http://HOST:PORT/v1/graphql; health at /healthz."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve a GraphQL API over a database.
    Serve(ServeArgs),
    /// Create (if absent) and serve the embedded SQLite meetup demo.
    Demo(DemoArgs),
    /// Print the generated GraphQL schema (SDL) and exit.
    Schema(SchemaArgs),
    /// Print the SQL a GraphQL request compiles to, as JSON {dialect, sql, params}, and exit.
    Sql(SqlArgs),
    /// Print SQL (PostgreSQL) that makes writes from outside Grafton wake live
    /// queries at once: a trigger on every table served. Run it with psql.
    LiveTriggers(TriggerArgs),
}

#[derive(Args)]
struct TriggerArgs {
    /// postgres://user:pass@host/db.
    #[arg(long, env = "GRAFTON_DATABASE_URL")]
    database_url: String,
    #[command(flatten)]
    schema: SchemaOptions,
}

/// The async runtime's worker threads: `--threads`, else half the cores (at least
/// one). Two workers on two cores cost about a fifth more CPU per request than one
/// (each request's body wakes the idle worker) for no more throughput:
/// docs/performance.md, "Threads".
fn worker_threads(cli: &Cli) -> usize {
    let chosen = match &cli.command {
        Command::Serve(a) => a.listen.threads,
        Command::Demo(a) => a.listen.threads,
        Command::Schema(_) | Command::Sql(_) | Command::LiveTriggers(_) => Some(1),
    };
    chosen.map(usize::from).unwrap_or_else(|| {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        (cores / 2).max(1)
    })
}

/// Threads for blocking work: SQLite statements run there, one per pooled
/// connection at most, plus a few for start-up and file reads. Unbounded, tokio's
/// pool grew past 2.5 threads per connection under 100 clients, each holding its
/// allocator caches (docs/performance.md, "SQLite memory").
fn blocking_threads(cli: &Cli) -> usize {
    let pool = match &cli.command {
        Command::Serve(a) => a.listen.pool_size,
        Command::Demo(a) => a.listen.pool_size,
        Command::Schema(_) | Command::Sql(_) | Command::LiveTriggers(_) => 1,
    };
    pool.max(1) + 4
}

#[derive(Args)]
struct ServeArgs {
    /// postgres://user:pass@host/db, sqlite://path, or a path to a SQLite file.
    #[arg(long, env = "GRAFTON_DATABASE_URL")]
    database_url: String,
    #[command(flatten)]
    schema: SchemaOptions,
    #[command(flatten)]
    listen: ListenOptions,
}

#[derive(Args)]
struct DemoArgs {
    /// Rows per main table when the file is created.
    #[arg(long, default_value_t = 10_000)]
    rows: u64,
    /// The SQLite file to create (if absent) and serve.
    #[arg(long, default_value = "grafton-demo.db")]
    file: PathBuf,
    /// Print the same dataset as a PostgreSQL script (DDL + COPY) for `psql -f` and exit.
    #[arg(long)]
    postgres_sql: bool,
    #[command(flatten)]
    schema: SchemaOptions,
    #[command(flatten)]
    listen: ListenOptions,
}

#[derive(Args)]
struct SchemaArgs {
    /// postgres://user:pass@host/db, sqlite://path, or a path to a SQLite file.
    #[arg(long, env = "GRAFTON_DATABASE_URL")]
    database_url: String,
    /// Print the schema this role sees (default: admin's).
    #[arg(long)]
    role: Option<String>,
    /// Print the Relay API's schema (`/v1beta1/relay`) instead.
    #[arg(long)]
    relay: bool,
    #[command(flatten)]
    schema: SchemaOptions,
}

#[derive(Args)]
struct SqlArgs {
    /// postgres://user:pass@host/db, sqlite://path, or a path to a SQLite file.
    #[arg(long, env = "GRAFTON_DATABASE_URL")]
    database_url: String,
    /// The GraphQL document.
    #[arg(long)]
    query: String,
    /// Variables as a JSON object.
    #[arg(long)]
    variables: Option<String>,
    /// Which operation of the document.
    #[arg(long)]
    operation_name: Option<String>,
    /// Plan it as the Relay API (`/v1beta1/relay`) would.
    #[arg(long)]
    relay: bool,
    #[command(flatten)]
    schema: SchemaOptions,
}

/// The statement a request compiles to; `params[i]` is placeholder `i + 1`.
fn statement_json(
    dialect: grafton_sql::Dialect,
    statement: Option<&grafton_sql::Statement>,
) -> serde_json::Value {
    use grafton_sql::ParamValue;
    let Some(st) = statement else {
        return serde_json::json!({ "dialect": format!("{dialect:?}").to_lowercase(), "sql": null, "params": [] });
    };
    let params: Vec<serde_json::Value> = st
        .params
        .iter()
        .map(|p| {
            let ty = p.ty.to_string();
            let mut v = match &p.value {
                ParamValue::Variable(name) => serde_json::json!({ "variable": name }),
                ParamValue::Literal(value) => serde_json::json!({ "value": value }),
            };
            v["type"] = ty.into();
            v["list"] = p.list.into();
            v
        })
        .collect();
    serde_json::json!({
        "dialect": format!("{dialect:?}").to_lowercase(),
        "sql": st.sql,
        "params": params,
    })
}

/// JSON logs: the banner lines go through the logger too, so stderr stays JSON.
static JSON_LOGS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();

/// A line for the person who started Grafton: on stderr, or a log event in JSON mode.
macro_rules! say {
    ($($arg:tt)*) => {
        if JSON_LOGS.get().copied().unwrap_or(false) {
            tracing::info!(target: "grafton_server", "{}", format!($($arg)*));
        } else {
            eprintln!($($arg)*);
        }
    };
}

const EXAMPLE: &str = r#"{ venues(limit: 3, where: {id: {_gt: 10}}) { id name meetups(limit: 2, order_by: {start_at: desc}) { title start_at } } }"#;

async fn run(cli: Cli) -> Result<(), Box<dyn std::error::Error>> {
    match cli.command {
        Command::Serve(args) => {
            let o = options(args.database_url, &args.schema, Some((&args.listen, false)))?;
            let running = start(&o).await?;
            say!("Grafton is serving GraphQL at {}", running.url());
            if o.http.console {
                say!("Console: {}", running.console_url());
            }
            if let Some(addr) = running.metrics_addr {
                say!("Metrics: http://{addr}/metrics");
            }
            running.wait().await;
        }
        Command::Demo(args) if args.postgres_sql => {
            let opts = grafton_demo::DemoOptions {
                rows: args.rows,
                progress: false,
            };
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            grafton_demo::write_postgres_copy(&mut out, &opts)?;
            std::io::Write::flush(&mut out)?;
        }
        Command::Demo(args) => {
            let rows = args.rows;
            let file = args.file.clone();
            let summary = tokio::task::spawn_blocking(move || {
                grafton_demo::create_sqlite(
                    &file,
                    &grafton_demo::DemoOptions {
                        rows,
                        progress: true,
                    },
                )
            })
            .await??;
            if summary.created {
                say!(
                    "Created {} with {rows} rows per table.",
                    args.file.display()
                );
            } else {
                say!("Using the existing demo file {}.", args.file.display());
            }
            let url = format!("sqlite://{}", args.file.display());
            let o = options(url, &args.schema, Some((&args.listen, true)))?;
            let running = start(&o).await?;
            let body = serde_json::json!({ "query": EXAMPLE }).to_string();
            say!("Grafton is serving the meetup demo at {}", running.url());
            if o.http.console {
                say!("Console (GraphiQL): {}", running.console_url());
            }
            say!(
                "Try:\n  curl -s {} -H 'content-type: application/json' -d '{}'",
                running.url(),
                body
            );
            running.wait().await;
        }
        Command::Sql(args) => {
            let o = options(args.database_url, &args.schema, None)?;
            let engine = grafton_server::engine_as_served(&o).await?;
            let variables = match &args.variables {
                Some(text) => serde_json::from_str(text)
                    .map_err(|e| format!("--variables is not a JSON object: {e}"))?,
                None => serde_json::Map::new(),
            };
            let request = grafton_server::GraphqlRequest {
                query: args.query,
                operation_name: args.operation_name,
                variables,
                persisted_hash: None,
            };
            let planner = match args.relay {
                true => engine
                    .relay_planner(None)
                    .await
                    .map_err(|e| e.to_string())?,
                false => engine.planner(),
            };
            let prepared = planner
                .prepare(&request, grafton_server::Transport::Post)
                .map_err(|e| {
                    grafton_server::error::RequestError::from(e)
                        .body()
                        .to_string()
                })?;
            let plan = match &prepared.action {
                grafton_server::engine::Action::Plan(plan) => Some(plan.clone()),
                grafton_server::engine::Action::Mutation(_) => None,
            };
            let json = statement_json(
                engine.database().dialect(),
                plan.as_ref().and_then(|p| p.statement()),
            );
            println!("{json}");
        }
        Command::LiveTriggers(args) => {
            let o = options(args.database_url, &args.schema, None)?;
            let engine = grafton_server::engine_as_served(&o).await?;
            if engine.database().backend() != grafton_catalog::Backend::Postgres {
                return Err("live-triggers is for PostgreSQL: on SQLite every write goes through Grafton, which wakes live queries itself".into());
            }
            let planner = engine.planner();
            let model = planner.model();
            // Views take no such triggers; writes to their tables notify under the
            // tables' names, and live queries on views see them at the interval.
            let tables: Vec<(String, String)> = (0..model.tables.len())
                .map(|t| model.table(t))
                .filter(|t| t.kind == grafton_catalog::TableKind::Table)
                .map(|t| (t.schema.clone(), t.name.clone()))
                .collect();
            print!("{}", grafton_execute::changes::trigger_sql(&tables));
        }
        Command::Schema(args) => {
            let o = options(args.database_url, &args.schema, None)?;
            let engine = grafton_server::engine_as_served(&o).await?;
            let planner =
                match args.relay {
                    true => (engine.relay_planner(args.role.as_deref()).await)
                        .map_err(|e| e.to_string())?,
                    false => (engine.planner_for(args.role.as_deref(), false))
                        .map_err(|e| e.to_string())?,
                };
            print!("{}", planner.model().sdl);
        }
    }
    Ok(())
}

/// The log and trace settings of the command (text logs and no traces for the
/// one-shot ones).
fn telemetry_options(
    cli: &Cli,
) -> (
    grafton_server::telemetry::LogOptions,
    grafton_server::telemetry::TraceOptions,
) {
    let listen = match &cli.command {
        Command::Serve(a) => &a.listen,
        Command::Demo(a) => &a.listen,
        Command::Schema(_) | Command::Sql(_) | Command::LiveTriggers(_) => {
            return Default::default()
        }
    };
    let logs = grafton_server::telemetry::LogOptions {
        json: listen.log_format == "json",
        requests: listen.log_requests,
    };
    let traces = grafton_server::telemetry::TraceOptions {
        endpoint: listen.otlp_endpoint.clone(),
        ratio: listen.otlp_sampling_ratio,
        service: listen.otlp_service_name.clone(),
    };
    grafton_execute::trace::set_statements(listen.otlp_include_sql);
    (logs, traces)
}

fn main() -> ExitCode {
    // Hasura's variables become Grafton's before the flags are read (still one
    // thread: nothing else reads the environment yet).
    let env: std::collections::BTreeMap<String, String> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    let hasura = match hasura_env::plan(&env) {
        Ok(plan) => plan,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    for (name, value) in &hasura.set {
        std::env::set_var(name, value);
    }
    let cli = Cli::parse();
    let (logs, traces) = telemetry_options(&cli);
    let _ = JSON_LOGS.set(logs.json);
    // Kept to the end of main: dropping it sends the last spans.
    let _telemetry = match grafton_server::telemetry::init(&logs, &traces) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(warning) = &hasura.warning {
        tracing::warn!("{warning}");
    }
    if let Some(note) = &hasura.note {
        tracing::info!("{note}");
    }
    // One worker runs on tokio's current-thread scheduler: same single thread,
    // without the work-stealing machinery (about 15% less CPU per request:
    // docs/performance.md, "Threads").
    let threads = worker_threads(&cli);
    let mut builder = if threads == 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.worker_threads(threads);
        // The main thread's 8 MiB, which one worker runs on: a document nested as
        // deep as the parser allows is planned on either the same way, with room.
        b.thread_stack_size(grafton_server::WORKER_STACK_BYTES);
        b
    };
    builder.max_blocking_threads(blocking_threads(&cli));
    let runtime = match builder.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
