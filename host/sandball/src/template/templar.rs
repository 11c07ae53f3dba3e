//! The Templar: one configured minijinja environment (Ansible's filters, tests, strict
//! undefined, Python text forms) and the operations the executor needs: template a
//! task's values, evaluate an expression, evaluate a conditional.

use std::sync::Arc;

use minijinja::syntax::SyntaxConfig;
use minijinja::{AutoEscape, Environment, UndefinedBehavior, Value};

use crate::template::OMIT;
use crate::template::convert::{to_json, to_json_omitting_undefined};
use crate::template::error::TemplateError;
use crate::template::scope::{Call, Scope, is_template, single_expression};
use crate::template::undefined::Plugins;
use crate::template::vars::Vars;
use crate::template::vaulted::{use_error, vault_mark};
use crate::template::view::unsafe_mark;
use crate::template::{filters, jinja_tests, methods, python};

/// Ansible's Templar on minijinja: renders values against the variables of one task on
/// one host. Cheap to share: one instance serves every task and host.
#[derive(Debug, Clone)]
pub struct Templar {
    env: Arc<Environment<'static>>,
    /// The same environment where an attribute of an undefined value is undefined
    /// (printing one, or an operation on one, is still an error: see `operands.rs`): a
    /// template that failed reading an attribute of
    /// an undefined value and guards against one (`default`, `is defined`) is evaluated
    /// again in it, as Ansible lets `{{ a.b | default('x') }}` and `a.b is defined`
    /// through when `a` is undefined.
    chained: Arc<Environment<'static>>,
}

impl Default for Templar {
    fn default() -> Self {
        Templar::new()
    }
}

impl Templar {
    /// A Templar with Ansible's filters, tests and settings ([`native_environment`]).
    pub fn new() -> Templar {
        let env = native_environment();
        let chained = chained(&env);
        Templar {
            env: Arc::new(env),
            chained: Arc::new(chained),
        }
    }

    /// Runs `op` in the strict environment and, when it fails reading an attribute of an
    /// undefined value and `source` guards against undefined values, again in the
    /// chained one; the strict error stands when the second run fails too.
    fn guarded<T>(
        &self,
        source: impl Fn() -> bool,
        op: impl Fn(&Arc<Environment<'static>>) -> Result<T, TemplateError>,
    ) -> Result<T, TemplateError> {
        match op(&self.env) {
            Err(e @ TemplateError::Undefined { chained: true, .. }) if source() => {
                op(&self.chained).map_err(|_| e)
            }
            other => other,
        }
    }

    /// Templates every string in a JSON value, recursively through lists and mappings
    /// (keys too). A string that is exactly one `{{ expr }}` yields the expression's
    /// native value (number, list, mapping, bool...); other strings with `{{`, `{%` or
    /// `{#` render to text; strings without them come back unchanged, without rendering.
    pub fn template(
        &self,
        value: &serde_json::Value,
        vars: &Vars,
    ) -> Result<serde_json::Value, TemplateError> {
        if !needs_templating(value) {
            return Ok(value.clone());
        }
        self.guarded(
            || guards_undefined_value(value),
            |env| template_value(&Call::new(env.clone(), vars), value),
        )
    }

    /// [`Templar::template`] as ansible-core's `with_first_found` templates its terms:
    /// undefined values inside lists and mappings are left out (a mapping loses the
    /// key); `None` when the whole value is undefined.
    pub fn template_omitting_undefined(
        &self,
        value: &serde_json::Value,
        vars: &Vars,
    ) -> Result<Option<serde_json::Value>, TemplateError> {
        match self.template(value, vars) {
            Err(TemplateError::Undefined { .. }) => {
                walk(&Call::new(self.env.clone(), vars), value, true)
            }
            other => other.map(Some),
        }
    }

    /// Renders a template to text, whatever its shape; it ends with as many newlines as
    /// `source` does, or more.
    pub fn render(&self, source: &str, vars: &Vars) -> Result<String, TemplateError> {
        let body = super::overrides::without_trailing_newline(source);
        self.guarded(
            || guards_undefined(source),
            |env| {
                let scope = Call::new(env.clone(), vars);
                let mut text = scope
                    .render_text(body)
                    .map_err(|err| engine_error(&scope, &err, source))?;
                super::overrides::restore_newlines(source, &mut text);
                Ok(text)
            },
        )
    }

    /// Renders a template file's text with the `template` action's settings: its
    /// delimiters and whitespace control, and the directories (in order) where
    /// `{% include %}`, `{% import %}` and `{% extends %}` find other templates.
    pub fn render_file(
        &self,
        source: &str,
        vars: &Vars,
        options: &FileOptions,
    ) -> Result<String, TemplateError> {
        let (body, options) = super::overrides::apply(source, options)?;
        self.guarded(
            || guards_undefined(body),
            |env| render_file_in(env, body, source, vars, &options),
        )
    }

    /// Whether `expr` gives an undefined value where attributes of undefined values are
    /// undefined (`nope`, `nope.a`, `nope | lower`), rather than failing.
    pub(crate) fn gives_undefined(&self, expr: &str, vars: &Vars) -> bool {
        eval(&Call::new(self.chained.clone(), vars), expr).is_ok_and(|v| v.is_undefined())
    }

    /// Evaluates a bare Jinja expression (as in `when`, `that`, `changed_when`,
    /// `failed_when`) to a native value.
    pub fn evaluate(&self, expr: &str, vars: &Vars) -> Result<serde_json::Value, TemplateError> {
        self.guarded(
            || guards_undefined(expr),
            |env| {
                let scope = Call::new(env.clone(), vars);
                let value = eval(&scope, expr)?;
                native(&scope, &value, expr, &format!("{{{{ {expr} }}}}"))
            },
        )
    }

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

    /// Whether templating `raw` gives back trusted values only (see
    /// [`crate::template::trust`]): text made by a template is never evaluated.
    pub fn passes_trust(&self, raw: &serde_json::Value, vars: &Vars) -> bool {
        Call::new(self.env.clone(), vars).passes_trust(raw)
    }

    /// `templated` (what templating `raw` gave) with the text that templating made
    /// marked untrusted (`!unsafe`), leaf by leaf where the two have one shape; what
    /// passes trust through stays plain.
    pub fn mark_untrusted(
        &self,
        raw: &serde_json::Value,
        templated: &serde_json::Value,
        vars: &Vars,
    ) -> serde_json::Value {
        self.mark_untrusted_in(raw, templated, vars, 0)
    }

    fn mark_untrusted_in(
        &self,
        raw: &serde_json::Value,
        templated: &serde_json::Value,
        vars: &Vars,
        depth: usize,
    ) -> serde_json::Value {
        use serde_json::Value as Json;
        let recurse = |r: &Json, t: &Json| self.mark_untrusted_in(r, t, vars, depth);
        match (raw, templated) {
            // `{{ path }}` of a trusted variable: that variable's value, followed.
            (Json::String(text), t)
                if depth < super::trust::DEPTH
                    && let Some(named) = single_expression(text)
                        .and_then(|inner| super::trust::named_trusted(inner, vars)) =>
            {
                self.mark_untrusted_in(named, t, vars, depth + 1)
            }
            (Json::Array(r), Json::Array(t)) if r.len() == t.len() => {
                r.iter().zip(t).map(|(r, t)| recurse(r, t)).collect()
            }
            (Json::Object(r), Json::Object(t))
                if super::view::unsafe_mark(raw).is_none()
                    && r.len() == t.len()
                    && r.keys().all(|k| t.contains_key(k)) =>
            {
                t.iter()
                    .map(|(k, t)| {
                        let value = match r.get(k) {
                            Some(r) => recurse(r, t),
                            None => super::trust::untrusted(t.clone()),
                        };
                        (k.clone(), value)
                    })
                    .collect()
            }
            (raw, t) if self.passes_trust(raw, vars) => t.clone(),
            (_, t) => super::trust::untrusted(t.clone()),
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

/// [`Templar::render_file`] in one environment: `source` as the overrides left it,
/// `original` the file's text (whose trailing newlines the result gets back).
fn render_file_in(
    base: &Environment<'static>,
    source: &str,
    original: &str,
    vars: &Vars,
    options: &FileOptions,
) -> Result<String, TemplateError> {
    let mut env = base.clone();
    configure(&mut env, options).map_err(|e| TemplateError::from_engine(&e, source))?;
    let scope = Call::new(Arc::new(env), vars);
    scope
        .render_file_text(source, original)
        .map_err(|err| engine_error(&scope, &err, source))
}

/// Sets a template file's delimiters, whitespace control and search directories.
pub(crate) fn configure(
    env: &mut Environment<'_>,
    options: &FileOptions,
) -> Result<(), minijinja::Error> {
    let syntax = SyntaxConfig::builder()
        .block_delimiters(options.block.0.clone(), options.block.1.clone())
        .variable_delimiters(options.variable.0.clone(), options.variable.1.clone())
        .comment_delimiters(options.comment.0.clone(), options.comment.1.clone())
        .trim_blocks(options.trim_blocks)
        .lstrip_blocks(options.lstrip_blocks)
        .keep_trailing_newline(true)
        .build()?;
    env.set_syntax(syntax.clone());
    load_from(env, options.search.clone(), syntax);
    Ok(())
}

/// Makes `{% include %}`, `{% import %}` and `{% extends %}` find templates in `dirs`,
/// in order. A loaded template loses one trailing newline, as Jinja's templates do in
/// Ansible (only the outermost template keeps its own).
fn load_from(env: &mut Environment<'_>, dirs: Vec<std::path::PathBuf>, syntax: SyntaxConfig) {
    env.set_loader(move |name| {
        let Some(path) = dirs.iter().map(|d| d.join(name)).find(|p| p.is_file()) else {
            return Ok(None);
        };
        std::fs::read_to_string(&path)
            .map(|text| {
                let text = super::overrides::without_trailing_newline(&text);
                Some(super::percent::rewrite_template(text, &syntax).into_owned())
            })
            .map_err(|e| {
                minijinja::Error::new(
                    minijinja::ErrorKind::TemplateNotFound,
                    format!("cannot read {}: {e}", path.display()),
                )
            })
    });
}

/// The strict environment with Ansible's filters, tests and settings: undefined
/// variables are errors, blocks trim the newline after them, a trailing newline is
/// kept, nothing is HTML-escaped, values print as Python prints them, and `omit` is
/// defined.
pub(super) fn native_environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    // Debug mode names undefined variables in errors ("'foo' is undefined").
    env.set_debug(true);
    env.set_auto_escape_callback(|_| AutoEscape::None);
    let syntax = SyntaxConfig::builder()
        .trim_blocks(true)
        .keep_trailing_newline(true)
        .build();
    // Only custom delimiters can make the build fail; the defaults are kept.
    if let Ok(syntax) = syntax {
        env.set_syntax(syntax);
    }
    env.set_formatter(python::format_output);
    env.set_unknown_method_callback(methods::call_method);
    env.add_global("omit", OMIT);
    let mut plugins = Plugins::new(&mut env);
    filters::register(&mut plugins);
    super::jinja_globals::register(&mut plugins);
    jinja_tests::register(&mut plugins);
    crate::template::lookups::jinja::register(&mut plugins);
    crate::template::percent::register(&mut plugins);
    crate::template::operands::register(&mut plugins);
    crate::template::vaulted::register(&mut plugins);
    crate::template::plugin_calls::register(&mut plugins);
    crate::template::protomatter::register(&mut plugins);
    env
}

/// The strict environment with chained undefined values (see [`Templar`]'s `chained`).
fn chained(strict: &Environment<'static>) -> Environment<'static> {
    let mut env = strict.clone();
    env.set_undefined_behavior(UndefinedBehavior::Chainable);
    env.set_formatter(|out, state, value| {
        if value.is_undefined() {
            return Err(minijinja::Error::new(
                minijinja::ErrorKind::UndefinedError,
                "an undefined value cannot be printed",
            ));
        }
        python::format_output(out, state, value)
    });
    env
}

/// Whether a template guards against undefined values (`default`, `d(…)`, `is
/// defined`, `is undefined`): only such templates are evaluated again with chained
/// undefined values.
fn guards_undefined(source: &str) -> bool {
    // Words, not parts of names: `_undefined == 'yes'` guards nothing.
    static GUARD: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"\b(?:default|defined|undefined)\b|\bd\s*\(")
            .expect("the guard pattern is valid")
    });
    GUARD.is_match(source)
}

/// [`guards_undefined`] for any string in a value.
fn guards_undefined_value(value: &serde_json::Value) -> bool {
    match value {
        serde_json::Value::String(s) => guards_undefined(s),
        serde_json::Value::Array(items) => items.iter().any(guards_undefined_value),
        serde_json::Value::Object(map) => map
            .iter()
            .any(|(k, v)| guards_undefined(k) || guards_undefined_value(v)),
        _ => false,
    }
}

/// How a template file is read (the `template` action's options).
#[derive(Clone, Debug)]
pub struct FileOptions {
    /// `block_start_string`, `block_end_string`.
    pub block: (String, String),
    /// `variable_start_string`, `variable_end_string`.
    pub variable: (String, String),
    /// `comment_start_string`, `comment_end_string`.
    pub comment: (String, String),
    /// `trim_blocks`: the newline after a block tag is removed.
    pub trim_blocks: bool,
    /// `lstrip_blocks`: whitespace before a block tag on its line is removed.
    pub lstrip_blocks: bool,
    /// Where other templates are found, in order.
    pub search: Vec<std::path::PathBuf>,
}

impl Default for FileOptions {
    fn default() -> Self {
        let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
        FileOptions {
            block: pair("{%", "%}"),
            variable: pair("{{", "}}"),
            comment: pair("{#", "#}"),
            trim_blocks: true,
            lstrip_blocks: false,
            search: Vec::new(),
        }
    }
}

/// Whether any string (value or key) in `value` holds Jinja syntax, or an `!unsafe` mark
/// is to be unwrapped.
fn needs_templating(value: &serde_json::Value) -> bool {
    if unsafe_mark(value).is_some() || vault_mark(value).is_some() {
        return true;
    }
    match value {
        serde_json::Value::String(s) => is_template(s),
        serde_json::Value::Array(items) => items.iter().any(needs_templating),
        serde_json::Value::Object(map) => map
            .iter()
            .any(|(k, v)| is_template(k) || needs_templating(v)),
        _ => false,
    }
}

/// Templates every string in `value` ([`Templar::template`]).
fn template_value(
    scope: &Arc<Scope>,
    value: &serde_json::Value,
) -> Result<serde_json::Value, TemplateError> {
    walk(scope, value, false).map(Option::unwrap_or_default)
}

/// Templates every string in `value`; with `omit`, undefined values inside lists and
/// mappings are left out and an undefined result is `None`, else they are errors.
fn walk(
    scope: &Arc<Scope>,
    value: &serde_json::Value,
    omit: bool,
) -> Result<Option<serde_json::Value>, TemplateError> {
    // `!unsafe` text is given as it is, never templated.
    if let Some(inner) = unsafe_mark(value) {
        return Ok(Some(inner.clone()));
    }
    if let Some(text) = vault_mark(value) {
        return Err(TemplateError::from_engine(&use_error(text), ""));
    }
    Ok(Some(match value {
        serde_json::Value::String(s) if is_template(s) => {
            let rendered = match scope.render_str(s) {
                Err(err) if omit && err.kind() == minijinja::ErrorKind::UndefinedError => {
                    return Ok(None);
                }
                rendered => rendered.map_err(|err| engine_error(scope, &err, s))?,
            };
            if !omit {
                return native(scope, &rendered, s, s).map(Some);
            }
            return to_json_omitting_undefined(&rendered)
                .map_err(|err| engine_error(scope, &err, s));
        }
        serde_json::Value::Array(items) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                out.extend(walk(scope, item, omit)?);
            }
            serde_json::Value::Array(out)
        }
        serde_json::Value::Object(map) => {
            let mut out = serde_json::Map::with_capacity(map.len());
            for (key, item) in map {
                let key = if is_template(key) {
                    scope
                        .render_text(key)
                        .map_err(|err| engine_error(scope, &err, key))?
                } else {
                    key.clone()
                };
                if let Some(item) = walk(scope, item, omit)? {
                    out.insert(key, item);
                }
            }
            serde_json::Value::Object(out)
        }
        other => other.clone(),
    }))
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
            sandball_pycompat::boolean::env_flag("ANSIBLE_ALLOW_BROKEN_CONDITIONALS", false)
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

fn eval(scope: &Arc<Scope>, expr: &str) -> Result<Value, TemplateError> {
    scope
        .eval_expression(expr)
        .map_err(|err| engine_error(scope, &err, expr))
}

/// The JSON form of a native result of `template` (the text that produced it is `source`,
/// and `as_template` is that text as a template that prints it).
fn native(
    scope: &Arc<Scope>,
    value: &Value,
    source: &str,
    as_template: &str,
) -> Result<serde_json::Value, TemplateError> {
    if value.is_undefined() {
        return Err(undefined_result(scope, source, as_template));
    }
    to_json(value).map_err(|err| engine_error(scope, &err, source))
}

/// The error for a result that is undefined. Printing the expression in strict mode
/// fails with the engine's message naming the variable; that message is used.
fn undefined_result(scope: &Arc<Scope>, source: &str, as_template: &str) -> TemplateError {
    let err = match scope.render_text(as_template) {
        Err(err) => err,
        Ok(_) => minijinja::Error::new(
            minijinja::ErrorKind::UndefinedError,
            format!("'{}' is undefined", source.trim()),
        ),
    };
    engine_error(scope, &err, source)
}

/// For `base.name` (or `base['name']`) where `base` is defined but has no `name`: the
/// message ansible-core 2.19 gives ("object of type 'dict' has no attribute 'name'").
fn missing_attribute(scope: &Arc<Scope>, expr: &str) -> Option<String> {
    let subscript = ["'", "\""].iter().find_map(|q| {
        let (base, key) = expr
            .strip_suffix(&format!("{q}]"))?
            .rsplit_once(&format!("[{q}"))?;
        Some((base, key))
    });
    let (base, name) = match subscript {
        Some(found) => found,
        None => expr.rsplit_once('.')?,
    };
    let word = |w: &str| {
        w.chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
            && w.chars().all(|c| c.is_alphanumeric() || c == '_')
    };
    if !word(name) || !base.split('.').all(word) {
        return None;
    }
    let value = scope.eval_expression(base).ok()?;
    if value.is_undefined() || value.is_none() {
        return None;
    }
    Some(format!(
        "object of type '{}' has no attribute '{name}'",
        super::filters::python_type(&value)
    ))
}

/// What the engine says of an undefined value found inside a result, naming nothing.
const UNNAMED_UNDEFINED: [&str; 2] = [
    "the result contains an undefined value",
    "an undefined value cannot be turned into text",
];

/// An engine error as a `TemplateError`. An undefined variable whose own template met
/// an undefined value is reported by the innermost such value, as ansible-core 2.19
/// reports it; an attribute a defined value lacks is named as it names it.
fn engine_error(scope: &Arc<Scope>, err: &minijinja::Error, source: &str) -> TemplateError {
    let mut error = TemplateError::from_engine(err, source);
    // An undefined value inside a result (`[{'k': nope}]`) is named by the variable
    // that is undefined, as ansible-core names it.
    if let TemplateError::Undefined { detail, .. } = &mut error
        && UNNAMED_UNDEFINED.contains(&detail.as_str())
        && let Some(name) = scope
            .undefined_variable_in_template(source)
            .or_else(|| scope.undefined_variable(single_expression(source).unwrap_or(source)))
    {
        *detail = format!("'{name}' is undefined");
    }
    if let TemplateError::Render { detail, .. } = &mut error
        && detail.ends_with(super::error::MANDATORY)
        && let Some(name) = scope
            .undefined_variable_in_template(source)
            .or_else(|| scope.undefined_variable(single_expression(source).unwrap_or(source)))
    {
        *detail = detail.replace(
            super::error::MANDATORY,
            &format!("Mandatory variable '{name}' not defined."),
        );
    }
    if let TemplateError::Undefined { detail, inner, .. } = &mut error
        && let Some(expr) = detail
            .strip_prefix('\'')
            .and_then(|d| d.strip_suffix("' is undefined"))
    {
        if let Some((message, source)) = scope.undefined_root(expr) {
            *detail = message;
            *inner = Some(source);
        } else if let Some(message) = missing_attribute(scope, expr) {
            *detail = message;
        }
    }
    error
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vars(pairs: serde_json::Value) -> Vars {
        let mut vars = Vars::new();
        if let serde_json::Value::Object(map) = pairs {
            for (name, value) in map {
                vars.set_trusted(&name, value);
            }
        }
        vars
    }

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
    fn plain_values_are_returned_unchanged() {
        let t = Templar::new();
        let value = json!({"a": [1, "two", {"three": null}], "b": "no { template }"});
        assert_eq!(t.template(&value, &Vars::new()).unwrap(), value);
    }

    #[test]
    fn single_expressions_keep_native_types() {
        let t = Templar::new();
        let v = vars(json!({"n": 3, "l": [1, 2], "d": {"k": "v"}, "s": "text", "b": true}));
        let cases = [
            ("{{ n }}", json!(3)),
            ("{{ n + 1 }}", json!(4)),
            ("{{ l }}", json!([1, 2])),
            ("{{ n }}\n", json!(3)),
            ("{{ l }}\n", json!([1, 2])),
            ("{{ s }}\n", json!("text\n")),
            ("{{ l }}\n\n", json!("[1, 2]\n\n")),
            ("{{ l }} ", json!("[1, 2] ")),
            ("{{ d }}", json!({"k": "v"})),
            ("{{ b }}", json!(true)),
            ("{{ s }}", json!("text")),
            ("{{ none }}", json!(null)),
            ("{{ {'a': {'b': 1}} }}", json!({"a": {"b": 1}})),
            ("{{- n -}}", json!(3)),
            ("{{ '1' }}", json!("1")),
        ];
        for (source, expected) in cases {
            assert_eq!(
                t.template(&json!(source), &v).unwrap(),
                expected,
                "{source}"
            );
        }
    }

    #[test]
    fn attributes_of_undefined_values_are_undefined_where_a_template_guards_against_them() {
        let t = Templar::new();
        let v = vars(json!({"d": {"k": "v"}}));
        let ok = |s: &str| t.template(&json!(s), &v).unwrap();
        assert_eq!(ok("{{ nope.attr | default('x') }}"), json!("x"));
        assert_eq!(ok("{{ d.missing.deeper | d('y') }}"), json!("y"));
        assert_eq!(ok("<{{ nope.a.b | default('z', true) }}>"), json!("<z>"));
        assert_eq!(ok("{{ nope.attr is defined }}"), json!(false));
        assert!(!t.conditional(&json!("nope.attr is defined"), &v).unwrap());
        assert!(t.conditional(&json!("d.x.y is undefined"), &v).unwrap());
        assert_eq!(
            t.evaluate("nope.attr | default(d.k)", &v).unwrap(),
            json!("v")
        );
        // Without a guard, or with an unguarded undefined beside a guarded one, the
        // strict error stands.
        for bad in [
            "{{ nope.attr }}",
            "{{ nope.attr | default('x') }} {{ other }}",
            "{{ nope.a | default('x') }}{{ d.missing.deeper }}",
        ] {
            let err = t.template(&json!(bad), &v).unwrap_err().to_string();
            assert!(err.contains("is undefined"), "{bad}: {err}");
        }
        assert!(t.conditional(&json!("nope.attr"), &v).is_err());
    }

    #[test]
    fn other_templates_render_to_text() {
        let t = Templar::new();
        let v = vars(json!({"n": 3, "l": [1, "a"], "b": true, "x": null}));
        let cases = [
            ("n={{ n }}", "n=3"),
            ("{{ n }}{{ n }}", "33"),
            ("{{ l }} items", "[1, 'a'] items"),
            ("{{ b }}!", "True!"),
            ("[{{ x }}]", "[]"),
            ("{% if b %}yes{% endif %}", "yes"),
            ("{# c #}text", "text"),
            ("{% for i in l %}\n{{ i }}\n{% endfor %}\n", "1\na\n"),
            ("line\n", "line\n"),
        ];
        for (source, expected) in cases {
            assert_eq!(
                t.template(&json!(source), &v).unwrap(),
                json!(expected),
                "{source}"
            );
        }
    }

    #[test]
    fn templates_walk_lists_maps_and_keys() {
        let t = Templar::new();
        let v = vars(json!({"name": "web", "port": 80}));
        let value = json!({"{{ name }}_port": "{{ port }}", "list": ["{{ name }}", 1, {"x": "{{ port + 1 }}"}]});
        assert_eq!(
            t.template(&value, &v).unwrap(),
            json!({"web_port": 80, "list": ["web", 1, {"x": 81}]})
        );
    }

    #[test]
    fn trusted_variables_render_lazily_and_recursively() {
        let t = Templar::new();
        let v = vars(json!({
            "a": "{{ b }}",
            "b": "{{ c * 2 }}",
            "c": 21,
            "nested": {"deep": ["{{ a }}", "x{{ c }}"]},
            "msg": "a is {{ a }}"
        }));
        assert_eq!(t.template(&json!("{{ a }}"), &v).unwrap(), json!(42));
        assert_eq!(
            t.template(&json!("{{ nested }}"), &v).unwrap(),
            json!({"deep": [42, "x21"]})
        );
        assert_eq!(
            t.template(&json!("{{ nested.deep[1] }}"), &v).unwrap(),
            json!("x21")
        );
        assert_eq!(
            t.template(&json!("{{ msg }}"), &v).unwrap(),
            json!("a is 42")
        );
        assert_eq!(t.evaluate("vars['a'] + 1", &v).unwrap(), json!(43));
    }

    #[test]
    fn trusted_mapping_keys_are_templates() {
        let t = Templar::new();
        let v = vars(json!({"k": "key", "m": {"{{ k }}": "{{ k }}!"}}));
        assert_eq!(
            t.template(&json!("{{ m }}"), &v).unwrap(),
            json!({"key": "key!"})
        );
        assert_eq!(t.evaluate("m.key", &v).unwrap(), json!("key!"));
    }

    #[test]
    fn self_reference_is_an_error() {
        let t = Templar::new();
        let v = vars(json!({"a": "{{ b }}", "b": "{{ a }}", "c": {"x": "{{ c.x }}"}}));
        let err = t.template(&json!("{{ a }}"), &v).unwrap_err().to_string();
        assert!(
            err.contains("recursive loop detected in template: a -> b -> a"),
            "{err}"
        );
        let err = t.evaluate("c.x", &v).unwrap_err().to_string();
        assert!(
            err.contains("recursive loop detected in template: c.x -> c.x"),
            "{err}"
        );
    }

    #[test]
    fn unsafe_marks_are_plain_text_never_templated() {
        let t = Templar::new();
        let mark = |s: &str| json!({"__ansible_unsafe": s});
        let v = vars(json!({
            "u": mark("{{ lookup('pipe', 'id') }}"),
            "deep": {"list": [mark("{% raw %}"), "{{ 1 + 1 }}"]},
            "via": "{{ u }}",
        }));
        let text = json!("{{ lookup('pipe', 'id') }}");
        assert_eq!(t.template(&json!("{{ u }}"), &v).unwrap(), text);
        assert_eq!(t.template(&json!("{{ via }}"), &v).unwrap(), text);
        assert_eq!(t.evaluate("u", &v).unwrap(), text);
        assert_eq!(
            t.template(&json!("{{ deep }}"), &v).unwrap(),
            json!({"list": ["{% raw %}", 2]})
        );
        assert_eq!(t.evaluate("u | length", &v).unwrap(), json!(26));
        // Marks in the values being templated (task arguments) are unwrapped, not rendered.
        assert_eq!(
            t.template(&json!({"msg": mark("{{ x }}"), "n": [mark("plain")]}), &v)
                .unwrap(),
            json!({"msg": "{{ x }}", "n": ["plain"]})
        );
    }

    #[test]
    fn data_is_never_templated_again() {
        let t = Templar::new();
        let mut v = Vars::new();
        v.set_data(
            "r",
            json!({"stdout": "{{ lookup('pipe', 'id') }}", "rc": 0, "lines": ["{{ x }}"]}),
        );
        v.set_trusted("via", json!("{{ r.stdout }}"));
        assert_eq!(
            t.template(&json!("{{ r.stdout }}"), &v).unwrap(),
            json!("{{ lookup('pipe', 'id') }}")
        );
        assert_eq!(
            t.template(&json!("out: {{ r.stdout }}"), &v).unwrap(),
            json!("out: {{ lookup('pipe', 'id') }}")
        );
        assert_eq!(
            t.template(&json!("{{ via }}"), &v).unwrap(),
            json!("{{ lookup('pipe', 'id') }}")
        );
        assert_eq!(
            t.template(&json!("{{ r }}"), &v).unwrap(),
            json!({"stdout": "{{ lookup('pipe', 'id') }}", "rc": 0, "lines": ["{{ x }}"]})
        );
        assert_eq!(t.evaluate("r.lines | first", &v).unwrap(), json!("{{ x }}"));
    }

    #[test]
    fn undefined_variables_are_errors() {
        let t = Templar::new();
        let v = vars(json!({"d": {"a": 1}, "indirect": "{{ missing }}"}));
        let err = t.template(&json!("{{ nope }}"), &v).unwrap_err();
        assert!(matches!(err, TemplateError::Undefined { .. }));
        assert_eq!(
            err.to_string(),
            "'nope' is undefined (in template \"{{ nope }}\")"
        );
        let err = t
            .template(&json!("x {{ nope }}"), &v)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("'nope' is undefined"), "{err}");
        let err = t.template(&json!("{{ d.b }}"), &v).unwrap_err().to_string();
        assert!(
            err.starts_with("object of type 'dict' has no attribute 'b'"),
            "{err}"
        );
        let err = t.evaluate("nope == 1", &v).unwrap_err().to_string();
        assert!(err.starts_with("'nope' is undefined"), "{err}");
        let err = t
            .template(&json!("{{ indirect }}"), &v)
            .unwrap_err()
            .to_string();
        // As ansible-core 2.19: the template that failed, not the variable using it.
        assert!(err.starts_with("'missing' is undefined"), "{err}");
        let err = t
            .template(&json!("{{ indirect | default(1) }}{{ nope }}"), &v)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("'nope' is undefined"), "{err}");
        let err = t
            .template(&json!("{% for x in nope %}{% endfor %}"), &v)
            .unwrap_err();
        assert!(matches!(err, TemplateError::Undefined { .. }), "{err}");
    }

    #[test]
    fn defined_tests_and_defaults_see_undefined() {
        let t = Templar::new();
        let v = vars(json!({"d": {"a": 1}, "indirect": "{{ missing }}", "n": null}));
        assert_eq!(t.evaluate("nope is defined", &v).unwrap(), json!(false));
        assert_eq!(t.evaluate("nope is undefined", &v).unwrap(), json!(true));
        assert_eq!(t.evaluate("d.a is defined", &v).unwrap(), json!(true));
        assert_eq!(t.evaluate("d.b is defined", &v).unwrap(), json!(false));
        assert_eq!(t.evaluate("d['b'] | default(5)", &v).unwrap(), json!(5));
        assert_eq!(t.evaluate("indirect is defined", &v).unwrap(), json!(false));
        assert_eq!(
            t.evaluate("indirect | default('fallback')", &v).unwrap(),
            json!("fallback")
        );
        assert_eq!(t.evaluate("n is none", &v).unwrap(), json!(true));
        assert_eq!(t.evaluate("d.a == d['a']", &v).unwrap(), json!(true));
    }

    #[test]
    fn omit_is_a_placeholder() {
        let t = Templar::new();
        let args = json!({"path": "/x", "mode": "{{ mode | default(omit) }}"});
        assert_eq!(
            t.template(&args, &Vars::new()).unwrap(),
            json!({"path": "/x", "mode": OMIT})
        );
        assert_eq!(t.evaluate("omit", &Vars::new()).unwrap(), json!(OMIT));
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
    fn syntax_errors_name_the_template() {
        let t = Templar::new();
        let err = t.template(&json!("{{ x + }}"), &Vars::new()).unwrap_err();
        assert!(matches!(err, TemplateError::Syntax { .. }), "{err}");
        assert!(err.to_string().contains("{{ x + }}"), "{err}");
        let err = t.evaluate("x +", &Vars::new()).unwrap_err();
        assert!(matches!(err, TemplateError::Syntax { .. }), "{err}");
    }

    #[test]
    fn filter_errors_are_render_errors() {
        let t = Templar::new();
        let err = t
            .template(&json!("{{ 'x' | no_such_filter }}"), &Vars::new())
            .unwrap_err();
        assert!(matches!(err, TemplateError::Render { .. }), "{err}");
        assert!(err.to_string().contains("no_such_filter"), "{err}");
    }

    #[test]
    fn hostvars_are_templated_in_their_host_scope() {
        let t = Templar::new();
        let mut web = Vars::new();
        web.set_trusted("port", json!(8080));
        web.set_trusted("url", json!("http://web:{{ port }}"));
        let mut db = Vars::new();
        db.set_trusted("port", json!(5432));
        let hosts = indexmap::IndexMap::from([("web".to_string(), web), ("db".to_string(), db)]);
        let mut v = Vars::new();
        v.set_trusted("port", json!(22));
        v.set_hostvars(std::sync::Arc::new(hosts));
        assert_eq!(
            t.evaluate("hostvars['web'].url", &v).unwrap(),
            json!("http://web:8080")
        );
        assert_eq!(t.evaluate("hostvars.db.port", &v).unwrap(), json!(5432));
        assert_eq!(
            t.evaluate("hostvars | list", &v).unwrap(),
            json!(["web", "db"])
        );
        assert_eq!(
            t.evaluate("hostvars['nope'] is defined", &v).unwrap(),
            json!(false)
        );
        assert_eq!(t.evaluate("port", &v).unwrap(), json!(22));
    }

    #[test]
    fn python_methods_work() {
        let t = Templar::new();
        let v = vars(json!({"d": {"a": 1}, "s": "a,b"}));
        assert_eq!(
            t.evaluate("d.items() | list", &v).unwrap(),
            json!([["a", 1]])
        );
        assert_eq!(t.evaluate("s.split(',')", &v).unwrap(), json!(["a", "b"]));
        assert_eq!(t.evaluate("d.get('z', 2)", &v).unwrap(), json!(2));
    }

    #[test]
    fn render_is_always_text() {
        let t = Templar::new();
        let v = vars(json!({"n": 3}));
        assert_eq!(t.render("{{ n }}", &v).unwrap(), "3");
        assert_eq!(
            t.render("a\n{% if n %}\nb\n{% endif %}\nc\n", &v).unwrap(),
            "a\nb\nc\n"
        );
        let err = t.render("a\n{{ nope }}", &v).unwrap_err();
        assert!(err.to_string().contains("line 2"), "{err}");
    }

    /// A task renders only the variables it uses: among thousands, those it does not
    /// name are never rendered (one that cannot be rendered does not fail it). What a
    /// task-host costs is measured in `make bench` (examples/bench/task_scale.sh).
    #[test]
    fn a_task_renders_only_the_variables_it_uses() {
        let t = Templar::new();
        let mut v = Vars::new();
        for i in 0..5000 {
            v.set_trusted(&format!("var{i}"), json!(format!("{{{{ base }}}}-{i}")));
        }
        v.set_trusted("broken", json!("{{ nothing_defines_this }}"));
        v.set_trusted("base", json!("b"));
        v.set_data("facts", json!({"os": "linux", "cpus": 2}));
        let args = json!({
            "path": "/tmp/{{ var10 }}",
            "mode": "0644",
            "owner": "{{ facts.os }}",
            "state": "{{ 'touch' if facts.cpus > 1 else 'file' }}",
        });
        let when = json!("facts.os == 'linux' and var1 is defined");
        assert!(t.conditional(&when, &v).unwrap());
        let out = t.template(&args, &v).unwrap();
        assert_eq!(out["path"], json!("/tmp/b-10"));
        assert_eq!(out["state"], json!("touch"));
        assert!(t.template(&json!("{{ broken }}"), &v).is_err());
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
