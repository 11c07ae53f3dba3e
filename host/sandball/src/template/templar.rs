//! The Templar: the operations the executor needs on one configured environment
//! (`environment.rs`) — template a task's values, render text and template files,
//! evaluate an expression (conditionals are `conditional.rs`'s) — with templates that
//! guard against undefined values evaluated again where attributes of undefined values
//! are undefined.

use std::sync::Arc;

use minijinja::Environment;

use crate::template::convert::to_json_omitting_undefined;
use crate::template::engine_errors::{engine_error, eval, native};
use crate::template::environment::{FileOptions, chained, configure, native_environment};
use crate::template::error::TemplateError;
use crate::template::scope::{Call, Scope, is_template, single_expression};
use crate::template::vars::Vars;
use crate::template::vaulted::{use_error, vault_mark};
use crate::template::view::unsafe_mark;

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
    pub(super) fn guarded<T>(
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

/// Whether a template guards against undefined values (`default`, `d(…)`, `is
/// defined`, `is undefined`): only such templates are evaluated again with chained
/// undefined values.
pub(super) fn guards_undefined(source: &str) -> bool {
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

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::template::OMIT;
    use serde_json::json;

    /// Variables of the playbook (trusted), by name.
    pub(in crate::template) fn vars(pairs: serde_json::Value) -> Vars {
        let mut vars = Vars::new();
        if let serde_json::Value::Object(map) = pairs {
            for (name, value) in map {
                vars.set_trusted(&name, value);
            }
        }
        vars
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
}
