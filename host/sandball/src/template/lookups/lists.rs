//! The lookups that arrange their terms: `items`, `list`, `indexed_items`, `dict`,
//! `nested`, `together`, `subelements` and `random_choice`.

use serde_json::Value as Json;

use super::{LookupContext, LookupError, Options, as_terms, flatten_one};

/// `items`: the terms, lists among them giving their elements.
pub(super) fn items(
    terms: &[Json],
    _options: &Options,
    _ctx: &dyn LookupContext,
) -> Result<Vec<Json>, LookupError> {
    Ok(flatten_one(terms))
}

/// `list`: the terms as they are.
pub(super) fn list(
    terms: &[Json],
    _options: &Options,
    _ctx: &dyn LookupContext,
) -> Result<Vec<Json>, LookupError> {
    Ok(terms.to_vec())
}

/// `indexed_items`: `[index, item]` for each of [`items`]'s.
pub(super) fn indexed_items(
    terms: &[Json],
    _options: &Options,
    _ctx: &dyn LookupContext,
) -> Result<Vec<Json>, LookupError> {
    Ok(flatten_one(terms)
        .into_iter()
        .enumerate()
        .map(|(i, v)| Json::Array(vec![Json::from(i), v]))
        .collect())
}

/// `dict`: `{key, value}` for each entry of each mapping.
pub(super) fn dict(
    terms: &[Json],
    _options: &Options,
    _ctx: &dyn LookupContext,
) -> Result<Vec<Json>, LookupError> {
    let mut out = Vec::new();
    for t in terms {
        let Json::Object(m) = t else {
            let value = crate::template::convert::from_json(t);
            return Err(LookupError::Failed(format!(
                "the 'dict' lookup plugin expects a dictionary, got '{value}' of type <class '{}'>",
                crate::template::filters::python_type(&value)
            )));
        };
        out.extend(
            m.iter()
                .map(|(k, v)| serde_json::json!({"key": k, "value": v})),
        );
    }
    Ok(out)
}

/// `nested`: every combination of one item from each list, in order.
pub(super) fn nested(
    terms: &[Json],
    _options: &Options,
    _ctx: &dyn LookupContext,
) -> Result<Vec<Json>, LookupError> {
    Ok(combinations(terms))
}

/// Every combination of one item from each list, in order.
fn combinations(lists: &[Json]) -> Vec<Json> {
    let mut out: Vec<Vec<Json>> = vec![Vec::new()];
    for list in lists {
        let choices = as_terms(list.clone());
        out = out
            .into_iter()
            .flat_map(|prefix| {
                choices.iter().map(move |c| {
                    let mut next = prefix.clone();
                    next.push(c.clone());
                    next
                })
            })
            .collect();
    }
    out.into_iter().map(Json::Array).collect()
}

/// `together`: the lists side by side, the shorter ones padded with nulls.
pub(super) fn together(
    terms: &[Json],
    _options: &Options,
    _ctx: &dyn LookupContext,
) -> Result<Vec<Json>, LookupError> {
    if terms.is_empty() {
        return Err(LookupError::Failed(
            "with_together requires at least one element in each list".into(),
        ));
    }
    Ok(side_by_side(terms))
}

/// The lists side by side, the shorter ones padded with nulls.
fn side_by_side(lists: &[Json]) -> Vec<Json> {
    let lists: Vec<Vec<Json>> = lists.iter().map(|l| as_terms(l.clone())).collect();
    let longest = lists.iter().map(Vec::len).max().unwrap_or(0);
    (0..longest)
        .map(|i| {
            Json::Array(
                lists
                    .iter()
                    .map(|l| l.get(i).cloned().unwrap_or(Json::Null))
                    .collect(),
            )
        })
        .collect()
}

/// `with_subelements: [list, key, {skip_missing: …}]`: each element of each item's
/// `key` (a dotted path), beside the item without that key.
pub(super) fn subelements(
    terms: &[Json],
    _options: &Options,
    _ctx: &dyn LookupContext,
) -> Result<Vec<Json>, LookupError> {
    if terms.len() > 3 {
        return Err(LookupError::Failed(
            "subelements lookup expects a list of two or three items,".into(),
        ));
    }
    let (Some(list @ (Json::Array(_) | Json::Object(_))), Some(Json::String(path))) =
        (terms.first(), terms.get(1))
    else {
        return Err(LookupError::Failed(
            "subelements lookup expects a list of two or three items, first a dict or a list, second a string pointing to the subkey"
                .into(),
        ));
    };
    let skip_missing = match terms.get(2) {
        None => false,
        Some(Json::Object(flags)) if flags.keys().all(|k| k == "skip_missing") => flags
            .get("skip_missing")
            .is_some_and(sandball_pycompat::pyops::py_truth),
        Some(_) => {
            return Err(LookupError::Failed("subelements lookup expects a list of two or three items, the optional third item must be a dict with flags skip_missing".into()));
        }
    };
    let keys: Vec<&str> = path.split('.').collect();
    // A mapping stands for the list of its values (none when it says it was skipped).
    let items = match list {
        Json::Object(m) if m.get("skipped").is_some_and(|v| v != &Json::Bool(false)) => {
            return Ok(Vec::new());
        }
        Json::Object(m) => m.values().cloned().collect(),
        other => as_terms(other.clone()),
    };
    let mut out = Vec::new();
    for item in items {
        let Json::Object(parent) = &item else {
            let shown = match &item {
                Json::String(t) => t.clone(),
                Json::Bool(true) => "True".into(),
                Json::Bool(false) => "False".into(),
                Json::Null => "None".into(),
                other => other.to_string(),
            };
            return Err(LookupError::Failed(format!(
                "subelements lookup expects a dictionary, got '{shown}'"
            )));
        };
        // An item a loop's `register` marked skipped is passed over.
        if parent.get("skipped") == Some(&Json::Bool(true)) {
            continue;
        }
        // Down the keys as Ansible walks them: each but the last must name a
        // mapping, the last a list, which the item is shown without.
        let quoted = |v: &Json| format!("'{}'", sandball_pycompat::pyfmt::py_str(v));
        let mut shown = parent.clone();
        let mut holder = Some(&mut shown);
        let mut children = Vec::new();
        for (depth, key) in keys.iter().enumerate() {
            let Some(level) = holder.take() else { break };
            let last = depth + 1 == keys.len();
            match level.get(*key) {
                None if skip_missing => {}
                None => {
                    return Err(LookupError::Failed(format!(
                        "could not find '{key}' key in iterated item {}",
                        quoted(&Json::Object(level.clone()))
                    )));
                }
                Some(Json::Array(list)) if last => {
                    children = list.clone();
                    level.remove(*key);
                }
                Some(other) if last => {
                    return Err(LookupError::Failed(format!(
                        "the key {key} should point to a list, got {}",
                        quoted(other)
                    )));
                }
                Some(Json::Object(_)) => {
                    holder = level.get_mut(*key).and_then(Json::as_object_mut);
                }
                Some(_) if skip_missing => {}
                Some(other) => {
                    return Err(LookupError::Failed(format!(
                        "the key {key} should point to a dictionary, got {}",
                        quoted(other)
                    )));
                }
            }
        }
        for child in children {
            out.push(Json::Array(vec![Json::Object(shown.clone()), child]));
        }
    }
    Ok(out)
}

/// `random_choice`: one of the terms, chosen at random (none of none).
pub(super) fn random_choice(
    terms: &[Json],
    _options: &Options,
    _ctx: &dyn LookupContext,
) -> Result<Vec<Json>, LookupError> {
    use rand::seq::IndexedRandom;
    Ok(terms
        .choose(&mut rand::rng())
        .cloned()
        .into_iter()
        .collect())
}
