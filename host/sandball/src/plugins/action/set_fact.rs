//! `set_fact`: sets host variables for the rest of the run (arguments arrive templated,
//! the text templating made marked `!unsafe`, which the facts keep).

use super::{Failure, failed, ok_with, raised};
use sandball_pycompat::boolean::truthy;
use serde_json::{Map, Value, json};

/// Runs `set_fact`; the executor stores `ansible_facts` for the host.
pub fn run(ctx: &dyn super::Context, args: &Map<String, Value>) -> super::TaskResult {
    let mut facts = Map::new();
    let mut cacheable = false;
    for (k, v) in args {
        // A name may be templated (`set_fact: "{{ item }}=value"`), as Ansible allows;
        // what the template gives must be a valid name.
        let name = if k.contains("{{") {
            match ctx
                .templar()
                .template(&Value::String(k.clone()), ctx.vars())
            {
                Ok(name) => name,
                Err(e) => return failed(e.to_string()).into(),
            }
        } else {
            Value::String(k.clone())
        };
        if name == "cacheable" {
            // Its value may be marked untrusted (see the executor's `with_trust_marks`).
            match truthy(Some(&crate::template::without_unsafe_marks(v)), false) {
                Ok(b) => cacheable = b,
                Err(e) => return failed(e).into(),
            }
            continue;
        }
        let k = match variable_name(&name) {
            Ok(k) => k,
            Err(e) => return failed(e).into(),
        };
        facts.insert(k, v.clone());
    }
    if facts.is_empty() {
        return raised(
            Failure::Raised,
            "No key/value pairs provided, at least one is required for this action to succeed",
        )
        .into();
    }
    let mut result = ok_with(json!({ "ansible_facts": facts }));
    result.insert(crate::vars::CACHEABLE.into(), Value::Bool(cacheable));
    result.into()
}

/// A variable name as ansible-core 2.19 accepts one: a string that is an ASCII
/// identifier and not a name Jinja gives a meaning (`true`, `none`, `not`…); else the
/// error it gives, naming the value (and its type when it is not a string).
pub(super) fn variable_name(name: &Value) -> Result<String, String> {
    const JINJA_NAMES: &[&str] = &["true", "false", "none", "True", "False", "None", "not"];
    if let Value::String(s) = name {
        let mut chars = s.chars();
        if chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !JINJA_NAMES.contains(&s.as_str())
        {
            return Ok(s.clone());
        }
    }
    let mut shown = format!("'{}'", sandball_pycompat::pyfmt::py_str(name));
    if !name.is_string() {
        shown.push_str(&format!(
            " of type '{}'",
            sandball_pycompat::pyfmt::short_type_name(name)
        ));
    }
    Err(format!(
        "Invalid variable name {shown}. Variable names must be strings starting with a letter or underscore character, and contain only letters, numbers and underscores."
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::action::testing::FakeContext;

    #[test]
    fn sets_facts_and_rejects_bad_names() {
        let ctx = FakeContext::default();
        let run = |args: &Map<String, Value>| run(&ctx, args);
        let r = run(json!({"a": 1, "cacheable": "no"}).as_object().unwrap());
        assert_eq!(r["ansible_facts"], json!({"a": 1}));
        let r = run(json!({"1a": 1}).as_object().unwrap());
        assert_eq!(r["failed"], true);
        let r = run(&Map::new());
        assert_eq!(r["failed"], true);
        let mut ctx = FakeContext::default();
        ctx.vars.set_data("item", json!("foo"));
        let r = super::run(&ctx, json!({"{{ item }}": "moo"}).as_object().unwrap());
        assert_eq!(r["ansible_facts"], json!({"foo": "moo"}));
        // What a template gives must be a name, as ansible-core 2.19 checks it.
        let r = super::run(&ctx, json!({"{{ 'true' }}": 1}).as_object().unwrap());
        assert!(
            r["msg"]
                .as_str()
                .unwrap()
                .contains("Invalid variable name 'true'."),
            "{r:?}"
        );
        let r = super::run(&ctx, json!({"{{ 1 }}": 1}).as_object().unwrap());
        assert!(
            r["msg"]
                .as_str()
                .unwrap()
                .contains("Invalid variable name '1' of type 'int'"),
            "{r:?}"
        );
    }
}
