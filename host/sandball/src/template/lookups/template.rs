//! The `template` lookup: template files rendered with the task's variables and the
//! lookup's delimiters, `trim_blocks` and `template_vars`.

use serde_json::Value as Json;

use super::files::{find_or_warn, search_vars};
use super::{LookupContext, LookupError, Options, texts};

/// `template`: each template file rendered with the task's variables.
pub(super) fn template(
    terms: &[Json],
    options: &Options,
    ctx: &dyn LookupContext,
) -> Result<Vec<Json>, LookupError> {
    let rendered: Result<Vec<Json>, String> = texts(terms)
        .iter()
        .map(|t| {
            let path = find_or_warn(ctx, "templates", t).ok_or_else(|| {
                format!("the template file {t} could not be found for the lookup")
            })?;
            let source = std::fs::read_to_string(&path)
                .map_err(|e| format!("could not read {}: {e}", path.display()))?;
            template_lookup(ctx, &path, &source, options)
        })
        .collect();
    Ok(rendered?)
}

/// One template of the `template` lookup, rendered with its options
/// (`variable_start_string` and the other delimiters, `trim_blocks`, `template_vars`).
fn template_lookup(
    ctx: &dyn LookupContext,
    path: &std::path::Path,
    source: &str,
    options: &Options,
) -> Result<Json, String> {
    let mut file = crate::template::FileOptions {
        search: crate::playbook::search_path::template_dirs(&search_vars(ctx), path),
        ..Default::default()
    };
    let text_option = |key: &str, into: &mut String| -> Result<(), String> {
        match options.get(key) {
            None | Some(Json::Null) => Ok(()),
            Some(Json::String(s)) => {
                *into = s.clone();
                Ok(())
            }
            Some(other) => Err(format!("template: {key} must be a string, got {other}")),
        }
    };
    text_option("variable_start_string", &mut file.variable.0)?;
    text_option("variable_end_string", &mut file.variable.1)?;
    text_option("comment_start_string", &mut file.comment.0)?;
    text_option("comment_end_string", &mut file.comment.1)?;
    file.trim_blocks =
        sandball_pycompat::boolean::truthy(options.get("trim_blocks"), true).unwrap_or(true);
    // The template file's variables, then `template_vars` over them, as in Ansible.
    let managed = ctx.var("ansible_managed").is_some();
    let mut extra: Options = crate::template::file_vars(path, None, managed)
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    match options.get("template_vars") {
        None | Some(Json::Null) => {}
        Some(Json::Object(m)) => extra.extend(m.clone()),
        Some(other) => {
            return Err(format!(
                "template: template_vars must be a mapping, got {other}"
            ));
        }
    }
    // `convert_data` and `jinja2_native` change nothing in ansible-core 2.19: the
    // result is text, and a template that renders nothing is `None`.
    ctx.render(source, &file, &extra)
        .map(|text| match text.is_empty() {
            true => Json::Null,
            false => Json::String(text),
        })
}
