//! The load client of `bench/run --scenarios subscriptions` (Hasura's published
//! live-query test, reshaped for one machine): N subscribers, each on its own
//! WebSocket as role `user` with its own `x-hasura-user-id`, each subscribed to
//! its own row of `live_items`; an updater that changes every subscribed row once a
//! second straight in PostgreSQL (an external writer, so Grafton sees it at its
//! next poll, as Hasura's test does); and the time from each update's commit to
//! each subscriber's receipt. Prints one JSON report on stdout.
//!
//! Light on purpose: one task per socket, no per-message allocation beyond the
//! JSON parse, so the client is not what limits the run.

mod stats;
mod subscriber;

use clap::Parser;
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Parser, Clone)]
#[command(about = "N live-query subscribers, an updater, delivery latency")]
pub struct Args {
    /// Grafton's WebSocket endpoint (`ws://127.0.0.1:8080/v1/graphql`).
    #[arg(long)]
    pub url: String,
    /// The PostgreSQL database behind it (the updater writes there).
    #[arg(long)]
    pub database_url: String,
    /// Grafton's admin secret (subscribers use it to act as `user`).
    #[arg(long)]
    pub admin_secret: String,
    /// Subscribers, on rows 1..=N of `live_items`.
    #[arg(long, default_value_t = 1000)]
    pub clients: usize,
    /// Subscribers sharing one socket (and one user: row i belongs to user
    /// ⌈i / per_socket⌉). One process may hold only so many sockets.
    #[arg(long, default_value_t = 1)]
    pub per_socket: usize,
    /// Updates, one a second, each changing every subscribed row.
    #[arg(long, default_value_t = 30)]
    pub rounds: u32,
    /// New connections a second while subscribers join.
    #[arg(long, default_value_t = 1000)]
    pub connect_rate: u32,
    /// `graphql-transport-ws` or `graphql-ws` (legacy).
    #[arg(long, default_value = "graphql-transport-ws")]
    pub protocol: String,
    /// The server's process, for its CPU and RSS.
    #[arg(long)]
    pub grafton_pid: Option<u32>,
    /// `grafton` (Hasura's names, each socket as role `user` with its user id) or
    /// `postgraphile` (v4 with live queries: its names, no roles; it runs as the
    /// database owner).
    #[arg(long, default_value = "grafton")]
    pub target: String,
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("subscribers: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(report) => {
            println!("{report}");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("subscribers: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<serde_json::Value, String> {
    let (db, connection) = tokio_postgres::connect(&args.database_url, tokio_postgres::NoTls)
        .await
        .map_err(|e| format!("PostgreSQL: {e}"))?;
    tokio::spawn(connection);
    db.execute("UPDATE live_items SET v = 0", &[])
        .await
        .map_err(|e| format!("reset: {e}"))?;

    let shared = Arc::new(stats::Shared::new(args.rounds as usize));
    let (done_tx, done) = tokio::sync::watch::channel(false);
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    let pause = Duration::from_secs_f64(100.0 / f64::from(args.connect_rate.max(1)));
    let per = args.per_socket.max(1);
    let sockets = args.clients.div_ceil(per);
    for user in 1..=sockets {
        let rows = (user - 1) * per + 1..=(user * per).min(args.clients);
        tasks.spawn(subscriber::run(
            user,
            rows,
            args.clone(),
            shared.clone(),
            done.clone(),
        ));
        if user % 100 == 0 {
            tokio::time::sleep(pause).await;
        }
    }
    // Every subscriber has its first result (or the wait gives up).
    let deadline = Instant::now() + Duration::from_secs(120);
    while shared.first_results() < args.clients && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let joined = started.elapsed();

    let sampler = stats::Sampler::start(args.grafton_pid, &db).await;
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let n = i32::try_from(args.clients).unwrap_or(i32::MAX);
    for round in 1..=args.rounds {
        tick.tick().await;
        let r = i32::try_from(round).unwrap_or(i32::MAX);
        db.execute("UPDATE live_items SET v = $1 WHERE id <= $2", &[&r, &n])
            .await
            .map_err(|e| format!("update: {e}"))?;
        shared.committed(round as usize);
        sampler.sample();
    }
    // Time for the last round to arrive.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let resources = sampler.finish(&db).await;
    let _ = done_tx.send(true);
    let mut finals = Vec::with_capacity(args.clients);
    while let Some(joined) = tasks.join_next().await {
        if let Ok(last) = joined {
            finals.extend(last);
        }
    }
    let up_to_date = finals
        .iter()
        .filter(|&&v| v == i64::from(args.rounds))
        .count();
    let latency = shared.latency_ms();
    let messages = shared.messages();
    Ok(json!({
        "clients": args.clients,
        "sockets": sockets,
        "protocol": args.protocol,
        "target": args.target,
        "rounds": args.rounds,
        "join_s": joined.as_secs_f64(),
        "first_results": shared.first_results(),
        "messages": messages,
        "expected_messages": args.clients as u64 * u64::from(args.rounds),
        "messages_per_s": messages as f64 / f64::from(args.rounds.max(1)),
        "skipped_updates": shared.skipped(),
        "repeated_results": shared.repeated(),
        "up_to_date_at_end": up_to_date,
        "errors": shared.errors(),
        "first_error": shared.first_error(),
        "latency_ms": latency,
        "grafton": resources.grafton,
        "postgres": resources.postgres,
        "client": resources.client,
    }))
}
