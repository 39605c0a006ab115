//! Sending: connections, the closed loop, the open-model schedule, the summary.

use crate::{Args, Doc, Mode};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::{handshake, SendRequest};
use hyper_util::rt::TokioIo;
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

type Sender = SendRequest<Full<Bytes>>;

/// What each answered (or failed) request left: latency in µs, success, and
/// whether it falls in the measured window.
#[derive(Default)]
struct Records {
    latencies_us: Vec<u32>,
    failed: usize,
    dropped: usize,
}

async fn connect(doc: &Doc) -> Option<Sender> {
    let stream = tokio::net::TcpStream::connect(&doc.addr).await.ok()?;
    let _ = stream.set_nodelay(true);
    let (sender, conn) = handshake(TokioIo::new(stream)).await.ok()?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Some(sender)
}

/// One request on `sender`; true when it was answered 200 without `"errors"` in time.
async fn send(sender: &mut Sender, doc: &Doc) -> bool {
    let body = doc.bodies[fastrand::usize(..doc.bodies.len())].clone();
    let Ok(mut req) = hyper::Request::post(doc.path.as_str()).body(Full::new(body)) else {
        return false;
    };
    req.headers_mut().clone_from(&doc.headers);
    let exchange = async {
        sender.ready().await.ok()?;
        let resp = sender.send_request(req).await.ok()?;
        let status_ok = resp.status() == hyper::StatusCode::OK;
        let bytes = resp.into_body().collect().await.ok()?.to_bytes();
        Some(status_ok && memchr::memmem::find(&bytes, b"\"errors\"").is_none())
    };
    matches!(
        tokio::time::timeout(doc.timeout, exchange).await,
        Ok(Some(true))
    )
}

fn record(records: &Mutex<Records>, took: Duration, ok: bool) {
    if let Ok(mut r) = records.lock() {
        r.latencies_us
            .push(u32::try_from(took.as_micros()).unwrap_or(u32::MAX));
        if !ok {
            r.failed += 1;
        }
    }
}

/// Runs the load and returns the JSON summary.
pub async fn run(args: &Args, doc: Arc<Doc>) -> serde_json::Value {
    let records = Arc::new(Mutex::new(Records::default()));
    let opened = Arc::new(AtomicUsize::new(0));
    let cpu0 = cpu_seconds();
    let started = Instant::now();
    let window = match args.mode {
        Mode::Closed => closed(args, &doc, &records, &opened).await,
        Mode::Open => open(args, &doc, &records, &opened).await,
    };
    let elapsed = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds().zip(cpu0).map(|(b, a)| b - a);
    let r = match Arc::try_unwrap(records) {
        Ok(m) => m.into_inner().unwrap_or_default(),
        Err(shared) => std::mem::take(&mut *shared.lock().unwrap_or_else(|e| e.into_inner())),
    };
    summary(
        args,
        r,
        window,
        elapsed,
        opened.load(Ordering::Relaxed),
        cpu,
    )
}

/// Closed loop; returns the measured window in seconds.
async fn closed(
    args: &Args,
    doc: &Arc<Doc>,
    records: &Arc<Mutex<Records>>,
    opened: &Arc<AtomicUsize>,
) -> f64 {
    let deadline = Instant::now() + Duration::from_secs_f64(args.duration);
    let mut tasks = Vec::with_capacity(args.connections);
    for _ in 0..args.connections.max(1) {
        let (doc, records, opened) = (doc.clone(), records.clone(), opened.clone());
        tasks.push(tokio::spawn(async move {
            let mut sender: Option<Sender> = None;
            while Instant::now() < deadline {
                if sender.is_none() {
                    sender = connect(&doc).await;
                    opened.fetch_add(1, Ordering::Relaxed);
                }
                let t0 = Instant::now();
                let ok = match sender.as_mut() {
                    Some(s) => send(s, &doc).await,
                    None => {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        false
                    }
                };
                if Instant::now() <= deadline {
                    record(&records, t0.elapsed(), ok);
                }
                if !ok {
                    sender = None; // its state is unknown: a fresh one next time
                }
            }
        }));
    }
    for t in tasks {
        let _ = t.await;
    }
    args.duration
}

/// Seconds from the start at which arrival `i` (from 0) is due.
fn arrival_at(i: usize, rate: f64, ramp: f64) -> f64 {
    let n = (i + 1) as f64;
    let ramped = rate * ramp / 2.0; // arrivals during the ramp
    if ramp > 0.0 && n <= ramped {
        (2.0 * ramp * n / rate).sqrt()
    } else {
        ramp + (n - ramped) / rate
    }
}

/// Open model; returns the measured window in seconds.
async fn open(
    args: &Args,
    doc: &Arc<Doc>,
    records: &Arc<Mutex<Records>>,
    opened: &Arc<AtomicUsize>,
) -> f64 {
    let idle: Arc<Mutex<Vec<Sender>>> = Arc::default();
    let live = Arc::new(AtomicUsize::new(0)); // connections open or being opened
    let end = args.ramp + args.hold;
    let counted_from = if args.hold_only { args.ramp } else { 0.0 };
    let start = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    let mut i = 0usize;
    loop {
        let due = arrival_at(i, args.rate, args.ramp);
        if due > end || args.rate <= 0.0 {
            break;
        }
        let now = start.elapsed().as_secs_f64();
        if due > now {
            tokio::time::sleep(Duration::from_secs_f64((due - now).min(0.001))).await;
            continue;
        }
        i += 1;
        let counted = due >= counted_from;
        let reuse = idle.lock().ok().and_then(|mut v| v.pop());
        if reuse.is_none() && live.load(Ordering::Relaxed) >= args.max_connections {
            if counted {
                if let Ok(mut r) = records.lock() {
                    r.dropped += 1;
                }
            }
            continue;
        }
        if reuse.is_none() {
            live.fetch_add(1, Ordering::Relaxed);
        }
        let (doc, records, opened, idle, live) = (
            doc.clone(),
            records.clone(),
            opened.clone(),
            idle.clone(),
            live.clone(),
        );
        tasks.spawn(async move {
            let t0 = Instant::now();
            let mut sender = match reuse {
                Some(s) => Some(s),
                None => {
                    opened.fetch_add(1, Ordering::Relaxed);
                    connect(&doc).await
                }
            };
            let ok = match sender.as_mut() {
                Some(s) => send(s, &doc).await,
                None => false,
            };
            if counted {
                record(&records, t0.elapsed(), ok);
            }
            match (ok, sender, idle.lock()) {
                (true, Some(s), Ok(mut v)) => v.push(s),
                _ => {
                    live.fetch_sub(1, Ordering::Relaxed);
                }
            }
        });
        // Reap finished tasks now and then so the set stays small.
        while tasks.try_join_next().is_some() {}
    }
    while tasks.join_next().await.is_some() {}
    end - counted_from
}

fn percentile(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let idx = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    f64::from(sorted[idx.min(sorted.len() - 1)]) / 1000.0
}

fn summary(
    args: &Args,
    mut r: Records,
    window: f64,
    elapsed: f64,
    opened: usize,
    cpu: Option<f64>,
) -> serde_json::Value {
    r.latencies_us.sort_unstable();
    let n = r.latencies_us.len();
    let ok = n - r.failed;
    let avg = if n == 0 {
        0.0
    } else {
        r.latencies_us.iter().map(|&x| f64::from(x)).sum::<f64>() / n as f64 / 1000.0
    };
    let round = |x: f64| (x * 1000.0).round() / 1000.0;
    json!({
        "client": "loadgen",
        "mode": format!("{:?}", args.mode).to_lowercase(),
        "connections": if args.mode == Mode::Closed { Some(args.connections) } else { None },
        "rate": if args.mode == Mode::Open { Some(args.rate) } else { None },
        "window_s": window,
        "elapsed_s": round(elapsed),
        "requests": n,
        "ok": ok,
        "failed": r.failed,
        "failed_rate": if n == 0 { 0.0 } else { r.failed as f64 / n as f64 },
        "dropped": r.dropped,
        "rps": round(n as f64 / window.max(1e-9)),
        "ok_rps": round(ok as f64 / window.max(1e-9)),
        "p50": percentile(&r.latencies_us, 50.0),
        "p75": percentile(&r.latencies_us, 75.0),
        "p90": percentile(&r.latencies_us, 90.0),
        "p95": percentile(&r.latencies_us, 95.0),
        "p99": percentile(&r.latencies_us, 99.0),
        "min": percentile(&r.latencies_us, 0.0),
        "max": percentile(&r.latencies_us, 100.0),
        "avg": round(avg),
        "connections_opened": opened,
        "client_cpu_s": cpu.map(round),
    })
}

/// This process's user + system CPU seconds (`/proc/self/stat`, 100 ticks a second).
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schedule_ramps_then_holds() {
        // 100/s ramped over 10 s: 500 arrivals in the ramp, the last at 10 s.
        assert!((arrival_at(499, 100.0, 10.0) - 10.0).abs() < 1e-9);
        assert!(arrival_at(0, 100.0, 10.0) > 0.3 && arrival_at(0, 100.0, 10.0) < 0.5);
        // then one every 10 ms
        assert!((arrival_at(599, 100.0, 10.0) - 11.0).abs() < 1e-9);
        // no ramp: evenly spaced from the start
        assert!((arrival_at(9, 10.0, 0.0) - 1.0).abs() < 1e-9);
    }

    #[test]
    fn percentiles_are_nearest_rank_in_ms() {
        let v: Vec<u32> = (1..=100).map(|x| x * 1000).collect();
        assert_eq!(percentile(&v, 50.0), 51.0);
        assert_eq!(percentile(&v, 0.0), 1.0);
        assert_eq!(percentile(&v, 100.0), 100.0);
        assert_eq!(percentile(&[], 95.0), 0.0);
    }
}
