//! The Relay API's schema (`/v1beta1/relay`), as Hasura writes it: the `Node`
//! interface, `PageInfo`, a `<t>Connection` and `<t>Edge` per table with a primary
//! key, `<t>_connection` root fields and `<rel>_connection` fields on array
//! relationships, and `node(id:)`. Everything else is the `/v1/graphql` schema's.

use super::*;

/// The field every `Node` has: its global id. Hasura's name, whatever the naming.
pub const NODE_ID: &str = "id";

/// Adds each array relationship's `<rel>_connection` field (Hasura appends the
/// suffix to the field's name as it is) where its target is a readable `Node`.
pub(super) fn add_connections(
    catalog: &grafton_catalog::Catalog,
    tables: &mut [TableInfo],
    relationships: &[Relationship],
    readable: &[bool],
    warnings: &mut Vec<String>,
) {
    for (id, r) in relationships.iter().enumerate() {
        let target = &tables[r.target];
        let present = tables[r.source].fields.get(&r.name) == Some(&TableField::Array(id));
        let node =
            crate::model::identifies(&catalog.tables[target.catalog_index], &target.primary_key);
        if !present || !readable[r.target] || !node {
            continue;
        }
        let name = format!("{}_connection", r.name);
        let fields = &mut tables[r.source].fields;
        if fields.contains_key(&name) {
            warnings.push(format!(
                "relationship '{}' has no Relay connection: '{name}' is taken",
                r.name
            ));
            continue;
        }
        fields.insert(name, TableField::ArrayConnection(id));
    }
}

impl Builder<'_> {
    /// Whether `id` is a `Node` in this schema.
    pub(super) fn is_node(&self, id: TableId) -> bool {
        let table = &self.catalog.tables[self.tables[id].catalog_index];
        self.relay && crate::model::identifies(table, &self.tables[id].primary_key)
    }

    /// `<T>Connection`.
    pub(super) fn connection_type(&self, id: TableId) -> String {
        self.table_ty(id, "Connection")
    }

    /// A connection field's arguments: Hasura's, without `limit` and `offset`.
    pub(super) fn connection_args(&self, target: TableId) -> Vec<(String, String)> {
        let lead = [
            ("after".to_owned(), "String"),
            ("before".to_owned(), "String"),
        ];
        let page = [("first".to_owned(), "Int"), ("last".to_owned(), "Int")];
        self.selection_args(target, &lead, &page)
    }

    /// The `<rel>_connection` field of an array relationship, if it has one.
    pub(super) fn relationship_connection(
        &self,
        source: TableId,
        r: &Relationship,
    ) -> Option<FieldDef> {
        let rel = self.rel_id(r);
        let (name, _) = (self.tables[source].fields.iter())
            .find(|(_, f)| **f == TableField::ArrayConnection(rel))?;
        Some(
            FieldDef::new(name, format!("{}!", self.connection_type(r.target)))
                .with_args(self.connection_args(r.target))
                .describe(Some("An array relationship connection")),
        )
    }

    /// The `<t>_connection` root field of a readable `Node` table.
    pub(super) fn root_connection(&mut self, id: TableId) -> FieldDef {
        let info = &self.tables[id];
        let table = &self.catalog.tables[info.catalog_index];
        let name = self.naming.field(&format!("{}_connection", info.base_name));
        self.root_fields
            .insert(name.clone(), RootField::Connection(id));
        FieldDef::new(name, format!("{}!", self.connection_type(id)))
            .with_args(self.connection_args(id))
            .describe(Some(&format!(
                "fetch data from the table: \"{}\"",
                table.name
            )))
    }

    /// `Node`, `PageInfo`, each readable `Node` table's connection and edge types,
    /// and `node(id:)` first among the query and subscription roots.
    pub(super) fn write_relay_types(
        &mut self,
        query: &mut Vec<FieldDef>,
        subscription: &mut Vec<FieldDef>,
    ) {
        let id_field = FieldDef::new(NODE_ID, "ID!").describe(Some("A globally unique identifier"));
        self.sdl.object(
            "interface",
            "Node",
            Some("An object with globally unique ID"),
            &[id_field],
        );
        let page_info = [
            FieldDef::new("endCursor", "String!"),
            FieldDef::new("hasNextPage", "Boolean!"),
            FieldDef::new("hasPreviousPage", "Boolean!"),
            FieldDef::new("startCursor", "String!"),
        ];
        self.sdl.object("type", "PageInfo", None, &page_info);
        for id in 0..self.tables.len() {
            if !self.readable[id] || !self.is_node(id) {
                continue;
            }
            let type_name = self.tables[id].type_name.clone();
            let edge = self.table_ty(id, "Edge");
            let edges = [
                FieldDef::new("cursor", "String!"),
                FieldDef::new("node", format!("{type_name}!")),
            ];
            self.sdl.object("type", &edge, None, &edges);
            let connection = [
                FieldDef::new("edges", format!("[{edge}!]!")),
                FieldDef::new("pageInfo", "PageInfo!"),
            ];
            let description = format!(
                "A Relay connection object on \"{}\"",
                self.catalog.tables[self.tables[id].catalog_index].name
            );
            let name = self.connection_type(id);
            self.sdl
                .object("type", &name, Some(&description), &connection);
        }
        self.root_fields.insert("node".to_owned(), RootField::Node);
        let node = FieldDef::new("node", "Node").with_args(vec![(
            crate::sdl::described_arg("id", Some("A globally unique id")),
            "ID!".to_owned(),
        )]);
        query.insert(0, node.clone());
        subscription.insert(0, node);
    }
}
