//! The SDL of the role's actions: a root field per action (`query_root` for a
//! query action, `mutation_root` for a mutation; an asynchronous mutation's
//! result also on `query_root` and `subscription_root`, read by id), and the
//! custom types those fields reach.

use super::actions::{db_scalar_name, named_type, BUILT_IN, DB_SCALARS};
use super::*;
use crate::config::{ActionKind, ActionOperation};

impl Builder<'_> {
    /// The role's action root fields, and the custom types they reach.
    pub(super) fn write_actions(&mut self, roots: Roots<'_>) {
        let Roots {
            query,
            mutation,
            subscription,
        } = roots;
        let role_actions = self.actions;
        for (i, a) in role_actions.actions.iter().enumerate() {
            let d = &a.definition;
            let args = (d.arguments.iter())
                .map(|x| {
                    let name = crate::sdl::described_arg(&x.name, x.description.as_deref());
                    (name, x.ty.clone())
                })
                .collect();
            let field = FieldDef::new(&a.name, &d.output_type)
                .with_args(args)
                .describe(a.comment.as_deref());
            match d.operation {
                ActionOperation::Query => {
                    query.push(field);
                    self.root_fields
                        .insert(a.name.clone(), RootField::Action(i));
                }
                ActionOperation::Mutation if d.kind == ActionKind::Asynchronous => {
                    // The mutation answers the new call's id; its result is read
                    // by id, from the query root or the subscription root.
                    let uuid = db_scalar_name(self.naming, &ScalarKind::Uuid);
                    mutation.push(FieldDef {
                        ty: format!("{uuid}!"),
                        ..field
                    });
                    self.mutation_fields
                        .insert(a.name.clone(), MutationField::Action(i));
                    let result = FieldDef::new(&a.name, &a.name)
                        .with_args(vec![(
                            crate::sdl::described_arg("id", Some("the unique id of an action")),
                            format!("{uuid}!"),
                        )])
                        .describe(a.comment.as_deref());
                    query.push(result.clone());
                    subscription.push(result);
                    self.root_fields
                        .insert(a.name.clone(), RootField::Action(i));
                    self.write_async_result(a);
                }
                ActionOperation::Mutation => {
                    mutation.push(field);
                    self.mutation_fields
                        .insert(a.name.clone(), MutationField::Action(i));
                }
            }
            let named = std::iter::once(named_type(&d.output_type))
                .chain(d.arguments.iter().map(|x| named_type(&x.ty)));
            for n in named {
                self.declare_db_scalar(n);
            }
        }
        let types = self.custom_types;
        for name in &role_actions.types {
            if let Some(o) = types.objects.iter().find(|o| &o.name == name) {
                let mut fields: Vec<FieldDef> = (o.fields.iter())
                    .map(|f| FieldDef::new(&f.name, &f.ty).describe(f.description.as_deref()))
                    .collect();
                fields.extend(self.action_relationship_fields(name));
                for f in &o.fields {
                    self.declare_db_scalar(named_type(&f.ty));
                }
                self.sdl
                    .object("type", name, o.description.as_deref(), &fields);
            } else if let Some(i) = types.input_objects.iter().find(|i| &i.name == name) {
                let fields: Vec<FieldDef> = (i.fields.iter())
                    .map(|f| FieldDef::new(&f.name, &f.ty).describe(f.description.as_deref()))
                    .collect();
                for f in &i.fields {
                    self.declare_db_scalar(named_type(&f.ty));
                }
                self.sdl
                    .object("input", name, i.description.as_deref(), &fields);
            } else if let Some(e) = types.enums.iter().find(|e| &e.name == name) {
                let values: Vec<String> = (e.values.iter())
                    .map(|v| match v.is_deprecated {
                        true => format!("{} @deprecated", v.value),
                        false => v.value.clone(),
                    })
                    .collect();
                let descriptions: Vec<Option<String>> =
                    e.values.iter().map(|v| v.description.clone()).collect();
                self.sdl.described_enumeration(
                    name,
                    e.description.as_deref(),
                    &values,
                    &descriptions,
                );
            } else if types.scalars.iter().any(|s| &s.name == name) {
                // `scalar uuid` in actions.graphql names the database's own.
                let db = DB_SCALARS
                    .iter()
                    .any(|k| db_scalar_name(self.naming, k) == *name);
                if db {
                    self.declare_db_scalar(name);
                } else if !BUILT_IN.contains(&name.as_str()) {
                    let scalar = types.scalars.iter().find(|s| &s.name == name);
                    let description = scalar.and_then(|s| s.description.as_deref());
                    self.sdl.described_scalar(name, description);
                }
            }
        }
    }

    /// Declares the database scalar `name` names, if it names one.
    fn declare_db_scalar(&mut self, name: &str) {
        if let Some(kind) = DB_SCALARS
            .iter()
            .find(|k| db_scalar_name(self.naming, k) == name)
        {
            self.used_scalars.insert(kind.clone());
        }
    }
}

impl Builder<'_> {
    /// The object an asynchronous action's result is read as, named after the
    /// action (as Hasura's): its id, when it was called, its errors and output.
    fn write_async_result(&mut self, a: &crate::config::ActionConfig) {
        let name = |k: ScalarKind| db_scalar_name(self.naming, &k);
        let (uuid, at, json) = (
            name(ScalarKind::Uuid),
            name(ScalarKind::Timestamptz),
            name(ScalarKind::Json),
        );
        // The output is null until the handler answers (Hasura's type keeps
        // the output type's `!` and answers null all the same).
        let output = a.definition.output_type.trim();
        let output = output.strip_suffix('!').unwrap_or(output);
        let fields = [
            FieldDef::new("id", format!("{uuid}!")).describe(Some("the unique id of an action")),
            FieldDef::new("created_at", format!("{at}!"))
                .describe(Some("the time at which this action was created")),
            FieldDef::new("errors", json).describe(Some("errors related to the invocation")),
            FieldDef::new("output", output).describe(Some("the output fields of this action")),
        ];
        for kind in [ScalarKind::Uuid, ScalarKind::Timestamptz, ScalarKind::Json] {
            self.used_scalars.insert(kind);
        }
        let description = format!("fields of action: \"{}\"", a.name);
        self.sdl
            .object("type", &a.name, Some(&description), &fields);
    }
}
