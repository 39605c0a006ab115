//! A small SDL writer: keeps the builder free of string-formatting noise.

use std::fmt::Write;

/// Accumulates SDL text.
#[derive(Default)]
pub(crate) struct Sdl {
    pub(crate) text: String,
}

/// One field of an object or input type.
#[derive(Clone)]
pub(crate) struct FieldDef {
    pub(crate) name: String,
    pub(crate) args: Vec<(String, String)>,
    pub(crate) ty: String,
    pub(crate) description: Option<String>,
}

impl FieldDef {
    pub(crate) fn new(name: impl Into<String>, ty: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            args: Vec::new(),
            ty: ty.into(),
            description: None,
        }
    }

    pub(crate) fn with_args(mut self, args: Vec<(String, String)>) -> Self {
        self.args = args;
        self
    }

    pub(crate) fn describe(mut self, d: Option<&str>) -> Self {
        self.description = d.map(str::to_owned);
        self
    }
}

/// `d` as an SDL string, quoted and escaped.
fn quoted(d: &str) -> String {
    let escaped = d
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n");
    format!("\"{escaped}\"")
}

/// An argument's name with its description before it, if it has one (an
/// argument's description is written inline: `"…" name: Type`).
pub(crate) fn described_arg(name: &str, description: Option<&str>) -> String {
    match description {
        Some(d) => format!("{} {name}", quoted(d)),
        None => name.to_owned(),
    }
}

impl Sdl {
    fn description(&mut self, indent: &str, d: Option<&str>) {
        if let Some(d) = d {
            let _ = writeln!(self.text, "{indent}{}", quoted(d));
        }
    }

    /// `type Name { fields }` or `input Name { fields }`.
    pub(crate) fn object(
        &mut self,
        keyword: &str,
        name: &str,
        description: Option<&str>,
        fields: &[FieldDef],
    ) {
        self.description("", description);
        let _ = writeln!(self.text, "{keyword} {name} {{");
        for f in fields {
            self.description("  ", f.description.as_deref());
            let _ = write!(self.text, "  {}", f.name);
            if !f.args.is_empty() {
                self.text.push('(');
                for (i, (arg, ty)) in f.args.iter().enumerate() {
                    if i > 0 {
                        self.text.push_str(", ");
                    }
                    let _ = write!(self.text, "{arg}: {ty}");
                }
                self.text.push(')');
            }
            let _ = writeln!(self.text, ": {}", f.ty);
        }
        self.text.push_str("}\n\n");
    }

    /// `enum Name { values }`.
    pub(crate) fn enumeration(&mut self, name: &str, description: Option<&str>, values: &[String]) {
        self.described_enumeration(name, description, values, &[]);
    }

    /// `enum Name { values }`, each value with its description where it has one.
    pub(crate) fn described_enumeration(
        &mut self,
        name: &str,
        description: Option<&str>,
        values: &[String],
        descriptions: &[Option<String>],
    ) {
        self.description("", description);
        let _ = writeln!(self.text, "enum {name} {{");
        for (i, v) in values.iter().enumerate() {
            self.description("  ", descriptions.get(i).and_then(Option::as_deref));
            let _ = writeln!(self.text, "  {v}");
        }
        self.text.push_str("}\n\n");
    }

    /// `scalar Name`.
    /// `scalar Name`, with its description.
    pub(crate) fn described_scalar(&mut self, name: &str, description: Option<&str>) {
        self.description("", description);
        self.scalar(name);
    }

    pub(crate) fn scalar(&mut self, name: &str) {
        let _ = writeln!(self.text, "scalar {name}\n");
    }
}
