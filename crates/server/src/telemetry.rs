//! The process's telemetry: log lines (text or JSON) on stderr, filtered by
//! `GRAFTON_LOG` (`tracing`'s syntax), and, with an OTLP endpoint, traces exported
//! to an OpenTelemetry collector. Spans of target [`TRACE_TARGET`] are the traces'
//! (request, parse and validate, plan, database, response); only the OpenTelemetry
//! layer listens to them.

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::trace::{Sampler, SdkTracerProvider};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// The target of trace spans.
pub const TRACE_TARGET: &str = "grafton::trace";

/// Whether traces are exported (so a request's `traceparent` is worth reading).
static TRACING: AtomicBool = AtomicBool::new(false);

/// The share of requests without a caller's decision that are traced, as a
/// threshold on 53 random bits.
static THRESHOLD: AtomicU64 = AtomicU64::new(0);

/// Whether this process exports traces.
pub fn tracing_on() -> bool {
    TRACING.load(Ordering::Relaxed)
}

/// Whether to trace this request: never with tracing off; as the caller's
/// `traceparent` says when it has one; else with the sampling ratio's chance.
/// Decided before any span exists, so the requests left out cost nothing.
pub(crate) fn sampled(headers: &axum::http::HeaderMap) -> bool {
    if !tracing_on() {
        return false;
    }
    // version-traceid-spanid-flags: bit 0 of the flags is "sampled".
    let parent = headers.get("traceparent").and_then(|v| v.to_str().ok());
    if let Some(flags) = parent.and_then(|p| p.trim().rsplit('-').next()) {
        if let Ok(flags) = u8::from_str_radix(flags, 16) {
            return flags & 1 == 1;
        }
    }
    random_53() < THRESHOLD.load(Ordering::Relaxed)
}

/// 53 random bits, cheaply.
fn random_53() -> u64 {
    grafton_engine::events::random_u64() >> 11
}

/// How the process logs.
#[derive(Debug, Clone, Default)]
pub struct LogOptions {
    /// One JSON object per line instead of text.
    pub json: bool,
    /// One line per request (target `grafton::request`, level info).
    pub requests: bool,
}

/// Where and how much to trace.
#[derive(Debug, Clone)]
pub struct TraceOptions {
    /// The collector's OTLP/HTTP address (`http://host:4318`; `/v1/traces` is
    /// added when no path is given). `None`: no traces.
    pub endpoint: Option<String>,
    /// The share of traces kept (0 to 1) when the caller's `traceparent` does not
    /// decide: a sampled parent is always kept, an unsampled one never.
    pub ratio: f64,
    /// `service.name` of the spans.
    pub service: String,
}

impl Default for TraceOptions {
    fn default() -> Self {
        Self {
            endpoint: None,
            ratio: 1.0,
            service: "grafton".into(),
        }
    }
}

/// Keeps the exporter alive; dropping it sends what is buffered.
pub struct Telemetry {
    provider: Option<SdkTracerProvider>,
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        if let Some(provider) = self.provider.take() {
            if let Err(e) = provider.shutdown() {
                eprintln!("traces: the last spans could not be sent: {e}");
            }
        }
    }
}

/// The filter: `GRAFTON_LOG`, else warnings plus the server's own news; request
/// lines added when asked for. Trace spans never reach the log.
fn filter(options: &LogOptions) -> EnvFilter {
    let filter = EnvFilter::try_from_env("GRAFTON_LOG")
        .unwrap_or_else(|_| EnvFilter::new("warn,grafton_server=info"));
    let mut directives = vec![format!("{TRACE_TARGET}=off")];
    if options.requests {
        directives.push("grafton::request=info".into());
    }
    directives
        .iter()
        .filter_map(|d| d.parse().ok())
        .fold(filter, EnvFilter::add_directive)
}

/// The OTLP/HTTP traces URL for an endpoint.
fn traces_url(endpoint: &str) -> String {
    let trimmed = endpoint.trim_end_matches('/');
    let has_path = trimmed
        .split_once("://")
        .is_some_and(|(_, rest)| rest.contains('/'));
    match has_path {
        true => trimmed.to_owned(),
        false => format!("{trimmed}/v1/traces"),
    }
}

/// Installs the process's logger and, with an endpoint, its trace exporter (once,
/// at start-up).
pub fn init(logs: &LogOptions, traces: &TraceOptions) -> Result<Telemetry, String> {
    use std::io::IsTerminal;
    // Colours only for a terminal: a log file or a collector gets plain text.
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal());
    let fmt = match logs.json {
        true => fmt.json().flatten_event(true).boxed(),
        false => fmt.boxed(),
    };
    let registry = tracing_subscriber::registry().with(fmt.with_filter(filter(logs)));
    let Some(endpoint) = &traces.endpoint else {
        registry.init();
        return Ok(Telemetry { provider: None });
    };
    if !(0.0..=1.0).contains(&traces.ratio) {
        return Err(format!(
            "--otlp-sampling-ratio {} is not between 0 and 1",
            traces.ratio
        ));
    }
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_endpoint(traces_url(endpoint))
        .build()
        .map_err(|e| format!("--otlp-endpoint {endpoint}: {e}"))?;
    let resource = opentelemetry_sdk::Resource::builder()
        .with_service_name(traces.service.clone())
        .build();
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        // The ratio is applied per request before any span exists (`sampled`); what
        // reaches the SDK is to be kept.
        .with_sampler(Sampler::ParentBased(Box::new(Sampler::AlwaysOn)))
        .with_resource(resource)
        .build();
    let tracer = provider.tracer("grafton");
    let spans = Targets::new().with_target(TRACE_TARGET, tracing::Level::INFO);
    registry
        .with(
            tracing_opentelemetry::layer()
                .with_tracer(tracer)
                .with_filter(spans),
        )
        .init();
    THRESHOLD.store(
        (traces.ratio * (1u64 << 53) as f64) as u64,
        Ordering::Relaxed,
    );
    TRACING.store(true, Ordering::Relaxed);
    Ok(Telemetry {
        provider: Some(provider),
    })
}

/// Reads W3C `traceparent`/`tracestate` from request headers.
struct Headers<'a>(&'a axum::http::HeaderMap);

impl opentelemetry::propagation::Extractor for Headers<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|k| k.as_str()).collect()
    }
}

/// Makes `span` a child of the caller's trace, when the request names one.
pub(crate) fn continue_trace(span: &tracing::Span, headers: &axum::http::HeaderMap) {
    use opentelemetry::propagation::TextMapPropagator;
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    if !headers.contains_key("traceparent") {
        return;
    }
    let propagator = opentelemetry_sdk::propagation::TraceContextPropagator::new();
    let parent = propagator.extract(&Headers(headers));
    let _ = span.set_parent(parent);
}

/// The request's trace as a W3C `traceparent`: this request's own span when
/// traces are exported (so an event's `trace_context` continues it), else the
/// caller's `traceparent`, if any.
pub(crate) fn traceparent(headers: &axum::http::HeaderMap) -> Option<String> {
    use opentelemetry::trace::TraceContextExt;
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    if tracing_on() {
        let context = tracing::Span::current().context();
        let span = context.span();
        let c = span.span_context();
        if c.is_valid() {
            let flags = c.trace_flags().to_u8();
            return Some(format!("00-{}-{}-{flags:02x}", c.trace_id(), c.span_id()));
        }
    }
    let given = headers.get("traceparent").and_then(|v| v.to_str().ok());
    given.map(str::to_owned)
}

/// Names a started span (`query Items`, as OpenTelemetry's GraphQL conventions
/// do): its operation is known only once its document validated.
pub(crate) fn rename(span: &tracing::Span, name: String) {
    use opentelemetry::trace::TraceContextExt;
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    if !name.is_empty() {
        span.context().span().update_name(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_get_the_traces_path() {
        assert_eq!(traces_url("http://c:4318"), "http://c:4318/v1/traces");
        assert_eq!(traces_url("http://c:4318/"), "http://c:4318/v1/traces");
        assert_eq!(traces_url("http://c:4318/custom"), "http://c:4318/custom");
    }
}
