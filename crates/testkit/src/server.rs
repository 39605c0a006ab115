//! A PostgreSQL cluster a test owns: started with `initdb` + `pg_ctl` on a free
//! `127.0.0.1` port, and stopped, started again or copied into a streaming replica
//! (`pg_basebackup -R`) at will, for failover and replica tests. Stopped and removed
//! when dropped, and by a watchdog when the test process exits however it exits.

use crate::cluster::*;
use crate::INSTALL_HINT;
use std::ffi::OsStr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// A running (or stopped) throwaway PostgreSQL cluster.
pub struct Cluster {
    bin: PgBin,
    as_root: bool,
    root: PathBuf,
    data: PathBuf,
    log: PathBuf,
    port: u16,
}

impl Cluster {
    /// Creates a cluster with `initdb` and starts it.
    pub fn start() -> Self {
        let cluster = Self::create("grafton-pg-");
        let out = cluster.run(
            &cluster.bin.initdb,
            &[
                OsStr::new("-D"),
                cluster.data.as_os_str(),
                OsStr::new("-A"),
                OsStr::new("trust"),
                OsStr::new("-U"),
                OsStr::new("postgres"),
                OsStr::new("--no-sync"),
                OsStr::new("-E"),
                OsStr::new("UTF8"),
                OsStr::new("--locale=C"),
            ],
        );
        if !out.status.success() {
            panic!(
                "grafton-testkit: initdb failed ({}):\n{}{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        cluster.start_on_a_free_port()
    }

    /// A streaming replica of this cluster (`pg_basebackup -R`), started on its own
    /// port: a hot standby that answers reads and replays this cluster's writes.
    pub fn replica(&self) -> Self {
        let replica = Self::create("grafton-pg-replica-");
        let port = self.port.to_string();
        let out = replica.run(
            &replica.bin.pg_basebackup,
            &[
                OsStr::new("-h"),
                OsStr::new("127.0.0.1"),
                OsStr::new("-p"),
                OsStr::new(&port),
                OsStr::new("-U"),
                OsStr::new("postgres"),
                OsStr::new("-D"),
                replica.data.as_os_str(),
                OsStr::new("-R"),
                OsStr::new("-X"),
                OsStr::new("stream"),
                OsStr::new("-c"),
                OsStr::new("fast"),
                OsStr::new("--no-sync"),
            ],
        );
        if !out.status.success() {
            panic!(
                "grafton-testkit: pg_basebackup failed ({}):\n{}{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        replica.start_on_a_free_port()
    }

    /// The superuser's URL to the `postgres` database.
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// The superuser's URL to database `db`.
    pub fn url_of(&self, db: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{db}", self.port)
    }

    /// The port it listens on (kept across [`Cluster::stop`] and [`Cluster::start_again`]).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Stops the server (`pg_ctl stop -m fast`: sessions are ended, as a restart or a
    /// failover ends them) and waits until it is down.
    pub fn stop(&self) {
        let out = self.pg_ctl(&["-m", "fast", "-w", "-t", "60", "stop"]);
        if !out.status.success() {
            panic!(
                "grafton-testkit: pg_ctl stop failed: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }

    /// Starts the server again on the same port, waiting until it accepts connections.
    pub fn start_again(&self) {
        let out = self.start_on(self.port);
        if !out.status.success() {
            panic!(
                "grafton-testkit: pg_ctl start failed: {}{}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr),
                self.server_log()
            );
        }
        wait_until_ready(&self.url(), &self.log);
    }

    /// The server's log so far.
    pub fn server_log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits until this cluster (a replica) has replayed everything `primary` has
    /// written so far, for at most 30 s.
    pub fn wait_for_replay(&self, primary: &Cluster) {
        let target = crate::query_one(&primary.url(), "SELECT pg_current_wal_insert_lsn()::text");
        let sql = format!("SELECT pg_last_wal_replay_lsn() >= '{target}'::pg_lsn");
        let deadline = Instant::now() + Duration::from_secs(30);
        while crate::query_one(&self.url(), &sql) != "t" {
            assert!(
                Instant::now() < deadline,
                "grafton-testkit: the replica did not replay {target} in 30 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// A cluster directory, registered with the watchdog before anything runs in it.
    fn create(prefix: &str) -> Self {
        let bin = find_pg_bin();
        let as_root = is_root();
        let root = make_temp_dir(prefix);
        let data = root.join("data");
        let log = root.join("postgres.log");
        let stop = db_user_shell(
            as_root,
            &[
                bin.pg_ctl.as_os_str(),
                OsStr::new("-D"),
                data.as_os_str(),
                OsStr::new("-m"),
                OsStr::new("immediate"),
                OsStr::new("-w"),
                OsStr::new("stop"),
            ],
        );
        let pid_file = sh_quote(data.join("postmaster.pid").as_os_str());
        spawn_watchdog(&format!(
            "for i in 1 2 3; do if [ -f {pid_file} ]; then {stop} >/dev/null 2>&1; fi; sleep 1; done; \
             rm -rf {}",
            sh_quote(root.as_os_str())
        ));
        if as_root {
            chown_to_db_user(&root);
        }
        Self {
            bin,
            as_root,
            root,
            data,
            log,
            port: 0,
        }
    }

    /// Starts the server on a free port; a port taken by someone else between
    /// choosing and binding it is retried.
    fn start_on_a_free_port(mut self) -> Self {
        let mut last_error = String::new();
        for _ in 0..5 {
            let port = free_port();
            let out = self.start_on(port);
            if out.status.success() {
                self.port = port;
                wait_until_ready(&self.url(), &self.log);
                return self;
            }
            last_error = format!(
                "{}{}\n--- server log ---\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr),
                self.server_log()
            );
            // Make sure a half-started server is gone before the next attempt.
            let _ = self.pg_ctl(&["-m", "immediate", "stop"]);
        }
        panic!("grafton-testkit: could not start postgres:\n{last_error}");
    }

    fn start_on(&self, port: u16) -> std::process::Output {
        let options = format!(
            "-c listen_addresses=127.0.0.1 -p {port} -k {} -c fsync=off \
             -c synchronous_commit=off -c full_page_writes=off -c max_connections=200",
            self.root.display()
        );
        let log = self.log.as_os_str();
        self.pg_ctl_os(&[
            OsStr::new("-l"),
            log,
            OsStr::new("-o"),
            OsStr::new(&options),
            OsStr::new("-w"),
            OsStr::new("-t"),
            OsStr::new("60"),
            OsStr::new("start"),
        ])
    }

    fn pg_ctl(&self, args: &[&str]) -> std::process::Output {
        let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        self.pg_ctl_os(&args)
    }

    fn pg_ctl_os(&self, args: &[&OsStr]) -> std::process::Output {
        let mut all = vec![OsStr::new("-D"), self.data.as_os_str()];
        all.extend_from_slice(args);
        self.run(&self.bin.pg_ctl, &all)
    }

    fn run(&self, program: &std::path::Path, args: &[&OsStr]) -> std::process::Output {
        if !is_executable(program) {
            panic!(
                "grafton-testkit: {} is missing; {INSTALL_HINT}",
                program.display()
            );
        }
        run_as_db_user(self.as_root, &self.root, program, args)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self.pg_ctl(&["-m", "immediate", "-w", "stop"]);
        let _ = std::fs::remove_dir_all(&self.root);
    }
}
