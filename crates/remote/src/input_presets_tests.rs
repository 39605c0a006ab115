//! Values rewritten with a role's presets on input object fields: literals,
//! lists, nested objects and variables (expanded where they hold a preset,
//! passed on where they do not, left out where the request gives none).

use super::plan;
use crate::print::Printer;
use apollo_compiler::executable::Selection;
use apollo_compiler::{ExecutableDocument, Schema};
use grafton_schema::remote::{Preset, PresetValue, RemoteIntrospected};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

const SDL: &str = "
enum Kind { NOVEL ESSAY }
input Range { high: Int }
enum Dir { ASC DESC }
input Sort { dir: Dir }
input Filter { text: String, kinds: [Kind!], range: Range, and: [Filter!], sort: Sort }
input Plain { text: String }
type Query { search(where: Filter, first: Int, plain: Plain): [String!]! }
";

/// The role's presets: `Filter.owner` from the session, `Range.low` a literal.
fn remote(schema: &Schema) -> RemoteIntrospected {
    let presets = BTreeMap::from([
        (
            "Filter".to_owned(),
            vec![Preset {
                arg: "owner".into(),
                value: PresetValue::Session {
                    var: "x-hasura-user-id".into(),
                    kind: "Int".into(),
                },
            }],
        ),
        (
            "Range".to_owned(),
            vec![Preset {
                arg: "low".into(),
                value: PresetValue::Literal("0".into()),
            }],
        ),
    ]);
    RemoteIntrospected {
        input_presets: plan(schema, presets),
        query_type: "Query".into(),
        ..Default::default()
    }
}

/// The root field of `query` as sent, and the variables passed on.
fn sent(query: &str, variables: Value) -> Result<(String, Vec<String>), String> {
    let schema = Schema::parse_and_validate(SDL, "s.graphql").expect("schema");
    let document =
        ExecutableDocument::parse_and_validate(&schema, query, "q.graphql").expect("document");
    let remote = remote(&schema);
    let session: Map<String, Value> =
        serde_json::from_value(json!({"x-hasura-user-id": "7"})).expect("session");
    let variables: Map<String, Value> = serde_json::from_value(variables).expect("variables");
    let mut p = Printer::new(&remote, &document, &session, &variables, Default::default());
    let op = document.operations.iter().next().expect("an operation");
    let Some(Selection::Field(f)) = op.selection_set.selections.first() else {
        panic!("a field")
    };
    p.field("search", "Query", f);
    match p.error {
        Some(e) => Err(e),
        None => Ok((p.out, p.used.into_iter().collect())),
    }
}

#[test]
fn the_plan_names_every_type_that_holds_a_preset_and_the_arguments_that_take_one() {
    let schema = Schema::parse_and_validate(SDL, "s.graphql").expect("schema");
    let plan = remote(&schema).input_presets;
    // `Sort` holds no preset, but a value of `Filter` is written whole.
    let types: Vec<&String> = plan.types.keys().collect();
    assert_eq!(types, ["Filter", "Range", "Sort"]);
    assert!(plan.enums.contains("Dir"));
    let args: Vec<&String> = plan.args.values().flat_map(|a| a.keys()).collect();
    assert_eq!(args, ["where"]);
    assert!(plan.enums.contains("Kind"));
}

#[test]
fn a_literal_gets_the_presets_at_every_depth() {
    let (out, used) = sent(
        "{ search(where: {text: \"a\", range: {high: 9}, and: [{kinds: [ESSAY]}, {}]}, first: 2) }",
        json!({}),
    )
    .expect("written");
    assert_eq!(
        out,
        "search: search(where: {text: \"a\", range: {high: 9, low: 0}, \
         and: [{kinds: [ESSAY], owner: 7}, {owner: 7}], owner: 7}, first: 2)"
    );
    assert!(used.is_empty());
    // One object where a list is taken (the remote reads a list of one).
    let (out, _) = sent("{ search(where: {and: {}}) }", json!({})).expect("written");
    assert_eq!(out, "search: search(where: {and: {owner: 7}, owner: 7})");
}

#[test]
fn a_variable_that_holds_a_preset_is_written_into_the_document_and_others_passed_on() {
    let query = "query($w: Filter, $n: Int, $p: Plain) { \
                 search(where: $w, first: $n, plain: $p) @include(if: true) }";
    let variables = json!({"w": {"kinds": ["NOVEL"], "and": [{"text": "q\"x"}]}, "n": 3,
                           "p": {"text": "z"}});
    let (out, used) = sent(query, variables).expect("written");
    assert_eq!(
        out,
        "search: search(where: {kinds: [NOVEL], and: [{text: \"q\\\"x\", owner: 7}], owner: 7}, \
         first: $n, plain: $p) @include(if: true)"
    );
    assert_eq!(used, ["n", "p"]);
    // A variable inside a literal too (one that holds no preset passed on);
    // one the request does not give is left out, as the client left it out.
    let query = "query($t: String, $r: Range) { search(where: {text: $t, range: $r}) }";
    let (out, used) = sent(query, json!({"r": {"high": 1}})).expect("written");
    assert_eq!(
        out,
        "search: search(where: {text: $t, range: {high: 1, low: 0}, owner: 7})"
    );
    assert_eq!(used, ["t"]);
    let (out, _) = sent(query, json!({})).expect("written");
    assert_eq!(out, "search: search(where: {text: $t, owner: 7})");
    let (out, _) = sent("query($w: Filter) { search(where: $w) }", json!({})).expect("written");
    assert_eq!(out, "search: search");
    let (out, _) = sent(
        "query($w: Filter) { search(where: $w) }",
        json!({"w": null}),
    )
    .expect("written");
    assert_eq!(out, "search: search(where: null)");
}

#[test]
fn a_missing_session_variable_refuses_the_call() {
    let schema = Schema::parse_and_validate(SDL, "s.graphql").expect("schema");
    let document =
        ExecutableDocument::parse_and_validate(&schema, "{ search(where: {}) }", "q.graphql")
            .expect("document");
    let remote = remote(&schema);
    let (session, variables) = (Map::new(), Map::new());
    let mut p = Printer::new(&remote, &document, &session, &variables, Default::default());
    let op = document.operations.iter().next().expect("an operation");
    let Some(Selection::Field(f)) = op.selection_set.selections.first() else {
        panic!("a field")
    };
    p.field("search", "Query", f);
    let error = p.error.expect("refused");
    assert!(error.contains("x-hasura-user-id"), "{error}");
}

#[test]
fn an_expanded_variables_enums_are_names_at_any_depth_and_a_name_of_another_kind_refused() {
    let query = "query($w: Filter) { search(where: $w) }";
    let (out, _) = sent(query, json!({"w": {"sort": {"dir": "DESC"}}})).expect("written");
    assert_eq!(out, "search: search(where: {sort: {dir: DESC}, owner: 7})");
    for bad in ["null", "true", "not a name"] {
        let refused = sent(query, json!({"w": {"sort": {"dir": bad}}})).expect_err("refused");
        assert!(refused.contains("is not a value of \"Dir\""), "{refused}");
    }
}
