//! Loops: `loop:`, and the `with_*` loops, each its lookup (`template/lookups/`),
//! turned into the list of items a task runs over; and the items' `(item=…)` labels.

use crate::playbook::LoopKind;
use crate::template::lookups::LookupContext;
use serde_json::Value;

/// Whether [`items`] can expand loops of this kind: a `with_<lookup>` needs the lookup
/// (`Ok(false)` when there is none; an error when none can be looked for).
pub fn supported(kind: &LoopKind) -> Result<bool, String> {
    match kind {
        LoopKind::WithLookup(name) => crate::template::lookups::available(name),
        _ => Ok(true),
    }
}

/// Turns a templated loop value into items, as the loop keyword asks; `ctx` serves the
/// lookup of a `with_<lookup>` loop.
pub fn items(kind: &LoopKind, value: Value, ctx: &dyn LookupContext) -> Result<Vec<Value>, String> {
    // Every `with_*` loop is its lookup, run on the loop's value as terms.
    let lookup = match kind {
        LoopKind::Loop => {
            return match value {
                Value::Array(v) => Ok(v),
                other => Err(format!(
                    "Invalid data passed to 'loop', it requires a list, got this instead: {other}. Hint: If you passed a list/dict of just one element, try adding wantlist=True to your lookup invocation or use q/query instead of lookup."
                )),
            };
        }
        LoopKind::WithList => "list",
        LoopKind::WithItems => "items",
        LoopKind::WithIndexedItems => "indexed_items",
        LoopKind::WithDict => "dict",
        LoopKind::WithSequence => "sequence",
        LoopKind::WithNested => "nested",
        LoopKind::WithTogether => "together",
        LoopKind::WithSubelements => "subelements",
        LoopKind::WithLookup(name) => name,
    };
    crate::template::lookups::run(
        lookup,
        &crate::template::lookups::as_terms(value),
        &serde_json::Map::new(),
        ctx,
    )
    .map_err(|e| format!("The lookup plugin '{lookup}' failed: {e}"))
}

/// The `(item=…)` label: text as is, anything else as Python shows it
/// (`[1, 'x']`, `{'name': 'a'}`), as Ansible prints it.
pub fn label(item: &Value) -> String {
    match item {
        Value::String(s) => s.clone(),
        other => sandball_wire::python::py_str(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::lookups::TaskLookup;
    use crate::template::{Templar, Vars};
    use serde_json::json;

    /// No variables: loops that need no lookup.
    fn ctx() -> TaskLookup<'static> {
        static TEMPLAR: std::sync::LazyLock<Templar> = std::sync::LazyLock::new(Templar::new);
        static VARS: std::sync::LazyLock<Vars> = std::sync::LazyLock::new(Vars::new);
        TaskLookup {
            templar: &TEMPLAR,
            vars: &VARS,
            loop_action: None,
        }
    }

    #[test]
    fn with_items_flattens_one_level_and_loop_requires_a_list() {
        assert_eq!(
            items(&LoopKind::WithItems, json!([1, [2, [3]]]), &ctx()).unwrap(),
            vec![json!(1), json!(2), json!([3])]
        );
        assert!(items(&LoopKind::Loop, json!("x"), &ctx()).is_err());
        assert_eq!(
            items(&LoopKind::WithDict, json!({"a": 1}), &ctx()).unwrap(),
            vec![json!({"key": "a", "value": 1})]
        );
    }

    #[test]
    fn sequences_nested_together_and_subelements() {
        let seq = |t: &str| items(&LoopKind::WithSequence, json!(t), &ctx()).unwrap();
        assert_eq!(
            seq("start=1 end=5 stride=2 format=host%02d"),
            vec![json!("host01"), json!("host03"), json!("host05")]
        );
        assert_eq!(seq("count=3"), vec![json!("1"), json!("2"), json!("3")]);
        assert_eq!(seq("2-4"), vec![json!("2"), json!("3"), json!("4")]);
        assert_eq!(
            seq("start=5 end=1 stride=-2"),
            vec![json!("5"), json!("3"), json!("1")]
        );
        assert!(items(&LoopKind::WithSequence, json!("start=5 end=1"), &ctx()).is_err());
        assert_eq!(
            items(&LoopKind::WithNested, json!([[1, 2], ["x"]]), &ctx()).unwrap(),
            vec![json!([1, "x"]), json!([2, "x"])]
        );
        assert_eq!(
            items(&LoopKind::WithTogether, json!([[1, 2], ["x"]]), &ctx()).unwrap(),
            vec![json!([1, "x"]), json!([2, null])]
        );
        let users = json!([[{"n": "a", "k": [1, 2]}, {"n": "c"}], "k", {"skip_missing": true}]);
        assert_eq!(
            items(&LoopKind::WithSubelements, users, &ctx()).unwrap(),
            vec![json!([{"n": "a"}, 1]), json!([{"n": "a"}, 2])]
        );
        assert_eq!(label(&json!([1, "x", null])), "[1, 'x', None]");
    }
}
