//! Writing the whole SDL, and the scalar types with their comparison inputs.

use super::*;

impl Builder<'_> {
    pub(super) fn write_all(&mut self) {
        let mut root = Vec::new();
        let mut mutation_root = Vec::new();
        let mut subscription_root = Vec::new();
        for id in 0..self.tables.len() {
            if self.access[id].select.is_some() || self.tables[id].mutable {
                let roots = Roots {
                    query: &mut root,
                    mutation: &mut mutation_root,
                    subscription: &mut subscription_root,
                };
                self.write_table(id, roots);
            }
        }
        if self.relay {
            // Relay serves connections (tables', `SETOF` functions') and writes;
            // remote schemas are not served there (Hasura's neither).
            self.write_relay_types(&mut root, &mut subscription_root);
            self.write_functions(&mut root, &mut mutation_root, &mut subscription_root);
        } else {
            self.write_functions(&mut root, &mut mutation_root, &mut subscription_root);
            self.write_remote_fields(&mut root, &mut mutation_root);
        }
        if self.relay {
            // Relay serves actions' mutations, not their queries (Hasura's).
            let (mut no_query, mut no_subscription) = (Vec::new(), Vec::new());
            self.write_actions(Roots {
                query: &mut no_query,
                mutation: &mut mutation_root,
                subscription: &mut no_subscription,
            });
            for name in (no_query.iter().chain(&no_subscription)).map(|f| &f.name) {
                self.root_fields.remove(name);
            }
        } else {
            self.write_actions(Roots {
                query: &mut root,
                mutation: &mut mutation_root,
                subscription: &mut subscription_root,
            });
        }
        let root_name = "query_root";
        if root.is_empty() {
            // A role that may only write still needs a query type; Hasura's placeholder.
            root.push(
                FieldDef::new(NO_QUERIES, "String!").describe(Some(
                    "There are no queries available to the current role either due to lack of permissions or due to no tables being tracked",
                )),
            );
        }
        self.sdl.object("type", root_name, None, &root);
        let has_mutations = !mutation_root.is_empty();
        if has_mutations {
            self.sdl
                .object("type", "mutation_root", None, &mutation_root);
        }
        let has_subscriptions = !subscription_root.is_empty();
        if has_subscriptions {
            self.sdl
                .object("type", "subscription_root", None, &subscription_root);
        }
        self.write_cursor_ordering();
        let order_by = self.ty("order_by");
        let values: Vec<String> = ORDER_VALUES
            .iter()
            .map(|(v, _, _)| self.naming.enum_value(v))
            .collect();
        self.sdl
            .enumeration(&order_by, Some("column ordering options"), &values);
        // jsonb's `_cast: {String: …}` compares through String_comparison_exp.
        if self.used_scalars.contains(&ScalarKind::Jsonb) {
            self.used_scalars.insert(ScalarKind::Text);
        }
        // raster's `_st_intersects_*_nband` inputs take a geometry.
        if self.used_scalars.contains(&ScalarKind::Raster) {
            self.used_scalars.insert(ScalarKind::Geometry);
        }
        // geometry's `_cast: {geography: …}` and back need each other's types.
        if self.used_scalars.contains(&ScalarKind::Geometry)
            || self.used_scalars.contains(&ScalarKind::Geography)
        {
            self.used_scalars.insert(ScalarKind::Geometry);
            self.used_scalars.insert(ScalarKind::Geography);
        }
        // An array's element type is declared too (`[uuid!]` needs `uuid`).
        let elements: Vec<ScalarKind> = (self.used_scalars.iter())
            .filter_map(|k| match k {
                ScalarKind::Array(e) => Some((**e).clone()),
                _ => None,
            })
            .collect();
        self.used_scalars.extend(elements);
        let used: Vec<ScalarKind> = self.used_scalars.iter().cloned().collect();
        for kind in used {
            self.write_scalar(&kind);
        }
        for name in std::mem::take(&mut self.named_scalars) {
            self.sdl.scalar(&name);
        }
        if self.used_scalars.contains(&ScalarKind::Ltree) {
            // `_matches` and `_matches_fulltext` take ltree's query types.
            for name in ["lquery", "ltxtquery"] {
                let name = self.naming.scalar(name);
                self.sdl.scalar(&name);
            }
        }
        self.write_remote_types();
        self.write_remote_type_relationships();
        self.write_remote_to_remote();
        let mutation = if has_mutations {
            "  mutation: mutation_root\n"
        } else {
            ""
        };
        let subscription = if has_subscriptions {
            "  subscription: subscription_root\n"
        } else {
            ""
        };
        self.sdl.text.insert_str(
            0,
            &format!(
                "schema {{\n  query: query_root\n{mutation}{subscription}}}\n\n{CACHED_DIRECTIVE}\n"
            ),
        );
    }

    pub(super) fn write_scalar(&mut self, kind: &ScalarKind) {
        let name = self.scalar(kind);
        match kind {
            ScalarKind::Int
            | ScalarKind::Float
            | ScalarKind::Text
            | ScalarKind::Boolean
            | ScalarKind::Array(_) => {}
            ScalarKind::Enum(i) => {
                let e = &self.catalog.enums[*i];
                let (values, descriptions) = (e.values.clone(), e.descriptions.clone());
                self.sdl
                    .described_enumeration(&name, None, &values, &descriptions);
            }
            _ => self.sdl.scalar(&name),
        }
        let cmp = self.ty(&format!("{}_comparison_exp", self.scalar_base(kind)));
        self.input_types
            .insert(cmp.clone(), InputKind::Comparison(kind.clone()));
        let fields: Vec<FieldDef> = ops_for(kind, self.backend)
            .into_iter()
            .map(|op| {
                let ty = match op {
                    CompareOp::In | CompareOp::Nin => format!("[{name}!]"),
                    CompareOp::IsNull => "Boolean".to_owned(),
                    CompareOp::HasKeysAny | CompareOp::HasKeysAll | CompareOp::MatchesAny => {
                        "[String!]".to_owned()
                    }
                    CompareOp::AncestorAny | CompareOp::DescendantAny => format!("[{name}!]"),
                    CompareOp::Matches => self.naming.scalar("lquery"),
                    CompareOp::MatchesFulltext => self.naming.scalar("ltxtquery"),
                    CompareOp::StDWithin | CompareOp::St3dDWithin => self.d_within_input(kind),
                    CompareOp::StIntersectsNbandGeom | CompareOp::StIntersectsGeomNband => {
                        self.nband_input(op)
                    }
                    CompareOp::Like
                    | CompareOp::Nlike
                    | CompareOp::Ilike
                    | CompareOp::Nilike
                    | CompareOp::Similar
                    | CompareOp::Nsimilar
                    | CompareOp::Regex
                    | CompareOp::Iregex
                    | CompareOp::Nregex
                    | CompareOp::Niregex
                    | CompareOp::HasKey => "String".to_owned(),
                    _ => name.clone(),
                };
                FieldDef::new(self.naming.op(op), ty)
            })
            .collect();
        let mut fields = fields;
        if *kind == ScalarKind::Jsonb {
            let cast = self.ty("jsonb_cast_exp");
            let text = self.ty(&format!(
                "{}_comparison_exp",
                self.scalar_base(&ScalarKind::Text)
            ));
            self.sdl.object(
                "input",
                &cast,
                None,
                &[FieldDef::new(self.scalar(&ScalarKind::Text), text)],
            );
            fields.insert(0, FieldDef::new(self.naming.cast_op(), cast));
        }
        if let Some(other) = kind.spatial_counterpart() {
            let cast = self.ty(&format!("{}_cast_exp", self.scalar_base(kind)));
            let cmp = self.ty(&format!("{}_comparison_exp", self.scalar_base(&other)));
            self.sdl.object(
                "input",
                &cast,
                None,
                &[FieldDef::new(self.scalar(&other), cmp)],
            );
            fields.insert(0, FieldDef::new(self.naming.cast_op(), cast));
        }
        self.sdl.object(
            "input",
            &cmp,
            Some(&format!(
                "Boolean expression to compare columns of type \"{name}\". All fields are combined with logical 'AND'."
            )),
            &fields,
        );
    }
}

impl Builder<'_> {
    /// `st_d_within_input` (geometry) or `st_d_within_geography_input`, declared
    /// the first time a comparison uses it.
    fn d_within_input(&mut self, kind: &ScalarKind) -> String {
        let geography = *kind == ScalarKind::Geography;
        let name = self.ty(if geography {
            "st_d_within_geography_input"
        } else {
            "st_d_within_input"
        });
        if self.declared_inputs.insert(name.clone()) {
            let float = self.scalar(&ScalarKind::Float);
            let mut fields = vec![
                FieldDef::new(self.naming.field("distance"), format!("{float}!")),
                FieldDef::new(self.naming.field("from"), format!("{}!", self.scalar(kind))),
            ];
            if geography {
                let boolean = self.scalar(&ScalarKind::Boolean);
                fields.push(FieldDef::new(
                    self.naming.field("use_spheroid"),
                    format!("{boolean} = true"),
                ));
            }
            self.sdl.object("input", &name, None, &fields);
        }
        name
    }
}

/// Hasura's `@cached`, declared in every schema so documents carrying it validate
/// (the engine keeps their answers).
const CACHED_DIRECTIVE: &str = "\"\"\"whether this query should be cached\"\"\"
directive @cached(
  \"\"\"measured in seconds\"\"\"
  ttl: Int! = 60
  \"\"\"refresh the cache entry\"\"\"
  refresh: Boolean! = false
) on QUERY
";

impl Builder<'_> {
    /// `st_intersects_nband_geom_input` or `st_intersects_geom_nband_input`
    /// (raster's), declared the first time a comparison uses it; in the second the
    /// band is optional, as in PostGIS.
    fn nband_input(&mut self, op: CompareOp) -> String {
        let geom_first = op == CompareOp::StIntersectsGeomNband;
        let name = self.ty(if geom_first {
            "st_intersects_geom_nband_input"
        } else {
            "st_intersects_nband_geom_input"
        });
        if self.declared_inputs.insert(name.clone()) {
            let int = self.scalar(&ScalarKind::Int);
            let band = if geom_first { int } else { format!("{int}!") };
            let geometry = format!("{}!", self.scalar(&ScalarKind::Geometry));
            let mut fields = vec![
                FieldDef::new(self.naming.field("nband"), band),
                FieldDef::new(self.naming.field("geommin"), geometry),
            ];
            if geom_first {
                fields.reverse();
            }
            self.sdl.object("input", &name, None, &fields);
        }
        name
    }
}

/// The operators a column of `kind` supports on `backend`.
pub fn ops_for(kind: &ScalarKind, backend: Backend) -> Vec<CompareOp> {
    use CompareOp::*;
    if *kind == ScalarKind::Json {
        // Postgres has no equality on json; only nullness is testable.
        return vec![IsNull];
    }
    if *kind == ScalarKind::Raster {
        // Hasura's: equality (PostGIS has `=` on rasters, no ordering) and the
        // intersections.
        return vec![
            Eq,
            Neq,
            In,
            Nin,
            IsNull,
            StIntersectsRast,
            StIntersectsNbandGeom,
            StIntersectsGeomNband,
        ];
    }
    if let ScalarKind::Array(_) = kind {
        // Hasura's, but `_in`/`_nin` (lists of arrays).
        return vec![Eq, Neq, Gt, Gte, Lt, Lte, IsNull, Contains, ContainedIn];
    }
    let mut ops = vec![Eq, Neq, Gt, Gte, Lt, Lte, In, Nin, IsNull];
    match kind {
        ScalarKind::Geometry => ops.extend([
            St3dDWithin,
            St3dIntersects,
            StContains,
            StCrosses,
            StDWithin,
            StEquals,
            StIntersects,
            StOverlaps,
            StTouches,
            StWithin,
        ]),
        ScalarKind::Geography => ops.extend([StDWithin, StIntersects]),
        ScalarKind::Ltree => ops.extend([
            Ancestor,
            AncestorAny,
            Descendant,
            DescendantAny,
            Matches,
            MatchesAny,
            MatchesFulltext,
        ]),
        _ => {}
    }
    if *kind == ScalarKind::Jsonb {
        ops.extend([Contains, ContainedIn, HasKey, HasKeysAny, HasKeysAll]);
    }
    if kind.is_text() {
        ops.extend([Like, Nlike, Ilike, Nilike]);
        if backend == Backend::Postgres {
            ops.extend([Similar, Nsimilar, Regex, Iregex, Nregex, Niregex]);
        }
    }
    ops
}

/// Whether `min`/`max` exist for this kind on both backends.
pub(super) fn has_min_max(kind: &ScalarKind) -> bool {
    !matches!(
        kind,
        ScalarKind::Json
            | ScalarKind::Jsonb
            | ScalarKind::Boolean
            | ScalarKind::Bytea
            | ScalarKind::Uuid
            | ScalarKind::Array(_)
            | ScalarKind::Geometry
            | ScalarKind::Geography
            | ScalarKind::Ltree
            | ScalarKind::Raster
    )
}
