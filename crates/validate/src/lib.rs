//! JSON Schema validation of column values.
//!
//! The config file may attach a JSON Schema to a json, jsonb or text column;
//! every value written to that column is checked here before it reaches the
//! database. A schema is resolved and compiled once, at start-up, by
//! [`compile`]; a request only calls [`ColumnSchema::violations`].
//!
//! # Where schemas come from
//!
//! A [`SchemaSource`] is a file path (relative to the config file's directory)
//! or an inline JSON value. Either may `$ref` other schema files by relative
//! path, with or without a JSON-pointer fragment (`"address.json"`,
//! `"common.json#/$defs/zip"`), transitively. A file schema's refs resolve
//! against that file, an inline schema's against the base directory. Every
//! referenced file is read, checked against its meta-schema and compiled
//! inside [`compile`]; the compiled [`ColumnSchema`] keeps no retriever and
//! never touches the disk again. A missing file, invalid JSON, an invalid
//! schema or a ref that leads nowhere is a [`CompileError`] naming the file
//! and the ref.
//!
//! Only `file:` URIs are ever retrieved: refs to `http:`, `https:` or any other
//! scheme are compile errors, so the server never fetches a schema from the
//! network (the `jsonschema` crate is built without its HTTP resolver).
//!
//! # Formats
//!
//! `format` is validated, not merely annotated: a value with
//! `"format": "email"` must be an email address, `"date-time"` an RFC 3339
//! timestamp, and so on for every format the `jsonschema` crate knows
//! (including `idn-email` and `idn-hostname`). Unknown formats are ignored.
//! A column schema is a write-time guard, and a format that is not checked
//! would silently admit values the schema's author meant to reject.
//!
//! # Violations
//!
//! [`ColumnSchema::violations`] reports at most [`MAX_VIOLATIONS`] problems,
//! each a JSON pointer into the value and a message in which the offending
//! value is shown as `value`, so a large or sensitive value is never echoed.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use jsonschema::error::ValidationErrorKind;
use jsonschema::{ReferencingError, Retrieve, Uri, ValidationError, Validator};
use serde_json::Value;
use url::Url;

/// The most violations [`ColumnSchema::violations`] returns for one value.
pub const MAX_VIOLATIONS: usize = 10;

/// Where a column's JSON Schema comes from, as written in the config file.
#[derive(Debug, Clone, PartialEq)]
pub enum SchemaSource {
    /// A schema file; a relative path is relative to the base directory.
    Path(PathBuf),
    /// A schema written inline; its relative `$ref`s resolve against the base directory.
    Inline(Value),
}

/// A compiled column schema, ready to validate values.
pub struct ColumnSchema {
    validator: Validator,
    origin: String,
}

/// One way a value fails its column schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// JSON pointer to the offending part of the value; `""` for the value itself.
    pub pointer: String,
    /// What is wrong, with the offending value itself shown as `value`.
    pub message: String,
}

/// Why a column schema could not be compiled.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    /// The schema file could not be read.
    #[error("cannot read JSON Schema file {}: {source}", path.display())]
    Read {
        /// The file, joined to the base directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The schema file is not valid JSON.
    #[error("JSON Schema file {} is not valid JSON: {source}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// The parse error.
        source: serde_json::Error,
    },
    /// The schema, or a schema file it refers to, is not a valid JSON Schema.
    #[error("JSON Schema {origin} is invalid: {message}")]
    Invalid {
        /// Where the schema came from: a file path or `(inline)`.
        origin: String,
        /// The JSON pointer to the offending keyword and what is wrong with it,
        /// after the referenced file's path when that is where it is.
        message: String,
    },
    /// A `$ref` in the schema, or in a schema file it refers to, cannot be resolved.
    #[error("JSON Schema {origin}: cannot resolve {message}")]
    Ref {
        /// Where the schema came from: a file path or `(inline)`.
        origin: String,
        /// The `$ref`, the referenced file it is written in (when not the
        /// schema itself), and why it cannot be resolved.
        message: String,
    },
}

impl SchemaSource {
    /// A display name of where the schema comes from: its path, or `(inline)`.
    fn origin(&self, base_dir: &Path) -> String {
        match self {
            SchemaSource::Path(path) => base_dir.join(path).display().to_string(),
            SchemaSource::Inline(_) => "(inline)".to_owned(),
        }
    }
}

/// Resolves and compiles the schema from `source`, and every schema file it
/// refers to, once. `base_dir` is the config file's directory.
pub fn compile(source: &SchemaSource, base_dir: &Path) -> Result<ColumnSchema, CompileError> {
    let origin = source.origin(base_dir);
    let (schema, base_url) = load(source, base_dir)?;
    let retriever = FileRetriever::default();
    let built = jsonschema::options()
        .with_base_uri(base_url.as_str())
        .with_retriever(retriever.clone())
        .should_validate_formats(true)
        .build(&schema);
    let mut documents = vec![(base_url, schema)];
    documents.extend(retriever.take());
    let invalid = |message| CompileError::Invalid {
        origin: origin.clone(),
        message,
    };
    let validator = match built {
        Ok(validator) => validator,
        Err(error) => {
            return Err(match error.kind() {
                ValidationErrorKind::Referencing(error) => CompileError::Ref {
                    origin: origin.clone(),
                    message: describe_ref_error(error, &documents),
                },
                _ => invalid(invalid_referenced(&documents).unwrap_or_else(|| located(&error))),
            })
        }
    };
    // `jsonschema` checks the root schema against its meta-schema but compiles
    // referenced files as far as they are used; check each one in full.
    if let Some(message) = invalid_referenced(&documents) {
        return Err(invalid(message));
    }
    Ok(ColumnSchema { validator, origin })
}

/// The schema from `source`, and the `file:` URL its relative refs resolve against.
fn load(source: &SchemaSource, base_dir: &Path) -> Result<(Value, Url), CompileError> {
    let file_url = |path: &Path, directory: bool| {
        let absolute = std::path::absolute(path).map_err(|source| CompileError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let url = if directory {
            Url::from_directory_path(&absolute)
        } else {
            Url::from_file_path(&absolute)
        };
        url.map_err(|()| CompileError::Read {
            path: absolute,
            source: std::io::Error::other("not expressible as a file: URI"),
        })
    };
    match source {
        SchemaSource::Path(path) => {
            let path = base_dir.join(path);
            let text = std::fs::read(&path).map_err(|source| CompileError::Read {
                path: path.clone(),
                source,
            })?;
            let schema = serde_json::from_slice(&text).map_err(|source| CompileError::Json {
                path: path.clone(),
                source,
            })?;
            Ok((schema, file_url(&path, false)?))
        }
        SchemaSource::Inline(schema) => Ok((schema.clone(), file_url(base_dir, true)?)),
    }
}

/// Where `error` occurred (`at` a JSON pointer into the schema) and what it is.
fn located(error: &ValidationError<'_>) -> String {
    match error.instance_path().as_str() {
        "" => error.to_string(),
        pointer => format!("at {pointer}: {error}"),
    }
}

/// The first referenced schema file that its meta-schema rejects, described.
fn invalid_referenced(documents: &[(Url, Value)]) -> Option<String> {
    documents.iter().skip(1).find_map(|(url, document)| {
        jsonschema::meta::validate(document).err().map(|error| {
            let name = display_name(url);
            format!("referenced file {name} {}", located(&error))
        })
    })
}

/// A failed `$ref` resolution, naming the `$ref` and the file it is written in
/// when one of the loaded documents holds a ref that resolves to the failure.
fn describe_ref_error(error: &ReferencingError, documents: &[(Url, Value)]) -> String {
    let failed = |target: &Url| match error {
        ReferencingError::Unretrievable { uri, .. } => {
            let mut target = target.clone();
            target.set_fragment(None);
            target.as_str() == uri
        }
        ReferencingError::PointerToNowhere { pointer } => {
            target.fragment() == Some(pointer.as_str())
        }
        _ => false,
    };
    let detail = match error {
        ReferencingError::Unretrievable { source, .. } => source.to_string(),
        other => other.to_string(),
    };
    for (index, (url, document)) in documents.iter().enumerate() {
        let mut refs = Vec::new();
        collect_refs(document, &mut refs);
        if let Some(reference) = refs
            .into_iter()
            .find(|reference| url.join(reference).is_ok_and(|target| failed(&target)))
        {
            return match index {
                0 => format!("$ref {reference:?}: {detail}"),
                _ => format!("$ref {reference:?} in {}: {detail}", display_name(url)),
            };
        }
    }
    error.to_string()
}

/// Every `$ref` string anywhere in `value`, in document order.
fn collect_refs<'v>(value: &'v Value, refs: &mut Vec<&'v str>) {
    match value {
        Value::Object(object) => {
            for (key, value) in object {
                match value {
                    Value::String(reference) if key == "$ref" => refs.push(reference),
                    _ => collect_refs(value, refs),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| collect_refs(item, refs)),
        _ => {}
    }
}

/// A retrieved file's path; `(inline)` for the inline schema's base-directory URL.
fn display_name(url: &Url) -> String {
    match url.to_file_path() {
        Ok(path) if !url.path().ends_with('/') => path.display().to_string(),
        _ => "(inline)".to_owned(),
    }
}

impl ColumnSchema {
    /// All violations of `value`, in a stable order; empty when valid.
    ///
    /// The order is the validator's: schema keyword order, then position in
    /// the value, so the same schema and value always give the same list. At
    /// most [`MAX_VIOLATIONS`] are returned.
    pub fn violations(&self, value: &Value) -> Vec<Violation> {
        self.validator
            .iter_errors(value)
            .take(MAX_VIOLATIONS)
            .map(|error| Violation::from(&error))
            .collect()
    }

    /// Where the schema came from: its file path, or `(inline)`.
    pub fn origin(&self) -> &str {
        &self.origin
    }
}

impl fmt::Debug for ColumnSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ColumnSchema")
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

impl From<&ValidationError<'_>> for Violation {
    fn from(error: &ValidationError<'_>) -> Self {
        Violation {
            pointer: error.instance_path().as_str().to_owned(),
            message: error.masked().to_string(),
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pointer.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "at {}: {}", self.pointer, self.message)
        }
    }
}

/// Reads `$ref`ed schemas from disk, keeping a copy of each; refuses every
/// scheme but `file:`.
#[derive(Clone, Default)]
struct FileRetriever {
    fetched: Arc<Mutex<Vec<(Url, Value)>>>,
}

impl FileRetriever {
    /// The documents retrieved so far, in retrieval order.
    fn take(&self) -> Vec<(Url, Value)> {
        std::mem::take(&mut *self.fetched.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl Retrieve for FileRetriever {
    fn retrieve(
        &self,
        uri: &Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        let url = Url::parse(uri.as_str())?;
        if url.scheme() != "file" {
            return Err(format!(
                "only local schema files are resolved, not {}: URIs",
                url.scheme()
            )
            .into());
        }
        let path = url
            .to_file_path()
            .map_err(|()| format!("{uri} is not a local file path"))?;
        let text = std::fs::read(&path)
            .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
        let schema: Value = serde_json::from_slice(&text)
            .map_err(|error| format!("{} is not valid JSON: {error}", path.display()))?;
        self.fetched
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((url, schema.clone()));
        Ok(schema)
    }
}
