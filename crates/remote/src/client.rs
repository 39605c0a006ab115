//! One bounded HTTP client for calls made inside requests: at most `pool_size`
//! calls at once (a call past them waits for a place, within its own timeout), no
//! redirect followed (a URL comes from metadata only), and at most
//! `max_response_bytes` of an answer read.

use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

/// The client's bounds.
#[derive(Debug, Clone, Copy)]
pub struct ClientOptions {
    /// Calls in flight at once.
    pub pool_size: usize,
    /// The most bytes of an answer read; a longer one is an error.
    pub max_response_bytes: usize,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            pool_size: 100,
            max_response_bytes: 10 * 1024 * 1024,
        }
    }
}

/// The shared client.
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    permits: Arc<Semaphore>,
    options: ClientOptions,
}

/// An answer: its status, headers' content type and body.
#[derive(Debug)]
pub struct Answer {
    /// The HTTP status.
    pub status: u16,
    /// The body, whole (within the cap).
    pub body: Vec<u8>,
    /// Its `Set-Cookie` headers' values.
    pub set_cookies: Vec<String>,
}

/// Why a call got no answer.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// No answer within the timeout (waiting for a place included).
    #[error("timed out after {0} s")]
    Timeout(f64),
    /// The call failed (connection, redirect, protocol), said without its URL.
    #[error("{0}")]
    Failed(String),
    /// The answer is longer than the cap.
    #[error("the answer is larger than {0} bytes")]
    TooLarge(usize),
}

impl Client {
    /// A client with `options`.
    pub fn new(options: ClientOptions) -> Result<Self, String> {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(10))
            .pool_max_idle_per_host(options.pool_size)
            .build()
            .map_err(|e| format!("the outgoing HTTP client: {e}"))?;
        Ok(Self {
            http,
            permits: Arc::new(Semaphore::new(options.pool_size.max(1))),
            options,
        })
    }

    /// POSTs `body` as JSON to `url` with `headers`, all within `timeout`.
    pub async fn post_json(
        &self,
        url: &str,
        headers: &[(String, String)],
        timeout: Duration,
        body: &serde_json::Value,
    ) -> Result<Answer, CallError> {
        let secs = timeout.as_secs_f64();
        tokio::time::timeout(timeout, self.post(url, headers, body))
            .await
            .unwrap_or(Err(CallError::Timeout(secs)))
    }

    async fn post(
        &self,
        url: &str,
        headers: &[(String, String)],
        body: &serde_json::Value,
    ) -> Result<Answer, CallError> {
        self.request(self.http.post(url).json(body), headers).await
    }

    /// Sends `outgoing` (a transformed call), all within `timeout`.
    pub async fn send(
        &self,
        outgoing: &grafton_kriti::Outgoing,
        timeout: Duration,
    ) -> Result<Answer, CallError> {
        let request = transformed(&self.http, outgoing).map_err(CallError::Failed)?;
        let secs = timeout.as_secs_f64();
        tokio::time::timeout(timeout, self.request(request, &[]))
            .await
            .unwrap_or(Err(CallError::Timeout(secs)))
    }

    async fn request(
        &self,
        mut request: reqwest::RequestBuilder,
        headers: &[(String, String)],
    ) -> Result<Answer, CallError> {
        let _permit = (self.permits.acquire().await)
            .map_err(|_| CallError::Failed("the outgoing HTTP client is closed".into()))?;
        for (name, value) in headers {
            request = request.header(name.as_str(), value.as_str());
        }
        let mut response =
            (request.send().await).map_err(|e| CallError::Failed(crate::webhook::describe(&e)))?;
        let status = response.status().as_u16();
        let set_cookies = (response.headers().get_all("set-cookie").iter())
            .filter_map(|v| v.to_str().ok().map(str::to_owned))
            .collect();
        let cap = self.options.max_response_bytes;
        let mut out = Vec::new();
        while let Some(chunk) =
            (response.chunk().await).map_err(|e| CallError::Failed(crate::webhook::describe(&e)))?
        {
            if out.len() + chunk.len() > cap {
                return Err(CallError::TooLarge(cap));
            }
            out.extend_from_slice(&chunk);
        }
        Ok(Answer {
            status,
            body: out,
            set_cookies,
        })
    }
}

/// The request a transform made (`outgoing`): its method, URL, headers and
/// body, the transform's own `Content-Type` over the body's.
pub fn transformed(
    http: &reqwest::Client,
    outgoing: &grafton_kriti::Outgoing,
) -> Result<reqwest::RequestBuilder, String> {
    let method = reqwest::Method::from_bytes(outgoing.method.as_bytes())
        .map_err(|_| format!("\"{}\" is not an HTTP method", outgoing.method))?;
    let mut request = http.request(method, &outgoing.url);
    for (name, value) in &outgoing.headers {
        request = request.header(name.as_str(), value.as_str());
    }
    if let Some((content_type, body)) = &outgoing.body {
        let named = (outgoing.headers.iter()).any(|(n, _)| n.eq_ignore_ascii_case("content-type"));
        if !named {
            request = request.header("content-type", *content_type);
        }
        request = request.body(body.clone());
    }
    Ok(request)
}
