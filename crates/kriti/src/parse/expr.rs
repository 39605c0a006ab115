//! Kriti's expressions: operators by precedence, `!`, literals, function
//! calls and paths.

use super::{Expr, Parser, Part, Step};
use serde_json::Value;

impl Parser<'_> {
    pub(super) fn expr(&mut self) -> Result<Expr, String> {
        self.binary(0)
    }

    /// Operators by precedence, loosest first.
    fn binary(&mut self, level: usize) -> Result<Expr, String> {
        const LEVELS: [&[&str]; 4] = [
            &["||"],
            &["&&"],
            &["==", "!=", ">=", "<=", ">", "<"],
            &["??"],
        ];
        let Some(ops) = LEVELS.get(level) else {
            return self.unary();
        };
        let mut left = self.binary(level + 1)?;
        'more: loop {
            for op in ops.iter() {
                if self.eat(op) {
                    let right = self.binary(level + 1)?;
                    left = Expr::Binary(Box::new(left), (*op).to_owned(), Box::new(right));
                    continue 'more;
                }
            }
            return Ok(left);
        }
    }

    fn unary(&mut self) -> Result<Expr, String> {
        self.deeper()?;
        let e = self.unary_here();
        self.depth -= 1;
        e
    }

    fn unary_here(&mut self) -> Result<Expr, String> {
        if self.eat("!") {
            return Ok(Expr::Not(Box::new(self.unary()?)));
        }
        if self.eat("(") {
            let e = self.expr()?;
            self.expect(")")?;
            return Ok(e);
        }
        self.ws();
        match self.s.get(self.at) {
            Some(b'"') => {
                self.at += 1;
                match self.parts(Some(b'"'))?.as_slice() {
                    [] => Ok(Expr::Literal(Value::String(String::new()))),
                    [Part::Text(t)] => Ok(Expr::Literal(Value::String(t.clone()))),
                    _ => Err(self.fail("a string in an expression does not interpolate")),
                }
            }
            Some(b'$') => {
                self.at += 1;
                let name = format!("${}", self.ident()?);
                self.path(name)
            }
            Some(c) if c.is_ascii_alphabetic() || *c == b'_' => {
                let name = self.ident()?;
                match name.as_str() {
                    "true" => return Ok(Expr::Literal(Value::Bool(true))),
                    "false" => return Ok(Expr::Literal(Value::Bool(false))),
                    "null" => return Ok(Expr::Literal(Value::Null)),
                    _ => {}
                }
                if self.eat("(") {
                    let mut args = Vec::new();
                    if !self.eat(")") {
                        loop {
                            args.push(self.expr()?);
                            if self.eat(")") {
                                break;
                            }
                            self.expect(",")?;
                        }
                    }
                    return Ok(Expr::Call(name, args));
                }
                self.path(name)
            }
            _ => Ok(Expr::Literal(self.scalar()?)),
        }
    }

    pub(super) fn path(&mut self, name: String) -> Result<Expr, String> {
        let mut steps = Vec::new();
        loop {
            let optional = self.src[self.at..].starts_with('?')
                && matches!(self.s.get(self.at + 1), Some(b'.' | b'['));
            let at = self.at + usize::from(optional);
            match self.s.get(at) {
                Some(b'.') => {
                    self.at = at + 1;
                    let key = Value::String(self.ident()?);
                    steps.push(Step { key, optional });
                }
                Some(b'[') => {
                    self.at = at + 1;
                    self.ws();
                    let key = match self.s.get(self.at) {
                        Some(b'\'') | Some(b'"') => {
                            let quote = self.s[self.at];
                            self.at += 1;
                            let start = self.at;
                            while self.at < self.s.len() && self.s[self.at] != quote {
                                self.at += 1;
                            }
                            if self.at >= self.s.len() {
                                return Err(self.fail("a key in brackets is not closed"));
                            }
                            let key = self.src[start..self.at].to_owned();
                            self.at += 1;
                            Value::String(key)
                        }
                        _ => self.scalar()?,
                    };
                    self.expect("]")?;
                    steps.push(Step { key, optional });
                }
                _ => return Ok(Expr::Path(name, steps)),
            }
        }
    }
}
