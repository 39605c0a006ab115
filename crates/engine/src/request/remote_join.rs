//! Step 9 for remote relationships: the statement answered each row's values
//! where a remote relationship's field is; each relationship of the document
//! is then one call to its remote for every row at once (each distinct set of
//! values once, rows without a value answered null), and the answers put in
//! the rows' place. The document's relationships are called at once.

use crate::engine::{Caller, Engine};
use crate::error::EngineError;
use crate::planner::{Planner, Prepared};
use grafton_ir::JoinSite;
use grafton_remote::ActionError;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// `text` (the statement's answer, a JSON object) with `sites`' remote
/// answers in it; the remotes' `Set-Cookie`s. Only the places change: the
/// rest of the text is kept byte for byte (its numbers as the database wrote
/// them), and the size is checked before the answer is written.
pub(crate) async fn joined(
    engine: &Engine,
    planner: &Planner,
    prepared: &Prepared,
    caller: &Caller,
    sites: &[JoinSite],
    text: String,
) -> Result<(String, Vec<String>), EngineError> {
    let invalid = |e: serde_json::Error| {
        EngineError::Execute(grafton_execute::ExecuteError::Config(format!(
            "database returned invalid JSON: {e}"
        )))
    };
    // Each site's places, its distinct rows, and which of them each asks.
    let top: &RawValue = serde_json::from_str(&text).map_err(invalid)?;
    let mut asked: Vec<Asked> = Vec::new();
    for site in sites {
        let mut places = Vec::new();
        find(&text, top, &site.path, &mut places).map_err(invalid)?;
        let mut distinct: Vec<Map<String, Value>> = Vec::new();
        let mut index: HashMap<&str, usize> = HashMap::new();
        let mut which = Vec::with_capacity(places.len());
        for place in &places {
            let raw = &text[place.clone()];
            let row = serde_json::from_str::<Map<String, Value>>(raw).ok();
            let Some(row) = row.filter(|r| !r.values().any(Value::is_null)) else {
                which.push(None);
                continue;
            };
            let i = *index.entry(raw).or_insert_with(|| {
                distinct.push(row);
                distinct.len() - 1
            });
            which.push(Some(i));
        }
        asked.push(Asked {
            places,
            distinct,
            which,
        });
    }
    let session = super::actions::session(caller);
    let placed = std::sync::atomic::AtomicU64::new(0);
    let cx = super::remote_holes::JoinCx::new(engine, planner, prepared, caller, &session, &placed);
    let calls = (sites.iter().zip(&asked)).map(|(site, a)| call(cx, site, &a.distinct));
    let answers = futures_util::future::join_all(calls).await;
    // Every place's new text, and the answer's size before it is written.
    let max = planner.limits().max_response_bytes;
    let mut size = text.len() as u64;
    let mut cookies = Vec::new();
    let mut edits: Vec<(std::ops::Range<usize>, std::sync::Arc<str>)> = Vec::new();
    let null: std::sync::Arc<str> = "null".into();
    for (a, answer) in asked.into_iter().zip(answers) {
        let (values, mut set) = answer?;
        cookies.append(&mut set);
        let texts: Vec<std::sync::Arc<str>> = values.iter().map(|v| v.to_string().into()).collect();
        for (place, i) in a.places.into_iter().zip(a.which) {
            let new = i.and_then(|i| texts.get(i)).unwrap_or(&null).clone();
            size = size - (place.len() as u64) + new.len() as u64;
            crate::limits::check(crate::LimitKind::ResponseBytes, Some(max), size)?;
            edits.push((place, new));
        }
    }
    edits.sort_by_key(|(place, _)| place.start);
    let mut out = String::with_capacity(usize::try_from(size).unwrap_or(0));
    let mut at = 0;
    for (place, new) in edits {
        out.push_str(&text[at..place.start]);
        out.push_str(&new);
        at = place.end;
    }
    out.push_str(&text[at..]);
    Ok((out, cookies))
}

/// One site's places (byte ranges of the text), its distinct rows, and which
/// of them each place asks (`None`: a row without the values, answered null).
struct Asked {
    places: Vec<std::ops::Range<usize>>,
    distinct: Vec<Map<String, Value>>,
    which: Vec<Option<usize>>,
}

/// Where `path` leads from `raw` (a slice of `text`): a list on the way is
/// each element's.
fn find(
    text: &str,
    raw: &RawValue,
    path: &[String],
    out: &mut Vec<std::ops::Range<usize>>,
) -> Result<(), serde_json::Error> {
    let s = raw.get();
    let Some((key, rest)) = path.split_first() else {
        let start = s.as_ptr() as usize - text.as_ptr() as usize;
        out.push(start..start + s.len());
        return Ok(());
    };
    match s.as_bytes().first() {
        Some(b'[') => {
            for item in serde_json::from_str::<Vec<&RawValue>>(s)? {
                find(text, item, path, out)?;
            }
        }
        Some(b'{') => {
            let object: HashMap<String, &RawValue> = serde_json::from_str(s)?;
            if let Some(v) = object.get(key) {
                find(text, v, rest, out)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// One site's call: the answer for each of `rows`, and the `Set-Cookie`s.
async fn call(
    cx: super::remote_holes::JoinCx<'_>,
    site: &JoinSite,
    rows: &[Map<String, Value>],
) -> Result<(Vec<Value>, Vec<String>), EngineError> {
    let gone = || {
        ActionError::new(
            "the remote relationship is no longer served",
            "remote-schema-error",
        )
    };
    let rel = (cx.planner().model().remote_relationships)
        .get(site.join.rel)
        .ok_or_else(gone)?;
    super::remote_holes::join(cx, rel.remote, &rel.path, &site.join.fields, rows).await
}
