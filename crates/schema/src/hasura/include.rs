//! Hasura's `!include` lists: a v3 metadata directory's `tables.yaml` and
//! `functions.yaml` name the files that hold the entries, and only those are read,
//! as Hasura reads them (a stale file beside them is not part of the project).

use std::path::{Path, PathBuf};

/// The files a list of `"!include file.yaml"` lines names, relative to the list's
/// directory; `None` when the list holds entries instead of includes (a v2 file) or
/// does not exist. A named file that is missing is an error.
pub(super) fn included(list: &Path) -> Result<Option<Vec<PathBuf>>, String> {
    if !list.is_file() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(list).map_err(|e| format!("{}: {e}", list.display()))?;
    let value: serde_norway::Value =
        serde_norway::from_str(&text).map_err(|e| format!("{}: {e}", list.display()))?;
    let lines = match value {
        serde_norway::Value::Null => return Ok(Some(Vec::new())),
        serde_norway::Value::Sequence(lines) => lines,
        _ => return Ok(None),
    };
    let dir = list.parent().unwrap_or(Path::new("."));
    let mut files = Vec::new();
    for line in &lines {
        let Some(name) = include_target(line) else {
            // Entries, not includes: the file is read as a list of entries.
            return Ok(None);
        };
        let file = dir.join(&name);
        if !file.is_file() {
            return Err(format!(
                "{}: it includes {name}, which does not exist",
                list.display()
            ));
        }
        files.push(file);
    }
    Ok(Some(files))
}

/// `"!include x.yaml"` (as Hasura's export writes it) or an unquoted `!include x.yaml`
/// (a YAML tag): the file named.
fn include_target(line: &serde_norway::Value) -> Option<String> {
    match line {
        serde_norway::Value::String(s) => s.strip_prefix("!include ").map(|n| n.trim().to_owned()),
        serde_norway::Value::Tagged(t) if t.tag == "include" || t.tag == "!include" => {
            t.value.as_str().map(|n| n.trim().to_owned())
        }
        _ => None,
    }
}

/// The `*.yaml` files of `dir` that `included` leaves out, for a warning.
pub(super) fn left_out(dir: &Path, included: &[PathBuf], list: &str) -> Vec<String> {
    let Ok(listing) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<String> = listing
        .flatten()
        .map(|f| f.path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .filter(|p| p.file_name().is_some_and(|n| n != list))
        .filter(|p| !included.contains(p))
        .filter_map(|p| p.file_name().and_then(|n| n.to_str()).map(str::to_owned))
        .collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_included_files_are_read() {
        let dir = std::env::temp_dir().join(format!("grafton-include-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        for f in ["public_a.yaml", "public_b.yaml", "stale.yaml"] {
            std::fs::write(dir.join(f), "table: {name: x, schema: public}\n").expect("file");
        }
        let list = dir.join("tables.yaml");
        std::fs::write(
            &list,
            "- \"!include public_a.yaml\"\n- !include public_b.yaml\n",
        )
        .expect("list");
        let files = included(&list).expect("reads").expect("includes");
        assert_eq!(
            files,
            [dir.join("public_a.yaml"), dir.join("public_b.yaml")]
        );
        assert_eq!(left_out(&dir, &files, "tables.yaml"), ["stale.yaml"]);
        std::fs::write(&list, "- \"!include gone.yaml\"\n").expect("list");
        assert!(included(&list)
            .unwrap_err()
            .contains("includes gone.yaml, which does not exist"));
        std::fs::write(&list, "- table: {name: a}\n").expect("list");
        assert!(included(&list).expect("reads").is_none());
        std::fs::write(&list, "[]\n").expect("list");
        assert_eq!(included(&list).expect("reads"), Some(Vec::new()));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
