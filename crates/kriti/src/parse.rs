//! Kriti templates (Hasura's transform language) read into a tree: JSON
//! values whose strings interpolate `{{ expr }}`, a bare `{{ expr }}` as a
//! value, `{{ if }} … {{ elif }} … {{ else }} … {{ end }}` and
//! `{{ range i, x := expr }} … {{ end }}` blocks; expressions with paths
//! (`$body.a?.b['c'][0]`), literals, function calls, `!`, `??`, comparisons,
//! `&&` and `||`.

use serde_json::Value;

mod expr;

/// A template's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// A JSON literal.
    Literal(Value),
    /// A string with interpolations.
    Text(Vec<Part>),
    /// `{{ expr }}` as a value.
    Expr(Expr),
    /// An object; keys interpolate.
    Object(Vec<(Vec<Part>, Node)>),
    /// An array.
    Array(Vec<Node>),
    /// `{{ if c }} a {{ elif d }} b {{ else }} e {{ end }}`.
    If(Vec<(Expr, Node)>, Option<Box<Node>>),
    /// `{{ range i, x := list }} body {{ end }}`: one body per element.
    Range(Option<String>, String, Expr, Box<Node>),
}

/// A piece of a string.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// Text as written.
    Text(String),
    /// `{{ expr }}`, its value written in (a string without quotes).
    Expr(Expr),
}

/// An expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A literal.
    Literal(Value),
    /// A variable (`$body`, or a `range` name) and the steps after it.
    Path(String, Vec<Step>),
    /// A function call.
    Call(String, Vec<Expr>),
    /// `!e`.
    Not(Box<Expr>),
    /// A binary operator.
    Binary(Box<Expr>, String, Box<Expr>),
}

/// One step of a path: a key or an index, optional (`?.`) or not.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The key or index.
    pub key: Value,
    /// `?.` / `?[`: null where it leads nowhere, instead of an error.
    pub optional: bool,
}

/// Reads `source` as one template value.
pub fn template(source: &str) -> Result<Node, String> {
    let mut p = Parser {
        s: source.as_bytes(),
        at: 0,
        src: source,
        depth: 0,
    };
    let node = p.value()?;
    p.ws();
    if p.at < p.s.len() {
        return Err(p.fail("the template goes on after its value"));
    }
    Ok(node)
}

/// Reads `source` as the inside of a string (an unescaped template: a URL, a
/// header or a query parameter's value).
pub fn text(source: &str) -> Result<Vec<Part>, String> {
    let mut p = Parser {
        s: source.as_bytes(),
        at: 0,
        src: source,
        depth: 0,
    };
    p.parts(None)
}

/// The deepest a template's values and expressions nest.
const MAX_DEPTH: usize = 128;

struct Parser<'a> {
    s: &'a [u8],
    at: usize,
    src: &'a str,
    depth: usize,
}

impl Parser<'_> {
    fn fail(&self, why: &str) -> String {
        format!("Kriti template, at byte {}: {why}", self.at)
    }

    fn ws(&mut self) {
        while self.at < self.s.len() && self.s[self.at].is_ascii_whitespace() {
            self.at += 1;
        }
    }

    fn eat(&mut self, token: &str) -> bool {
        self.ws();
        if self.src[self.at..].starts_with(token) {
            self.at += token.len();
            return true;
        }
        false
    }

    fn expect(&mut self, token: &str) -> Result<(), String> {
        match self.eat(token) {
            true => Ok(()),
            false => Err(self.fail(&format!("expected `{token}`"))),
        }
    }

    /// `{{ keyword …` ahead (not consumed): the keyword.
    fn block_ahead(&mut self) -> Option<&'static str> {
        self.ws();
        let rest = self.src[self.at..].strip_prefix("{{")?.trim_start();
        ["if", "elif", "else", "end", "range"]
            .into_iter()
            .find(|k| {
                rest.strip_prefix(k)
                    .is_some_and(|r| r.starts_with(|c: char| c.is_whitespace() || c == '}'))
            })
    }

    fn value(&mut self) -> Result<Node, String> {
        self.deeper()?;
        let node = self.value_here();
        self.depth -= 1;
        node
    }

    /// One level more of nesting, refused past [`MAX_DEPTH`] (a hostile
    /// template never overflows the stack).
    fn deeper(&mut self) -> Result<(), String> {
        self.depth += 1;
        match self.depth > MAX_DEPTH {
            true => Err(self.fail("the template nests too deep")),
            false => Ok(()),
        }
    }

    fn value_here(&mut self) -> Result<Node, String> {
        self.ws();
        match self.block_ahead() {
            Some("if") => return self.if_block(),
            Some("range") => return self.range_block(),
            Some(k) => return Err(self.fail(&format!("`{k}` without its `if` or `range`"))),
            None => {}
        }
        match self.s.get(self.at) {
            Some(b'{') if self.s.get(self.at + 1) == Some(&b'{') => {
                self.at += 2;
                let e = self.expr()?;
                self.expect("}}")?;
                Ok(Node::Expr(e))
            }
            Some(b'{') => {
                self.at += 1;
                let mut fields = Vec::new();
                if !self.eat("}") {
                    loop {
                        self.expect("\"")?;
                        let key = self.parts(Some(b'"'))?;
                        self.expect(":")?;
                        fields.push((key, self.value()?));
                        if self.eat("}") {
                            break;
                        }
                        self.expect(",")?;
                    }
                }
                Ok(Node::Object(fields))
            }
            Some(b'[') => {
                self.at += 1;
                let mut items = Vec::new();
                if !self.eat("]") {
                    loop {
                        items.push(self.value()?);
                        if self.eat("]") {
                            break;
                        }
                        self.expect(",")?;
                    }
                }
                Ok(Node::Array(items))
            }
            Some(b'"') => {
                self.at += 1;
                let parts = self.parts(Some(b'"'))?;
                Ok(match parts.as_slice() {
                    [] => Node::Literal(Value::String(String::new())),
                    [Part::Text(t)] => Node::Literal(Value::String(t.clone())),
                    _ => Node::Text(parts),
                })
            }
            _ => Ok(Node::Literal(self.scalar()?)),
        }
    }

    /// `true`, `false`, `null` or a number.
    fn scalar(&mut self) -> Result<Value, String> {
        self.ws();
        let start = self.at;
        while self.at < self.s.len()
            && (self.s[self.at].is_ascii_alphanumeric() || b"+-.".contains(&self.s[self.at]))
        {
            self.at += 1;
        }
        serde_json::from_str(&self.src[start..self.at]).map_err(|_| {
            self.at = start;
            self.fail("expected a value")
        })
    }

    /// A string's pieces up to `end` (its closing quote, consumed), or to
    /// the end of the source.
    fn parts(&mut self, end: Option<u8>) -> Result<Vec<Part>, String> {
        let mut parts = Vec::new();
        let mut text = String::new();
        loop {
            match self.s.get(self.at) {
                None if end.is_none() => break,
                None => return Err(self.fail("a string is not closed")),
                Some(c) if Some(*c) == end => {
                    self.at += 1;
                    break;
                }
                Some(b'\\') if end.is_some() => {
                    // A JSON escape, read as JSON reads it (a surrogate pair
                    // as one: two `\u` escapes).
                    let rest = &self.src[self.at..];
                    let len = match rest.as_bytes().get(1) {
                        Some(b'u')
                            if rest.get(2..4).is_some_and(|h| {
                                h.eq_ignore_ascii_case("d8")
                                    || h.eq_ignore_ascii_case("d9")
                                    || h.eq_ignore_ascii_case("da")
                                    || h.eq_ignore_ascii_case("db")
                            }) =>
                        {
                            12
                        }
                        Some(b'u') => 6,
                        _ => 2,
                    };
                    let Some(escape) = rest.get(..len) else {
                        return Err(self.fail("a bad escape"));
                    };
                    let c: String = serde_json::from_str(&format!("\"{escape}\""))
                        .map_err(|_| self.fail("a bad escape"))?;
                    text.push_str(&c);
                    self.at += len;
                }
                Some(b'{') if self.s.get(self.at + 1) == Some(&b'{') => {
                    self.at += 2;
                    if !text.is_empty() {
                        parts.push(Part::Text(std::mem::take(&mut text)));
                    }
                    parts.push(Part::Expr(self.expr()?));
                    self.expect("}}")?;
                }
                Some(_) => {
                    let c = self.src[self.at..].chars().next().unwrap_or_default();
                    text.push(c);
                    self.at += c.len_utf8();
                }
            }
        }
        if !text.is_empty() {
            parts.push(Part::Text(text));
        }
        Ok(parts)
    }

    fn if_block(&mut self) -> Result<Node, String> {
        let mut branches = Vec::new();
        let mut otherwise = None;
        self.expect("{{")?;
        self.expect("if")?;
        loop {
            let cond = self.expr()?;
            self.expect("}}")?;
            let body = self.value()?;
            branches.push((cond, body));
            match self.block_ahead() {
                Some("elif") => {
                    self.expect("{{")?;
                    self.expect("elif")?;
                }
                Some("else") => {
                    self.expect("{{")?;
                    self.expect("else")?;
                    self.expect("}}")?;
                    otherwise = Some(Box::new(self.value()?));
                    self.end()?;
                    break;
                }
                Some("end") => {
                    self.end()?;
                    break;
                }
                _ => return Err(self.fail("an `if` without its `end`")),
            }
        }
        Ok(Node::If(branches, otherwise))
    }

    fn end(&mut self) -> Result<(), String> {
        self.expect("{{")?;
        self.expect("end")?;
        self.expect("}}")
    }

    fn range_block(&mut self) -> Result<Node, String> {
        self.expect("{{")?;
        self.expect("range")?;
        let first = self.ident()?;
        let (index, item) = match self.eat(",") {
            true => (Some(first).filter(|i| i != "_"), self.ident()?),
            false => (None, first),
        };
        self.expect(":=")?;
        let list = self.expr()?;
        self.expect("}}")?;
        let body = self.value()?;
        self.end()?;
        Ok(Node::Range(index, item, list, Box::new(body)))
    }

    fn ident(&mut self) -> Result<String, String> {
        self.ws();
        let start = self.at;
        while self.at < self.s.len()
            && (self.s[self.at].is_ascii_alphanumeric() || self.s[self.at] == b'_')
        {
            self.at += 1;
        }
        match start == self.at {
            true => Err(self.fail("expected a name")),
            false => Ok(self.src[start..self.at].to_owned()),
        }
    }
}
