//! Which templated values stay trusted, as ansible-core 2.19 tracks trust: a value the
//! playbook wrote with no template in it is trusted, and so is what one `{{ path }}`
//! gives when it names a trusted variable's value (through attributes and constant
//! keys) that is itself trusted; text a template makes around an expression, a
//! constant, or what a lookup gives is not. Other single expressions of trusted
//! variables (`{{ names | sort }}`) count as passing their values through, where
//! ansible-core follows each string. Only trusted text may be evaluated as an
//! expression (a conditional, `debug`'s `var`).
//!
//! While a template runs, trusted text is a string with the engine's "safe" mark (which
//! nothing else uses: Ansible escapes no output). A trusted variable's strings enter the
//! engine with it (`view.rs`); a value passed through keeps it, and text a template, a
//! filter or a lookup makes has none, much as 2.19's tags follow values — what the
//! `ansible._protomatter` tests read (`protomatter.rs`).

use minijinja::machinery::ast::Expr;
use minijinja::machinery::parse_expr;

use crate::template::scope::{is_template, single_expression};
use crate::template::vars::{Var, Vars};

/// How many variables naming variables are followed.
pub(crate) const DEPTH: usize = 16;

/// Whether templating `raw` (a value as the playbook wrote it) gives back trusted
/// values only; `computed` says whether an expression that names no variable path
/// passes trusted values through.
pub(crate) fn passes_trust(
    raw: &serde_json::Value,
    vars: &Vars,
    computed: &dyn Fn(&str) -> bool,
) -> bool {
    passes(raw, vars, 0, computed)
}

fn passes(
    raw: &serde_json::Value,
    vars: &Vars,
    depth: usize,
    computed: &dyn Fn(&str) -> bool,
) -> bool {
    if depth > DEPTH {
        return false;
    }
    match raw {
        serde_json::Value::String(text) => match single_expression(text) {
            Some(inner) => match named(inner, vars) {
                Named::Trusted(value) => passes(value, vars, depth + 1, computed),
                Named::Other => false,
                Named::NoPath => computed(inner),
            },
            None => !is_template(text),
        },
        serde_json::Value::Array(items) => {
            items.iter().all(|item| passes(item, vars, depth, computed))
        }
        // `!unsafe` text is data.
        serde_json::Value::Object(_) if super::view::unsafe_mark(raw).is_some() => false,
        serde_json::Value::Object(map) => map
            .iter()
            .all(|(key, value)| !is_template(key) && passes(value, vars, depth, computed)),
        _ => true,
    }
}

/// `value` with its strings marked untrusted (`!unsafe`), wherever they sit.
pub(crate) fn untrusted(value: serde_json::Value) -> serde_json::Value {
    match value {
        serde_json::Value::String(text) => {
            serde_json::json!({ crate::yaml::UNSAFE_KEY: text })
        }
        serde_json::Value::Array(items) => items.into_iter().map(untrusted).collect(),
        value if super::view::unsafe_mark(&value).is_some() => value,
        serde_json::Value::Object(map) => map.into_iter().map(|(k, v)| (k, untrusted(v))).collect(),
        other => other,
    }
}

/// `value` with each `!unsafe` mark replaced by the text it holds, as it is shown.
pub(crate) fn without_unsafe_marks(value: &serde_json::Value) -> serde_json::Value {
    if let Some(inner) = super::view::unsafe_mark(value) {
        return without_unsafe_marks(inner);
    }
    match value {
        serde_json::Value::Array(items) => items.iter().map(without_unsafe_marks).collect(),
        serde_json::Value::Object(map) => map
            .iter()
            .map(|(k, v)| (k.clone(), without_unsafe_marks(v)))
            .collect(),
        other => other.clone(),
    }
}

/// Whether `value` holds an `!unsafe` mark anywhere.
pub(crate) fn has_unsafe_marks(value: &serde_json::Value) -> bool {
    super::view::unsafe_mark(value).is_some()
        || match value {
            serde_json::Value::Array(items) => items.iter().any(has_unsafe_marks),
            serde_json::Value::Object(map) => map.values().any(has_unsafe_marks),
            _ => false,
        }
}

/// The raw value a variable path names in a trusted variable.
pub(crate) fn named_trusted<'v>(expr: &str, vars: &'v Vars) -> Option<&'v serde_json::Value> {
    match named(expr, vars) {
        Named::Trusted(value) => Some(value),
        Named::Other | Named::NoPath => None,
    }
}

/// What an expression names.
enum Named<'v> {
    /// A path into a trusted variable: the raw value there.
    Trusted(&'v serde_json::Value),
    /// A path into another variable, or to nothing.
    Other,
    /// No variable path (`a | sort`, `'x'`, `f()`).
    NoPath,
}

/// What a variable path (`item`, `a.b`, `a['b'][0]`) names.
fn named<'v>(expr: &str, vars: &'v Vars) -> Named<'v> {
    let Ok(ast) = parse_expr(expr) else {
        return Named::NoPath;
    };
    let mut steps = Vec::new();
    let mut node = &ast;
    let root = loop {
        match node {
            Expr::Var(var) => break var.id,
            Expr::GetAttr(get) => {
                steps.push(serde_json::Value::String(get.name.to_string()));
                node = &get.expr;
            }
            Expr::GetItem(get) => {
                let Expr::Const(key) = &get.subscript_expr else {
                    return Named::NoPath;
                };
                let Ok(key) = serde_json::to_value(&key.value) else {
                    return Named::NoPath;
                };
                steps.push(key);
                node = &get.expr;
            }
            _ => return Named::NoPath,
        }
    };
    let Some(Var::Trusted(mut value)) = vars.get(root) else {
        return Named::Other;
    };
    for step in steps.iter().rev() {
        let next = match (value, step) {
            (serde_json::Value::Object(map), serde_json::Value::String(key)) => map.get(key),
            (serde_json::Value::Array(items), serde_json::Value::Number(n)) => n
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .and_then(|n| items.get(n)),
            _ => None,
        };
        match next {
            Some(next) => value = next,
            None => return Named::Other,
        }
    }
    Named::Trusted(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn passed_through_values_stay_trusted() {
        let mut vars = Vars::new();
        vars.set_trusted("name", json!("k1"));
        vars.set_trusted("d", json!({"a": ["x"], "t": "{{ 'k' ~ '1' }}"}));
        vars.set_trusted("indirect", json!("{{ d.a }}"));
        vars.set_data("fact", json!("k1"));
        let trusted =
            |raw: serde_json::Value| passes_trust(&raw, &vars, &|e| e.trim() == "computed()");
        assert!(trusted(json!(["k1 == 1", 3, {"that": "x"}])));
        assert!(trusted(json!("{{ name }}")));
        assert!(trusted(json!("{{ d['a'][0] }}")));
        assert!(trusted(json!("{{ indirect }}")));
        assert!(!trusted(json!("{{ d.t }}")));
        assert!(!trusted(json!("{{ name | upper }}")));
        assert!(trusted(json!("{{ computed() }}")));
        assert!(!trusted(json!("x {{ name }}")));
        assert!(!trusted(json!("{{ 'k1' }}")));
        assert!(!trusted(json!("{{ fact }}")));
        assert!(!trusted(json!({"__ansible_unsafe": "x"})));
    }

    #[test]
    fn marks_are_found_and_removed() {
        let marked = json!({"a": [{"__ansible_unsafe": "{{ x }}"}], "b": 1});
        assert!(has_unsafe_marks(&marked));
        let plain = without_unsafe_marks(&marked);
        assert_eq!(plain, json!({"a": ["{{ x }}"], "b": 1}));
        assert!(!has_unsafe_marks(&plain));
    }
}
