//! Sockets that send nothing, half a header or half a body are closed; connections
//! past the cap are closed at once, while requests keep being served.

use grafton_server::{http::HttpOptions, start, ConnectionLimits, ServeOptions};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// How long until the server closes `stream` (reads until EOF or error).
async fn closed_within(mut stream: TcpStream, limit: Duration) -> Option<Duration> {
    let started = Instant::now();
    let mut buf = [0u8; 1024];
    loop {
        match tokio::time::timeout(limit, stream.read(&mut buf)).await {
            Err(_) => return None,
            Ok(Ok(0)) | Ok(Err(_)) => return Some(started.elapsed()),
            Ok(Ok(_)) => continue, // a 4xx/408 answer before the close is fine
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_and_extra_connections_are_closed() {
    let path = grafton_testkit::sqlite_path("connections");
    rusqlite::Connection::open(&path)
        .expect("sqlite")
        .execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1);")
        .expect("table");
    let server = start(&ServeOptions {
        database_url: path.display().to_string(),
        port: 0,
        http: HttpOptions {
            body_timeout: Duration::from_secs(1),
            connections: ConnectionLimits {
                max_connections: 4,
                header_timeout: Duration::from_secs(1),
            },
            ..HttpOptions::default()
        },
        ..ServeOptions::default()
    })
    .await
    .expect("server starts");
    let addr = server.addr;

    let silent = TcpStream::connect(addr).await.expect("connect");
    let mut half_header = TcpStream::connect(addr).await.expect("connect");
    half_header
        .write_all(b"POST /v1/graphql HTTP/1.1\r\nHost: x\r\nContent-")
        .await
        .expect("write");
    let mut half_body = TcpStream::connect(addr).await.expect("connect");
    half_body
        .write_all(b"POST /v1/graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"query\":")
        .await
        .expect("write");
    // The cap is 4: a fourth connection is served, a fifth closed at once. The
    // fourth is a raw socket that stays open after its answer, so the slot it holds
    // is known to be taken when the fifth arrives.
    let body = r#"{"query": "{ t { id } }"}"#;
    let mut fourth = TcpStream::connect(addr).await.expect("connect");
    fourth
        .write_all(
            format!(
                "POST /v1/graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        )
        .await
        .expect("write");
    let mut answer = vec![0u8; 4096];
    let n = tokio::time::timeout(Duration::from_secs(5), fourth.read(&mut answer))
        .await
        .expect("an answer within the cap")
        .expect("read");
    assert!(
        answer[..n].starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&answer[..n])
    );
    let fifth = TcpStream::connect(addr).await.expect("connect");
    let closed = closed_within(fifth, Duration::from_secs(1)).await;
    assert!(closed.is_some(), "a connection past the cap stays open");

    for (what, stream) in [
        ("silent", silent),
        ("half a header", half_header),
        ("half a body", half_body),
        ("idle", fourth),
    ] {
        let closed = closed_within(stream, Duration::from_secs(5)).await;
        assert!(closed.is_some(), "{what}: still open after 5 s");
    }
    // Freed slots serve new requests.
    let client = reqwest::Client::new();
    let query = serde_json::json!({"query": "{ t { id } }"});
    let again = client
        .post(server.url())
        .json(&query)
        .send()
        .await
        .expect("a request after the slow clients were closed");
    assert_eq!(again.status(), 200);
    server.stop().await;
}
