//! A prefix and a suffix for every root field name (Hasura's source
//! customization).

/// A prefix and a suffix for every root field name (Hasura's source customization).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RootFieldAffixes {
    /// Put before each name.
    pub prefix: Option<String>,
    /// Put after each name.
    pub suffix: Option<String>,
}

impl RootFieldAffixes {
    /// `name` with the prefix and suffix, joined as Hasura joins them: as written,
    /// or under graphql-default with the name and suffix starting upper-case
    /// (`shop_` + `postsByPk` = `shop_PostsByPk`).
    pub fn apply(&self, name: &str, camel: bool) -> String {
        if self.prefix.is_none() && self.suffix.is_none() {
            return name.to_owned();
        }
        let upper = |s: &str| {
            let mut c = s.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect())
                .unwrap_or_default()
        };
        let (name, suffix) = match (camel, &self.prefix, self.suffix.as_deref()) {
            (true, Some(_), suffix) => (upper(name), suffix.map(upper)),
            (true, None, suffix) => (name.to_owned(), suffix.map(upper)),
            (false, _, suffix) => (name.to_owned(), suffix.map(str::to_owned)),
        };
        format!(
            "{}{name}{}",
            self.prefix.as_deref().unwrap_or(""),
            suffix.unwrap_or_default()
        )
    }
}
