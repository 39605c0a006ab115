//! A table's root fields: their kinds (Hasura's `custom_root_fields` keys) and the
//! names and descriptions the schema gives them.

/// One of a table's root fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootKind {
    /// `t`
    Select,
    /// `t_by_pk`
    SelectByPk,
    /// `t_aggregate`
    SelectAggregate,
    /// `t_stream`
    SelectStream,
    /// `insert_t`
    Insert,
    /// `insert_t_one`
    InsertOne,
    /// `update_t`
    Update,
    /// `update_t_by_pk`
    UpdateByPk,
    /// `update_t_many`
    UpdateMany,
    /// `delete_t`
    Delete,
    /// `delete_t_by_pk`
    DeleteByPk,
}

impl RootKind {
    /// Every kind.
    pub const ALL: [RootKind; 11] = [
        RootKind::Select,
        RootKind::SelectByPk,
        RootKind::SelectAggregate,
        RootKind::SelectStream,
        RootKind::Insert,
        RootKind::InsertOne,
        RootKind::Update,
        RootKind::UpdateByPk,
        RootKind::UpdateMany,
        RootKind::Delete,
        RootKind::DeleteByPk,
    ];

    /// Its key in Hasura's `custom_root_fields`.
    pub fn key(self) -> &'static str {
        self.spelling().0
    }

    /// Its default name, `{}` standing for the table's base name (before the
    /// naming convention).
    pub fn form(self) -> &'static str {
        self.spelling().1
    }

    fn spelling(self) -> (&'static str, &'static str) {
        match self {
            RootKind::Select => ("select", "{}"),
            RootKind::SelectByPk => ("select_by_pk", "{}_by_pk"),
            RootKind::SelectAggregate => ("select_aggregate", "{}_aggregate"),
            RootKind::SelectStream => ("select_stream", "{}_stream"),
            RootKind::Insert => ("insert", "insert_{}"),
            RootKind::InsertOne => ("insert_one", "insert_{}_one"),
            RootKind::Update => ("update", "update_{}"),
            RootKind::UpdateByPk => ("update_by_pk", "update_{}_by_pk"),
            RootKind::UpdateMany => ("update_many", "update_{}_many"),
            RootKind::Delete => ("delete", "delete_{}"),
            RootKind::DeleteByPk => ("delete_by_pk", "delete_{}_by_pk"),
        }
    }

    /// The kind whose key this is.
    pub fn from_key(key: &str) -> Option<RootKind> {
        RootKind::ALL.into_iter().find(|k| k.key() == key)
    }
}

/// Each root field's name and, when the configuration gives one, its description.
#[derive(Debug, Clone, Default)]
pub struct RootNames {
    /// By kind, in [`RootKind::ALL`]'s order.
    pub names: Vec<String>,
    /// By kind: a custom description.
    pub comments: Vec<Option<String>>,
}

impl RootNames {
    /// The field's name.
    pub fn name(&self, kind: RootKind) -> &str {
        self.names.get(kind as usize).map_or("", String::as_str)
    }

    /// The field's description: the configured one, else `default`.
    pub fn describe(&self, kind: RootKind, default: String) -> String {
        match self.comments.get(kind as usize) {
            Some(Some(comment)) => comment.clone(),
            _ => default,
        }
    }
}
