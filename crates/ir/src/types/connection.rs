//! The Relay API's IR: connections (pages of rows by cursor) and the
//! parameters each request reads from its cursors and global ids.

use super::{Args, Field, Value};
use crate::relay::{cursor_value, decode_cursor, NodeId, INVALID_CURSOR};
use grafton_schema::TableId;
use serde_json::Value as Json;

/// A connection: a page of a table's rows, its edges' cursors and the page's info.
#[derive(Debug, Clone, PartialEq)]
pub struct Connection {
    /// The table.
    pub table: TableId,
    /// `where`, `order_by` (with the primary key appended, so a cursor names one
    /// row), `distinct_on`; never `limit`/`offset`.
    pub args: Args,
    /// `first`: the page is the first n rows (after `after`).
    pub first: Option<Value>,
    /// `last`: the page is the last n rows (before `before`).
    pub last: Option<Value>,
    /// `after` or `before`.
    pub split: Option<Split>,
    /// Where each sort key's value is in a cursor (see `order_by`).
    pub cursor_keys: Vec<Vec<String>>,
    /// Selected fields by response key.
    pub fields: Vec<(String, ConnectionField)>,
}

impl Connection {
    /// The selections of its edges' nodes.
    pub fn nodes(&self) -> impl Iterator<Item = &Vec<(String, Field)>> {
        self.edge_fields().filter_map(|f| match f {
            EdgeField::Node(fields) => Some(fields),
            _ => None,
        })
    }

    /// The same, to change.
    pub fn nodes_mut(&mut self) -> impl Iterator<Item = &mut Vec<(String, Field)>> {
        (self.fields.iter_mut())
            .filter_map(|(_, f)| match f {
                ConnectionField::Edges(edges) => Some(edges),
                _ => None,
            })
            .flat_map(|edges| edges.iter_mut())
            .filter_map(|(_, f)| match f {
                EdgeField::Node(fields) => Some(fields),
                _ => None,
            })
    }

    fn edge_fields(&self) -> impl Iterator<Item = &EdgeField> {
        (self.fields.iter())
            .filter_map(|(_, f)| match f {
                ConnectionField::Edges(edges) => Some(edges),
                _ => None,
            })
            .flat_map(|edges| edges.iter().map(|(_, f)| f))
    }
}

/// Where a page starts: the rows after (or before) a cursor's row.
#[derive(Debug, Clone, PartialEq)]
pub struct Split {
    /// `before` (else `after`).
    pub before: bool,
    /// The cursor's value of each sort key, in `order_by` order.
    pub values: Vec<Value>,
}

/// A field of `<t>Connection`.
#[derive(Debug, Clone, PartialEq)]
pub enum ConnectionField {
    /// `__typename`.
    Typename(String),
    /// `edges { … }`.
    Edges(Vec<(String, EdgeField)>),
    /// `pageInfo { … }`.
    PageInfo(Vec<(String, PageInfoField)>),
}

/// A field of `<t>Edge`.
#[derive(Debug, Clone, PartialEq)]
pub enum EdgeField {
    /// `__typename`.
    Typename(String),
    /// `cursor`.
    Cursor,
    /// `node { … }`.
    Node(Vec<(String, Field)>),
}

/// A field of `PageInfo`.
#[derive(Debug, Clone, PartialEq)]
pub enum PageInfoField {
    /// `__typename`.
    Typename(String),
    /// `startCursor`: the first edge's.
    StartCursor,
    /// `endCursor`: the last edge's.
    EndCursor,
    /// `hasNextPage`.
    HasNextPage,
    /// `hasPreviousPage`.
    HasPreviousPage,
}

/// A parameter computed per request from a variable's value: a part of a cursor
/// or of a global id. Its name has a `#`, which no GraphQL variable can.
#[derive(Debug, Clone, PartialEq)]
pub struct Derived {
    /// The parameter's name.
    pub name: String,
    /// The variable it is read from.
    pub var: String,
    /// Which part.
    pub part: Part,
}

/// The part of an opaque value a [`Derived`] parameter takes.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// A cursor's value at this path (keys of nested objects).
    CursorKey(Vec<String>),
    /// A global id's `index`th primary key value, of `count`.
    NodeKey {
        /// Which value.
        index: usize,
        /// How many the table's primary key has.
        count: usize,
    },
}

/// Computes each derived parameter from its variable, into `variables`, each
/// variable decoded once; the error is Hasura's message for a cursor or id that
/// does not decode.
pub fn bind_derived(
    derived: &[Derived],
    variables: &mut serde_json::Map<String, Json>,
) -> Result<(), String> {
    let mut decoded: Vec<(&str, Decoded)> = Vec::new();
    for d in derived {
        let at = match decoded.iter().position(|(var, _)| *var == d.var) {
            Some(at) => at,
            None => {
                let value = variables.get(&d.var).unwrap_or(&Json::Null);
                decoded.push((&d.var, Decoded::of(&d.part, value)?));
                decoded.len() - 1
            }
        };
        let value = decoded[at].1.part(&d.part)?;
        variables.insert(d.name.clone(), value);
    }
    Ok(())
}

/// A variable's cursor or global id, read.
enum Decoded {
    Cursor(Json),
    Node(NodeId),
}

impl Decoded {
    /// `value` read as `part`'s kind says.
    fn of(part: &Part, value: &Json) -> Result<Decoded, String> {
        let text = value.as_str().ok_or_else(|| match part {
            Part::CursorKey(_) => INVALID_CURSOR.to_owned(),
            Part::NodeKey { .. } => "invalid node id: expected a string".to_owned(),
        })?;
        match part {
            Part::CursorKey(_) => decode_cursor(text)
                .map(Decoded::Cursor)
                .ok_or_else(|| INVALID_CURSOR.to_owned()),
            Part::NodeKey { .. } => NodeId::decode(text).map(Decoded::Node),
        }
    }

    /// The value `part` takes from it.
    fn part(&self, part: &Part) -> Result<Json, String> {
        match (self, part) {
            (Decoded::Cursor(cursor), Part::CursorKey(path)) => {
                cursor_value(cursor, path).ok_or_else(|| INVALID_CURSOR.to_owned())
            }
            (Decoded::Node(id), Part::NodeKey { index, count }) => {
                id.check_count(*count)?;
                Ok(id.values[*index].clone())
            }
            // One variable is one GraphQL type: a cursor (`String`) or an id (`ID`).
            _ => Err(INVALID_CURSOR.to_owned()),
        }
    }
}
