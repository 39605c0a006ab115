//! Limits on one request, resolved per role from `api_limits` at start-up, and the
//! checks the planner runs on every request before any SQL is sent.

pub mod cost;
pub mod introspection;
pub mod rate;
pub mod shape;

use grafton_schema::api_limits::{ApiLimits, RateLimit};
use std::time::Duration;

/// The server's own safety rails: they hold for every role, admin included, and
/// `api_limits` may only change them per role.
#[derive(Debug, Clone)]
pub struct ServerLimits {
    /// Largest response, in bytes (`--max-response-bytes`).
    pub max_response_bytes: u64,
    /// Longest a request's database work may take (`--request-timeout`).
    pub request_timeout: Duration,
    /// Rows a list without `limit` returns (`--default-limit`; off by default, as
    /// Hasura has none).
    pub default_limit: Option<u64>,
    /// Longest a request waits for its turn: at an admission gate (refused at once
    /// when it could not get in by then) and for a pooled connection
    /// (`--queue-timeout`).
    pub queue_timeout: Duration,
}

impl Default for ServerLimits {
    fn default() -> Self {
        Self {
            max_response_bytes: 64 * 1024 * 1024,
            request_timeout: Duration::from_secs(60),
            default_limit: None,
            queue_timeout: crate::admission::QUEUE_WAIT,
        }
    }
}

/// The limits that apply to one role (or to admin).
#[derive(Debug, Clone, PartialEq)]
pub struct RoleLimits {
    /// Deepest nesting.
    pub depth: Option<u64>,
    /// Most fields.
    pub nodes: Option<u64>,
    /// Most root fields.
    pub root_fields: Option<u64>,
    /// Largest cost estimate.
    pub cost: Option<u64>,
    /// Most operations in a batch.
    pub batch: Option<u64>,
    /// Longest the database may work on one request.
    pub time: Duration,
    /// Largest response.
    pub max_response_bytes: u64,
    /// Requests of this role running at once.
    pub max_concurrent: Option<u64>,
    /// Requests per minute per client.
    pub rate: Option<RateLimit>,
    /// Live subscriptions at once.
    pub subscriptions: Option<u64>,
}

/// No `api_limits`, and the server's default rails: what an engine built without
/// [`crate::Engine::with_limits`] enforces.
impl Default for RoleLimits {
    fn default() -> Self {
        Self::resolve(&ApiLimits::default(), &ServerLimits::default(), None)
    }
}

impl RoleLimits {
    /// The limits of `role` (`None`: admin, exempt from `api_limits` unless named).
    pub fn resolve(limits: &ApiLimits, server: &ServerLimits, role: Option<&str>) -> Self {
        let on = !limits.disabled;
        let pick = |l: &Option<grafton_schema::api_limits::Limit<u64>>| {
            l.as_ref().filter(|_| on).and_then(|l| l.for_role(role))
        };
        let time = limits
            .time_limit
            .as_ref()
            .filter(|_| on)
            .and_then(|l| l.for_role(role))
            .and_then(|s| Duration::try_from_secs_f64(s).ok())
            .filter(|d| !d.is_zero())
            .map_or(server.request_timeout, |t| t.min(server.request_timeout));
        Self {
            depth: pick(&limits.depth_limit),
            nodes: pick(&limits.node_limit),
            root_fields: pick(&limits.root_field_limit),
            cost: pick(&limits.cost_limit),
            batch: pick(&limits.batch_limit),
            time,
            max_response_bytes: pick(&limits.max_response_bytes)
                .unwrap_or(server.max_response_bytes),
            max_concurrent: pick(&limits.max_concurrent),
            subscriptions: pick(&limits.subscription_limit),
            rate: limits
                .rate_limit
                .as_ref()
                .filter(|_| on)
                .and_then(|l| l.for_role(role)),
        }
    }

    /// Checks an operation's shape against the depth, node and root-field limits.
    pub fn check_shape(&self, shape: &shape::Shape) -> Result<(), LimitExceeded> {
        check(LimitKind::Depth, self.depth, shape.depth)?;
        check(LimitKind::Nodes, self.nodes, shape.nodes)?;
        check(LimitKind::RootFields, self.root_fields, shape.root_fields)
    }
}

/// Refuses limits that cannot be enforced as written, before anything starts: a
/// limit that silently did nothing would be worse than none.
pub fn validate(limits: &ApiLimits) -> Result<(), String> {
    if let Some(time) = &limits.time_limit {
        let values = time.global.iter().chain(time.per_role.values());
        if let Some(bad) = values
            .into_iter()
            .find(|s| Duration::try_from_secs_f64(**s).map_or(true, |d| d.is_zero()))
        {
            return Err(format!(
                "time_limit {bad} is not a positive number of seconds"
            ));
        }
    }
    let zero = |name: &str, l: &Option<grafton_schema::api_limits::Limit<u64>>| match l {
        Some(l) if l.global == Some(0) || l.per_role.values().any(|v| *v == 0) => {
            Err(format!("{name} must be at least 1"))
        }
        _ => Ok(()),
    };
    zero("batch_limit", &limits.batch_limit)?;
    zero("max_concurrent", &limits.max_concurrent)?;
    zero("subscription_limit", &limits.subscription_limit)?;
    if let Some(rate) = &limits.rate_limit {
        let values = rate.global.iter().chain(rate.per_role.values());
        if values.into_iter().any(|r| r.max_reqs_per_min == 0) {
            return Err("rate_limit max_reqs_per_min must be at least 1".into());
        }
    }
    Ok(())
}

/// Fails when `actual` is over `limit`.
pub fn check(kind: LimitKind, limit: Option<u64>, actual: u64) -> Result<(), LimitExceeded> {
    match limit {
        Some(limit) if actual > limit => Err(LimitExceeded {
            kind,
            limit,
            actual,
        }),
        _ => Ok(()),
    }
}

/// Which limit a request went over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitKind {
    /// `depth_limit`.
    Depth,
    /// `node_limit`.
    Nodes,
    /// `root_field_limit`.
    RootFields,
    /// `cost_limit`.
    Cost,
    /// `batch_limit`.
    Batch,
    /// `max_response_bytes`.
    ResponseBytes,
    /// `max_response_bytes`, estimated for introspection before it runs.
    Introspection,
    /// `subscription_limit`.
    Subscriptions,
    /// `--live-query-max-bytes`: answers queued for subscribers, process-wide.
    LiveMemory,
}

/// A request over one of its role's limits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.message())]
pub struct LimitExceeded {
    /// Which limit.
    pub kind: LimitKind,
    /// The limit.
    pub limit: u64,
    /// What the request measured.
    pub actual: u64,
}

impl LimitExceeded {
    fn message(&self) -> String {
        let (limit, actual) = (self.limit, self.actual);
        let (name, measured) = match self.kind {
            LimitKind::Depth => ("depth", format!("the operation is nested {actual} deep")),
            LimitKind::Nodes => ("node", format!("the operation has {actual} fields")),
            LimitKind::RootFields => (
                "root field",
                format!("the operation has {actual} root fields"),
            ),
            LimitKind::Cost => (
                "cost",
                format!("the operation's estimated cost is {actual}"),
            ),
            LimitKind::Batch => ("batch", format!("the batch has {actual} operations")),
            LimitKind::ResponseBytes => (
                "response size",
                format!("the response reached {actual} bytes"),
            ),
            LimitKind::Introspection => (
                "response size",
                format!("the introspection fields could answer {actual} bytes"),
            ),
            LimitKind::Subscriptions => (
                "subscription",
                format!("this session of the role would have {actual} live subscriptions"),
            ),
            LimitKind::LiveMemory => (
                "live-query memory",
                format!(
                    "answers queued for subscribers would take {actual} bytes, so this \
                     subscription ends (subscribe again, and read its answers)"
                ),
            ),
        };
        format!("{name} limit exceeded: {measured}; the limit is {limit}")
    }
}

/// `--default-limit`: every list without a `limit` (root lists and array
/// relationships, not aggregates, whose counts it would falsify) gets `rows`.
pub fn default_limit(query: &mut grafton_ir::Query, rows: u64) {
    use grafton_ir::{Field, Root, Rows};
    fn visit(r: &mut Rows, rows: u64) {
        if !r.single && r.args.limit.is_none() {
            r.args.limit = Some(grafton_ir::Value::Literal(rows.into()));
        }
        fields(&mut r.fields, rows);
    }
    fn fields(fs: &mut [(String, Field)], rows: u64) {
        for (_, f) in fs {
            match f {
                Field::Object(_, r) | Field::Array(_, r) | Field::ComputedRows(r) => visit(r, rows),
                Field::Aggregate(_, agg) | Field::ComputedAggregate(agg) => {
                    for (_, af) in &mut agg.fields {
                        if let grafton_ir::AggregateField::Nodes(nodes) = af {
                            fields(nodes, rows);
                        }
                    }
                }
                Field::Connection(_, c) => connection(c, rows),
                Field::NodeId
                | Field::Column(_)
                | Field::JsonPath(..)
                | Field::Typename(_)
                | Field::Remote(_)
                | Field::Computed(..) => {}
            }
        }
    }
    // A page with neither `first` nor `last` is the `rows` nearest its cursor
    // (the last ones before a `before`).
    fn connection(c: &mut grafton_ir::Connection, rows: u64) {
        if c.first.is_none() && c.last.is_none() {
            let size = Some(grafton_ir::Value::Literal(rows.into()));
            match c.split.as_ref().is_some_and(|s| s.before) {
                true => c.last = size,
                false => c.first = size,
            }
        }
        c.nodes_mut().for_each(|f| fields(f, rows));
    }
    for (_, root) in &mut query.root {
        match root {
            Root::Rows(r) => visit(r, rows),
            Root::Aggregate(agg) => {
                for (_, af) in &mut agg.fields {
                    if let grafton_ir::AggregateField::Nodes(nodes) = af {
                        fields(nodes, rows);
                    }
                }
            }
            Root::Connection(c) => connection(c, rows),
            Root::Typename(_) | Root::Introspection | Root::Action(_) | Root::Remote(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_api_limits_the_server_rails_still_hold() {
        let l = RoleLimits::default();
        assert_eq!(l.time, Duration::from_secs(60));
        assert_eq!(l.max_response_bytes, 64 * 1024 * 1024);
        assert_eq!(
            (l.depth, l.nodes, l.cost, l.max_concurrent),
            (None, None, None, None)
        );
    }

    #[test]
    fn time_limit_is_capped_by_the_request_timeout_and_disabled_turns_limits_off() {
        let api: ApiLimits = serde_norway::from_str(
            "time_limit: {global: 600, per_role: {fast: 2}}\ndepth_limit: {global: 3}",
        )
        .expect("limits");
        let server = ServerLimits::default();
        assert_eq!(
            RoleLimits::resolve(&api, &server, Some("x")).time,
            Duration::from_secs(60)
        );
        assert_eq!(
            RoleLimits::resolve(&api, &server, Some("fast")).time,
            Duration::from_secs(2)
        );
        let off = ApiLimits {
            disabled: true,
            ..api
        };
        assert_eq!(RoleLimits::resolve(&off, &server, Some("fast")).depth, None);
        assert!(validate(&ApiLimits {
            batch_limit: Some(grafton_schema::api_limits::Limit {
                global: Some(0),
                per_role: Default::default()
            }),
            ..ApiLimits::default()
        })
        .is_err());
    }
}
