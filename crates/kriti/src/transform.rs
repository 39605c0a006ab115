//! Hasura's request and response transforms (`request_transform`,
//! `response_transform`, versions 1 and 2, Kriti templates): read once when the
//! metadata is, applied to each call: its method, URL, query parameters,
//! headers and body; and the answer's body before it is read.

use crate::{eval, parse, Node, Part, Scope};
use serde_json::{Map, Value};

/// A request transform, read.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestTransform {
    method: Option<String>,
    url: Option<Vec<Part>>,
    query: Query,
    add_headers: Vec<(String, Vec<Part>)>,
    remove_headers: Vec<String>,
    body: Body,
}

#[derive(Debug, Clone, PartialEq)]
enum Query {
    /// The handler URL's own.
    Keep,
    /// Each parameter's value (left out where it is null).
    Pairs(Vec<(String, Vec<Part>)>),
    /// The whole query string.
    Text(Vec<Part>),
}

#[derive(Debug, Clone, PartialEq)]
enum Body {
    Keep,
    Remove,
    Json(Node),
    Form(Vec<(String, Vec<Part>)>),
    /// Version 1's form: the template's object, each field a parameter.
    FormOf(Node),
}

/// A response transform, read: the body's template (`None`: no body).
#[derive(Debug, Clone, PartialEq)]
pub struct ResponseTransform {
    body: Option<Node>,
}

/// A call as the transform makes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Outgoing {
    /// Its method.
    pub method: String,
    /// Its URL, query string included.
    pub url: String,
    /// Its headers.
    pub headers: Vec<(String, String)>,
    /// Its body and content type (`None`: no body).
    pub body: Option<(&'static str, Vec<u8>)>,
}

fn engine(t: &Map<String, Value>) -> Result<(), String> {
    match t.get("template_engine").and_then(Value::as_str) {
        None | Some("Kriti") => Ok(()),
        Some(other) => Err(format!("template_engine \"{other}\": only Kriti is served")),
    }
}

fn template_map(v: &Value, what: &str) -> Result<Vec<(String, Vec<Part>)>, String> {
    let Value::Object(m) = v else {
        return Err(format!("{what} is an object of templates"));
    };
    (m.iter())
        .map(|(k, v)| match v {
            Value::String(t) => Ok((k.clone(), parse::text(t)?)),
            _ => Err(format!("{what}.{k} is a template (a string)")),
        })
        .collect()
}

impl RequestTransform {
    /// Reads Hasura's `request_transform`.
    pub fn read(value: &Value) -> Result<Self, String> {
        let Value::Object(t) = value else {
            return Err("request_transform is an object".into());
        };
        engine(t)?;
        let text = |key: &str| t.get(key).and_then(Value::as_str);
        let url = text("url").map(parse::text).transpose()?;
        let query = match t.get("query_params") {
            None | Some(Value::Null) => Query::Keep,
            Some(Value::String(s)) => Query::Text(parse::text(s)?),
            Some(v) => Query::Pairs(template_map(v, "query_params")?),
        };
        let (mut add_headers, mut remove_headers) = (Vec::new(), Vec::new());
        if let Some(h) = t.get("request_headers").filter(|h| !h.is_null()) {
            if let Some(add) = h.get("add_headers") {
                add_headers = template_map(add, "add_headers")?;
            }
            if let Some(Value::Array(names)) = h.get("remove_headers") {
                remove_headers = names
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect();
            }
        }
        let form = |v: Option<&Value>| v.map(|f| template_map(f, "form_template")).transpose();
        let body = match t.get("body") {
            None | Some(Value::Null) => Body::Keep,
            // Version 1: the body is the template, its content type apart.
            Some(Value::String(template)) => match text("content_type") {
                Some("application/x-www-form-urlencoded") => match form(t.get("form_template"))? {
                    Some(pairs) => Body::Form(pairs),
                    None => Body::FormOf(parse::template(template)?),
                },
                _ => Body::Json(parse::template(template)?),
            },
            Some(Value::Object(b)) => match b.get("action").and_then(Value::as_str) {
                Some("remove") => Body::Remove,
                Some("x_www_form_urlencoded") => {
                    Body::Form(form(b.get("form_template"))?.unwrap_or_default())
                }
                Some("transform") | None => match b.get("template").and_then(Value::as_str) {
                    Some(template) => Body::Json(parse::template(template)?),
                    None => Body::Keep,
                },
                Some(other) => return Err(format!("body.action \"{other}\" is not Hasura's")),
            },
            Some(_) => return Err("request_transform.body is an object".into()),
        };
        Ok(Self {
            method: text("method").map(str::to_uppercase),
            url,
            query,
            add_headers,
            remove_headers,
            body,
        })
    }

    /// The call for `payload` to `base_url` with `headers`, as transformed
    /// (`session`: the caller's session variables).
    pub fn apply(
        &self,
        payload: &Value,
        session: &Map<String, Value>,
        base_url: &str,
        mut headers: Vec<(String, String)>,
    ) -> Result<Outgoing, String> {
        let mut scope = Scope::new(vec![
            ("$body".into(), payload.clone()),
            ("$session_variables".into(), Value::Object(session.clone())),
            ("$base_url".into(), Value::String(base_url.to_owned())),
            ("$query_params".into(), Value::Object(Map::new())),
        ]);
        let mut url = match &self.url {
            Some(parts) => eval::text(parts, &mut scope)?,
            None => base_url.to_owned(),
        };
        let query = match &self.query {
            Query::Keep => None,
            Query::Text(parts) => Some(eval::text(parts, &mut scope)?),
            Query::Pairs(pairs) => {
                let mut out = Vec::new();
                for (k, parts) in pairs {
                    if let Some(v) = eval::optional_text(parts, &mut scope)? {
                        out.push(format!("{}={}", eval::percent(k), eval::percent(&v)));
                    }
                }
                Some(out.join("&"))
            }
        };
        // A request's values never take the call elsewhere: the URL keeps the
        // handler's scheme, host and port.
        if origin(&url).is_none() || origin(&url) != origin(base_url) {
            return Err("the transformed URL is not on the handler's scheme, host and port".into());
        }
        if let Some(query) = query {
            // The transform's parameters replace the URL's own.
            url.truncate(url.find('?').unwrap_or(url.len()));
            if !query.is_empty() {
                url = format!("{url}?{query}");
            }
        }
        for name in &self.remove_headers {
            headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        }
        for (name, parts) in &self.add_headers {
            if let Some(v) = eval::optional_text(parts, &mut scope)? {
                headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
                headers.push((name.clone(), v));
            }
        }
        let body = match &self.body {
            Body::Keep => Some(("application/json", payload.to_string().into_bytes())),
            Body::Remove => None,
            Body::Json(node) => {
                let v = eval::value(node, &mut scope)?;
                Some(("application/json", v.to_string().into_bytes()))
            }
            Body::Form(pairs) => {
                let mut out = Vec::new();
                for (k, parts) in pairs {
                    if let Some(v) = eval::optional_text(parts, &mut scope)? {
                        out.push(format!("{}={}", eval::percent(k), eval::percent(&v)));
                    }
                }
                Some((
                    "application/x-www-form-urlencoded",
                    out.join("&").into_bytes(),
                ))
            }
            Body::FormOf(node) => {
                let Value::Object(fields) = eval::value(node, &mut scope)? else {
                    return Err("a form body's template makes an object".into());
                };
                let pairs = (fields.iter()).filter(|(_, v)| !v.is_null()).map(|(k, v)| {
                    let v = match v {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    format!("{}={}", eval::percent(k), eval::percent(&v))
                });
                let body = pairs.collect::<Vec<_>>().join("&");
                Some(("application/x-www-form-urlencoded", body.into_bytes()))
            }
        };
        Ok(Outgoing {
            method: self.method.clone().unwrap_or_else(|| "POST".into()),
            url,
            headers,
            body,
        })
    }
}

/// `scheme://authority` of `url`, when it has one.
fn origin(url: &str) -> Option<&str> {
    let scheme = url.find("://")?;
    let rest = &url[scheme + 3..];
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    // An authority with credentials (another host after `@`) is refused.
    let authority = &rest[..end];
    (!authority.is_empty() && !authority.contains(['@', '\\'])).then(|| &url[..scheme + 3 + end])
}

impl ResponseTransform {
    /// Reads Hasura's `response_transform`.
    pub fn read(value: &Value) -> Result<Self, String> {
        let Value::Object(t) = value else {
            return Err("response_transform is an object".into());
        };
        engine(t)?;
        let body = match t.get("body") {
            None | Some(Value::Null) => return Err("response_transform has no body".into()),
            Some(Value::String(template)) => Some(parse::template(template)?),
            Some(Value::Object(b)) => match b.get("action").and_then(Value::as_str) {
                Some("remove") => None,
                Some("transform") | None => match b.get("template").and_then(Value::as_str) {
                    Some(template) => Some(parse::template(template)?),
                    None => return Err("body.template not found".into()),
                },
                Some(other) => return Err(format!("body.action \"{other}\" is not Hasura's")),
            },
            Some(_) => return Err("response_transform.body is an object".into()),
        };
        Ok(Self { body })
    }

    /// The answer's body as transformed: `$body` the answer's, `$request`
    /// the call's payload, `$session_variables` the caller's, `$response`
    /// `{status, body}`.
    pub fn apply(
        &self,
        body: &Value,
        request: &Value,
        session: &Map<String, Value>,
        response: &Value,
    ) -> Result<Value, String> {
        let Some(node) = &self.body else {
            return Ok(Value::Null);
        };
        let mut scope = Scope::new(vec![
            ("$body".into(), body.clone()),
            ("$request".into(), request.clone()),
            ("$session_variables".into(), Value::Object(session.clone())),
            ("$response".into(), response.clone()),
        ]);
        eval::value(node, &mut scope)
    }
}
