//! Conditionals as ansible-core 2.19 evaluates them (`when`, `assert`'s `that`,
//! `changed_when`, `failed_when`, `until`): a boolean result required unless
//! `ALLOW_BROKEN_CONDITIONALS`, templates around an expression deprecated, and text
//! that data brought never evaluated as an expression.

use std::sync::Arc;

use minijinja::Value;

use crate::template::Templar;
use crate::template::engine_errors::{engine_error, eval, native, undefined_result};
use crate::template::error::TemplateError;
use crate::template::filters;
use crate::template::scope::{Call, Scope, is_template, single_expression};
use crate::template::templar::guards_undefined;
use crate::template::vars::Vars;

impl Templar {
    /// Evaluates a conditional as Ansible evaluates `when`: a YAML bool is itself, a
    /// string is an expression (one wrapped in `{{ }}` is accepted, without templating it
    /// twice), a list holds when all its conditionals do, an empty conditional holds. The
    /// result's truthiness is Jinja's; an undefined result is an error, and so is an
    /// empty one (blank text, or null in a list), as ansible-core 2.19 refuses it.
    pub fn conditional(
        &self,
        cond: &serde_json::Value,
        vars: &Vars,
    ) -> Result<bool, TemplateError> {
        match cond {
            serde_json::Value::Null => Ok(true),
            serde_json::Value::Bool(b) => Ok(*b),
            serde_json::Value::Number(n) => boolean_result(&n.to_string(), cond),
            serde_json::Value::String(text) if text.trim().is_empty() => {
                Err(TemplateError::empty_conditional(cond))
            }
            // Whitespace around a conditional is no part of it (ansible-core strips it).
            serde_json::Value::String(text) => {
                let text = text.trim();
                self.guarded(
                    || guards_undefined(text),
                    |env| conditional_str(&Call::new(env.clone(), vars), text),
                )
            }
            serde_json::Value::Array(items) => {
                for item in items {
                    if item.is_null() {
                        return Err(TemplateError::empty_conditional(item));
                    }
                    if !self.conditional(item, vars)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            // `when: !unsafe …`: data marked untrusted is never evaluated.
            serde_json::Value::Object(_) if let Some(text) = super::view::unsafe_mark(cond) => {
                Err(TemplateError::untrusted(
                    &text.as_str().map_or_else(|| text.to_string(), str::to_string),
                ))
            }
            serde_json::Value::Object(_) => Err(TemplateError::Conditional {
                condition: cond.to_string(),
                detail: "a conditional must be a boolean, an expression or a list of them, not a mapping".into(),
            }),
        }
    }

    /// The conditionals an `assert`'s `that` holds: a list's items; the items of the
    /// trusted list a template names (`that: "{{ checks }}"`, `"{{ item.checks }}"`: a
    /// variable, its attributes and items, as ansible-core
    /// templates the argument first; items marked `!unsafe` stay marked, so they are
    /// refused, never evaluated); else the value alone. A null `that` (or item) is refused
    /// as empty.
    pub fn conditions(
        &self,
        that: &serde_json::Value,
        vars: &Vars,
    ) -> Result<Vec<serde_json::Value>, TemplateError> {
        Ok(match that {
            serde_json::Value::Null => return Err(TemplateError::empty_conditional(that)),
            serde_json::Value::Array(items) => {
                if let Some(null) = items.iter().find(|item| item.is_null()) {
                    return Err(TemplateError::empty_conditional(null));
                }
                items.clone()
            }
            serde_json::Value::String(text) => {
                match single_expression(text)
                    .and_then(|inner| super::trust::named_trusted(inner, vars))
                {
                    Some(serde_json::Value::Array(items)) => items.clone(),
                    _ => vec![that.clone()],
                }
            }
            other => vec![other.clone()],
        })
    }
}

/// A conditional string: a bare expression, or one `{{ expr }}`.
fn conditional_str(scope: &Arc<Scope>, text: &str) -> Result<bool, TemplateError> {
    // A template of trusted variables naming an expression (`when: "{{ check }}"` with
    // `check: "x == 1"`) evaluates that expression, as ansible-core 2.19 does; what a
    // module or a fact brought is never evaluated.
    if let Some(named) = trusted_template_value(scope, text)?
        && let Some(named) = named.as_str()
    {
        return conditional_expression(scope, named);
    }
    conditional_expression(scope, text)
}

/// The value of `text` when it is one `{{ expr }}` that reads only trusted variables
/// (and is not a literal, which [`conditional_expression`] refuses).
fn trusted_template_value(scope: &Arc<Scope>, text: &str) -> Result<Option<Value>, TemplateError> {
    match single_expression(text) {
        Some(inner)
            if scope.passes_trust(&serde_json::Value::String(text.to_string()))
                && !scope.is_literal(inner)
                && scope.undefined_variable(inner).is_none() =>
        {
            Ok(Some(eval(scope, inner)?))
        }
        _ => Ok(None),
    }
}

fn conditional_expression(scope: &Arc<Scope>, text: &str) -> Result<bool, TemplateError> {
    // Templates around an expression's parts (`{{ a }} == {{ b }}`) make text, which is
    // never evaluated as an expression, as ansible-core 2.19 refuses it.
    if let Some(inner) = single_expression(text)
        && minijinja::machinery::parse_expr(inner).is_err()
    {
        render_embedded(scope, text)?;
        return Err(TemplateError::untrusted(text));
    }
    let rendered;
    let kept;
    let expr = match single_expression(text) {
        // A literal string in a template (`{{ '1 == 1' }}`) is text, never an
        // expression to evaluate: ansible-core 2.19 refuses it.
        // So is text that data brought (`{{ result.stdout }}`).
        Some(inner)
            if (scope.is_literal(inner)
                || !scope.passes_trust(&serde_json::Value::String(text.to_string())))
                && eval(scope, inner)?.as_str().is_some() =>
        {
            return Err(TemplateError::untrusted(text));
        }
        // A conditional written as a template is templated as a value is: its string
        // constants keep their backslashes. ansible-core 2.19 deprecates it.
        Some(inner) => {
            super::deprecate(
                "Conditionals should not be surrounded by templating delimiters such as {{ }} or {% %}.",
                "2.23",
                String::new(),
                Some(super::About::Text(text.to_string())),
            );
            kept = scope.value_expression(inner);
            &kept
        }
        // Templates inside the expression's strings (`x == "{{ y }}"`) are rendered
        // first, as ansible-core 2.19 still does.
        // Those given to a lookup are its to template (`lookup('x', '{{ y }}')`): with
        // what is undefined in them as undefined terms, as in ansible-core 2.19.
        None if is_template(text) && super::percent::templates_only_in_lookup_terms(text) => text,
        None if is_template(text) => {
            rendered = render_embedded(scope, text)?;
            rendered.as_str()
        }
        None if text.trim().is_empty() => return Ok(true),
        None => text,
    };
    let value = eval(scope, expr)?;
    if value.is_undefined() {
        return Err(undefined_result(scope, expr, &format!("{{{{ {expr} }}}}")));
    }
    if value.kind() == minijinja::value::ValueKind::Bool {
        return Ok(value.is_true());
    }
    // The value as Ansible's native types have it (a trusted `"{{ x == 1 }}"` is a
    // boolean, not text).
    boolean_result(
        text,
        &native(scope, &value, expr, &format!("{{{{ {expr} }}}}"))?,
    )
}

/// A conditional's result must be a boolean, as ansible-core 2.19 requires, unless
/// `ALLOW_BROKEN_CONDITIONALS` (`ANSIBLE_ALLOW_BROKEN_CONDITIONALS`, or
/// `allow_broken_conditionals` in ansible.cfg) lets its truth stand.
fn boolean_result(condition: &str, value: &serde_json::Value) -> Result<bool, TemplateError> {
    static ALLOW: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let truth = sandball_pycompat::pyops::py_truth(value);
    if value.is_boolean()
        || *ALLOW.get_or_init(|| {
            crate::config::settings().flag("ANSIBLE_ALLOW_BROKEN_CONDITIONALS", false)
        })
    {
        return Ok(truth);
    }
    Err(TemplateError::Conditional {
        condition: condition.to_string(),
        detail: format!(
            "Conditional result ({}) was derived from value of type '{}'. Conditionals must have a boolean result.",
            if truth { "True" } else { "False" },
            filters::python_type(&crate::template::convert::from_json(value))
        ),
    })
}

/// A condition's embedded templates (`"foo" in {{ result.stdout }}`) rendered into
/// the expression text, as ansible-core 2.19 still renders them — but a template that
/// reads untrusted data (a module's result, facts, other hosts' variables) may only
/// bring a literal: data that reads as an expression (`lookup('pipe', …)`) is never
/// evaluated, as ansible-core refuses it ("Encountered untrusted template or
/// expression").
fn render_embedded(scope: &Arc<Scope>, text: &str) -> Result<String, TemplateError> {
    let untrusted = || TemplateError::untrusted(text);
    if text.contains("{%") || text.contains("{#") {
        // Statements are rendered whole, and only when they read trusted variables.
        if !scope.template_reads_only_trusted(text) {
            return Err(untrusted());
        }
        return scope
            .render_text(text)
            .map_err(|err| engine_error(scope, &err, text));
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let Some(len) = rest[start..].find("}}") else {
            break;
        };
        let chunk = &rest[start..start + len + 2];
        let expr = &chunk[2..chunk.len() - 2];
        let value = scope
            .render_text(chunk)
            .map_err(|err| engine_error(scope, &err, text))?;
        out.push_str(&rest[..start]);
        // Inside a quoted string (`x == "{{ name }}"`), data stays text as long as it
        // cannot close the quotes; elsewhere it must be a literal, unless trusted.
        let safe = match open_quote(&out) {
            Some(q) => !value.contains(q) && !value.contains('\\'),
            None => scope.is_literal(&value),
        };
        if !safe && !scope.reads_only_trusted(expr) {
            return Err(untrusted());
        }
        out.push_str(&value);
        rest = &rest[start + len + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The quote character a string literal still open at the end of `expr` started with.
fn open_quote(expr: &str) -> Option<char> {
    super::operands::outside_strings(expr, |_| {})
}

#[cfg(test)]
mod tests {
    use crate::template::Templar;
    use crate::template::templar::tests::vars;
    use serde_json::json;

    #[test]
    fn text_marked_untrusted_in_a_trusted_variable_is_never_an_expression() {
        let t = Templar::new();
        let unsafe_text = json!({ crate::yaml::UNSAFE_KEY: "1 == 1" });
        let v = vars(json!({"x": [unsafe_text], "y": ["1 == 1"]}));
        for cond in ["{{ x | first }}", "{{ x[0] }}", "{{ x | join }}"] {
            let err = t.conditional(&json!(cond), &v).unwrap_err();
            assert_eq!(err.detail(), crate::template::UNTRUSTED, "{cond}");
        }
        // The same text written in the playbook is an expression.
        assert!(t.conditional(&json!("{{ y | first }}"), &v).unwrap());
    }

    #[test]
    fn a_template_naming_a_trusted_list_holds_its_conditions() {
        let t = Templar::new();
        let unsafe_text = json!({ crate::yaml::UNSAFE_KEY: "1 == 1" });
        let v = vars(json!({
            "c": {"checks": ["1 == 1", "a == 2"]},
            "l": [["x"]],
            "u": {"checks": [unsafe_text]},
        }));
        for (that, want) in [
            ("{{ c.checks }}", json!(["1 == 1", "a == 2"])),
            ("{{ c['checks'] }}", json!(["1 == 1", "a == 2"])),
            ("{{ l[0] }}", json!(["x"])),
            // Marked text stays marked, so it is refused.
            ("{{ u.checks }}", json!([unsafe_text])),
            // What is computed is one conditional.
            ("{{ c.checks | list }}", json!(["{{ c.checks | list }}"])),
        ] {
            let got = t.conditions(&json!(that), &v).unwrap();
            assert_eq!(serde_json::Value::Array(got), want, "{that}");
        }
    }

    #[test]
    fn conditionals_like_when() {
        let t = Templar::new();
        let v = vars(json!({"x": 1, "flag": "{{ x == 1 }}", "empty": [], "r": {"rc": 0}}));
        let holds = |cond: serde_json::Value| t.conditional(&cond, &v).unwrap();
        assert!(holds(json!(true)));
        assert!(!holds(json!(false)));
        assert!(holds(json!(null)));
        assert!(holds(json!("x == 1")));
        assert!(!holds(json!("x == 2")));
        assert!(holds(json!("{{ x == 1 }}")));
        assert!(holds(json!("flag")));
        assert!(!holds(json!("empty is truthy")));
        // ansible-core 2.19 wants a boolean result.
        let err = t.conditional(&json!("empty"), &v).unwrap_err().to_string();
        assert!(
            err.contains("Conditional result (False) was derived from value of type 'list'. Conditionals must have a boolean result."),
            "{err}"
        );
        let err = t.conditional(&json!(1), &v).unwrap_err().to_string();
        assert!(
            err.contains("(True) was derived from value of type 'int'"),
            "{err}"
        );
        assert!(holds(json!("r.rc == 0 and x is defined")));
        assert!(holds(json!(["x == 1", "flag"])));
        assert!(!holds(json!(["x == 1", "x == 2"])));
        assert!(holds(json!("not nope is defined")));
        let err = t.conditional(&json!("nope"), &v).unwrap_err().to_string();
        assert!(err.starts_with("'nope' is undefined"), "{err}");
        let err = t
            .conditional(&json!("nope == 'x'"), &v)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("'nope' is undefined"), "{err}");
        // Templates inside the expression are rendered first, as ansible-core 2.19
        // still does (with a deprecation warning).
        assert!(holds(json!("x == {{ x }}")));
        assert!(holds(json!("'{{ x }}' == '1'")));
        assert!(t.conditional(&json!({"a": 1}), &v).is_err());
    }

    #[test]
    fn conditionals_as_ansible_core_2_19_reads_them() {
        let t = Templar::new();
        let v = vars(json!({"who": "dude", "flag": true}));
        let holds = |c: &str| t.conditional(&json!(c), &v);
        // Whitespace around a conditional is no part of it.
        assert!(holds("{{ dict({'a': '{{ 1 }}'})['a'] == '{' + '{ 1 }}' }}\n").unwrap());
        // A conditional written as a template is deprecated, and registered so.
        let (held, kept) = crate::template::deprecations_of(|| holds("{{ flag }}"));
        assert!(held.unwrap());
        let mut result = serde_json::Map::new();
        crate::plugins::action::summaries::register_deprecations(&mut result, &kept);
        let registered = result["deprecations"].clone();
        assert_eq!(
            registered,
            json!([{
                "collection_name": "ansible.builtin",
                "deprecator": {"resolved_name": "ansible.builtin", "type": null},
                "msg": "Conditionals should not be surrounded by templating delimiters such as {{ }} or {% %}.",
                "version": "2.23",
            }])
        );
        let (_, registered) = crate::template::deprecations_of(|| holds("flag"));
        assert!(registered.is_empty());
        // Templates around an expression's parts make text, never evaluated.
        let refused = holds("{{ 'a' }} == {{ 'a' }}").unwrap_err();
        assert!(refused.to_string().contains("untrusted"), "{refused}");
        // A lookup's constant terms holding templates are rendered (with a warning),
        // in a template too; other functions' constants in a template are not (the
        // first case), nor the lookup's name.
        assert!(holds("lookup('vars', '{{ \"who\" }}') == 'dude'").unwrap());
        assert!(holds("{{ query('items', 'a{{ 1 }}') == ['a1'] }}").unwrap());
        assert!(holds("{{ lookup('{{ \"vars\" }}', 'who') == 'dude' }}").is_err());
        let shown = crate::template::take_warnings();
        assert!(
            shown
                .iter()
                .any(|n| matches!(n, crate::template::Notice::Warning(w)
                if w.text.starts_with("Jinja constant strings should not contain embedded templates."))),
            "{shown:?}"
        );
    }
}
