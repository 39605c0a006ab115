//! What a webhook's settings read from the environment.

/// The environment variables a `{{NAME}}` template reads.
pub(crate) fn template_vars(text: &str) -> Vec<String> {
    let mut vars = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else { break };
        vars.push(after[..end].trim().to_owned());
        rest = &after[end + 2..];
    }
    vars
}
