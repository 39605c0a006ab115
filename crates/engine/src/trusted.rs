//! Trusted documents: automatic persisted queries (Apollo's protocol: a client
//! sends a document's SHA-256 instead of its text once the server knows it) and
//! allow lists (only listed documents run, per role, as Hasura's allow list).

use apollo_compiler::ast::{Definition, Document, Selection};
use apollo_compiler::Name;
use grafton_schema::config::Config;
use sha2::{Digest, Sha256};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

/// A document's SHA-256, in lower-case hex (the APQ and manifest spelling).
pub fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Persisted documents in this process, bounded by their total size (with Redis,
/// the documents other instances were sent are found there, see `shared.rs`).
pub struct LocalDocuments(quick_cache::sync::Cache<String, Arc<str>, TextWeight>);

/// Weighs a document by its length.
#[derive(Clone)]
pub struct TextWeight;

impl quick_cache::Weighter<String, Arc<str>> for TextWeight {
    fn weight(&self, key: &String, value: &Arc<str>) -> u64 {
        (key.len() + value.len()) as u64
    }
}

/// The bytes of persisted documents one process keeps (least recently used go first).
pub const PERSISTED_BYTES: u64 = 32 * 1024 * 1024;

impl Default for LocalDocuments {
    fn default() -> Self {
        Self(quick_cache::sync::Cache::with_weighter(
            16 * 1024,
            PERSISTED_BYTES,
            TextWeight,
        ))
    }
}

impl LocalDocuments {
    /// The document with this hash, if known.
    pub fn get(&self, hash: &str) -> Option<Arc<str>> {
        self.0.get(hash)
    }

    /// Remembers a document under its hash.
    pub fn put(&self, hash: String, document: Arc<str>) {
        self.0.insert(hash, document);
    }
}

/// Each operation of a document in one canonical spelling: the operation and the
/// fragments it uses (by name), printed by apollo-compiler, so whitespace, comments
/// and the order of fragments do not matter.
pub fn normalized(document: &Document) -> HashMap<Option<Name>, String> {
    let fragments: HashMap<&Name, &Definition> = document
        .definitions
        .iter()
        .filter_map(|d| match d {
            Definition::FragmentDefinition(f) => Some((&f.name, d)),
            _ => None,
        })
        .collect();
    document
        .definitions
        .iter()
        .filter_map(|d| match d {
            Definition::OperationDefinition(op) => Some((op, d)),
            _ => None,
        })
        .map(|(op, definition)| {
            let mut used = BTreeSet::new();
            let mut pending: Vec<&[Selection]> = vec![&op.selection_set];
            while let Some(set) = pending.pop() {
                for selection in set {
                    match selection {
                        Selection::Field(f) => pending.push(&f.selection_set),
                        Selection::InlineFragment(i) => pending.push(&i.selection_set),
                        Selection::FragmentSpread(s) => {
                            if used.insert(s.fragment_name.clone()) {
                                if let Some(Definition::FragmentDefinition(f)) =
                                    fragments.get(&s.fragment_name)
                                {
                                    pending.push(&f.selection_set);
                                }
                            }
                        }
                    }
                }
            }
            let mut one = Document::new();
            one.definitions.push(definition.clone());
            one.definitions.extend(
                used.iter()
                    .filter_map(|name| fragments.get(name).map(|d| (*d).clone())),
            );
            (op.name.clone(), one.to_string())
        })
        .collect()
}

/// The allow list: documents every role may run and documents for some roles.
#[derive(Debug, Default)]
pub struct AllowList {
    global: HashSet<String>,
    roles: HashMap<String, HashSet<String>>,
    /// Whether any collection is listed (then the list is enforced).
    on: bool,
}

impl AllowList {
    /// The allow list of `config` (its collections' documents, normalized).
    pub fn from_config(config: &Config) -> Result<Self, String> {
        let mut list = Self {
            on: config.enforce_allow_list,
            ..Self::default()
        };
        for collection in &config.allow_list {
            list.on = true;
            for (i, text) in collection.queries.iter().enumerate() {
                let document = Document::parse(text.as_str(), "allowed.graphql").map_err(|e| {
                    format!(
                        "allow list '{}', document {i}: {}",
                        collection.name,
                        e.errors
                            .iter()
                            .next()
                            .map(|d| d.to_string())
                            .unwrap_or_default()
                    )
                })?;
                for key in normalized(&document).into_values() {
                    match &collection.roles {
                        None => {
                            list.global.insert(key);
                        }
                        Some(roles) => {
                            for role in roles {
                                list.roles
                                    .entry(role.clone())
                                    .or_default()
                                    .insert(key.clone());
                            }
                        }
                    }
                }
            }
        }
        Ok(list)
    }

    /// What `role` may run (`None`: anything, when the list is off).
    pub fn for_role(&self, role: &str) -> Option<Arc<HashSet<String>>> {
        if !self.on {
            return None;
        }
        let mut allowed = self.global.clone();
        if let Some(own) = self.roles.get(role) {
            allowed.extend(own.iter().cloned());
        }
        Some(Arc::new(allowed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spelling_does_not_matter_but_content_does() {
        let a = Document::parse(
            "query Q { a { ...F } } # comment\n fragment F on A { b } fragment G on A { c }",
            "a",
        )
        .expect("parses");
        let b = Document::parse(
            "fragment F on A {\n  b\n}\nquery Q {\n  a {\n    ...F\n  }\n}",
            "b",
        )
        .expect("parses");
        let c =
            Document::parse("query Q { a { ...F } } fragment F on A { b c }", "c").expect("parses");
        let key = |d: &Document| normalized(d).into_values().next().expect("one operation");
        assert_eq!(
            key(&a),
            key(&b),
            "unused fragments, order and whitespace are ignored"
        );
        assert_ne!(key(&a), key(&c));
    }

    #[test]
    fn an_enforced_empty_list_allows_nothing() {
        let off = AllowList::from_config(&Config::default()).expect("list");
        assert!(off.for_role("user").is_none());
        let config = Config {
            enforce_allow_list: true,
            ..Config::default()
        };
        let on = AllowList::from_config(&config).expect("list");
        assert_eq!(on.for_role("user").map(|set| set.len()), Some(0));
    }

    #[test]
    fn sha256_is_lower_case_hex() {
        assert_eq!(
            sha256_hex("{ __typename }"),
            "7f56e67dd21ab3f30d1ff8b7bed08893f0a0db86449836189b361dd1e56ddb4b"
        );
    }
}
