//! The JSONPath subset of Hasura's `claims_namespace_path`: an optional `$`, then members
//! (`.name`, `name`, `['any key']`, `["any key"]`) and array indexes (`[0]`).
//!
//! Written here rather than taken from a JSONPath crate because Hasura's grammar is not
//! RFC 9535's: it accepts `-` in dotted names (`$.x-claims`) and paths without `$`, and it
//! has no wildcards or filters, so a path always names at most one value.

use serde_json::Value;

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    /// An object member.
    Key(String),
    /// An array element.
    Index(usize),
}

/// Parses a path (`setting` names where it was given, for the error); `$` alone
/// is the root (no steps).
pub(crate) fn parse(setting: &str, path: &str) -> Result<Vec<Step>, String> {
    let invalid = |why: &str| {
        format!(
            "{setting} {path:?} is not a valid JSON path ({why}); use letters, digits, _ and - in \
             dotted names, and ['...'] for any other key"
        )
    };
    let mut chars = path.chars().peekable();
    if chars.peek() == Some(&'$') {
        chars.next();
        if chars.peek().is_none() {
            return Ok(Vec::new());
        }
    }
    let mut steps = Vec::new();
    while chars.peek().is_some() {
        if chars.peek() == Some(&'.') {
            chars.next();
        }
        match chars.next() {
            Some('[') => {
                let step =
                    match chars.peek() {
                        Some(&quote @ ('\'' | '"')) => {
                            chars.next();
                            let mut key = String::new();
                            loop {
                                match chars.next() {
                                    Some('\\') => match chars.next() {
                                        Some(c) => key.push(c),
                                        None => return Err(invalid("unterminated quoted key")),
                                    },
                                    Some(c) if c == quote => break,
                                    Some(c) => key.push(c),
                                    None => return Err(invalid("unterminated quoted key")),
                                }
                            }
                            Step::Key(key)
                        }
                        _ => {
                            let mut digits = String::new();
                            while let Some(c) = chars.peek().copied().filter(char::is_ascii_digit) {
                                digits.push(c);
                                chars.next();
                            }
                            Step::Index(digits.parse().map_err(|_| {
                                invalid("expected an index or a quoted key in [...]")
                            })?)
                        }
                    };
                if chars.next() != Some(']') {
                    return Err(invalid("missing ]"));
                }
                steps.push(step);
            }
            Some(first) if first.is_alphabetic() || first == '_' => {
                let mut name = String::from(first);
                while let Some(c) = chars
                    .peek()
                    .copied()
                    .filter(|c| c.is_alphanumeric() || *c == '_' || *c == '-')
                {
                    name.push(c);
                    chars.next();
                }
                steps.push(Step::Key(name));
            }
            _ => return Err(invalid("a property name must start with a letter or _")),
        }
    }
    if steps.is_empty() {
        return Err(invalid("empty path"));
    }
    Ok(steps)
}

/// The value a path names, if there is one.
pub(crate) fn lookup<'a>(value: &'a Value, steps: &[Step]) -> Option<&'a Value> {
    steps.iter().try_fold(value, |current, step| match step {
        Step::Key(key) => current.as_object()?.get(key),
        Step::Index(index) => current.as_array()?.get(*index),
    })
}

/// Writes steps back as a path, for messages.
pub(crate) fn display(steps: &[Step]) -> String {
    let mut out = String::from("$");
    for step in steps {
        match step {
            Step::Key(key) => {
                out.push_str("['");
                out.push_str(&key.replace('\\', "\\\\").replace('\'', "\\'"));
                out.push_str("']");
            }
            Step::Index(index) => out.push_str(&format!("[{index}]")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key(k: &str) -> Step {
        Step::Key(k.to_string())
    }

    #[test]
    fn parses_hasura_paths() {
        assert_eq!(parse("claims_namespace_path", "$").unwrap(), vec![]);
        assert_eq!(
            parse("claims_namespace_path", "$.hasura.claims").unwrap(),
            vec![key("hasura"), key("claims")]
        );
        assert_eq!(
            parse("claims_namespace_path", "hasura.claims").unwrap(),
            vec![key("hasura"), key("claims")]
        );
        assert_eq!(
            parse("claims_namespace_path", "$.x-claims_2").unwrap(),
            vec![key("x-claims_2")]
        );
        assert_eq!(
            parse("claims_namespace_path", "$['https://hasura.io/jwt/claims']").unwrap(),
            vec![key("https://hasura.io/jwt/claims")]
        );
        assert_eq!(
            parse("claims_namespace_path", r#"$.a["b\"c"][2].d"#).unwrap(),
            vec![key("a"), key("b\"c"), Step::Index(2), key("d")]
        );
    }

    #[test]
    fn rejects_bad_paths() {
        for bad in [
            "", "$.", "$..a", "$.1a", "$[", "$['a", "$[x]", "$.a b", "$.*",
        ] {
            assert!(
                parse("claims_namespace_path", bad).is_err(),
                "{bad:?} should be rejected"
            );
        }
    }

    #[test]
    fn looks_up_values() {
        let doc = json!({"a": {"b": [10, {"c": "yes"}]}});
        assert_eq!(
            lookup(&doc, &parse("claims_namespace_path", "$").unwrap()),
            Some(&doc)
        );
        assert_eq!(
            lookup(&doc, &parse("claims_namespace_path", "$.a.b[1].c").unwrap()),
            Some(&json!("yes"))
        );
        assert_eq!(
            lookup(&doc, &parse("claims_namespace_path", "$.a.b[2]").unwrap()),
            None
        );
        assert_eq!(
            lookup(&doc, &parse("claims_namespace_path", "$.a.x").unwrap()),
            None
        );
        assert_eq!(
            display(&parse("claims_namespace_path", "$.a[0]").unwrap()),
            "$['a'][0]"
        );
    }
}
