//! What a webhook's settings read from the environment.

pub(crate) use grafton_schema::config::template_vars;
