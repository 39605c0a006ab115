//! Where Hasura is more lenient than the GraphQL spec and clients rely on it, the
//! document is adjusted before validation (one pass over the AST, once per document:
//! the result is cached with it).

use apollo_compiler::ast::{Definition, Document, IntValue, Selection, Value};
use apollo_compiler::Node;

/// `offset: "10"` becomes `offset: 10`, as Hasura coerces a numeric string there.
pub(crate) fn numeric_offsets(document: &mut Document, offset: &str) {
    for definition in &mut document.definitions {
        let selections = match definition {
            Definition::OperationDefinition(op) => &mut op.make_mut().selection_set,
            Definition::FragmentDefinition(f) => &mut f.make_mut().selection_set,
            _ => continue,
        };
        in_selections(selections, offset);
    }
}

fn in_selections(selections: &mut [Selection], offset: &str) {
    for selection in selections {
        match selection {
            Selection::Field(field) => {
                let field = field.make_mut();
                for argument in &mut field.arguments {
                    let numeric = match &*argument.value {
                        Value::String(s) if argument.name == offset => s.trim().parse::<i32>().ok(),
                        _ => None,
                    };
                    if let Some(n) = numeric {
                        argument.make_mut().value = Node::new(Value::Int(IntValue::from(n)));
                    }
                }
                in_selections(&mut field.selection_set, offset);
            }
            Selection::InlineFragment(inline) => {
                in_selections(&mut inline.make_mut().selection_set, offset)
            }
            Selection::FragmentSpread(_) => {}
        }
    }
}
