//! Postgres's `json_build_object` pads its output (`{"a" : 1, "b" : 2}`). One pass
//! that drops whitespace outside strings makes it compact and byte-identical to
//! SQLite's output, without parsing it into a tree.

/// The JSON text `statement` answered, compact: as it is when the statement says it
/// is compact already (checked in debug builds, so every test checks the renderer's
/// claim), else through [`compact_json`].
pub(crate) fn compacted(statement: &grafton_sql::Statement, text: &str) -> String {
    if statement.compact {
        debug_assert_eq!(compact_json(text), text, "{}", statement.sql);
        return text.to_owned();
    }
    compact_json(text)
}

/// Removes insignificant whitespace from JSON text produced by the database.
///
/// Copies runs, not bytes: a string literal (most of the bytes: names, emails,
/// titles) is found whole with `memchr` and copied in one go, and so is each run
/// between two padding characters. Only ASCII padding outside strings is dropped,
/// so every cut falls on a character boundary.
pub fn compact_json(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(bytes.len());
    let mut run = 0; // start of the bytes not yet copied
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => i = string_end(bytes, i + 1),
            b' ' | b'\n' | b'\r' | b'\t' => {
                out.push_str(&text[run..i]);
                i += 1;
                run = i;
            }
            _ => i += 1,
        }
    }
    out.push_str(&text[run..]);
    out
}

/// The index just past the closing quote of the string whose contents start at
/// `i` (or the end of the text, if it is cut short).
fn string_end(bytes: &[u8], mut i: usize) -> usize {
    while let Some(at) = memchr::memchr2(b'"', b'\\', &bytes[i.min(bytes.len())..]) {
        i += at;
        if bytes[i] == b'"' {
            return i + 1;
        }
        i += 2; // a backslash and the character it escapes
    }
    bytes.len()
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
    fn cut_short_or_ending_in_an_escape_is_copied_as_is() {
        assert_eq!(compact_json(r#"["a\\"#), r#"["a\\"#);
        assert_eq!(compact_json(r#"["a\"#), r#"["a\"#);
        assert_eq!(compact_json(r#"{"a" :"#), r#"{"a":"#);
        assert_eq!(compact_json(""), "");
        assert_eq!(compact_json("[1, \n 2]"), "[1,2]");
    }

    #[test]
    fn keeps_unicode() {
        assert_eq!(compact_json(r#"{"名" : "東京 都"}"#), r#"{"名":"東京 都"}"#);
    }
}
