//! A template file's first line `#jinja2: key: value, …`, as Ansible reads it: the
//! delimiters and whitespace control for that file (values are Python literals), the
//! line itself not part of the output. Jinja drops a template's last newline unless the
//! line sets `keep_trailing_newline: True`; Ansible then gives the result as many
//! trailing newlines as the template had ([`restore_newlines`]). Jinja environment
//! settings sandball does not apply are refused; a malformed line or another key fails
//! the template in ansible-core 2.19's words.

use super::{FileOptions, TemplateError};

/// What starts the line of overrides.
const HEADER: &str = "#jinja2:";

/// The settings a header may name that sandball does not apply.
/// (`line_comment_prefix`: the engine's line comments take the line's newline with
/// them, where Jinja's keep it.)
const UNSUPPORTED: &[&str] = &["newline_sequence", "line_comment_prefix"];

/// `source` without its `#jinja2:` line, and `options` with that line's settings; both
/// as given when there is no such line.
pub(crate) fn apply<'s>(
    source: &'s str,
    options: &FileOptions,
) -> Result<(&'s str, FileOptions), TemplateError> {
    let mut options = options.clone();
    let Some(rest) = source.strip_prefix(HEADER) else {
        return Ok((without_trailing_newline(source), options));
    };
    let error = |detail: String| TemplateError::Render {
        detail,
        template: format!("{HEADER}{}", rest.split('\n').next().unwrap_or_default()),
        line: None,
    };
    let Some((line, body)) = rest.split_once('\n') else {
        return Err(error(format!("Missing newline after '{HEADER}' override.")));
    };
    let mut keep_trailing_newline = false;
    for pair in line.split(',') {
        if pair.trim().is_empty() {
            return Err(error(format!(
                "Empty '{HEADER}' override pair not allowed."
            )));
        }
        let Some((key, value)) = pair.split_once(':') else {
            return Err(error(format!(
                "Missing key-value separator `:` in '{HEADER}' override pair {}.",
                repr(pair)
            )));
        };
        let key = key.trim();
        let parsed = sandball_pycompat::literal::literal_eval(value.trim())
            .ok()
            .flatten()
            .ok_or_else(|| {
                error(format!(
                    "the jinja2 override '{key}' is not a Python literal: {}",
                    value.trim()
                ))
            })?;
        let text = |into: &mut String| match parsed.as_str() {
            Some(s) => {
                *into = s.to_string();
                Ok(())
            }
            None => Err(error(format!(
                "the jinja2 override '{key}' must be a string"
            ))),
        };
        // A string, or None for no prefix.
        let prefix = || match &parsed {
            serde_json::Value::Null => Ok(None),
            serde_json::Value::String(s) => Ok(Some(s.clone())),
            _ => Err(error(format!(
                "the jinja2 override '{key}' must be a string or None"
            ))),
        };
        let flag = || match parsed.as_bool() {
            Some(b) => Ok(b),
            None => Err(error(format!(
                "the jinja2 override '{key}' must be True or False"
            ))),
        };
        match key {
            "block_start_string" => text(&mut options.block.0)?,
            "block_end_string" => text(&mut options.block.1)?,
            "variable_start_string" => text(&mut options.variable.0)?,
            "variable_end_string" => text(&mut options.variable.1)?,
            "comment_start_string" => text(&mut options.comment.0)?,
            "comment_end_string" => text(&mut options.comment.1)?,
            "trim_blocks" => options.trim_blocks = flag()?,
            "lstrip_blocks" => options.lstrip_blocks = flag()?,
            "line_statement_prefix" => options.line_statement_prefix = prefix()?,
            "keep_trailing_newline" => keep_trailing_newline = flag()?,
            _ if UNSUPPORTED.contains(&key) => {
                return Err(error(format!(
                    "the jinja2 override '{key}' is not supported by sandball"
                )));
            }
            _ => {
                return Err(error(format!(
                    "Invalid '{HEADER}' override key {}.",
                    repr(key)
                )));
            }
        }
    }
    let body = match keep_trailing_newline {
        true => body,
        false => without_trailing_newline(body),
    };
    Ok((body, options))
}

/// Python's `repr` of a text.
fn repr(text: &str) -> String {
    sandball_pycompat::pyfmt::py_repr(&serde_json::Value::String(text.to_string()))
}

/// A template's source as Jinja reads it by default: without its last newline.
pub(crate) fn without_trailing_newline(source: &str) -> &str {
    ["\r\n", "\n", "\r"]
        .iter()
        .find_map(|newline| source.strip_suffix(newline))
        .unwrap_or(source)
}

/// Ansible's `preserve_trailing_newlines`: a rendered text ends with at least as many
/// newlines as its template's source did; a template that renders nothing stays empty.
pub(crate) fn restore_newlines(source: &str, text: &mut String) {
    if text.is_empty() {
        return;
    }
    let count = |s: &str| s.len() - s.trim_end_matches('\n').len();
    let missing = count(source).saturating_sub(count(text));
    text.extend(std::iter::repeat_n('\n', missing));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_header_line() {
        let (body, options) = apply(
            "#jinja2: variable_start_string:'<<' , variable_end_string:\">>\", trim_blocks: False\nx << y >>\n",
            &FileOptions::default(),
        )
        .unwrap();
        assert_eq!(body, "x << y >>");
        assert_eq!(options.variable, ("<<".to_string(), ">>".to_string()));
        assert!(!options.trim_blocks);
        let (body, _) = apply(
            "#jinja2: keep_trailing_newline: True\nx\n",
            &FileOptions::default(),
        )
        .unwrap();
        assert_eq!(body, "x\n");
        let (body, options) = apply("plain {{ x }}\n", &FileOptions::default()).unwrap();
        assert_eq!(body, "plain {{ x }}");
        assert_eq!(options.variable.0, "{{");
    }

    #[test]
    fn reads_line_prefixes() {
        let (_, options) = apply(
            "#jinja2: line_statement_prefix:\":\"\nx\n",
            &FileOptions::default(),
        )
        .unwrap();
        assert_eq!(options.line_statement_prefix.as_deref(), Some(":"));
        let (_, options) = apply(
            "#jinja2: line_statement_prefix: None\nx\n",
            &FileOptions::default(),
        )
        .unwrap();
        assert_eq!(options.line_statement_prefix, None);
    }

    #[test]
    fn trailing_newlines_are_restored_as_counted() {
        let restored = |source: &str, text: &str| {
            let mut text = text.to_string();
            restore_newlines(source, &mut text);
            text
        };
        assert_eq!(restored("x\n\n", "x\n"), "x\n\n");
        assert_eq!(restored("{{ m() }}\n", "a\n"), "a\n");
        assert_eq!(restored("x", "y\n"), "y\n");
        assert_eq!(restored("{# c #}\n", ""), "");
    }

    #[test]
    fn refuses_what_it_cannot_apply() {
        let refused = |text: &str| {
            apply(text, &FileOptions::default())
                .err()
                .map(|e| e.to_string())
        };
        for (text, why) in [
            (
                "#jinja2: trim_blocks=True\nx",
                "Missing key-value separator `:` in '#jinja2:' override pair ' trim_blocks=True'.",
            ),
            (
                "#jinja2: trim_blocks: True,\nx",
                "Empty '#jinja2:' override pair not allowed.",
            ),
            (
                "#jinja2: other: 1\nx",
                "Invalid '#jinja2:' override key 'other'.",
            ),
            (
                "#jinja2: trim_blocks: True",
                "Missing newline after '#jinja2:' override.",
            ),
        ] {
            assert!(refused(text).is_some_and(|e| e.contains(why)), "{text}");
        }
        assert!(
            refused("#jinja2: line_comment_prefix:'##'\nx")
                .is_some_and(|e| e.contains("not supported"))
        );
        assert!(
            refused("#jinja2: newline_sequence:'\\r\\n'\nx")
                .is_some_and(|e| e.contains("not supported"))
        );
        assert!(
            refused("#jinja2: trim_blocks: yes\nx").is_some_and(|e| e.contains("Python literal"))
        );
    }
}
