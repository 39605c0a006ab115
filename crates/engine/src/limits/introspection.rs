//! Introspection is answered in memory, by apollo-compiler, all at once: a document
//! with 2,000 aliases of `__schema` would build gigabytes before any size check.
//! So each role's full introspection (what GraphiQL asks for) is measured once, and
//! a document whose introspection root fields could together pass the response
//! size limit is refused before any of them runs.

use apollo_compiler::validation::Valid;
use apollo_compiler::{introspection, ExecutableDocument, Schema};

/// GraphiQL's introspection query (descriptions, arguments, types nine `ofType`s
/// deep): the largest answer one `__schema` field gives in practice.
const FULL_QUERY: &str = r#"
query IntrospectionQuery {
  __schema {
    queryType { name } mutationType { name } subscriptionType { name }
    types { ...FullType }
    directives { name description locations args { ...InputValue } }
  }
}
fragment FullType on __Type {
  kind name description
  fields(includeDeprecated: true) {
    name description args { ...InputValue } type { ...TypeRef } isDeprecated deprecationReason
  }
  inputFields { ...InputValue }
  interfaces { ...TypeRef }
  enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason }
  possibleTypes { ...TypeRef }
}
fragment InputValue on __InputValue { name description type { ...TypeRef } defaultValue }
fragment TypeRef on __Type {
  kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name
    ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } } }
}
"#;

/// The size in bytes of the full introspection of `schema` (at least 1).
pub fn full_size(schema: &Valid<Schema>) -> u64 {
    let Ok(document) = ExecutableDocument::parse_and_validate(schema, FULL_QUERY, "full.graphql")
    else {
        return 1;
    };
    let Ok(operation) = document.operations.get(None) else {
        return 1;
    };
    let implementers = schema.implementers_map();
    let response = introspection::partial_execute(
        schema,
        &implementers,
        &document,
        operation,
        &Valid::assume_valid(Default::default()),
    );
    response
        .ok()
        .and_then(|r| serde_json::to_vec(&r.data).ok())
        .map_or(1, |bytes| bytes.len().max(1) as u64)
}
