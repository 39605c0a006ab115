//! A hung Redis (SIGSTOP: connections stay open, nothing answers) must not slow
//! every request by its timeout: after a few failures the circuit breaker opens and
//! requests use this instance's own counts and documents at once, while a probe
//! waits for Redis to answer again.

use crate::{databases, options, post_as, DOCUMENTS};
use grafton_testkit::Redis;
use std::time::{Duration, Instant};

/// Every request is rate-limited (so asks Redis), far below its allowance.
const CONFIG: &str = "
api_limits:
  rate_limit: {per_role: {admin: {max_reqs_per_min: 100000}}}
";

/// The median time of `n` requests in a row (each asks Redis for its rate limit).
async fn median(server: &grafton_server::Running, n: usize) -> Duration {
    let mut times = Vec::new();
    for i in 0..n {
        let started = Instant::now();
        let body = post_as(
            server,
            None,
            "",
            &format!("{{ documents(limit: {i}) {{ id }} }}"),
        )
        .await;
        assert!(body.get("errors").is_none(), "{body}");
        times.push(started.elapsed());
    }
    times.sort();
    times[n / 2]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_redis_costs_a_few_requests_then_none() {
    let redis = Redis::start();
    let [sqlite, _] = databases("hardening_redis", DOCUMENTS);
    let mut o = options(&sqlite, CONFIG);
    o.redis_url = Some(redis.url());
    let server = grafton_server::start(&o).await.expect("server");
    let shared = server.engine.shared().expect("Redis configured").clone();
    let normal = median(&server, 20).await;

    redis.pause();
    // Each of the first requests waits for Redis's timeout (250 ms) until the
    // breaker opens; then none does.
    let started = Instant::now();
    let _ = median(&server, 4).await;
    assert!(shared.is_open(), "the breaker opened");
    let metrics = reqwest::Client::new()
        .get(format!("http://{}/metrics", server.addr))
        .header("x-hasura-admin-secret", crate::ADMIN_SECRET)
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .unwrap_or_default();
    assert!(
        metrics.contains("grafton_redis_breaker_open 1"),
        "{metrics}"
    );
    assert!(
        started.elapsed() >= Duration::from_millis(500),
        "Redis was asked while hung"
    );
    let hung = median(&server, 20).await;
    assert!(
        hung < normal + Duration::from_millis(25),
        "p50 {hung:?} with Redis hung, {normal:?} normally: requests still wait for it"
    );

    redis.resume();
    let deadline = Instant::now() + Duration::from_secs(5);
    while shared.is_open() {
        assert!(
            Instant::now() < deadline,
            "the breaker did not close once Redis answered"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let back = median(&server, 5).await;
    assert!(back < Duration::from_millis(250), "{back:?}");
}
