//! The custom types' names and type references: what a GraphQL name and type
//! are (so metadata never writes SDL of its own), and what kind each custom type
//! is.

use crate::config::CustomTypes;

/// `ty`'s named type: `[Item!]!` → `Item`.
pub fn named_type(ty: &str) -> &str {
    ty.trim_matches(|c: char| c == '[' || c == ']' || c == '!' || c.is_whitespace())
}

/// Whether `name` is a GraphQL name (so metadata cannot write SDL of its own).
pub(super) fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// Whether `ty` is a GraphQL type: a name, or `[type]`, either with a `!`.
pub(super) fn is_type(ty: &str) -> bool {
    let ty = ty.trim();
    let ty = ty.strip_suffix('!').unwrap_or(ty).trim_end();
    match ty.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        Some(inner) => is_type(inner),
        None => is_name(ty),
    }
}

/// The first name or type of the custom types that is not GraphQL's.
pub(super) fn bad_custom_name(types: &CustomTypes) -> Option<String> {
    let fields = (types.objects.iter().flat_map(|o| o.fields.iter()))
        .chain(types.input_objects.iter().flat_map(|i| i.fields.iter()));
    let names = (types.objects.iter().map(|o| &o.name))
        .chain(types.input_objects.iter().map(|i| &i.name))
        .chain(types.enums.iter().map(|e| &e.name))
        .chain(types.scalars.iter().map(|s| &s.name))
        .chain(
            types
                .enums
                .iter()
                .flat_map(|e| e.values.iter().map(|v| &v.value)),
        );
    for name in names.chain(fields.clone().map(|f| &f.name)) {
        if !is_name(name) {
            return Some(format!("'{name}' is not a GraphQL name"));
        }
    }
    fields
        .map(|f| &f.ty)
        .find(|ty| !is_type(ty))
        .map(|ty| format!("'{ty}' is not a GraphQL type"))
}

/// What a custom type name is.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Object,
    Input,
    Enum,
    Scalar,
}

pub(super) fn kind_of(types: &CustomTypes, name: &str) -> Option<Kind> {
    if types.objects.iter().any(|t| t.name == name) {
        Some(Kind::Object)
    } else if types.input_objects.iter().any(|t| t.name == name) {
        Some(Kind::Input)
    } else if types.enums.iter().any(|t| t.name == name) {
        Some(Kind::Enum)
    } else if types.scalars.iter().any(|t| t.name == name) {
        Some(Kind::Scalar)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_graphql_names_and_types_pass() {
        for ok in [
            "Int",
            "Int!",
            "[Int]",
            "[Int!]!",
            "[[Pick!]]",
            " [ Item ! ] ",
        ] {
            assert!(is_type(ok), "{ok}");
        }
        for bad in ["", "Int!!", "[Int", "Int]", "1Int", "Foo } type X {", "[]"] {
            assert!(!is_type(bad), "{bad}");
        }
        assert!(is_name("_x1") && !is_name("x-y") && !is_name("é"));
        assert_eq!(named_type("[Pick!]!"), "Pick");
    }
}
