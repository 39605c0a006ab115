//! The cost estimate: roughly how many rows an operation makes the database
//! produce, built once per plan from the IR and evaluated per request (a `limit`
//! may be a variable). The formula is documented in docs/limits.md:
//!
//! - a list (root, array relationship or `_aggregate`) yields, per parent row, its
//!   effective limit: the smaller of `limit` and the role's row limit, else
//!   [`UNBOUNDED_ROWS`]; `offset` rows are read and skipped, so they count too;
//! - an object relationship or `_by_pk` yields one row per parent row;
//! - each predicate of a `where` (each element of an `_in` list) counts once per
//!   parent row, so a huge filter costs what it weighs;
//! - an introspection root field counts its fields; columns count nothing;
//! - an action's handler call, and a remote schema's root field, counts [`ACTION_CALL`].

use grafton_ir::permissions::RoleRules;
use grafton_ir::{Aggregate, AggregateField, Args, BoolExp, Field, Query, Root, Rows, Value};
use serde_json::{Map, Value as Json};

/// Rows assumed for a list that nothing limits (no `limit`, no role limit, no
/// `--default-limit`).
pub const UNBOUNDED_ROWS: u64 = 10_000;

/// What one action's handler call counts: as much as a hundred rows.
pub const ACTION_CALL: u64 = 100;

/// The cost of one operation, as a function of its variables.
#[derive(Debug, Clone, Default)]
pub struct Cost {
    /// Cost that no variable changes (introspection fields).
    fixed: u64,
    roots: Vec<Node>,
}

#[derive(Debug, Clone)]
struct Node {
    rows: PerParent,
    offset: Option<Value>,
    filter: Filter,
    children: Vec<Node>,
}

#[derive(Debug, Clone)]
enum PerParent {
    One,
    /// A list: its `limit` and the role's row limit on its table.
    List {
        limit: Option<Value>,
        cap: Option<u64>,
    },
}

/// Predicates in a `where`: a fixed count plus list variables counted by length.
#[derive(Debug, Clone, Default)]
struct Filter {
    fixed: u64,
    lists: Vec<String>,
}

impl Cost {
    /// The cost of `query` for a role with `rules` (`None`: admin);
    /// `introspection_nodes` is what its introspection root fields count.
    pub fn of(query: &Query, rules: Option<&RoleRules>, introspection_nodes: u64) -> Self {
        let b = Builder { rules };
        let roots = query
            .root
            .iter()
            .filter_map(|(_, root)| match root {
                Root::Rows(rows) => Some(b.rows(rows)),
                Root::Aggregate(agg) => Some(b.aggregate(agg)),
                Root::Connection(c) => Some(b.connection(c)),
                Root::Typename(_) | Root::Introspection | Root::Action(_) | Root::Remote(_) => None,
            })
            .collect();
        // A remote relationship is one call per request, whatever its rows.
        let calls = (query.root.iter())
            .filter(|(_, r)| matches!(r, Root::Action(_) | Root::Remote(_)))
            .count()
            + grafton_ir::remote_joins(query).len();
        let calls = calls as u64;
        Self {
            fixed: introspection_nodes.saturating_add(calls.saturating_mul(ACTION_CALL)),
            roots,
        }
    }

    /// The cost with `calls` more calls (a remote's types' relationships to
    /// other remotes, see [`remote_type_calls`]).
    pub fn with_calls(mut self, calls: usize) -> Self {
        let calls = (calls as u64).saturating_mul(ACTION_CALL);
        self.fixed = self.fixed.saturating_add(calls);
        self
    }

    /// The estimate for these variable values.
    pub fn eval(&self, variables: &Map<String, Json>) -> u64 {
        self.roots
            .iter()
            .map(|n| n.eval(1, variables))
            .fold(self.fixed, u64::saturating_add)
    }
}

impl Node {
    fn eval(&self, parents: u64, vars: &Map<String, Json>) -> u64 {
        let (rows, read) = match &self.rows {
            PerParent::One => (parents, parents),
            PerParent::List { limit, cap } => {
                let explicit = limit.as_ref().and_then(|v| number(v, vars));
                let per_parent = match (explicit, cap) {
                    (Some(l), Some(c)) => l.min(*c),
                    (Some(l), None) => l,
                    (None, Some(c)) => *c,
                    (None, None) => UNBOUNDED_ROWS,
                };
                let skipped = self.offset.as_ref().and_then(|v| number(v, vars));
                let rows = parents.saturating_mul(per_parent);
                let read = parents.saturating_mul(per_parent.saturating_add(skipped.unwrap_or(0)));
                (rows, read)
            }
        };
        let filter = parents.saturating_mul(self.filter.eval(vars));
        self.children
            .iter()
            .map(|c| c.eval(rows, vars))
            .fold(read.saturating_add(filter), u64::saturating_add)
    }
}

impl Filter {
    fn eval(&self, vars: &Map<String, Json>) -> u64 {
        self.lists
            .iter()
            .map(|name| match vars.get(name) {
                Some(Json::Array(items)) => items.len() as u64,
                _ => 1,
            })
            .fold(self.fixed, u64::saturating_add)
    }

    fn add(&mut self, exp: &BoolExp) {
        match exp {
            BoolExp::And(items) | BoolExp::Or(items) => {
                self.fixed = self.fixed.saturating_add(1);
                items.iter().for_each(|e| self.add(e));
            }
            BoolExp::Not(e)
            | BoolExp::Cast { inner: e, .. }
            | BoolExp::Exists(_, e)
            | BoolExp::ExistsIn(_, e)
            | BoolExp::ExistsComputed(_, e) => {
                self.fixed = self.fixed.saturating_add(1);
                self.add(e);
            }
            BoolExp::Compare { value, .. }
            | BoolExp::CompareText { value, .. }
            | BoolExp::CompareComputed { value, .. } => self.value(value),
            BoolExp::Aggregate(p) => {
                // A subquery per row, like a relationship's EXISTS; its
                // comparisons as a column's (a list counts its items).
                self.fixed = self.fixed.saturating_add(1);
                p.predicate.iter().for_each(|(_, v)| self.value(v));
                if let Some(f) = &p.filter {
                    self.add(f);
                }
            }
            BoolExp::CompareColumns { .. } | BoolExp::DWithin(_) | BoolExp::Nband(_) => {
                self.fixed = self.fixed.saturating_add(1)
            }
        }
    }

    /// A comparison's operand: one, or a list's items (a variable's counted
    /// when its value is known).
    fn value(&mut self, value: &Value) {
        match value {
            Value::Literal(Json::Array(items)) => {
                self.fixed = self.fixed.saturating_add(items.len().max(1) as u64)
            }
            Value::Variable(name) => self.lists.push(name.clone()),
            Value::Literal(_) => self.fixed = self.fixed.saturating_add(1),
        }
    }
}

/// A non-negative integer from a literal or a variable (`None` when absent or null).
fn number(value: &Value, vars: &Map<String, Json>) -> Option<u64> {
    let v = match value {
        Value::Literal(v) => Some(v),
        Value::Variable(name) => vars.get(name),
    }?;
    v.as_u64()
        .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
}

struct Builder<'a> {
    rules: Option<&'a RoleRules>,
}

impl Builder<'_> {
    fn cap(&self, table: grafton_schema::TableId) -> Option<u64> {
        self.rules
            .and_then(|r| r.tables.get(table))
            .and_then(|t| t.limit)
    }

    fn filter(args: &Args) -> Filter {
        let mut f = Filter::default();
        if let Some(exp) = &args.filter {
            f.add(exp);
        }
        f
    }

    fn rows(&self, rows: &Rows) -> Node {
        Node {
            rows: if rows.single {
                PerParent::One
            } else {
                PerParent::List {
                    limit: rows.args.limit.clone(),
                    cap: self.cap(rows.table),
                }
            },
            offset: rows.args.offset.clone(),
            filter: Self::filter(&rows.args),
            children: self.fields(&rows.fields),
        }
    }

    fn aggregate(&self, agg: &Aggregate) -> Node {
        let nodes = agg.fields.iter().flat_map(|(_, f)| match f {
            AggregateField::Nodes(fields) => self.fields(fields),
            _ => Vec::new(),
        });
        Node {
            rows: PerParent::List {
                limit: agg.args.limit.clone(),
                cap: self.cap(agg.table),
            },
            offset: agg.args.offset.clone(),
            filter: Self::filter(&agg.args),
            children: nodes.collect(),
        }
    }

    /// A page: `first` (or `last`) rows, or the role's limit, or unbounded.
    fn connection(&self, c: &grafton_ir::Connection) -> Node {
        Node {
            rows: PerParent::List {
                limit: c.first.clone().or_else(|| c.last.clone()),
                cap: self.cap(c.table),
            },
            offset: None,
            filter: Self::filter(&c.args),
            children: c.nodes().flat_map(|f| self.fields(f)).collect(),
        }
    }

    fn fields(&self, fields: &[(String, Field)]) -> Vec<Node> {
        fields
            .iter()
            .filter_map(|(_, f)| match f {
                Field::Object(_, rows) | Field::Array(_, rows) | Field::ComputedRows(rows) => {
                    Some(self.rows(rows))
                }
                Field::Aggregate(_, agg) | Field::ComputedAggregate(agg) => {
                    Some(self.aggregate(agg))
                }
                Field::Connection(_, c) => Some(self.connection(c)),
                Field::NodeId
                | Field::Column(_)
                | Field::JsonPath(..)
                | Field::Typename(_)
                | Field::Remote(_)
                | Field::Computed(..) => None,
            })
            .collect()
    }
}

/// The calls a request's remote answers make to other remotes: one per
/// relationship field of a remote's type in the document (under a remote's
/// root field or a table's remote relationship), however deep.
pub fn remote_type_calls(
    query: &Query,
    rels: &[grafton_schema::RemoteTypeRel],
    document: &apollo_compiler::ExecutableDocument,
) -> usize {
    use apollo_compiler::executable::{Selection, SelectionSet};
    fn walk(
        set: &SelectionSet,
        rels: &[grafton_schema::RemoteTypeRel],
        document: &apollo_compiler::ExecutableDocument,
        depth: usize,
    ) -> usize {
        // A validated document has no fragment cycle; the bound is a guard.
        if depth > 256 {
            return 0;
        }
        let mut n = 0;
        for s in &set.selections {
            n += match s {
                Selection::Field(f) => {
                    let rel = (rels.iter())
                        .any(|r| r.object == set.ty.as_str() && r.field == f.name.as_str());
                    usize::from(rel) + walk(&f.selection_set, rels, document, depth + 1)
                }
                Selection::InlineFragment(i) => walk(&i.selection_set, rels, document, depth + 1),
                Selection::FragmentSpread(spread) => {
                    (document.fragments.get(&spread.fragment_name))
                        .map_or(0, |f| walk(&f.selection_set, rels, document, depth + 1))
                }
            };
        }
        n
    }
    if rels.is_empty() {
        return 0;
    }
    let roots = (query.root.iter()).flat_map(|(_, root)| match root {
        Root::Remote(r) => r.fields.clone(),
        _ => Vec::new(),
    });
    let joins = grafton_ir::remote_joins(query)
        .into_iter()
        .flat_map(|s| s.join.fields);
    (roots.chain(joins))
        .map(|f| walk(&f.selection_set, rels, document, 0))
        .sum()
}
