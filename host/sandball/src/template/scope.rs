//! The scope of one templating call: the root of the template context. Looking a name up
//! yields its variable, whose trusted strings are rendered on first use (cached for the
//! call), with a clear error when a variable refers back to itself.

use std::collections::HashMap;
use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, Mutex, MutexGuard};

use minijinja::value::{Enumerator, Object, ObjectRepr, ValueKind};
use minijinja::{Environment, Error, ErrorKind, Value};

use crate::template::backslashes::keep_backslashes;
use crate::template::error::engine_detail;
use crate::template::operands::{guard_expression, guard_template};
use crate::template::overrides::{restore_newlines, without_trailing_newline};
use crate::template::percent::{rewrite_expression, rewrite_template};
use crate::template::python::{Emitted, py_str};
use crate::template::vars::{Entry, HostVarsSource, Vars};
use crate::template::view::{self, Path};

/// Whether a string holds Jinja syntax and so must be rendered.
pub(crate) fn is_template(s: &str) -> bool {
    s.contains("{{") || s.contains("{%") || s.contains("{#")
}

/// Whether a string looks like nothing but a template (even an invalid one), as
/// ansible-core decides whether words given to an action are arguments to come:
/// an overrides header, or Jinja delimiters at both ends.
pub(crate) fn is_possibly_all_template(s: &str) -> bool {
    s.starts_with("#jinja2:")
        || (s.starts_with("{{") && s.ends_with("}}"))
        || (s.starts_with("{%") && s.ends_with("%}"))
}

/// The expression of a string that is exactly one `{{ expr }}` (whitespace control
/// markers allowed), whose value is then the expression's native value. Text around it
/// makes the result text.
pub(crate) fn single_expression(s: &str) -> Option<&str> {
    let inner = s.strip_prefix("{{")?.strip_suffix("}}")?;
    let inner = inner.strip_prefix(['-', '+']).unwrap_or(inner);
    let inner = inner.strip_suffix(['-', '+']).unwrap_or(inner);
    // `{{ a }} {{ b }}` also starts and ends with braces: it is a single expression only
    // if the inside parses as one (checked by the caller when compiling).
    (!inner.trim().is_empty()).then_some(inner)
}

/// The one value a render wrote when it is no string and the render's whole output
/// (ansible-core 2.19's result of such a template is that value, not text).
fn sole_value(captured: &minijinja::Captured<'_>) -> Result<Option<Value>, Error> {
    let Some(Emitted { count: 1, last }) = captured.state().get_extension::<Emitted>() else {
        return Ok(None);
    };
    let sole = !matches!(
        last.kind(),
        ValueKind::String | ValueKind::Undefined | ValueKind::Invalid
    ) && (last.is_none() && captured.output().is_empty()
        || !last.is_none() && captured.output() == py_str(last)?);
    Ok(sole.then(|| last.clone()))
}

/// State shared by the scopes of one call (the task host's and other hosts' via `hostvars`).
struct Shared {
    env: Arc<Environment<'static>>,
    /// The variables being rendered, innermost last, to detect self-reference.
    active: Mutex<Vec<String>>,
    /// Rendered trusted strings by path; `None` when they came out undefined.
    cache: Mutex<HashMap<String, Option<Value>>>,
    /// The variables that came out undefined, each with its template's error, to find
    /// the root of a later "is undefined" error.
    undefined_causes: Mutex<Vec<(String, String, String)>>,
}

/// The variables of one host during one templating call, as the root of the context.
pub(crate) struct Scope {
    shared: Arc<Shared>,
    vars: Vars,
    /// Prefix of paths in messages and cache keys: empty for the task's own host,
    /// `hostvars['web1'].` for another host.
    prefix: String,
}

impl fmt::Debug for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

/// Locks a mutex, ignoring poisoning: the guarded data stays consistent because no
/// guard is held across code that can panic.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The scope of one templating call. Dropping it empties the call's cache, whose values
/// (views of variables) refer back to the scope and would otherwise keep it alive.
pub(crate) struct Call(Arc<Scope>);

impl Deref for Call {
    type Target = Arc<Scope>;

    fn deref(&self) -> &Arc<Scope> {
        &self.0
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        lock(&self.0.shared.cache).clear();
    }
}

impl Call {
    /// The scope of one call rendering against `vars`.
    pub(crate) fn new(env: Arc<Environment<'static>>, vars: &Vars) -> Call {
        Call(Arc::new(Scope {
            shared: Arc::new(Shared {
                env,
                active: Mutex::new(Vec::new()),
                cache: Mutex::new(HashMap::new()),
                undefined_causes: Mutex::new(Vec::new()),
            }),
            vars: vars.clone(),
            prefix: String::new(),
        }))
    }
}

impl Scope {
    /// This scope as the root value of a template context.
    pub(crate) fn root(self: &Arc<Self>) -> Value {
        Value::from_dyn_object(self.clone())
    }

    /// Renders a string: a single `{{ expr }}` yields the expression's native value, as
    /// does a template whose whole output is one value that is no string (`{% if a %}{{
    /// [1] }}{% endif %}`), as in ansible-core 2.19; any other template renders to text.
    /// One trailing newline after the expression does not make it text (a folded `>`
    /// scalar ends with one), but a string result keeps it, as in ansible-core. String
    /// constants in its expressions keep their backslashes ([`keep_backslashes`]).
    pub(crate) fn render_str(self: &Arc<Self>, source: &str) -> Result<Value, Error> {
        let body = without_trailing_newline(source);
        if let Some(expr) = single_expression(body)
            && let Ok(compiled) = self
                .shared
                .env
                .compile_expression_owned(self.expression(&self.value_expression(expr)))
        {
            let value = compiled.eval(self.root())?;
            if body.len() < source.len()
                && let Some(text) = value.as_str()
            {
                let mut text = text.to_string();
                restore_newlines(source, &mut text);
                return Ok(Value::from(text));
            }
            if !value.is_undefined() {
                return Ok(value);
            }
            // Printing an undefined value fails with an error naming the variable
            // (strict undefined); the silent undefined of `x if false` prints nothing.
        }
        let body = keep_backslashes(body, false, self.shared.env.syntax());
        let body = self.rewritten(&body);
        let template = self.shared.env.template_from_named_str("template", &body)?;
        let captured = template.render_captured(self.root())?;
        if let Some(last) = sole_value(&captured)? {
            return Ok(last);
        }
        let mut text = captured.output().to_string();
        restore_newlines(source, &mut text);
        Ok(Value::from(text))
    }

    /// Renders a template file's text (its last newline already dropped, as Jinja
    /// drops it) as the `template` action writes it: the output with as many trailing
    /// newlines as `original` had — unless the whole output is one value that is no
    /// string (`{{ 40 + 2 }}`), which ansible-core 2.19 writes as that value's `str()`
    /// alone (see [`Self::render_str`]).
    pub(crate) fn render_file_text(
        self: &Arc<Self>,
        source: &str,
        original: &str,
    ) -> Result<String, Error> {
        let source = self.rewritten(source);
        let template = self
            .shared
            .env
            .template_from_named_str("template", &source)?;
        let captured = template.render_captured(self.root())?;
        let mut text = captured.output().to_string();
        if sole_value(&captured)?.is_none() {
            restore_newlines(original, &mut text);
        }
        Ok(text)
    }

    /// A template's source as the engine compiles it (Python's `%` rewritten; where
    /// undefined values chain, operands checked: see `operands.rs`).
    fn rewritten<'s>(&self, source: &'s str) -> std::borrow::Cow<'s, str> {
        let source = rewrite_template(source, self.shared.env.syntax());
        if !self.chained() {
            return source;
        }
        std::borrow::Cow::Owned(guard_template(&source, self.shared.env.syntax()).into_owned())
    }

    /// [`Self::rewritten`] for a bare expression, to be compiled.
    fn expression(&self, expr: &str) -> String {
        let expr = rewrite_expression(expr);
        if !self.chained() {
            return expr.into_owned();
        }
        guard_expression(&expr).into_owned()
    }

    /// Whether attributes of undefined values are undefined here (the chained
    /// environment of guarded templates, see [`crate::template::Templar`]).
    fn chained(&self) -> bool {
        self.shared.env.undefined_behavior() == minijinja::UndefinedBehavior::Chainable
    }

    /// Renders a template to text.
    pub(crate) fn render_text(self: &Arc<Self>, source: &str) -> Result<String, Error> {
        let source = self.rewritten(source);
        let template = self
            .shared
            .env
            .template_from_named_str("template", &source)?;
        template.render(self.root())
    }

    /// A `{{ }}` expression of a value's template as the engine must read it: its string
    /// constants keep their backslashes ([`keep_backslashes`]).
    pub(crate) fn value_expression<'s>(&self, expr: &'s str) -> std::borrow::Cow<'s, str> {
        keep_backslashes(expr, true, self.shared.env.syntax())
    }

    /// Evaluates a bare expression.
    pub(crate) fn eval_expression(self: &Arc<Self>, expr: &str) -> Result<Value, Error> {
        let compiled = self
            .shared
            .env
            .compile_expression_owned(self.expression(expr))?;
        compiled.eval(self.root())
    }

    /// The first variable `expr` uses that is undefined, when undefined values are
    /// strict: the one an error that names none is about. `None` with chained undefined
    /// values (a guarded expression: `x is defined`, `x | default(…)`).
    pub(crate) fn undefined_variable(self: &Arc<Self>, expr: &str) -> Option<String> {
        let expr = rewrite_expression(expr);
        let compiled = self.shared.env.compile_expression(&expr).ok()?;
        self.first_undefined(compiled.undeclared_variables(false))
    }

    /// [`undefined_variable`](Self::undefined_variable) for a whole template.
    pub(crate) fn undefined_variable_in_template(self: &Arc<Self>, source: &str) -> Option<String> {
        let source = self.rewritten(source);
        let template = self.shared.env.template_from_str(&source).ok()?;
        self.first_undefined(template.undeclared_variables(false))
    }

    /// The first of `names`, in order, that is undefined, when undefined values are
    /// strict.
    fn first_undefined(
        self: &Arc<Self>,
        names: std::collections::HashSet<String>,
    ) -> Option<String> {
        if self.shared.env.undefined_behavior() != minijinja::UndefinedBehavior::Strict {
            return None;
        }
        let mut names: Vec<String> = names.into_iter().collect();
        names.sort();
        names
            .into_iter()
            .find(|name| self.eval_expression(name).is_ok_and(|v| v.is_undefined()))
    }

    /// Whether an expression reads only trusted variables (the play's own, not module
    /// results, facts or other hosts' variables); globals (`lookup`, `range`) count as
    /// trusted, being no data.
    pub(crate) fn reads_only_trusted(self: &Arc<Self>, expr: &str) -> bool {
        self.shared
            .env
            .compile_expression(&rewrite_expression(expr))
            .is_ok_and(|c| self.all_trusted(&c.undeclared_variables(false)))
    }

    /// Whether templating `raw` gives back trusted values only (see
    /// [`crate::template::trust`]).
    pub(crate) fn passes_trust(self: &Arc<Self>, raw: &serde_json::Value) -> bool {
        super::trust::passes_trust(raw, &self.vars, &|expr| self.computes_trusted(expr))
    }

    /// Whether an expression computes its value from trusted variables alone: no
    /// lookup (whose results are data), no literal (text a template makes).
    pub(crate) fn computes_trusted(self: &Arc<Self>, expr: &str) -> bool {
        !self.is_literal(expr)
            && self
                .shared
                .env
                .compile_expression(&rewrite_expression(expr))
                .is_ok_and(|c| {
                    let names = c.undeclared_variables(false);
                    !["lookup", "query", "q"].iter().any(|l| names.contains(*l))
                        && self.all_trusted(&names)
                })
    }

    /// [`Self::reads_only_trusted`] for a whole template (`{% if x %}…`).
    pub(crate) fn template_reads_only_trusted(self: &Arc<Self>, source: &str) -> bool {
        self.shared
            .env
            .template_from_str(&self.rewritten(source))
            .is_ok_and(|t| self.all_trusted(&t.undeclared_variables(false)))
    }

    /// Whether every one of `names` is a trusted variable, with no text marked untrusted
    /// in it (`set_fact` of a module's output, loop items a template made): what is
    /// computed from one may be that text.
    fn all_trusted(&self, names: &std::collections::HashSet<String>) -> bool {
        names.iter().all(|name| match self.vars.get(name) {
            Some(crate::template::vars::Var::Trusted(value)) => {
                !super::trust::has_unsafe_marks(value)
            }
            Some(_) => false,
            None => true,
        })
    }

    /// Whether a text is a plain literal expression (a number, a string, a list or a
    /// mapping of them): it names nothing and calls nothing.
    pub(crate) fn is_literal(self: &Arc<Self>, text: &str) -> bool {
        self.shared
            .env
            .compile_expression(&rewrite_expression(text))
            .is_ok_and(|c| c.undeclared_variables(true).is_empty())
    }

    /// What made `expr` undefined, when it is a variable whose template met an undefined
    /// value: that template's error, followed down to the innermost one, as ansible-core
    /// reports the template that failed rather than the variables that use it; with
    /// that innermost template's text.
    pub(crate) fn undefined_root(&self, expr: &str) -> Option<(String, String)> {
        let causes = lock(&self.shared.undefined_causes);
        let mut root: Option<(&String, &String)> = None;
        let mut name = expr;
        for _ in 0..causes.len() {
            let Some((_, detail, source)) = causes.iter().find(|(key, ..)| key == name) else {
                break;
            };
            root = Some((detail, source));
            match detail
                .strip_prefix('\'')
                .and_then(|d| d.strip_suffix("' is undefined"))
            {
                Some(next) => name = next,
                None => break,
            }
        }
        root.map(|(detail, source)| (detail.clone(), source.clone()))
    }

    /// The value of a trusted string found at `path`: rendered once per call. `None` if
    /// rendering met an undefined variable, so that `is defined` and `default` treat the
    /// variable as undefined, as Ansible does.
    pub(crate) fn render_trusted(self: &Arc<Self>, path: &Path, source: &str) -> Option<Value> {
        let key = format!("{}{}", self.prefix, path);
        if let Some(cached) = lock(&self.shared.cache).get(&key) {
            return cached.clone();
        }
        {
            let mut active = lock(&self.shared.active);
            if let Some(start) = active.iter().position(|name| *name == key) {
                let mut chain = active[start..].to_vec();
                chain.push(key);
                return Some(Value::from(Error::new(
                    ErrorKind::InvalidOperation,
                    format!(
                        "recursive loop detected in template: {}",
                        chain.join(" -> ")
                    ),
                )));
            }
            active.push(key.clone());
        }
        super::undefined::take_hint();
        let result = self.render_str(source);
        lock(&self.shared.active).pop();
        let value = match result {
            Ok(value) => Some(value),
            Err(err) if err.kind() == ErrorKind::UndefinedError => {
                // An `undef(hint)` that made the variable undefined words the error.
                let detail = super::undefined::take_hint().unwrap_or_else(|| engine_detail(&err));
                lock(&self.shared.undefined_causes).push((key.clone(), detail, source.into()));
                None
            }
            Err(err) => Some(Value::from(Error::new(
                err.kind(),
                format!(
                    "while templating '{key}' ({source:?}): {}",
                    engine_detail(&err)
                ),
            ))),
        };
        lock(&self.shared.cache).insert(key, value.clone());
        value
    }

    /// The scope of another host, sharing this call's cache and loop detection.
    fn host_scope(&self, host: &str, vars: &Vars) -> Scope {
        Scope {
            shared: self.shared.clone(),
            vars: vars.clone(),
            prefix: format!("hostvars[{host:?}]."),
        }
    }
}

impl Object for Scope {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Map
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        self.get_value_by_str(key.as_str()?)
    }

    fn get_value_by_str(self: &Arc<Self>, name: &str) -> Option<Value> {
        match self.vars.entry(name) {
            Some(Entry::Trusted(value)) => view::value_at(self, value, Path::root(name), true),
            Some(Entry::Data(value)) => view::value_at(self, value, Path::root(name), false),
            Some(Entry::Hosts(hosts)) => Some(Value::from_object(HostVars {
                scope: self.clone(),
                hosts: hosts.clone(),
                built: Default::default(),
            })),
            // Ansible's `vars`: all variables as one mapping, templated lazily too.
            None if name == "vars" => Some(self.root()),
            None => None,
        }
    }

    /// The variables' names, as Ansible lists them: never `omit`, and not `hostvars`
    /// in another host's entry of `hostvars` (which would hold itself: `vars` and
    /// `hostvars` are finite, as in Ansible).
    fn enumerate(self: &Arc<Self>) -> Enumerator {
        let other_host = !self.prefix.is_empty();
        Enumerator::Values(
            self.vars
                .names()
                .filter(|name| *name != "omit" && !(other_host && *name == "hostvars"))
                .map(Value::from)
                .collect(),
        )
    }
}

/// `hostvars`: every host's variables, each looked up in that host's own scope (built
/// once per template call).
struct HostVars {
    scope: Arc<Scope>,
    hosts: Arc<dyn HostVarsSource>,
    built: Mutex<HashMap<String, Option<Value>>>,
}

impl fmt::Debug for HostVars {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.hosts.fmt(f)
    }
}

impl Object for HostVars {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Map
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let host = key.as_str()?;
        let mut built = self.built.lock().unwrap_or_else(|e| e.into_inner());
        built
            .entry(host.to_string())
            .or_insert_with(|| {
                let vars = self.hosts.vars(host)?;
                Some(Value::from_object(self.scope.host_scope(host, &vars)))
            })
            .clone()
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Values(self.hosts.hosts().into_iter().map(Value::from).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_hosts_variables_do_not_list_hostvars() {
        let mut vars = Vars::new();
        vars.set_trusted("x", serde_json::json!(1));
        let mut hosts = indexmap::IndexMap::new();
        hosts.insert("h".to_string(), vars.clone());
        let hosts: Arc<dyn HostVarsSource> = Arc::new(hosts);
        vars.set_hostvars(hosts.clone());
        let call = Call::new(Arc::new(Environment::new()), &vars);
        let keys = call.eval_expression("vars | list").unwrap();
        assert_eq!(keys.to_string(), "['x', 'hostvars']");
        let keys = call.eval_expression("hostvars.h | list").unwrap();
        assert_eq!(keys.to_string(), "['x']");
    }

    #[test]
    fn a_call_releases_its_scope() {
        let mut vars = Vars::new();
        vars.set_trusted("d", serde_json::json!({"k": "v"}));
        vars.set_trusted("alias", serde_json::json!("{{ d }}"));
        let call = Call::new(Arc::new(Environment::new()), &vars);
        let value = call.eval_expression("alias.k").unwrap();
        assert_eq!(value.as_str(), Some("v"));
        let weak = Arc::downgrade(&call);
        drop(call);
        assert!(
            weak.upgrade().is_none(),
            "the cached view keeps the scope alive"
        );
    }

    #[test]
    fn template_markers() {
        assert!(is_template("a {{ b }}"));
        assert!(is_template("{% if x %}y{% endif %}"));
        assert!(is_template("{# note #}"));
        assert!(!is_template("plain { text }"));
    }

    #[test]
    fn single_expressions() {
        assert_eq!(single_expression("{{ x }}"), Some(" x "));
        assert_eq!(single_expression("{{ x | int }}"), Some(" x | int "));
        assert_eq!(single_expression("{{ x }}\n"), None);
        assert_eq!(single_expression(" {{ x }}"), None);
        assert_eq!(single_expression("{{- x -}}"), Some(" x "));
        assert_eq!(single_expression("a {{ x }}"), None);
        assert_eq!(single_expression("{{ x }} b"), None);
        assert_eq!(single_expression("{{  }}"), None);
        // Decided by parsing the inside: `x }}{{ y` does not parse.
        assert_eq!(single_expression("{{ x }}{{ y }}"), Some(" x }}{{ y "));
    }
}
