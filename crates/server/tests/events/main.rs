//! Event triggers (issue 32): writes captured by PostgreSQL triggers in the
//! writing transaction and delivered to a real local webhook in Hasura's payload,
//! with retries, whichever client wrote.

#[path = "../common/mod.rs"]
mod common;

mod bounds;
mod cleanups;
mod crash;
mod delivery;
mod schedules;
mod sqlite;
mod transforms;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use serde_json::Value;
use std::sync::{Arc, Mutex};

pub const ADMIN_SECRET: &str = "events-secret";

/// One call the webhook received.
#[derive(Debug, Clone)]
pub struct Received {
    pub body: Value,
    pub headers: HeaderMap,
}

/// The answers a webhook gives first: `(status, Retry-After)`.
pub type Answers = Arc<Mutex<Vec<(u16, Option<u64>)>>>;

/// A webhook on 127.0.0.1 that records every call, and answers from `answers`
/// (then 200).
#[derive(Clone, Default)]
pub struct Receiver {
    pub calls: Arc<Mutex<Vec<Received>>>,
    pub answers: Answers,
    /// How long it takes to answer each call.
    pub delay: std::time::Duration,
}

impl Receiver {
    /// Starts it; its URL.
    pub async fn start(&self) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        self.start_with(listener).await
    }

    /// Starts it on `listener`; its URL.
    pub async fn start_with(&self, listener: tokio::net::TcpListener) -> String {
        async fn hook(
            State(r): State<Receiver>,
            headers: HeaderMap,
            body: axum::Json<Value>,
        ) -> axum::response::Response {
            r.calls
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(Received {
                    body: body.0,
                    headers,
                });
            if !r.delay.is_zero() {
                tokio::time::sleep(r.delay).await;
            }
            let next = {
                let mut answers = r.answers.lock().unwrap_or_else(|p| p.into_inner());
                (!answers.is_empty()).then(|| answers.remove(0))
            };
            match next {
                Some((status, retry_after)) => {
                    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
                    let mut response = (status, "no").into_response();
                    if let Some(s) = retry_after {
                        response
                            .headers_mut()
                            .insert("retry-after", s.to_string().parse().expect("header"));
                    }
                    response
                }
                None => (StatusCode::OK, "ok").into_response(),
            }
        }
        let app = axum::Router::new()
            .route("/hook", axum::routing::post(hook))
            .with_state(self.clone());
        let addr = listener.local_addr().expect("addr");
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        format!("http://{addr}/hook")
    }

    /// The calls so far.
    pub fn received(&self) -> Vec<Received> {
        self.calls.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Waits until `n` calls came (at most 10 s); the calls.
    pub async fn wait_for(&self, n: usize) -> Vec<Received> {
        let started = std::time::Instant::now();
        loop {
            let calls = self.received();
            if calls.len() >= n || started.elapsed() > std::time::Duration::from_secs(10) {
                return calls;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }
}

/// An instance on `url` with the metadata API (admin secret [`ADMIN_SECRET`]).
pub fn options(url: &str) -> grafton_server::ServeOptions {
    let mut o = grafton_server::ServeOptions {
        database_url: url.to_owned(),
        port: 0,
        metadata_store: true,
        ..grafton_server::ServeOptions::default()
    };
    o.auth.admin_secret = Some(ADMIN_SECRET.into());
    o
}

/// A `/v1/metadata` request as admin: its status and answer.
pub async fn metadata_with_status(base: &str, body: Value) -> (u16, Value) {
    let response = reqwest::Client::new()
        .post(format!("{base}/v1/metadata"))
        .header("x-hasura-admin-secret", ADMIN_SECRET)
        .json(&body)
        .send()
        .await
        .expect("metadata");
    let status = response.status().as_u16();
    (status, response.json().await.expect("JSON"))
}

/// `sql` run through psql on `url`; its output, trimmed.
pub fn psql(url: &str, sql: String) -> String {
    let url = url.to_owned();
    let out = std::thread::spawn(move || grafton_testkit::psql(&url, sql.as_bytes()));
    out.join().expect("psql").trim().to_owned()
}
