//! Postgres's `json_build_object` pads its output (`{"a" : 1, "b" : 2}`). One pass
//! that drops whitespace outside strings makes it compact and byte-identical to
//! SQLite's output, without parsing it into a tree.

/// Removes insignificant whitespace from JSON text produced by the database.
pub fn compact_json(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut in_string = false;
    let mut escaped = false;
    for &b in bytes {
        if in_string {
            out.push(b);
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
        } else if b == b'"' {
            in_string = true;
            out.push(b);
        } else if !matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
            out.push(b);
        }
    }
    // Only ASCII bytes were removed, so the result is still valid UTF-8.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::compact_json;

    #[test]
    fn strips_padding_but_not_strings() {
        assert_eq!(
            compact_json(r#"{"a b" : [1, 2], "c" : "x \" y\\", "d" : {"e" : null}}"#),
            r#"{"a b":[1,2],"c":"x \" y\\","d":{"e":null}}"#
        );
    }

    #[test]
    fn keeps_unicode() {
        assert_eq!(compact_json(r#"{"名" : "東京 都"}"#), r#"{"名":"東京 都"}"#);
    }
}
