//! The console: GraphiQL (with the explorer and the headers editor) at `/console`,
//! embedded in the binary, so it works offline and needs no CDN. Built from pinned
//! npm packages by `console/build.sh`; its output (`console/dist/`) is committed,
//! so building Grafton needs neither npm nor the network. No credential is ever
//! put in the page: the admin secret is typed into the headers editor.

use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;

const INDEX: &[u8] = include_bytes!("../../../console/dist/index.html");
/// Gzipped by the build (`gzip -9n`), as served to every browser.
const SCRIPT: &[u8] = include_bytes!("../../../console/dist/graphiql.js.gz");
const STYLE: &[u8] = include_bytes!("../../../console/dist/graphiql.css.gz");

/// Scripts and styles from this server only; requests to this origin (HTTP and
/// WebSocket). The fonts and icons GraphiQL ships are inlined as `data:` URLs.
const POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
     img-src 'self' data:; font-src 'self' data:; connect-src 'self' ws: wss:; \
     frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/// Adds the console's routes, and `/` redirecting to it.
pub(crate) fn routes<S: Clone + Send + Sync + 'static>(router: Router<S>) -> Router<S> {
    router
        .route("/", get(|| async { Redirect::to("/console") }))
        .route("/console", get(page))
        .route("/console/", get(page))
        .route("/console/graphiql.js", get(script))
        .route("/console/graphiql.css", get(style))
}

/// Without `--enable-console`: the console's paths answer 404 with a body that says
/// how to turn it on, instead of an empty page.
pub(crate) fn disabled<S: Clone + Send + Sync + 'static>(router: Router<S>) -> Router<S> {
    let off = || async {
        (
            StatusCode::NOT_FOUND,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            "the console is off: start grafton with --enable-console (GRAFTON_ENABLE_CONSOLE=true) to serve it here\n",
        )
    };
    router
        .route("/console", get(off))
        .route("/console/", get(off))
}

async fn page() -> Response {
    let mut response = (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
            (header::CONTENT_SECURITY_POLICY, POLICY),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        INDEX,
    )
        .into_response();
    response.headers_mut().insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

async fn script(headers: HeaderMap) -> Response {
    asset(&headers, SCRIPT, "text/javascript; charset=utf-8")
}

async fn style(headers: HeaderMap) -> Response {
    asset(&headers, STYLE, "text/css; charset=utf-8")
}

/// This build's tag for an asset: the assets change only with the binary.
fn etag(gzipped: &[u8]) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(gzipped);
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("\"{hex}\"")
}

/// A gzipped asset: as stored to clients that accept gzip (every browser), else
/// decompressed; `304` when the client has this build's copy.
fn asset(headers: &HeaderMap, gzipped: &'static [u8], content_type: &'static str) -> Response {
    let tag = etag(gzipped);
    let fresh = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == tag));
    let mut response = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else if accepts_gzip(headers) {
        let mut r = ([(header::CONTENT_TYPE, content_type)], gzipped).into_response();
        r.headers_mut()
            .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        r
    } else {
        match gunzip(gzipped) {
            Ok(plain) => ([(header::CONTENT_TYPE, content_type)], plain).into_response(),
            Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
        }
    };
    let h = response.headers_mut();
    h.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    if let Ok(tag) = HeaderValue::from_str(&tag) {
        h.insert(header::ETAG, tag);
    }
    response
}

fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|coding| {
            let mut parts = coding.split(';');
            let name = parts.next().unwrap_or("").trim();
            let refused = parts.any(|p| matches!(p.trim(), "q=0" | "q=0.0" | "q=0.00" | "q=0.000"));
            (name.eq_ignore_ascii_case("gzip") || name == "*") && !refused
        })
}

fn gunzip(gzipped: &[u8]) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut plain = Vec::new();
    flate2::read::GzDecoder::new(gzipped).read_to_end(&mut plain)?;
    Ok(plain)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_assets_are_gzip_of_a_page_that_loads_them() {
        let page = std::str::from_utf8(INDEX).expect("utf-8");
        assert!(page.contains("/console/graphiql.js") && page.contains("/console/graphiql.css"));
        let script = gunzip(SCRIPT).expect("gzip");
        assert!(script.len() > 100_000, "a GraphiQL bundle");
        assert!(gunzip(STYLE).is_ok());
    }

    #[test]
    fn gzip_is_negotiated() {
        let mut h = HeaderMap::new();
        assert!(!accepts_gzip(&h));
        h.insert(
            header::ACCEPT_ENCODING,
            HeaderValue::from_static("gzip, deflate, br"),
        );
        assert!(accepts_gzip(&h));
        h.insert(
            header::ACCEPT_ENCODING,
            HeaderValue::from_static("br, gzip;q=0"),
        );
        assert!(!accepts_gzip(&h));
    }
}
