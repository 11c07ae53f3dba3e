//! Errors of templating, worded as Ansible words them ("'foo' is undefined"), each naming
//! the template or expression that failed and, for multi-line templates, the line.

use std::fmt;

/// The `mandatory` filter's error for an undefined value; the template's error puts the
/// name of the variable in it, as ansible-core says "Mandatory variable 'x' not defined.".
pub(crate) const MANDATORY: &str = "Mandatory variable not defined.";

/// Why ansible-core 2.19 refuses to evaluate text a template made or data brought.
pub(crate) const UNTRUSTED: &str = "Encountered untrusted template or expression.";

/// ansible-core 2.19's refusal of a conditional that is empty text or null.
pub(crate) const EMPTY_CONDITIONAL: &str = "Empty conditional expressions are not allowed.";

/// How ansible-core 2.19 introduces a syntax error (an unknown filter or test too).
pub(crate) const SYNTAX_ERROR: &str = "Syntax error in template: ";

/// How ansible-core 2.19 introduces an operation of a bare expression that failed.
const RENDERING_EXPRESSION: &str = "Error rendering expression: ";

/// Longest excerpt of a template quoted in an error message.
const EXCERPT_CHARS: usize = 200;

/// Why templating a value failed.
#[derive(Debug, thiserror::Error)]
pub enum TemplateError {
    /// A variable or attribute the template uses is not defined.
    #[error("{detail}{}", Context(template, *line))]
    Undefined {
        /// What is undefined, e.g. `'foo' is undefined`.
        detail: String,
        /// The template or expression being evaluated.
        template: String,
        /// The line of the template, for templates of several lines.
        line: Option<usize>,
        /// Whether the undefined value was met reading an attribute or item of another
        /// undefined value (`nope.a`, `nope['a']`), which Ansible lets through (the
        /// result is undefined), where the strict engine stops.
        chained: bool,
        /// The template that met the undefined value, when it is a variable's that
        /// `template` uses rather than `template` itself.
        inner: Option<String>,
    },
    /// The template is not valid Jinja.
    #[error("template syntax error: {detail}{}", Context(template, *line))]
    Syntax {
        /// The parser's complaint.
        detail: String,
        /// The template or expression being parsed.
        template: String,
        /// The line of the template, for templates of several lines.
        line: Option<usize>,
    },
    /// Evaluation failed: a filter or test refused its input, an operation did not apply
    /// to its operands, a variable refers to itself.
    #[error("{detail}{}", Context(template, *line))]
    Render {
        /// What went wrong.
        detail: String,
        /// The template or expression being evaluated.
        template: String,
        /// The line of the template, for templates of several lines.
        line: Option<usize>,
    },
    /// A conditional (`when`, `that`, `failed_when`, ...) is not an expression that can be
    /// evaluated.
    #[error("invalid conditional {condition:?}: {detail}")]
    Conditional {
        /// The conditional as written.
        condition: String,
        /// Why it cannot be evaluated.
        detail: String,
    },
}

/// How ansible-core 2.19 introduces a conditional that could not be evaluated.
pub const CONDITIONAL_ERROR: &str = "Error while evaluating conditional: ";

impl TemplateError {
    /// What went wrong, without the template it went wrong in.
    pub fn detail(&self) -> &str {
        match self {
            TemplateError::Undefined { detail, .. }
            | TemplateError::Syntax { detail, .. }
            | TemplateError::Render { detail, .. }
            | TemplateError::Conditional { detail, .. } => detail,
        }
    }

    /// The template or expression that failed: the variable's whose own template met
    /// an undefined value, else the one given.
    pub fn template(&self) -> Option<&str> {
        match self {
            TemplateError::Undefined {
                inner: Some(inner), ..
            } => Some(inner),
            TemplateError::Undefined { template, .. }
            | TemplateError::Syntax { template, .. }
            | TemplateError::Render { template, .. } => Some(template),
            TemplateError::Conditional { condition, .. } => Some(condition),
        }
    }

    /// The variable's template that met an undefined value, when it is not the one
    /// given.
    pub fn inner(&self) -> Option<&str> {
        match self {
            TemplateError::Undefined { inner, .. } => inner.as_deref(),
            _ => None,
        }
    }

    /// What went wrong as ansible-core 2.19 says it after "Error while resolving value
    /// for 'msg': " or "Error while evaluating conditional: ": the detail, a syntax
    /// error introduced as one.
    pub fn cause(&self) -> String {
        match self {
            TemplateError::Syntax { detail, .. } => format!("{SYNTAX_ERROR}{detail}"),
            other => other.detail().to_string(),
        }
    }

    /// A task's message for a conditional (`when`, `that`, `failed_when`…) that could
    /// not be evaluated, as ansible-core 2.19 words it.
    pub fn conditional_failure(&self) -> String {
        format!("Task failed: {}", self.conditional_error())
    }

    /// Why a conditional could not be evaluated, as ansible-core 2.19 words it (a
    /// loop's `break_when` fails with these words alone).
    pub fn conditional_error(&self) -> String {
        match self {
            // Refused before anything is evaluated.
            TemplateError::Conditional { detail, .. }
                if detail == UNTRUSTED || detail == EMPTY_CONDITIONAL =>
            {
                detail.clone()
            }
            // An operation or a plugin that failed is named alone.
            TemplateError::Render { detail, .. }
                if detail.starts_with(RENDERING_EXPRESSION) || named_plugin(detail) =>
            {
                detail.clone()
            }
            _ => format!("{CONDITIONAL_ERROR}{}", self.cause()),
        }
    }

    /// The error for text that is data, not an expression to evaluate.
    pub(crate) fn untrusted(condition: &str) -> TemplateError {
        TemplateError::Conditional {
            condition: condition.to_string(),
            detail: UNTRUSTED.into(),
        }
    }

    /// The error for a conditional that is empty text, or null inside a list.
    pub(crate) fn empty_conditional(condition: &serde_json::Value) -> TemplateError {
        TemplateError::Conditional {
            condition: condition.to_string(),
            detail: EMPTY_CONDITIONAL.into(),
        }
    }

    /// Wraps an error of minijinja raised while evaluating `template`.
    pub(crate) fn from_engine(err: &minijinja::Error, template: &str) -> TemplateError {
        let detail = engine_detail(err);
        let template = template.to_string();
        let line = if template.contains('\n') {
            err.line()
        } else {
            None
        };
        if let Some(name) = undefined_operand(err, &detail) {
            return TemplateError::Undefined {
                detail: format!("'{name}' is undefined"),
                template,
                line,
                chained: false,
                inner: None,
            };
        }
        match err.kind() {
            minijinja::ErrorKind::UndefinedError => TemplateError::Undefined {
                chained: reads_attribute(err, &template),
                detail,
                template,
                line,
                inner: None,
            },
            minijinja::ErrorKind::SyntaxError
            | minijinja::ErrorKind::BadEscape
            | minijinja::ErrorKind::InvalidDelimiter => TemplateError::Syntax {
                detail,
                template,
                line,
            },
            _ => TemplateError::Render {
                detail: match failed_plugin(err, &template) {
                    Some(_) if unknown_plugin(err) => detail,
                    // A Python plugin's failure comes named by ansible-core.
                    Some(_) if named_plugin(&detail) => detail,
                    Some((kind, name)) => format!("The {kind} plugin '{name}' failed: {detail}"),
                    // A lookup's failure or absence, named as ansible-core names it.
                    None if named_plugin(&detail) => detail,
                    // An operation that failed, as ansible-core 2.19 introduces it.
                    None if err.kind() == minijinja::ErrorKind::InvalidOperation
                        && !detail.starts_with("recursive loop") =>
                    {
                        if super::is_template(&template) {
                            format!("Error rendering template: {detail}")
                        } else {
                            format!("{RENDERING_EXPRESSION}{detail}")
                        }
                    }
                    None => detail,
                },
                template,
                line,
            },
        }
    }
}

/// Whether the engine stopped on an attribute or item of an undefined value: the part of
/// the template it points at (in `template` or in its one `{{ expression }}`) ends with
/// `.name` or `[…]`.
fn reads_attribute(err: &minijinja::Error, template: &str) -> bool {
    static ACCESS: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?:\.\s*[A-Za-z_][A-Za-z0-9_]*|\])$")
            .expect("the access pattern is valid")
    });
    let Some(range) = err.range() else {
        return false;
    };
    [Some(template), super::scope::single_expression(template)]
        .into_iter()
        .flatten()
        .filter_map(|text| text.get(range.clone()))
        .any(|part| ACCESS.is_match(part.trim_end()))
}

/// The undefined value an arithmetic operation was given (`nope + 1`, `-nope`), which
/// the engine reports as an operation on unsupported types naming that value, where
/// ansible-core reports the undefined value.
fn undefined_operand<'d>(err: &minijinja::Error, detail: &'d str) -> Option<&'d str> {
    if err.kind() != minijinja::ErrorKind::InvalidOperation {
        return None;
    }
    let origin = match detail.strip_prefix("tried to use ") {
        Some(rest) if rest.contains(" unsupported types ") => {
            let (types, origin) = rest.rsplit_once(" (`")?;
            if !types.ends_with(" undefined") && !types.contains(" undefined and ") {
                return None;
            }
            origin.strip_suffix(')')?
        }
        Some(_) => return None,
        None => detail.strip_prefix('`')?,
    };
    origin.strip_suffix("` is undefined")
}

/// Whether the error is that there is no such filter or test.
fn unknown_plugin(err: &minijinja::Error) -> bool {
    matches!(
        err.kind(),
        minijinja::ErrorKind::UnknownFilter | minijinja::ErrorKind::UnknownTest
    )
}

/// Whether a failure's message names its plugin already (ansible-core's message for a
/// Python plugin: "The filter plugin 'x' failed: …").
fn named_plugin(detail: &str) -> bool {
    ["filter", "test", "lookup"]
        .iter()
        .any(|kind| detail.starts_with(&format!("The {kind} plugin '")))
}

/// The filter or test whose failure `err` is (`("filter", "ansible.builtin.combine")`),
/// as ansible-core names the plugin in its error: the engine points at the name after a
/// `|` or an `is`, in `template` or in its one `{{ expression }}`.
fn failed_plugin(err: &minijinja::Error, template: &str) -> Option<(&'static str, String)> {
    let range = err.range()?;
    let texts = [Some(template), super::scope::single_expression(template)];
    texts.into_iter().flatten().find_map(|text| {
        let named = text.get(range.clone())?;
        let start = range.start + (named.len() - named.trim_start().len());
        let name: String = named
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '.')
            .collect();
        // A full name's prefix (blanked in what the engine compiled) is left before it.
        let before = text.get(..start)?;
        let before = super::percent::BUILTIN_PREFIXES
            .iter()
            .find_map(|p| before.strip_suffix(p))
            .unwrap_or(before)
            .trim_end();
        let kind = if before.ends_with('|') {
            "filter"
        } else if before.ends_with(" is")
            || before
                .strip_suffix(" not")
                .is_some_and(|b| b.trim_end().ends_with(" is"))
        {
            "test"
        } else {
            return None;
        };
        if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
            return None;
        }
        let name = if name.contains('.') {
            name
        } else {
            format!("ansible.builtin.{name}")
        };
        Some((kind, name))
    })
}

/// The message of an engine error in Ansible's words: minijinja quotes undefined names
/// with backticks, Ansible with single quotes.
pub(crate) fn engine_detail(err: &minijinja::Error) -> String {
    let detail = match err.detail() {
        Some(detail) => detail.to_string(),
        None => err.kind().to_string(),
    };
    let unknown = |what: &str| {
        detail
            .strip_prefix(&format!("{what} "))
            .and_then(|d| d.strip_suffix(" is unknown"))
            .map(|name| format!("{SYNTAX_ERROR}No {what} named '{name}'."))
    };
    match err.kind() {
        minijinja::ErrorKind::UndefinedError => detail.replace('`', "'"),
        minijinja::ErrorKind::UnknownFilter => unknown("filter").unwrap_or(detail),
        minijinja::ErrorKind::UnknownTest => unknown("test").unwrap_or(detail),
        _ => zero_division(&detail).unwrap_or(detail),
    }
}

/// Python's words for a division by zero the engine reports as "unable to calculate
/// 5 / 0": `division by zero`, `integer division or modulo by zero`…
fn zero_division(detail: &str) -> Option<String> {
    let expr = detail.strip_prefix("unable to calculate ")?;
    let (left, op, right) = ["//", "/", "%"].iter().find_map(|op| {
        expr.rsplit_once(&format!(" {op} "))
            .map(|(l, r)| (l, *op, r))
    })?;
    let right: f64 = right.trim().parse().ok()?;
    if right != 0.0 {
        return None;
    }
    let float = left.contains('.') || expr.rsplit(' ').next().is_some_and(|r| r.contains('.'));
    Some(
        match (op, float) {
            ("/", false) => "division by zero",
            ("/", true) => "float division by zero",
            ("//", false) => "integer division or modulo by zero",
            ("//", true) => "float floor division by zero",
            (_, false) => "integer modulo by zero",
            (_, true) => "float modulo by zero",
        }
        .to_string(),
    )
}

/// Formats the template excerpt and line that close every message.
struct Context<'a>(&'a str, Option<usize>);

impl fmt::Display for Context<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Context(template, line) = *self;
        let excerpt: String = template.chars().take(EXCERPT_CHARS).collect();
        let ellipsis = if excerpt.len() < template.len() {
            "..."
        } else {
            ""
        };
        match line {
            Some(line) => write!(f, " (line {line} of template {excerpt:?}{ellipsis})"),
            None => write!(f, " (in template {excerpt:?}{ellipsis})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn division_by_zero_in_pythons_words() {
        let env = minijinja::Environment::new();
        let detail = |t: &str| engine_detail(&env.render_str(t, ()).unwrap_err());
        assert_eq!(detail("{{ 5 / 0 }}"), "division by zero");
        assert_eq!(detail("{{ 5 // 0 }}"), "integer division or modulo by zero");
        assert_eq!(detail("{{ 5 % 0 }}"), "integer modulo by zero");
        assert_eq!(detail("{{ 5.0 / 0 }}"), "float division by zero");
    }

    #[test]
    fn undefined_names_are_quoted_like_ansible() {
        let mut env = minijinja::Environment::new();
        env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
        env.set_debug(true);
        let err = env.render_str("{{ foo }}", ()).unwrap_err();
        let err = TemplateError::from_engine(&err, "{{ foo }}");
        assert!(matches!(err, TemplateError::Undefined { .. }));
        assert_eq!(
            err.to_string(),
            "'foo' is undefined (in template \"{{ foo }}\")"
        );
    }

    #[test]
    fn multi_line_templates_name_the_line() {
        let mut env = minijinja::Environment::new();
        env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
        env.set_debug(true);
        let source = "a\nb {{ nope }}";
        let err = env.render_str(source, ()).unwrap_err();
        let err = TemplateError::from_engine(&err, source);
        assert_eq!(
            err.to_string(),
            "'nope' is undefined (line 2 of template \"a\\nb {{ nope }}\")"
        );
    }

    #[test]
    fn syntax_errors_are_their_own_kind() {
        let env = minijinja::Environment::new();
        let err = env.render_str("{{ foo", ()).unwrap_err();
        let err = TemplateError::from_engine(&err, "{{ foo");
        assert!(matches!(err, TemplateError::Syntax { .. }), "{err}");
        assert!(err.to_string().starts_with("template syntax error: "));
    }

    #[test]
    fn long_templates_are_cut_in_messages() {
        let template = "x".repeat(500);
        let err = TemplateError::Render {
            detail: "boom".into(),
            template: template.clone(),
            line: None,
        };
        let text = err.to_string();
        assert!(text.len() < 300);
        assert!(text.ends_with("...)"));
    }
}
