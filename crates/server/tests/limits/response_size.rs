//! `max_response_bytes`: a response past it is refused with `response-too-large`
//! (PostgreSQL never sends it; SQLite's is not copied), and introspection that
//! could pass it is refused before it runs.

use crate::*;
use serde_json::json;

#[tokio::test]
async fn responses_past_the_limit_are_refused() {
    run(async {
        for db in BOTH {
            let url = url(db);
            // One 1,000-character row fits in 2,000 bytes; two do not.
            let (_, body) = post(
                url,
                Some("small"),
                "{ blobs(limit: 1) { body } }",
                json!({}),
            )
            .await;
            assert_eq!(
                data(body)["blobs"][0]["body"].as_str().map(str::len),
                Some(1000)
            );
            let (status, body) = post(
                url,
                Some("small"),
                "{ blobs(limit: 2) { body } }",
                json!({}),
            )
            .await;
            assert_eq!(
                (status, code(&body)),
                (200, "response-too-large"),
                "{db:?} {body}"
            );
            assert!(body["data"].is_null(), "{body}");
            // Other roles keep the server's limit (64 MB).
            let (_, body) = post(
                url,
                Some("user"),
                "{ blobs(limit: 20) { body } }",
                json!({}),
            )
            .await;
            assert_eq!(data(body)["blobs"].as_array().map(Vec::len), Some(20));
        }
    })
}

#[tokio::test]
async fn introspection_that_could_pass_the_limit_is_refused_before_it_runs() {
    run(async {
        let mut o = options(Db::Sqlite);
        o.limits.max_response_bytes = 200_000;
        let url = start(o);
        let one = "__schema { types { name fields { name type { name } } } }";
        let (_, body) = post(&url, None, &format!("{{ {one} }}"), json!({})).await;
        assert!(data(body)["__schema"]["types"]
            .as_array()
            .is_some_and(|t| !t.is_empty()));
        let many: Vec<String> = (0..2000).map(|i| format!("s{i}: {one}")).collect();
        let (status, body) =
            post(&url, None, &format!("{{ {} }}", many.join(" ")), json!({})).await;
        assert_eq!((status, code(&body)), (200, "response-too-large"), "{body}");
    })
}
