//! A handler's errors and wrong answers, timeouts, GET, mixed mutations, and an
//! unset handler variable.

use super::{actions_yaml, ask, project, serve_dir, Handler};
use crate::databases;
use serde_json::{json, Value};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handlers_errors_and_wrong_answers_are_graphql_errors() {
    let handler = Handler::default();
    let base = handler.start().await;
    let dir = project("actions-errors", "GRAFTON_TEST_ACTIONS_ERRORS", &base);
    // A time limit shorter than whoami's own 2 s timeout: the call is cut at it.
    let limits = "disabled: false\ntime_limit: {global: 1}\n";
    std::fs::write(dir.join("api_limits.yaml"), limits).expect("api_limits.yaml");
    let [sqlite, _] = databases("actions_errors");
    let server = serve_dir(&sqlite, &dir).await;
    let login = "mutation { login(username: \"ada\", password: \"pw\") { userId } }";
    let errors = |answer: &Value| {
        assert!(answer.get("data").is_none(), "no data: {answer}");
        answer["errors"][0].clone()
    };

    // The handler's own error: its extensions verbatim, or Hasura's older `code`.
    let own = json!({"message": "wrong password", "extensions": {"code": "bad-login", "tries": 2}});
    handler.reply("login", 400, own, Duration::ZERO);
    let answer = ask(&server, login).await;
    assert_eq!(
        errors(&answer),
        json!({"message": "wrong password", "extensions": {"code": "bad-login", "tries": 2}})
    );
    handler.reply(
        "login",
        401,
        json!({"message": "who?", "code": "no-user"}),
        Duration::ZERO,
    );
    let answer = ask(&server, login).await;
    assert_eq!(
        errors(&answer),
        json!({"message": "who?", "extensions": {"path": "$", "code": "no-user"}})
    );

    // Answers that do not fit the output type are never passed on.
    for (body, at) in [
        (json!({"accessToken": "t", "userId": "seven"}), "$.userId"),
        (json!({"accessToken": "t"}), "$.userId"),
        (json!([{"accessToken": "t", "userId": 7}]), "$"),
    ] {
        handler.reply("login", 200, body.clone(), Duration::ZERO);
        let answer = ask(&server, login).await;
        let error = errors(&answer);
        assert_eq!(
            error["extensions"]["code"], "unexpected",
            "{body}: {answer}"
        );
        let message = error["message"].as_str().unwrap_or_default();
        assert!(message.contains(at), "{body}: {message}");
    }

    // A handler that fails, answers no JSON, or is too slow.
    handler.reply("login", 500, json!({"message": "boom"}), Duration::ZERO);
    let answer = ask(&server, login).await;
    assert_eq!(
        errors(&answer)["extensions"]["code"],
        "action-webhook-error"
    );
    handler.reply_text("login", 200, "<html>ok</html>");
    let answer = ask(&server, login).await;
    assert_eq!(
        errors(&answer)["extensions"]["code"],
        "action-webhook-error"
    );
    handler.reply("whoami", 200, json!({"id": 1}), Duration::from_secs(10));
    let started = std::time::Instant::now();
    // As a role: admin is not held to api_limits, as in Hasura.
    let whoami = json!({"query": "{ whoami { id } }"});
    let answer = crate::post_body(&server, &whoami, &[("x-hasura-role", "reviewer")]).await;
    assert_eq!(
        errors(&answer)["extensions"]["code"],
        "action-webhook-error"
    );
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_millis(1900),
        "the role's 1 s time limit cut the action's 2 s timeout: {took:?}"
    );

    // Over GET, a query calling an action is refused (a cross-site page could
    // make a browser call the handler with the user's cookies).
    let calls = handler.calls().len();
    let get = reqwest::Client::new()
        .get(server.url())
        .query(&[("query", "{ whoami { id } }")])
        .send()
        .await
        .expect("GET");
    assert_eq!(get.status().as_u16(), 405);
    assert_eq!(handler.calls().len(), calls, "the handler was not called");

    // An action and a table mutation in one document: refused before either runs.
    let calls = handler.calls().len();
    let mixed = "mutation { login(username: \"a\", password: \"b\") { userId } \
        insert_posts_one(object: {id: 9, author_id: 1, title: \"x\"}) { id } }";
    let answer = ask(&server, mixed).await;
    let error = errors(&answer);
    assert_eq!(error["extensions"]["code"], "validation-failed");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(message.contains("action"), "{message}");
    assert_eq!(handler.calls().len(), calls, "the handler was not called");
    let posts = ask(&server, "{ posts_by_pk(id: 9) { id } }").await;
    assert_eq!(posts, json!({"data": {"posts_by_pk": null}}));

    // Each call counted by its result.
    let metrics = reqwest::get(format!("http://{}/metrics", server.addr))
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    for (labels, n) in [
        ("action=\"login\",result=\"handler_error\"", 2),
        ("action=\"login\",result=\"invalid_answer\"", 3),
        ("action=\"login\",result=\"webhook_error\"", 2),
        ("action=\"whoami\",result=\"webhook_error\"", 1),
    ] {
        let line = format!("grafton_action_calls_total{{{labels}}} {n}\n");
        assert!(metrics.contains(&line), "{line} not in:\n{metrics}");
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_action_whose_handler_variable_is_unset_is_left_out_and_reported() {
    let dir = project(
        "actions-unset",
        "GRAFTON_TEST_ACTIONS_UNSET_BASE",
        "http://127.0.0.1:9",
    );
    let yaml = actions_yaml("GRAFTON_TEST_ACTIONS_NEVER_SET");
    std::fs::write(dir.join("actions.yaml"), yaml).expect("actions.yaml");
    let [sqlite, _] = databases("actions_unset");
    let server = serve_dir(&sqlite, &dir).await;
    let answer = reqwest::Client::new()
        .post(format!("http://{}/v1/metadata", server.addr))
        .json(&json!({"type": "get_inconsistent_metadata", "args": {}}))
        .send()
        .await
        .expect("metadata")
        .json::<Value>()
        .await
        .expect("JSON");
    let objects = answer["inconsistent_objects"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let actions: Vec<&Value> = objects.iter().filter(|o| o["type"] == "action").collect();
    assert_eq!(actions.len(), 2, "{answer}");
    let reason = actions[0]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("GRAFTON_TEST_ACTIONS_NEVER_SET"),
        "{reason}"
    );
    // The rest is served.
    let authors = ask(&server, "{ authors(limit: 1) { id } }").await;
    assert_eq!(authors, json!({"data": {"authors": [{"id": 1}]}}));
    server.stop().await;
}
