//! PostgreSQL bind parameters: declared with their real type, sent as text.
//!
//! Each parameter is rendered `$n::"type"`. Were it declared `text`, that cast would
//! be an input-function call PostgreSQL repeats for every row a generic plan
//! filters (`venue_id < ($3)::integer` over 50,000 rows cost the complex-filter
//! query 11-14% of its execution time). Declared as `int4`, the cast is a no-op.
//! The value still travels as text, parsed by the type's own input function just as
//! the cast did, so one code path serves every type; types without a fixed
//! tokio-postgres OID (enums, extension types) stay declared `text` and cast.

use bytes::{BufMut, BytesMut};
use grafton_sql::{Param, SqlType};
use std::error::Error;
use tokio_postgres::types::{to_sql_checked, Format, IsNull, ToSql, Type};

/// The type `param` is declared with when its statement is prepared.
pub(crate) fn declared_type(param: &Param) -> Type {
    // Rendering binds a stored value as its type (`Stored` does not reach here).
    let name = match &param.ty {
        SqlType::Builtin(name) => *name,
        SqlType::Named { .. } | SqlType::Stored(_) | SqlType::Spatial { .. } => "text",
    };
    let (scalar, array) = match name {
        "int4" => (Type::INT4, Type::INT4_ARRAY),
        "int8" => (Type::INT8, Type::INT8_ARRAY),
        "float8" => (Type::FLOAT8, Type::FLOAT8_ARRAY),
        "numeric" => (Type::NUMERIC, Type::NUMERIC_ARRAY),
        "bool" => (Type::BOOL, Type::BOOL_ARRAY),
        "uuid" => (Type::UUID, Type::UUID_ARRAY),
        "timestamptz" => (Type::TIMESTAMPTZ, Type::TIMESTAMPTZ_ARRAY),
        "timestamp" => (Type::TIMESTAMP, Type::TIMESTAMP_ARRAY),
        "date" => (Type::DATE, Type::DATE_ARRAY),
        "time" => (Type::TIME, Type::TIME_ARRAY),
        "timetz" => (Type::TIMETZ, Type::TIMETZ_ARRAY),
        "interval" => (Type::INTERVAL, Type::INTERVAL_ARRAY),
        "json" => (Type::JSON, Type::JSON_ARRAY),
        "jsonb" => (Type::JSONB, Type::JSONB_ARRAY),
        "bytea" => (Type::BYTEA, Type::BYTEA_ARRAY),
        "oid" => (Type::OID, Type::OID_ARRAY),
        "tid" => (Type::TID, Type::TID_ARRAY),
        _ => (Type::TEXT, Type::TEXT_ARRAY),
    };
    if param.list {
        array
    } else {
        scalar
    }
}

/// A parameter's value in PostgreSQL's text format (None is NULL), whatever type
/// it is declared with.
#[derive(Debug)]
pub(crate) struct TextParam(pub(crate) Option<String>);

impl ToSql for TextParam {
    fn to_sql(&self, _: &Type, out: &mut BytesMut) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        match &self.0 {
            None => Ok(IsNull::Yes),
            Some(text) => {
                out.put_slice(text.as_bytes());
                Ok(IsNull::No)
            }
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    fn encode_format(&self, _: &Type) -> Format {
        Format::Text
    }

    to_sql_checked!();
}
