//! The `path` argument of json/jsonb fields, in Hasura's syntax: `$.a.b[0]`,
//! `a.b[0]`, `$["a key"][1]`, `['a']` (the leading `$` is optional).

use crate::types::PathStep;

/// Parses a path into keys and indices.
pub(crate) fn parse(text: &str) -> Result<Vec<PathStep>, String> {
    let err = |why: &str| format!("invalid JSON path \"{text}\": {why}");
    let mut chars = text.trim().chars().peekable();
    chars.next_if_eq(&'$');
    let mut steps = Vec::new();
    let mut first = true;
    while let Some(&c) = chars.peek() {
        match c {
            '.' => {
                chars.next();
                steps.push(PathStep::Key(
                    key(&mut chars).ok_or_else(|| err("empty key"))?,
                ));
            }
            '[' => {
                chars.next();
                match chars.peek() {
                    Some(&q) if q == '"' || q == '\'' => {
                        chars.next();
                        let mut k = String::new();
                        loop {
                            match chars.next() {
                                Some('\\') => k.extend(chars.next()),
                                Some(c) if c == q => break,
                                Some(c) => k.push(c),
                                None => return Err(err("unterminated key")),
                            }
                        }
                        steps.push(PathStep::Key(k));
                    }
                    _ => {
                        let mut digits = String::new();
                        while let Some(d) = chars.next_if(|c| c.is_ascii_digit() || *c == '-') {
                            digits.push(d);
                        }
                        let i = digits
                            .parse::<i64>()
                            .map_err(|_| err("expected an index"))?;
                        steps.push(PathStep::Index(i));
                    }
                }
                if chars.next() != Some(']') {
                    return Err(err("expected ']'"));
                }
            }
            _ if first => {
                steps.push(PathStep::Key(
                    key(&mut chars).ok_or_else(|| err("empty key"))?,
                ));
            }
            other => return Err(err(&format!("unexpected '{other}'"))),
        }
        first = false;
    }
    Ok(steps)
}

fn key(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Option<String> {
    let mut k = String::new();
    while let Some(c) = chars.next_if(|c| *c != '.' && *c != '[') {
        k.push(c);
    }
    (!k.is_empty()).then_some(k)
}

#[cfg(test)]
mod tests {
    use super::*;
    use PathStep::{Index, Key};

    #[test]
    fn hasura_spellings() {
        let k = |s: &str| Key(s.to_owned());
        assert_eq!(parse("$.a.b[0]"), Ok(vec![k("a"), k("b"), Index(0)]));
        assert_eq!(parse("a.b"), Ok(vec![k("a"), k("b")]));
        assert_eq!(
            parse("$[\"a key\"]['b'][2]"),
            Ok(vec![k("a key"), k("b"), Index(2)])
        );
        assert_eq!(parse("$"), Ok(vec![]));
        // Keys are any text: Hasura's test of a Chinese key.
        assert_eq!(parse("$.你好"), Ok(vec![k("你好")]));
        assert_eq!(parse("$.a.ключ[1]"), Ok(vec![k("a"), k("ключ"), Index(1)]));
        for bad in ["$.", "$[x]", "$[1", "$.a..b", "$['a"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
