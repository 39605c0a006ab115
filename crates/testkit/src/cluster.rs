//! What starting a throwaway cluster needs: the server binaries, running them as an
//! unprivileged user, free ports, and a watchdog that cleans up when the tests end.

use super::{with_client, DB_OS_USER, INSTALL_HINT};
use std::ffi::{CString, OsStr};
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Paths of the PostgreSQL server binaries.
pub(crate) struct PgBin {
    pub(crate) initdb: PathBuf,
    pub(crate) pg_ctl: PathBuf,
    /// `pg_basebackup`, beside them (for replicas).
    pub(crate) pg_basebackup: PathBuf,
}

pub(crate) fn wait_until_ready(url: &str, log: &Path) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match with_client(url, |c| c.simple_query("SELECT 1").map(drop)) {
            Ok(()) => return,
            Err(e) if Instant::now() >= deadline => panic!(
                "grafton-testkit: postgres did not accept connections at {url}: {e}\n\
                 --- server log ---\n{}",
                std::fs::read_to_string(log).unwrap_or_default()
            ),
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

pub(crate) fn find_pg_bin() -> PgBin {
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    // Debian/Ubuntu keep the server binaries off PATH; newest version first.
    let mut versioned: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse::<u32>().ok()?;
            Some((version, e.path().join("bin")))
        })
        .collect();
    versioned.sort_by_key(|v| std::cmp::Reverse(v.0));
    dirs.extend(versioned.into_iter().map(|(_, p)| p));

    for dir in dirs {
        let initdb = dir.join("initdb");
        let pg_ctl = dir.join("pg_ctl");
        if is_executable(&initdb) && is_executable(&pg_ctl) {
            // Resolve symlinks (e.g. /usr/local/bin/initdb) so that the binaries
            // of one installation are used together.
            let initdb = std::fs::canonicalize(&initdb).unwrap_or(initdb);
            let pg_ctl = initdb
                .parent()
                .map(|d| d.join("pg_ctl"))
                .filter(|p| is_executable(p))
                .unwrap_or(pg_ctl);
            let pg_basebackup = initdb
                .parent()
                .map(|d| d.join("pg_basebackup"))
                .unwrap_or_else(|| dir.join("pg_basebackup"));
            return PgBin {
                initdb,
                pg_ctl,
                pg_basebackup,
            };
        }
    }
    panic!("grafton-testkit: `initdb`/`pg_ctl` not found on PATH or in /usr/lib/postgresql/*/bin; {INSTALL_HINT}");
}

pub(crate) fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

pub(crate) fn free_port() -> u16 {
    match TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()) {
        Ok(addr) => addr.port(),
        Err(e) => panic!("grafton-testkit: cannot find a free port on 127.0.0.1: {e}"),
    }
}

pub(crate) fn make_temp_dir(prefix: &str) -> PathBuf {
    match tempfile::Builder::new().prefix(prefix).tempdir() {
        // Removed by the watchdog, not on drop: statics are never dropped.
        Ok(dir) => dir.keep(),
        Err(e) => panic!("grafton-testkit: cannot create a temp dir: {e}"),
    }
}

// ---------------------------------------------------------------------------
// Running things as the database user

pub(crate) fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Runs `program args` (as the `postgres` OS user when `as_root`) in `cwd`.
pub(crate) fn run_as_db_user(as_root: bool, cwd: &Path, program: &Path, args: &[&OsStr]) -> Output {
    let mut cmd = if !as_root {
        let mut c = Command::new(program);
        c.args(args);
        c
    } else if let Some(runuser) = find_tool("runuser") {
        let mut c = Command::new(runuser);
        c.args(["-u", DB_OS_USER, "--"]).arg(program).args(args);
        c
    } else {
        let mut all = vec![program.as_os_str()];
        all.extend_from_slice(args);
        let mut c = Command::new("su");
        c.args([DB_OS_USER, "-s", "/bin/sh", "-c"])
            .arg(shell_words(&all));
        c
    };
    // The server's own output goes to its log file; only the tool's output is kept.
    cmd.current_dir(cwd).stdin(Stdio::null());
    match cmd.output() {
        Ok(out) => out,
        Err(e) => panic!(
            "grafton-testkit: cannot run {}: {e}; {INSTALL_HINT}",
            program.display()
        ),
    }
}

/// A shell command line running `argv` as the database user (for the watchdog).
pub(crate) fn db_user_shell(as_root: bool, argv: &[&OsStr]) -> String {
    let line = shell_words(argv);
    if !as_root {
        line
    } else if let Some(runuser) = find_tool("runuser") {
        format!(
            "{} -u {DB_OS_USER} -- {line}",
            sh_quote(runuser.as_os_str())
        )
    } else {
        format!(
            "su {DB_OS_USER} -s /bin/sh -c {}",
            sh_quote(OsStr::new(&line))
        )
    }
}

pub(crate) fn find_tool(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

pub(crate) fn chown_to_db_user(dir: &Path) {
    let Ok(user) = CString::new(DB_OS_USER) else {
        unreachable!("constant user name has no NUL")
    };
    // SAFETY: `user` is a valid NUL-terminated string; the returned record is
    // read immediately, before any other call that could overwrite it.
    let ids = unsafe {
        let pw = libc::getpwnam(user.as_ptr());
        if pw.is_null() {
            None
        } else {
            Some(((*pw).pw_uid, (*pw).pw_gid))
        }
    };
    let Some((uid, gid)) = ids else {
        panic!(
            "grafton-testkit: running as root, but there is no `{DB_OS_USER}` OS user to run \
             the server as; {INSTALL_HINT} (it creates that user), or run the tests as an \
             unprivileged user"
        );
    };
    if let Err(e) = std::os::unix::fs::chown(dir, Some(uid), Some(gid)) {
        panic!("grafton-testkit: cannot chown {}: {e}", dir.display());
    }
}

// ---------------------------------------------------------------------------
// Watchdog

/// Starts a detached shell that waits for this process to exit, then runs `cleanup`.
pub(crate) fn spawn_watchdog(cleanup: &str) {
    let script = format!(
        "while kill -0 {pid} 2>/dev/null; do sleep 1; done; {cleanup}",
        pid = std::process::id()
    );
    let spawned = Command::new("/bin/sh")
        .arg("-c")
        .arg(script)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // Own process group: a signal to the test's group does not kill it.
        .process_group(0)
        .spawn();
    if let Err(e) = spawned {
        panic!("grafton-testkit: cannot start the cleanup watchdog: {e}");
    }
}

pub(crate) fn sh_quote(s: &OsStr) -> String {
    format!("'{}'", s.to_string_lossy().replace('\'', r"'\''"))
}

pub(crate) fn shell_words(argv: &[&OsStr]) -> String {
    argv.iter()
        .map(|a| sh_quote(a))
        .collect::<Vec<_>>()
        .join(" ")
}
