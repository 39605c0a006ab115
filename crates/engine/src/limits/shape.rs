//! An operation's size as written: depth, fields and root fields, with fragments
//! expanded (each spread counts its fragment again) and aliases counted. Computed
//! once per document, with each fragment measured once, so a fragment spread many
//! times costs nothing extra to measure.

use apollo_compiler::executable::{Fragment, Selection, SelectionSet};
use apollo_compiler::{ExecutableDocument, Name};
use std::collections::HashMap;

/// The size of one operation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Shape {
    /// Deepest nesting of fields (a root field is depth 1).
    pub depth: u64,
    /// Fields, introspection and `__typename` included.
    pub nodes: u64,
    /// Fields at the root.
    pub root_fields: u64,
    /// Root fields answered by introspection (`__schema`, `__type`).
    pub introspection_roots: u64,
    /// Fields under (and including) those root fields.
    pub introspection_nodes: u64,
}

/// Measures every operation of `document`, keyed by operation name (`None` for an
/// anonymous one).
pub fn measure(document: &ExecutableDocument) -> HashMap<Option<Name>, Shape> {
    let mut memo = HashMap::new();
    document
        .operations
        .iter()
        .map(|op| {
            let (depth, nodes) = selection_set(document, &op.selection_set, &mut memo, 0);
            let mut shape = Shape {
                depth,
                nodes,
                ..Shape::default()
            };
            roots(document, &op.selection_set, &mut memo, &mut shape, 0);
            (op.name.clone(), shape)
        })
        .collect()
}

/// (depth, nodes) of a selection set; fragments are memoised by name.
fn selection_set(
    document: &ExecutableDocument,
    set: &SelectionSet,
    memo: &mut HashMap<Name, (u64, u64)>,
    guard: usize,
) -> (u64, u64) {
    let (mut depth, mut nodes) = (0u64, 0u64);
    // Validation refuses fragment cycles; the guard only keeps a bug from recursing
    // without end.
    if guard > 512 {
        return (u64::MAX / 4, u64::MAX / 4);
    }
    for selection in &set.selections {
        let (d, n) = match selection {
            Selection::Field(field) => {
                let (d, n) = selection_set(document, &field.selection_set, memo, guard + 1);
                (d.saturating_add(1), n.saturating_add(1))
            }
            Selection::InlineFragment(inline) => {
                selection_set(document, &inline.selection_set, memo, guard + 1)
            }
            Selection::FragmentSpread(spread) => match memo.get(&spread.fragment_name) {
                Some(&known) => known,
                None => {
                    let measured = match document.fragments.get(&spread.fragment_name) {
                        Some(fragment) => fragment_size(document, fragment, memo, guard),
                        None => (0, 0),
                    };
                    memo.insert(spread.fragment_name.clone(), measured);
                    measured
                }
            },
        };
        depth = depth.max(d);
        nodes = nodes.saturating_add(n);
    }
    (depth, nodes)
}

fn fragment_size(
    document: &ExecutableDocument,
    fragment: &Fragment,
    memo: &mut HashMap<Name, (u64, u64)>,
    guard: usize,
) -> (u64, u64) {
    selection_set(document, &fragment.selection_set, memo, guard + 1)
}

/// Counts the root fields (through fragments and inline fragments) into `shape`.
fn roots(
    document: &ExecutableDocument,
    set: &SelectionSet,
    memo: &mut HashMap<Name, (u64, u64)>,
    shape: &mut Shape,
    guard: usize,
) {
    if guard > 512 {
        shape.root_fields = u64::MAX / 4;
        return;
    }
    for selection in &set.selections {
        match selection {
            Selection::Field(field) => {
                shape.root_fields = shape.root_fields.saturating_add(1);
                if matches!(field.name.as_str(), "__schema" | "__type") {
                    let (_, n) = selection_set(document, &field.selection_set, memo, guard + 1);
                    shape.introspection_roots += 1;
                    shape.introspection_nodes = shape
                        .introspection_nodes
                        .saturating_add(n.saturating_add(1));
                }
            }
            Selection::InlineFragment(inline) => {
                roots(document, &inline.selection_set, memo, shape, guard + 1)
            }
            Selection::FragmentSpread(spread) => {
                if let Some(f) = document.fragments.get(&spread.fragment_name) {
                    roots(document, &f.selection_set, memo, shape, guard + 1)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use apollo_compiler::Schema;

    fn shape(query: &str) -> Shape {
        let schema = Schema::parse_and_validate(
            "type Query { a: A } type A { b: A, n: Int }",
            "schema.graphql",
        )
        .expect("schema");
        let doc =
            ExecutableDocument::parse_and_validate(&schema, query, "q.graphql").expect("document");
        measure(&doc).into_values().next().expect("one operation")
    }

    #[test]
    fn counts_depth_nodes_and_roots() {
        let s = shape("{ a { n b { n } } x: a { n } }");
        assert_eq!((s.depth, s.nodes, s.root_fields), (3, 6, 2));
    }

    #[test]
    fn fragments_count_each_time_they_are_spread() {
        let s = shape("query { a { ...F b { ...F } } } fragment F on A { n b { n __typename } }");
        // a(1) + F(4) + b(1) + F(4); depth: a > b > F's b > n.
        assert_eq!((s.depth, s.nodes, s.root_fields), (4, 10, 1));
    }

    #[test]
    fn a_fragment_at_the_root_contributes_its_fields() {
        let s = shape(
            "{ ...R ... on Query { x: a { n } } } fragment R on Query { a { n } y: a { n } }",
        );
        assert_eq!(s.root_fields, 3);
    }

    #[test]
    fn introspection_fields_are_counted() {
        let s = shape("{ a { n } __schema { types { name } } t: __type(name: \"A\") { name } }");
        assert_eq!((s.root_fields, s.nodes), (3, 7));
        assert_eq!((s.introspection_roots, s.introspection_nodes), (2, 5));
    }
}
