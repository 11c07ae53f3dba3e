//! Loops: `loop:` and the `with_*` lookups, turned into the list of items a task runs
//! over.

use crate::playbook::LoopKind;
use serde_json::{Value, json};

/// Whether [`items`] can expand loops of this kind.
pub fn supported(kind: &LoopKind) -> bool {
    matches!(
        kind,
        LoopKind::Loop
            | LoopKind::WithList
            | LoopKind::WithItems
            | LoopKind::WithIndexedItems
            | LoopKind::WithDict
    )
}

/// Turns a templated loop value into items, as the loop keyword asks.
pub fn items(kind: &LoopKind, value: Value) -> Result<Vec<Value>, String> {
    match kind {
        LoopKind::Loop => match value {
            Value::Array(v) => Ok(v),
            other => Err(format!(
                "Invalid data passed to 'loop', it requires a list, got this instead: {other}. Hint: If you passed a list/dict of just one element, try adding wantlist=True to your lookup invocation or use q/query instead of lookup."
            )),
        },
        LoopKind::WithList => Ok(as_list(value)),
        LoopKind::WithItems => Ok(as_list(value)
            .into_iter()
            .flat_map(|v| match v {
                Value::Array(inner) => inner,
                other => vec![other],
            })
            .collect()),
        LoopKind::WithIndexedItems => Ok(as_list(value)
            .into_iter()
            .flat_map(|v| match v {
                Value::Array(inner) => inner,
                other => vec![other],
            })
            .enumerate()
            .map(|(i, v)| json!([i, v]))
            .collect()),
        LoopKind::WithDict => match value {
            Value::Object(m) => Ok(m
                .into_iter()
                .map(|(k, v)| json!({"key": k, "value": v}))
                .collect()),
            other => Err(format!("with_dict expects a dict, got {other}")),
        },
        other => Err(format!("{other:?} loops are not supported yet")),
    }
}

fn as_list(value: Value) -> Vec<Value> {
    match value {
        Value::Array(v) => v,
        Value::Null => vec![],
        other => vec![other],
    }
}

/// The `(item=…)` label: text as is, anything else as compact JSON.
pub fn label(item: &Value) -> String {
    match item {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_items_flattens_one_level_and_loop_requires_a_list() {
        assert_eq!(
            items(&LoopKind::WithItems, json!([1, [2, [3]]])).unwrap(),
            vec![json!(1), json!(2), json!([3])]
        );
        assert!(items(&LoopKind::Loop, json!("x")).is_err());
        assert_eq!(
            items(&LoopKind::WithDict, json!({"a": 1})).unwrap(),
            vec![json!({"key": "a", "value": 1})]
        );
    }
}
