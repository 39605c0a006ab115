//! Compiling column schemas from real files and validating values against them.

use std::path::{Path, PathBuf};

use grafton_validate::{compile, ColumnSchema, CompileError, SchemaSource, Violation};
use serde_json::{json, Value};

/// Writes each `(name, schema)` into a fresh temp dir, which is returned.
fn schema_dir(files: &[(&str, Value)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, schema) in files {
        let path = dir.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("schema subdir");
        }
        std::fs::write(path, schema.to_string()).expect("write schema");
    }
    dir
}

fn compile_file(dir: &Path, name: &str) -> Result<ColumnSchema, CompileError> {
    compile(&SchemaSource::Path(PathBuf::from(name)), dir)
}

/// The message of the error compiling schema file `name` in `dir`.
fn compile_error(dir: &Path, name: &str) -> String {
    match compile_file(dir, name) {
        Ok(schema) => panic!("{name} compiled: {schema:?}"),
        Err(error) => error.to_string(),
    }
}

/// Compiles a self-contained inline schema (its base dir is an empty temp dir).
fn compile_inline(schema: Value) -> Result<ColumnSchema, CompileError> {
    compile(&SchemaSource::Inline(schema), schema_dir(&[]).path())
}

fn pointers(violations: &[Violation]) -> Vec<&str> {
    violations.iter().map(|v| v.pointer.as_str()).collect()
}

/// person.json → address.json → zip.json, each by a path relative to the referring file.
fn transitive_dir() -> tempfile::TempDir {
    schema_dir(&[
        (
            "person.json",
            json!({
                "type": "object",
                "required": ["name", "address"],
                "properties": {
                    "name": {"type": "string"},
                    "address": {"$ref": "shared/address.json"}
                }
            }),
        ),
        (
            "shared/address.json",
            json!({
                "type": "object",
                "required": ["zip"],
                "properties": {
                    "street": {"type": "string"},
                    "zip": {"$ref": "zip.json"}
                }
            }),
        ),
        (
            "shared/zip.json",
            json!({"type": "string", "pattern": "^[0-9]{5}$"}),
        ),
    ])
}

#[test]
fn inline_schema_accepts_and_rejects() {
    let schema = compile_inline(json!({
        "type": "object",
        "properties": {"age": {"type": "integer", "minimum": 0}},
        "required": ["age"]
    }))
    .expect("compiles");
    assert_eq!(schema.origin(), "(inline)");
    assert!(schema.violations(&json!({"age": 3})).is_empty());

    let violations = schema.violations(&json!({"age": -1}));
    assert_eq!(pointers(&violations), ["/age"]);
    assert!(violations[0].message.contains("minimum"), "{violations:?}");

    let violations = schema.violations(&json!("nope"));
    assert_eq!(pointers(&violations), [""]);
    assert!(!violations[0].message.contains("nope"), "value is masked");
}

#[test]
fn transitive_file_refs_resolve_relative_to_the_referring_file() {
    let dir = transitive_dir();
    let schema = compile_file(dir.path(), "person.json").expect("compiles");
    assert!(schema.origin().ends_with("person.json"));

    let valid = json!({"name": "Ada", "address": {"street": "Main", "zip": "12345"}});
    assert_eq!(schema.violations(&valid), []);

    let invalid = json!({"name": "Ada", "address": {"zip": "12"}});
    assert_eq!(pointers(&schema.violations(&invalid)), ["/address/zip"]);
}

#[test]
fn inline_schema_refs_resolve_against_the_base_dir() {
    let dir = transitive_dir();
    let schema = compile(
        &SchemaSource::Inline(json!({"$ref": "shared/address.json"})),
        dir.path(),
    )
    .expect("compiles");
    assert!(schema.violations(&json!({"zip": "12345"})).is_empty());
    assert_eq!(pointers(&schema.violations(&json!({"zip": 5}))), ["/zip"]);
}

#[test]
fn ref_with_a_pointer_fragment_into_another_files_defs() {
    let dir = schema_dir(&[
        (
            "order.json",
            json!({
                "type": "object",
                "properties": {
                    "zip": {"$ref": "common.json#/$defs/zip"},
                    "tags": {"type": "array", "items": {"$ref": "common.json#/$defs/tag"}}
                }
            }),
        ),
        (
            "common.json",
            json!({
                "$defs": {
                    "zip": {"type": "string", "pattern": "^[0-9]{5}$"},
                    "tag": {"type": "string", "maxLength": 3}
                }
            }),
        ),
    ]);
    let schema = compile_file(dir.path(), "order.json").expect("compiles");
    assert!(schema
        .violations(&json!({"zip": "12345", "tags": ["a", "bc"]}))
        .is_empty());
    let violations = schema.violations(&json!({"zip": "x", "tags": ["a", "toolong"]}));
    assert_eq!(pointers(&violations), ["/zip", "/tags/1"]);
}

#[test]
fn missing_schema_file_is_an_error_naming_it() {
    let dir = schema_dir(&[]);
    let error = compile_file(dir.path(), "nope.json").expect_err("missing file");
    assert!(matches!(error, CompileError::Read { .. }), "{error:?}");
    assert!(error.to_string().contains("nope.json"), "{error}");
}

#[test]
fn missing_referenced_file_is_an_error_naming_it() {
    let dir = schema_dir(&[
        ("a.json", json!({"$ref": "b.json"})),
        (
            "b.json",
            json!({"properties": {"x": {"$ref": "gone.json"}}}),
        ),
    ]);
    let error = compile_file(dir.path(), "a.json").expect_err("dangling ref");
    let message = error.to_string();
    assert!(matches!(error, CompileError::Ref { .. }), "{error:?}");
    assert!(message.contains("a.json"), "{message}");
    assert!(message.contains("$ref \"gone.json\" in "), "{message}");
    assert!(message.contains("b.json"), "{message}");
}

#[test]
fn ref_to_a_missing_def_is_an_error_naming_the_ref() {
    let dir = schema_dir(&[
        ("a.json", json!({"$ref": "common.json#/$defs/missing"})),
        ("common.json", json!({"$defs": {}})),
    ]);
    let message = compile_error(dir.path(), "a.json");
    assert!(
        message.contains("$ref \"common.json#/$defs/missing\""),
        "{message}"
    );
    assert!(message.contains("a.json"), "{message}");
}

#[test]
fn invalid_json_in_a_schema_file_is_an_error_naming_it() {
    let dir = schema_dir(&[("a.json", json!({"$ref": "broken.json"}))]);
    std::fs::write(dir.path().join("broken.json"), "{not json").expect("write");

    let error = compile_file(dir.path(), "broken.json").expect_err("invalid JSON");
    assert!(matches!(error, CompileError::Json { .. }), "{error:?}");
    assert!(error.to_string().contains("broken.json"), "{error}");

    let message = compile_error(dir.path(), "a.json");
    assert!(message.contains("broken.json"), "{message}");
}

#[test]
fn invalid_schema_is_an_error() {
    let dir = schema_dir(&[
        ("bad.json", json!({"type": 12})),
        ("refers.json", json!({"$ref": "bad.json"})),
    ]);
    let error = compile_inline(json!({"type": 12})).expect_err("invalid inline schema");
    assert!(matches!(error, CompileError::Invalid { .. }), "{error:?}");
    assert!(error.to_string().contains("(inline) is invalid"), "{error}");

    let message = compile_error(dir.path(), "bad.json");
    assert!(
        message.contains("bad.json is invalid: at /type"),
        "{message}"
    );

    let message = compile_error(dir.path(), "refers.json");
    assert!(message.contains("refers.json is invalid"), "{message}");
    assert!(message.contains("bad.json at /type"), "{message}");
}

#[test]
fn network_refs_are_refused() {
    let message = compile_inline(json!({"$ref": "https://example.com/schema.json"}))
        .expect_err("no network")
        .to_string();
    assert!(message.contains("example.com"), "{message}");
}

#[test]
fn formats_are_validated() {
    let schema = compile_inline(json!({
        "type": "object",
        "properties": {
            "email": {"type": "string", "format": "email"},
            "at": {"type": "string", "format": "date-time"}
        }
    }))
    .expect("compiles");
    assert!(schema
        .violations(&json!({"email": "ada@example.com", "at": "2024-01-02T03:04:05Z"}))
        .is_empty());
    let violations = schema.violations(&json!({"email": "not an email", "at": "yesterday"}));
    assert_eq!(pointers(&violations), ["/email", "/at"]);
}

#[test]
fn violations_are_capped() {
    let schema =
        compile_inline(json!({"type": "array", "items": {"type": "integer"}})).expect("compiles");
    let value = Value::Array(vec![json!("x"); 50]);
    let violations = schema.violations(&value);
    assert_eq!(violations.len(), grafton_validate::MAX_VIOLATIONS);
    assert_eq!(violations[0].pointer, "/0");
    assert_eq!(violations, schema.violations(&value), "stable order");
}

#[test]
fn column_schema_is_send_sync_debug() {
    fn assert_send_sync<T: Send + Sync + std::fmt::Debug>() {}
    assert_send_sync::<ColumnSchema>();
}
