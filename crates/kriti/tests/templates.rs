//! Kriti templates as Hasura's transforms use them, read and evaluated.

use grafton_kriti::{eval, parse, RequestTransform, ResponseTransform};
use serde_json::{json, Map, Value};

fn run(template: &str, body: Value) -> Result<Value, String> {
    let node = parse::template(template)?;
    let mut scope = grafton_kriti::Scope::new(vec![
        ("$body".to_owned(), body),
        (
            "$session_variables".to_owned(),
            json!({"x-hasura-user-id": "7", "x-hasura-role": "user"}),
        ),
    ]);
    eval::value(&node, &mut scope)
}

#[test]
fn values_paths_and_interpolation() {
    let body = json!({"input": {"name": "Ada", "tags": ["a", "b"], "n": 3}});
    assert_eq!(
        run(
            r#"{"who": {{$body.input.name}}, "hi": "Hello {{$body.input.name}}!", "n": {{$body['input']["n"]}}, "first": {{$body.input.tags[0]}}}"#,
            body.clone()
        ),
        Ok(json!({"who": "Ada", "hi": "Hello Ada!", "n": 3, "first": "a"}))
    );
    // Optional steps give null; a missing field without one is an error.
    assert_eq!(
        run("{{$body.input?.locale}}", body.clone()),
        Ok(Value::Null)
    );
    assert_eq!(
        run(r#"{{$body.input?.locale ?? "en"}}"#, body.clone()),
        Ok(json!("en"))
    );
    assert!(run("{{$body.input.locale}}", body.clone()).is_err());
    assert_eq!(
        run(r#"{{$session_variables['x-hasura-user-id']}}"#, body),
        Ok(json!("7"))
    );
}

#[test]
fn blocks_functions_and_operators() {
    let body =
        json!({"items": [{"id": 1, "ok": true}, {"id": 2, "ok": false}], "s": "hello world"});
    let template = r#"{
      "ids": {{ range i, x := $body.items }} {"i": {{i}}, "id": {{x.id}}} {{ end }},
      "kind": {{ if size($body.items) > 1 && $body.items[0].ok }} "many" {{ elif empty($body.items) }} "none" {{ else }} "one" {{ end }},
      "up": {{ toUpper($body.s) }}, "title": {{ toTitle($body.s) }}, "uri": {{ escapeUri("a b/c") }},
      "not": {{ !$body.items[1].ok }}, "eq": {{ $body.s == "hello world" }},
      "user": {{ getSessionVariable("X-Hasura-User-Id") }}
    }"#;
    assert_eq!(
        run(template, body),
        Ok(json!({
            "ids": [{"i": 0, "id": 1}, {"i": 1, "id": 2}],
            "kind": "many", "up": "HELLO WORLD", "title": "Hello World", "uri": "a%20b%2Fc",
            "not": true, "eq": true, "user": "7"
        }))
    );
}

#[test]
fn a_template_it_cannot_read_is_refused_when_read() {
    for bad in [
        "{{ $body.x ",
        "{\"a\": }",
        "{{ if $body.x }} 1",
        "{{ unknown(1) }} extra",
    ] {
        assert!(parse::template(bad).is_err(), "{bad}");
    }
    assert!(RequestTransform::read(&json!({"template_engine": "Go", "body": "{}"})).is_err());
}

#[test]
fn a_request_transform_makes_the_call() {
    // As developer-portal's actions write them: query parameters, one optional.
    let t = RequestTransform::read(&json!({
        "version": 2, "template_engine": "Kriti", "method": "GET",
        "url": "{{$base_url}}/images",
        "query_params": {"app_id": "{{$body.input.app_id}}", "locale": "{{$body.input?.locale}}"},
        "request_headers": {"add_headers": {"x-user": "{{$session_variables['x-hasura-user-id']}}"}, "remove_headers": ["x-drop"]},
        "body": {"action": "remove"}
    }))
    .expect("reads");
    let payload = json!({"input": {"app_id": "app 1"}});
    let session: Map<String, Value> =
        serde_json::from_value(json!({"x-hasura-user-id": "u1"})).expect("map");
    let headers = vec![
        ("x-drop".to_owned(), "1".to_owned()),
        ("x-keep".to_owned(), "2".to_owned()),
    ];
    let out = t
        .apply(&payload, &session, "http://127.0.0.1:9/hook", headers)
        .expect("applies");
    assert_eq!(out.method, "GET");
    assert_eq!(out.url, "http://127.0.0.1:9/hook/images?app_id=app%201");
    assert_eq!(
        out.headers,
        vec![
            ("x-keep".to_owned(), "2".to_owned()),
            ("x-user".to_owned(), "u1".to_owned())
        ]
    );
    assert_eq!(out.body, None);
    // A form body, and a JSON body made by a template.
    let form = RequestTransform::read(&json!({"body": {"action": "x_www_form_urlencoded",
        "form_template": {"name": "{{$body.input.name}}"}}}))
    .expect("reads");
    let out = form
        .apply(
            &json!({"input": {"name": "a&b"}}),
            &session,
            "http://h/x",
            Vec::new(),
        )
        .expect("applies");
    assert_eq!(
        out.body,
        Some(("application/x-www-form-urlencoded", b"name=a%26b".to_vec()))
    );
    let response = ResponseTransform::read(&json!({"version": 2,
        "body": {"action": "transform", "template": "{\"id\": {{$body.data.id}}, \"status\": {{$response.status}}}"}}))
        .expect("reads");
    let reshaped = response.apply(
        &json!({"data": {"id": 5}}),
        &payload,
        &session,
        &json!({"status": 200}),
    );
    assert_eq!(reshaped, Ok(json!({"id": 5, "status": 200})));
}

#[test]
fn hostile_templates_and_values_are_refused_without_a_panic() {
    // Escapes cut in a character, an unclosed key, nesting past the limit.
    for bad in [
        "{\"a\": \"\\\u{e9}\"}",
        "{{$body['x}}",
        "{\"a\": \"\\u12\"}",
    ] {
        assert!(parse::template(bad).is_err(), "{bad}");
    }
    let deep = "[".repeat(10_000);
    assert!(parse::template(&deep).is_err());
    let nots = format!("{{{{ {}true }}}}", "!".repeat(10_000));
    assert!(parse::template(&nots).is_err());
    // A surrogate pair is one character.
    assert_eq!(run(r#""\uD83D\uDE00""#, json!({})), Ok(json!("\u{1F600}")));
    // Ranges over a client's lists stop at the budget.
    let list: Vec<i32> = (0..2000).collect();
    let squared = "{{ range _, a := $body }} {{ range _, b := $body }} {{b}} {{ end }} {{ end }}";
    let refused = run(squared, json!(list)).expect_err("over the budget");
    assert!(refused.contains("values"), "{refused}");
    // Errors name kinds, never values.
    let e = run("{{ toUpper($body.secret) }}", json!({"secret": 42})).expect_err("refused");
    assert!(!e.contains("42"), "{e}");
    // Numbers compare by value.
    assert_eq!(
        run("{{ $body.a == 1.0 }}", json!({"a": 1})),
        Ok(json!(true))
    );
}

#[test]
fn a_transformed_url_stays_on_the_handlers_host() {
    let t = RequestTransform::read(&json!({"url": "{{$base_url}}{{$body.input.path}}"}))
        .expect("reads");
    let session = Map::new();
    for path in ["@evil.example/", ".evil.example/x", ":9999/x"] {
        let payload = json!({"input": {"path": path}});
        assert!(
            t.apply(&payload, &session, "http://127.0.0.1:9", Vec::new())
                .is_err(),
            "{path}"
        );
    }
    let payload = json!({"input": {"path": "/fine?x=1"}});
    let out = t
        .apply(&payload, &session, "http://127.0.0.1:9", Vec::new())
        .expect("same host");
    assert_eq!(out.url, "http://127.0.0.1:9/fine?x=1");
}
