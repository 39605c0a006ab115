//! The light load client of `bench/run` (issue 14): k6 spends about a third of this
//! machine's two cores driving a few thousand requests a second, so throughput
//! runs and the open-model capacity search use this instead. It POSTs one GraphQL
//! document with variable sets drawn at random from a file written from
//! `bench/k6/queries.js` (so both clients send the same requests), over HTTP/1.1
//! keep-alive connections, and prints one JSON summary shaped like k6's
//! (`rps`, `requests`, `failed_rate`, `p50` … `p99`, `min`, `max`, `avg`, in ms).
//!
//! - closed: `--connections N` loops, each sending its next request when the last is
//!   answered (k6's closed.js).
//! - open: requests arrive at a rate ramping linearly to `--rate` over `--ramp`, then
//!   held for `--hold`, whether or not earlier ones were answered (the seed's users
//!   sending one request every 2 s is `--rate users/2`). Each arrival takes an idle
//!   connection or opens one, up to `--max-connections`; an arrival finding none is
//!   counted as `dropped` (the client's limit, reported, never hidden).
//!
//! A request counts as failed on a transport error, a status other than 200, a
//! body with `"errors"`, or no answer within `--timeout`.
//!
//! Every request carries `Host` and `Content-Type: application/json`, then each
//! `--header "name: value"` given (repeatable; one naming `Host` or
//! `Content-Type` replaces that default): credentials such as
//! `--header "Authorization: Bearer …"`.

mod run;

use clap::{Parser, ValueEnum};
use hyper::header::{HeaderMap, HeaderName, HeaderValue, CONTENT_TYPE, HOST};
use std::process::ExitCode;
use std::time::Duration;

/// How requests are sent.
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq, Debug)]
pub enum Mode {
    /// N connections, each waiting for its answer before the next request.
    Closed,
    /// A fixed arrival rate, ramped then held.
    Open,
}

#[derive(Parser, Clone, Debug)]
#[command(about = "GraphQL POST load: closed loop or open-model arrival rate; JSON summary")]
pub struct Args {
    /// The GraphQL endpoint (`http://127.0.0.1:8080/v1/graphql`).
    #[arg(long)]
    pub url: String,
    /// `{"query": "…", "variables": [{…}, …]}`: the document and the variable sets
    /// to draw from (bench/loadgen/docs.mjs writes them from queries.js).
    #[arg(long)]
    pub doc: String,
    #[arg(long, value_enum, default_value = "closed")]
    pub mode: Mode,
    /// Closed: concurrent connections.
    #[arg(long, default_value_t = 10)]
    pub connections: usize,
    /// Closed: seconds to run.
    #[arg(long, default_value_t = 10.0)]
    pub duration: f64,
    /// Open: requests a second once ramped up.
    #[arg(long, default_value_t = 100.0)]
    pub rate: f64,
    /// Open: seconds to ramp from 0 to `--rate`.
    #[arg(long, default_value_t = 0.0)]
    pub ramp: f64,
    /// Open: seconds at `--rate` after the ramp.
    #[arg(long, default_value_t = 10.0)]
    pub hold: f64,
    /// Open: most connections open at once.
    #[arg(long, default_value_t = 10_000)]
    pub max_connections: usize,
    /// Seconds a request may take before it counts as failed.
    #[arg(long, default_value_t = 10.0)]
    pub timeout: f64,
    /// Open: only requests sent during the hold count (the seed's thresholds are
    /// over the whole run, ramp included, as k6 computes them: the default).
    #[arg(long)]
    pub hold_only: bool,
    /// A header every request carries, `"name: value"` (repeatable); one naming
    /// `host` or `content-type` replaces that default.
    #[arg(long = "header", value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
}

/// The document and its variable sets, as sent.
pub struct Doc {
    /// Request bodies, one per variable set, serialised once.
    pub bodies: Vec<bytes::Bytes>,
    /// Every request's headers: `Host`, `Content-Type`, then each `--header`.
    pub headers: HeaderMap,
    /// Path and query of the endpoint.
    pub path: String,
    /// `host:port` to connect to.
    pub addr: String,
    /// See [`Args::timeout`].
    pub timeout: Duration,
}

fn load(args: &Args) -> Result<Doc, String> {
    let text = std::fs::read_to_string(&args.doc).map_err(|e| format!("{}: {e}", args.doc))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", args.doc))?;
    let query = v["query"]
        .as_str()
        .ok_or("the doc has no \"query\" string")?;
    let sets = v["variables"]
        .as_array()
        .ok_or("the doc has no \"variables\" array")?;
    if sets.is_empty() {
        return Err("the doc's \"variables\" array is empty".into());
    }
    let bodies = sets
        .iter()
        .map(|vars| {
            let body = serde_json::json!({"query": query, "variables": vars});
            bytes::Bytes::from(body.to_string())
        })
        .collect();
    let rest = args
        .url
        .strip_prefix("http://")
        .ok_or("only http:// URLs are supported")?;
    let (host, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let addr = if host.contains(':') {
        host.to_owned()
    } else {
        format!("{host}:80")
    };
    Ok(Doc {
        bodies,
        headers: headers(host, &args.headers)?,
        path: path.to_owned(),
        addr,
        timeout: Duration::from_secs_f64(args.timeout),
    })
}

/// One `--header` value, `"name: value"` (blanks around the value trimmed).
fn parse_header(text: &str) -> Result<(HeaderName, HeaderValue), String> {
    let (name, value) = text
        .split_once(':')
        .ok_or_else(|| format!("--header {text:?}: expected \"name: value\""))?;
    let name = HeaderName::from_bytes(name.trim().as_bytes())
        .map_err(|e| format!("--header {text:?}: bad name: {e}"))?;
    let value = HeaderValue::from_str(value.trim())
        .map_err(|e| format!("--header {text:?}: bad value: {e}"))?;
    Ok((name, value))
}

/// The headers each request carries: `host` and `content-type`, then each
/// `--header` in order (a name given replaces its default; repeated, it is sent
/// as many times).
fn headers(host: &str, given: &[String]) -> Result<HeaderMap, String> {
    let mut map = HeaderMap::new();
    map.insert(
        HOST,
        HeaderValue::from_str(host).map_err(|e| format!("host {host:?}: {e}"))?,
    );
    map.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    let mut seen: Vec<HeaderName> = Vec::new();
    for text in given {
        let (name, value) = parse_header(text)?;
        if !seen.contains(&name) {
            map.remove(&name);
            seen.push(name.clone());
        }
        map.append(name, value);
    }
    Ok(map)
}

fn main() -> ExitCode {
    let args = Args::parse();
    let doc = match load(&args) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("loadgen: {e}");
            return ExitCode::FAILURE;
        }
    };
    // One thread: the client must cost little next to the server it measures.
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("loadgen: {e}");
            return ExitCode::FAILURE;
        }
    };
    let summary = runtime.block_on(run::run(&args, std::sync::Arc::new(doc)));
    println!("{summary}");
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_and_content_type_by_default() {
        let h = headers("127.0.0.1:8080", &[]).unwrap();
        assert_eq!(h.len(), 2);
        assert_eq!(h[HOST], "127.0.0.1:8080");
        assert_eq!(h[CONTENT_TYPE], "application/json");
    }

    #[test]
    fn headers_given_are_added_or_replace_their_default() {
        let given = [
            "Authorization: Bearer abc:def".to_owned(),
            "x-hasura-role:user".to_owned(),
            "Content-Type: application/graphql+json".to_owned(),
            "x-many: 1".to_owned(),
            "x-many: 2".to_owned(),
        ];
        let h = headers("h:1", &given).unwrap();
        assert_eq!(h["authorization"], "Bearer abc:def");
        assert_eq!(h["x-hasura-role"], "user");
        assert_eq!(h[CONTENT_TYPE], "application/graphql+json");
        assert_eq!(h.get_all(CONTENT_TYPE).iter().count(), 1);
        let many: Vec<_> = h.get_all("x-many").iter().collect();
        assert_eq!(many, ["1", "2"]);
        assert_eq!(h[HOST], "h:1");
    }

    #[test]
    fn malformed_headers_are_refused() {
        for bad in ["no colon", ": empty name", "bad name: x", "x: bad\nvalue"] {
            assert!(headers("h:1", &[bad.to_owned()]).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_flag_repeats() {
        let args = Args::try_parse_from([
            "loadgen",
            "--url",
            "http://h:1/v1/graphql",
            "--doc",
            "d.json",
            "--header",
            "a: 1",
            "--header",
            "b: 2",
        ])
        .unwrap();
        assert_eq!(args.headers, ["a: 1", "b: 2"]);
    }
}
