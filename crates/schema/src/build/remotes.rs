//! Remote schemas in a role's schema: each remote's query and mutation root
//! fields beside the database's, and its types (a type the schema has already,
//! defined the same way, is that type, as Hasura merges them). Every role sees a
//! whole remote (Hasura's default); one with per-role permissions, a root
//! field namespace, or an introspection that failed is left out, reported.

use super::*;
use crate::config::RemoteSchemaConfig;
use crate::inconsistent::{Inconsistency, ObjectKind};
use crate::model::ServedRemote;
use crate::remote::{RemoteIntrospected, RemoteViews};
use std::sync::Arc;

/// What `role` sees of remote `r`: admin the whole; a role with a permission
/// (its own, or the one its inherited role's parents share) its part; any
/// other role the whole only when the remote has no permissions and
/// permissions are not asked for.
fn seen_by(
    config: &Config,
    r: &RemoteSchemaConfig,
    views: &RemoteViews,
    role: Option<&str>,
) -> Option<Arc<RemoteIntrospected>> {
    let Some(role) = role else {
        return Some(views.whole.clone());
    };
    if let Some(own) = views.roles.get(role) {
        return own.as_ref().ok().cloned();
    }
    // An inherited role: its parents' part when they have one and the same.
    let parents: Vec<&String> = (config.inherited_roles.get(role).into_iter().flatten())
        .filter(|p| views.roles.contains_key(*p))
        .collect();
    let sdls: std::collections::BTreeSet<&str> = (r.permissions.iter())
        .filter(|p| parents.contains(&&p.role))
        .map(|p| p.definition.schema.as_str())
        .collect();
    if let (1, Some(first)) = (sdls.len(), parents.first()) {
        return views.roles.get(*first)?.as_ref().ok().cloned();
    }
    if !parents.is_empty() {
        return None;
    }
    let open = r.permissions.is_empty() && !config.remote_schema_permissions;
    open.then(|| views.whole.clone())
}
use apollo_compiler::schema::ExtendedType;

/// The remote schemas of `config` that `role` (`None`: admin) sees, each as
/// it sees it (whole, or its permission's part); or those that cannot be
/// served.
pub(crate) fn resolve(
    config: &Config,
    role: Option<&str>,
) -> Result<Vec<ServedRemote>, SchemaError> {
    let mut served = Vec::new();
    let mut bad = Vec::new();
    for r in &config.remote_schemas {
        let refuse = |why: String| Inconsistency::new(ObjectKind::RemoteSchema, &r.name, why);
        let twice = (config.remote_schemas.iter())
            .filter(|o| o.name == r.name)
            .count()
            > 1;
        let why = if twice {
            Some(format!(
                "remote schema with name \"{}\" already exists",
                r.name
            ))
        } else {
            match config.remotes_introspected.get(&r.name) {
                Some(Ok(views)) => {
                    if let Some(introspected) = seen_by(config, r, views, role) {
                        served.push(ServedRemote {
                            config: r.clone(),
                            introspected,
                        });
                    }
                    None
                }
                Some(Err(e)) => Some(e.clone()),
                None => Some("it was not introspected".into()),
            }
        };
        if let Some(why) = why {
            bad.push(refuse(why));
        }
    }
    match bad.is_empty() {
        true => Ok(served),
        false => Err(SchemaError::Inconsistent(bad)),
    }
}

impl Builder<'_> {
    /// The remote schemas' root fields, added to the roots.
    pub(super) fn write_remote_fields(
        &mut self,
        query: &mut Vec<FieldDef>,
        mutation: &mut Vec<FieldDef>,
    ) {
        for (i, remote) in self.remotes.iter().enumerate() {
            let r = &remote.introspected;
            if let Some(ns) = r.namespace.as_deref() {
                // One field of the namespace's type (its root type, renamed).
                query.push(FieldDef::new(ns, format!("{}!", r.query_type)));
                self.root_fields.insert(ns.to_owned(), RootField::Remote(i));
                if let Some(m) = r
                    .mutation_type
                    .as_deref()
                    .filter(|_| !r.mutation.is_empty())
                {
                    mutation.push(FieldDef::new(ns, format!("{m}!")));
                    self.mutation_fields
                        .insert(ns.to_owned(), MutationField::Remote(i));
                }
                continue;
            }
            for (fields, root) in [(&r.query, &mut *query), (&r.mutation, &mut *mutation)] {
                for f in fields {
                    let def = FieldDef::new(&f.name, &f.ty)
                        .with_args(f.args.clone())
                        .describe(f.description.as_deref());
                    root.push(def);
                }
            }
            for f in &r.query {
                self.root_fields
                    .insert(f.name.clone(), RootField::Remote(i));
            }
            for f in &r.mutation {
                self.mutation_fields
                    .insert(f.name.clone(), MutationField::Remote(i));
            }
        }
    }

    /// The remote schemas' types (after every other type is written): a type
    /// the schema has already, defined the same way (descriptions aside), is
    /// that type, as Hasura merges them.
    pub(super) fn write_remote_types(&mut self) {
        if self.remotes.is_empty() {
            return;
        }
        // Ours, then each remote's as it is written.
        let mut written = vec![parsed(&self.sdl.text)];
        for remote in self.remotes {
            let theirs = parsed(&remote_sdl(remote));
            for t in &remote.introspected.types {
                let name = t.name.as_str();
                let Some(b) = theirs.types.get(name) else {
                    continue;
                };
                let same =
                    (written.iter().filter_map(|w| w.types.get(name))).any(|a| same_type(a, b));
                if !same {
                    self.sdl.text.push_str(&t.sdl);
                    self.sdl.text.push('\n');
                }
            }
            written.push(theirs);
        }
    }
}

/// `sdl` parsed as far as it goes (types only are read from it).
fn parsed(sdl: &str) -> apollo_compiler::Schema {
    apollo_compiler::Schema::parse(sdl, "schema.graphql").unwrap_or_else(|e| e.partial)
}

/// A remote's types as one SDL text.
fn remote_sdl(remote: &ServedRemote) -> String {
    let types = remote.introspected.types.iter();
    types.map(|t| t.sdl.as_str()).collect::<Vec<_>>().join("\n")
}

/// Whether two definitions of a type name are the same type: the same kind,
/// fields (names, types, arguments), values, members or input fields.
fn same_type(a: &ExtendedType, b: &ExtendedType) -> bool {
    use apollo_compiler::schema::FieldDefinition;
    let same_fields = |x: &apollo_compiler::collections::IndexMap<
        _,
        apollo_compiler::schema::Component<FieldDefinition>,
    >,
                       y: &apollo_compiler::collections::IndexMap<
        _,
        apollo_compiler::schema::Component<FieldDefinition>,
    >| {
        x.len() == y.len()
            && x.iter().all(|(name, f)| {
                y.get(name).is_some_and(|g| {
                    f.ty == g.ty
                        && f.arguments.len() == g.arguments.len()
                        && (f.arguments.iter().zip(&g.arguments))
                            .all(|(p, q)| p.name == q.name && p.ty == q.ty)
                })
            })
    };
    match (a, b) {
        (ExtendedType::Scalar(_), ExtendedType::Scalar(_)) => true,
        (ExtendedType::Object(x), ExtendedType::Object(y)) => {
            same_fields(&x.fields, &y.fields) && x.implements_interfaces == y.implements_interfaces
        }
        (ExtendedType::Interface(x), ExtendedType::Interface(y)) => {
            same_fields(&x.fields, &y.fields) && x.implements_interfaces == y.implements_interfaces
        }
        (ExtendedType::Enum(x), ExtendedType::Enum(y)) => {
            x.values.len() == y.values.len() && x.values.keys().all(|v| y.values.contains_key(v))
        }
        (ExtendedType::Union(x), ExtendedType::Union(y)) => x.members == y.members,
        (ExtendedType::InputObject(x), ExtendedType::InputObject(y)) => {
            x.fields.len() == y.fields.len()
                && (x.fields.iter()).all(|(n, f)| y.fields.get(n).is_some_and(|g| f.ty == g.ty))
        }
        _ => false,
    }
}

/// Why the schema with the remotes does not validate when the one without them
/// does (`plain`): a root field or a type of another name's; else every remote,
/// with `error`.
pub(crate) fn clashes(plain: &SchemaModel, remotes: &[ServedRemote], error: &str) -> SchemaError {
    let mut bad = Vec::new();
    let (mut queries, mut mutations): (Vec<&str>, Vec<&str>) = (Vec::new(), Vec::new());
    let mut earlier: Vec<apollo_compiler::Schema> = Vec::new();
    for remote in remotes {
        let r = &remote.introspected;
        let refuse =
            |why: String| Inconsistency::new(ObjectKind::RemoteSchema, &remote.config.name, why);
        let (q, m) = r.root_field_names();
        let field = (q.iter().copied())
            .find(|f| plain.root_fields.contains_key(*f) || queries.contains(f))
            .or_else(|| {
                (m.iter().copied())
                    .find(|f| plain.mutation_fields.contains_key(*f) || mutations.contains(f))
            });
        let theirs = parsed(&remote_sdl(remote));
        let ty = (r.types.iter()).find(|t| {
            let Some(b) = theirs.types.get(t.name.as_str()) else {
                return false;
            };
            let others =
                std::iter::once(&plain.schema.types).chain(earlier.iter().map(|e| &e.types));
            let mut defined = others.filter_map(|types| types.get(t.name.as_str()));
            defined.any(|a| !same_type(a, b))
        });
        if let Some(f) = field {
            bad.push(refuse(format!(
                "its root field '{f}' is the name of another root field"
            )));
        } else if let Some(t) = ty {
            bad.push(refuse(format!(
                "its type '{}' has the name of another type of the schema, defined otherwise",
                t.name
            )));
        }
        queries.extend(q);
        mutations.extend(m);
        earlier.push(theirs);
    }
    if bad.is_empty() {
        for remote in remotes {
            let why = format!("the schema with it does not validate: {error}");
            bad.push(Inconsistency::new(
                ObjectKind::RemoteSchema,
                &remote.config.name,
                why,
            ));
        }
    }
    SchemaError::Inconsistent(bad)
}

/// `config` without remote schemas.
pub(crate) fn without_remotes(config: &Config) -> Config {
    Config {
        remote_schemas: Vec::<RemoteSchemaConfig>::new(),
        ..config.clone()
    }
}
