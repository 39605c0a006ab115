//! An event trigger's `request_transform` (Kriti, as Hasura's): the webhook
//! call made by the templates from the event.

use crate::delivery::{database, post, ADMIN};
use crate::{Receiver, ADMIN_SECRET};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_transform_reshapes_the_webhook_call() {
    let url = database("events_transform");
    let receiver = Receiver::default();
    let hook = receiver.start().await;
    let server = grafton_server::start(&crate::options(&url))
        .await
        .expect("starts");
    let base = format!("http://{}", server.addr);
    // Hasura's request_transform on an event trigger: the body made by a
    // template from the event, a header from it, the call's URL kept.
    let create = json!({"type": "pg_create_event_trigger", "args": {
        "name": "author_added", "table": {"schema": "public", "name": "authors"},
        "webhook": hook, "insert": {"columns": "*"},
        "request_transform": {"version": 2, "template_engine": "Kriti",
            "request_headers": {"add_headers": {"x-op": "{{$body.event.op}}"}, "remove_headers": []},
            "body": {"action": "transform",
                "template": "{\"who\": {{$body.event.data.new.name}}, \"by\": {{$body.event.session_variables?['x-hasura-user-id'] ?? \"nobody\"}}}"}}}});
    let answer = post(&base, "/v1/metadata", &ADMIN, create).await;
    assert_eq!(answer, json!({"message": "success"}));
    let session = [
        ("x-hasura-admin-secret", ADMIN_SECRET),
        ("x-hasura-user-id", "7"),
    ];
    let insert = json!({"query": "mutation { insert_authors_one(object: {id: 4, name: \"Grace\"}) { id } }"});
    let answer = post(&base, "/v1/graphql", &session, insert).await;
    assert_eq!(answer["data"]["insert_authors_one"]["id"], 4, "{answer}");
    let calls = receiver.wait_for(1).await;
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].body, json!({"who": "Grace", "by": "7"}));
    assert_eq!(calls[0].headers["x-op"], "INSERT");
    server.stop().await;
}
