//! A throwaway `redis-server` (Debian's package) on a free `127.0.0.1` port, with
//! nothing saved to disk; killed when dropped and by a watchdog when the test
//! process exits.

use crate::cluster::{find_tool, free_port, spawn_watchdog};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `redis-server`.
pub struct Redis {
    child: Child,
    port: u16,
}

impl Redis {
    /// Starts one and waits until it accepts connections.
    pub fn start() -> Self {
        let Some(program) = find_tool("redis-server") else {
            panic!("grafton-testkit: `redis-server` not found; install it: apt-get install redis-server");
        };
        let port = free_port();
        let child = Command::new(program)
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--daemonize",
                "no",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("grafton-testkit: cannot start redis-server: {e}"));
        spawn_watchdog(&format!("kill {} 2>/dev/null", child.id()));
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "grafton-testkit: redis-server did not listen on port {port} in 10 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Self { child, port }
    }

    /// Freezes it (SIGSTOP): connections stay open and nothing answers, as with a
    /// hung server.
    pub fn pause(&self) {
        self.signal("-STOP");
    }

    /// Thaws it (SIGCONT).
    pub fn resume(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .unwrap_or_else(|e| panic!("grafton-testkit: kill {signal}: {e}"));
        assert!(status.success(), "grafton-testkit: kill {signal} failed");
    }

    /// Its URL (`redis://127.0.0.1:port`).
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
