//! The process's log output: text or JSON lines on stderr, filtered by
//! `GRAFTON_LOG` (`tracing`'s syntax), with request lines when asked for.

use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// How the process logs.
#[derive(Debug, Clone, Default)]
pub struct LogOptions {
    /// One JSON object per line instead of text.
    pub json: bool,
    /// One line per request (target `grafton::request`, level info).
    pub requests: bool,
}

/// The filter: `GRAFTON_LOG`, else warnings plus the server's own news; request
/// lines added when asked for.
fn filter(options: &LogOptions) -> EnvFilter {
    let filter = EnvFilter::try_from_env("GRAFTON_LOG")
        .unwrap_or_else(|_| EnvFilter::new("warn,grafton_server=info"));
    match options.requests {
        true => match "grafton::request=info".parse() {
            Ok(directive) => filter.add_directive(directive),
            Err(_) => filter,
        },
        false => filter,
    }
}

/// Installs the process's logger (once, at start-up).
pub fn init(options: &LogOptions) {
    let fmt = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    let fmt = match options.json {
        true => fmt.json().flatten_event(true).boxed(),
        false => fmt.boxed(),
    };
    tracing_subscriber::registry()
        .with(fmt.with_filter(filter(options)))
        .init();
}
