//! Where a query's remote relationships are in its answer: the response keys
//! from the root to each remote relationship's field (a list on the way is
//! every element's), so the engine can find each row's values and put the
//! remote's answer there.

use crate::types::{
    AggregateField, Connection, ConnectionField, EdgeField, Field, Mutation, MutationRoot, Output,
    Query, RemoteJoin, ResponseField, Root, Write,
};

/// One remote relationship field of a selection, and the way to it.
#[derive(Debug, Clone, PartialEq)]
pub struct JoinSite {
    /// Response keys from the root field's to the relationship's own.
    pub path: Vec<String>,
    /// The relationship and its selection.
    pub join: RemoteJoin,
}

/// Every remote relationship field of `query`, in document order.
pub fn remote_joins(query: &Query) -> Vec<JoinSite> {
    let mut out = Vec::new();
    for (key, root) in &query.root {
        let mut path = vec![key.clone()];
        match root {
            Root::Rows(rows) => fields(&rows.fields, &mut path, &mut out),
            Root::Aggregate(agg) => aggregate(&agg.fields, &mut path, &mut out),
            Root::Connection(c) => connection(c, &mut path, &mut out),
            _ => {}
        }
    }
    out
}

/// A connection's: under `edges` (each one's) and `node`.
fn connection(c: &Connection, path: &mut Vec<String>, out: &mut Vec<JoinSite>) {
    for (key, field) in &c.fields {
        let ConnectionField::Edges(edges) = field else {
            continue;
        };
        path.push(key.clone());
        for (key, field) in edges {
            if let EdgeField::Node(nodes) = field {
                path.push(key.clone());
                fields(nodes, path, out);
                path.pop();
            }
        }
        path.pop();
    }
}

/// Every remote relationship field of `mutation`'s answers, in document
/// order (`update_t_many`'s list is every element's).
pub fn mutation_joins(mutation: &Mutation) -> Vec<JoinSite> {
    let mut out = Vec::new();
    for (key, root) in &mutation.root {
        let mut path = vec![key.clone()];
        let writes: &[Write] = match root {
            MutationRoot::Write(w) => std::slice::from_ref(w),
            MutationRoot::Many(ws) => ws,
            MutationRoot::Call(rows) => {
                fields(&rows.fields, &mut path, &mut out);
                continue;
            }
            MutationRoot::Typename(_) => continue,
        };
        // Every write of a `_many` answers the same selection: the first's.
        match writes.first().map(|w| &w.output) {
            Some(Output::Single(list)) => fields(list, &mut path, &mut out),
            Some(Output::Response(list)) => {
                for (k, f) in list {
                    if let ResponseField::Returning(list) = f {
                        path.push(k.clone());
                        fields(list, &mut path, &mut out);
                        path.pop();
                    }
                }
            }
            None => {}
        }
    }
    out
}

fn aggregate(list: &[(String, AggregateField)], path: &mut Vec<String>, out: &mut Vec<JoinSite>) {
    for (key, field) in list {
        if let AggregateField::Nodes(nodes) = field {
            path.push(key.clone());
            fields(nodes, path, out);
            path.pop();
        }
    }
}

fn fields(list: &[(String, Field)], path: &mut Vec<String>, out: &mut Vec<JoinSite>) {
    for (key, field) in list {
        path.push(key.clone());
        match field {
            Field::Remote(join) => out.push(JoinSite {
                path: path.clone(),
                join: join.clone(),
            }),
            Field::Object(_, rows) | Field::Array(_, rows) | Field::ComputedRows(rows) => {
                fields(&rows.fields, path, out)
            }
            Field::Aggregate(_, agg) | Field::ComputedAggregate(agg) => {
                aggregate(&agg.fields, path, out)
            }
            Field::Connection(_, c) => connection(c, path, out),
            _ => {}
        }
        path.pop();
    }
}
