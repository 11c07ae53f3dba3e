//! `set_fact`: sets host variables for the rest of the run (arguments arrive templated).

use super::{failed, ok_with, truthy};
use serde_json::{Map, Value, json};

/// Runs `set_fact`; the executor stores `ansible_facts` for the host.
pub fn run(ctx: &dyn super::Context, args: &Map<String, Value>) -> Map<String, Value> {
    let mut facts = Map::new();
    let mut cacheable = false;
    for (k, v) in args {
        // A name may be templated (`set_fact: "{{ item }}=value"`), as Ansible allows.
        let templated;
        let k = if k.contains("{{") {
            templated = match ctx
                .templar()
                .template(&Value::String(k.clone()), ctx.vars())
            {
                Ok(Value::String(name)) => name,
                Ok(other) => other.to_string(),
                Err(e) => return failed(e.to_string()),
            };
            &templated
        } else {
            k
        };
        if k == "cacheable" {
            match truthy(Some(v), false) {
                Ok(b) => cacheable = b,
                Err(e) => return failed(e),
            }
            continue;
        }
        if !is_identifier(k) {
            return failed(format!(
                "The variable name '{k}' is not valid. Variables must start with a letter or underscore character, and contain only letters, numbers and underscores."
            ));
        }
        facts.insert(k.clone(), v.clone());
    }
    if facts.is_empty() {
        return failed(
            "No key/value pairs provided, at least one is required for this action to succeed",
        );
    }
    ok_with(json!({"ansible_facts": facts, "_ansible_facts_cacheable": cacheable}))
}

/// Whether a name can be a variable.
pub fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
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
    }
}
