//! Loops: `loop:` and the `with_*` lookups, turned into the list of items a task runs
//! over.

use crate::playbook::LoopKind;
use crate::template::lookups::LookupContext;
use serde_json::{Value, json};

/// Whether [`items`] can expand loops of this kind (a `with_<lookup>` needs the lookup).
pub fn supported(kind: &LoopKind) -> bool {
    match kind {
        LoopKind::WithLookup(name) => crate::template::lookups::known(name),
        _ => true,
    }
}

/// Turns a templated loop value into items, as the loop keyword asks; `ctx` serves the
/// lookup of a `with_<lookup>` loop.
pub fn items(kind: &LoopKind, value: Value, ctx: &dyn LookupContext) -> Result<Vec<Value>, String> {
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
        LoopKind::WithSequence => sequence(&value),
        LoopKind::WithNested => Ok(nested(&as_list(value))),
        LoopKind::WithTogether => Ok(together(&as_list(value))),
        LoopKind::WithSubelements => subelements(&as_list(value)),
        LoopKind::WithLookup(name) => {
            let terms = match value {
                Value::Array(items) => items,
                one => vec![one],
            };
            crate::template::lookups::run(name, &terms, &serde_json::Map::new(), ctx)
        }
    }
}

/// `with_nested`: every combination of one item from each list, in order.
fn nested(lists: &[Value]) -> Vec<Value> {
    let mut out: Vec<Vec<Value>> = vec![Vec::new()];
    for list in lists {
        let choices = as_list(list.clone());
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
    out.into_iter().map(Value::Array).collect()
}

/// `with_together`: the lists side by side, the shorter ones padded with nulls.
fn together(lists: &[Value]) -> Vec<Value> {
    let lists: Vec<Vec<Value>> = lists.iter().map(|l| as_list(l.clone())).collect();
    let longest = lists.iter().map(Vec::len).max().unwrap_or(0);
    (0..longest)
        .map(|i| {
            Value::Array(
                lists
                    .iter()
                    .map(|l| l.get(i).cloned().unwrap_or(Value::Null))
                    .collect(),
            )
        })
        .collect()
}

/// `with_subelements: [list, key, {skip_missing: …}]`: each element of each item's
/// `key` (a dotted path), beside the item without that key.
fn subelements(terms: &[Value]) -> Result<Vec<Value>, String> {
    let (Some(list), Some(Value::String(path))) = (terms.first(), terms.get(1)) else {
        return Err(
            "subelements lookup expects a list of two or three items: a list of dictionaries and a key"
                .into(),
        );
    };
    let skip_missing = terms
        .get(2)
        .and_then(|flags| flags.get("skip_missing"))
        .is_some_and(sandball_wire::python::py_truth);
    let keys: Vec<&str> = path.split('.').collect();
    let mut out = Vec::new();
    for item in as_list(list.clone()) {
        let Value::Object(parent) = &item else {
            return Err(format!(
                "subelements lookup expects a list of dictionaries, got {item}"
            ));
        };
        let mut node = &item;
        let mut found = true;
        for key in &keys {
            match node.get(key) {
                Some(next) => node = next,
                None => {
                    found = false;
                    break;
                }
            }
        }
        if !found {
            if skip_missing {
                continue;
            }
            return Err(format!(
                "could not find '{path}' key in iterated item {}",
                sandball_wire::python::py_repr(&item)
            ));
        }
        let Value::Array(children) = node else {
            return Err(format!("the key {path} should point to a list, got {node}"));
        };
        let mut shown = parent.clone();
        if keys.len() == 1 {
            shown.remove(keys[0]);
        }
        for child in children {
            out.push(Value::Array(vec![
                Value::Object(shown.clone()),
                child.clone(),
            ]));
        }
    }
    Ok(out)
}

/// `with_sequence`: `start=1 end=5 stride=1 format=%d`, `count=N`, or the short forms
/// `[start-]end[/stride][:format]`; each item is the formatted text.
fn sequence(value: &Value) -> Result<Vec<Value>, String> {
    let terms = match value {
        Value::Array(items) => items.clone(),
        one => vec![one.clone()],
    };
    let mut out = Vec::new();
    for term in terms {
        let text = match term {
            Value::String(s) => s,
            other => other.to_string(),
        };
        out.extend(one_sequence(text.trim())?);
    }
    Ok(out)
}

fn one_sequence(text: &str) -> Result<Vec<Value>, String> {
    let number = |k: &str, v: &str| {
        v.trim()
            .parse::<i64>()
            .map_err(|_| format!("sequence: {k}={v} is not an integer"))
    };
    let (mut start, mut end, mut stride, mut count, mut format) =
        (1_i64, None::<i64>, 1_i64, None::<i64>, "%d".to_string());
    if text.contains('=') {
        for part in text.split_whitespace() {
            let Some((k, v)) = part.split_once('=') else {
                return Err(format!(
                    "sequence: cannot read {part:?} (key=value expected)"
                ));
            };
            match k {
                "start" => start = number(k, v)?,
                "end" => end = Some(number(k, v)?),
                "stride" => stride = number(k, v)?,
                "count" => count = Some(number(k, v)?),
                "format" => format = v.to_string(),
                other => return Err(format!("sequence: unrecognized key {other:?}")),
            }
        }
    } else {
        let (range, fmt) = match text.split_once(':') {
            Some((r, f)) => (r, Some(f)),
            None => (text, None),
        };
        let (range, step) = match range.split_once('/') {
            Some((r, s)) => (r, Some(number("stride", s)?)),
            None => (range, None),
        };
        match range.split_once('-') {
            Some((a, b)) => {
                start = number("start", a)?;
                end = Some(number("end", b)?);
            }
            None => end = Some(number("end", range)?),
        }
        if let Some(s) = step {
            stride = s;
        }
        if let Some(f) = fmt {
            format = f.to_string();
        }
    }
    let end = match (end, count) {
        (Some(_), Some(_)) => return Err("sequence: can't specify both count and end".into()),
        (Some(e), None) => e,
        (None, Some(0)) => return Ok(Vec::new()),
        (None, Some(c)) => start + (c - 1) * stride,
        (None, None) => return Err("sequence: must specify count or end".into()),
    };
    if stride == 0 {
        return Ok(Vec::new());
    }
    if (stride > 0 && end < start) || (stride < 0 && end > start) {
        return Err("sequence: to count backwards make stride negative".into());
    }
    let mut out = Vec::new();
    let mut i = start;
    while (stride > 0 && i <= end) || (stride < 0 && i >= end) {
        out.push(Value::String(printf(&format, i)?));
        i += stride;
    }
    Ok(out)
}

/// Python's `format % n` for the conversions sequences use (`%d`, `%02d`, `%x`, `%o`,
/// `%s`…).
fn printf(format: &str, n: i64) -> Result<String, String> {
    let mut out = String::new();
    let mut chars = format.chars().peekable();
    let mut used = false;
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            out.push('%');
            continue;
        }
        let mut spec = String::new();
        while let Some(&d) = chars.peek() {
            if d.is_ascii_digit() || d == '-' || d == '0' {
                spec.push(d);
                chars.next();
            } else {
                break;
            }
        }
        let conv = chars
            .next()
            .ok_or_else(|| format!("sequence: bad format {format:?}"))?;
        let digits = match conv {
            'd' | 'i' | 's' => n.to_string(),
            'x' => format!("{n:x}"),
            'X' => format!("{n:X}"),
            'o' => format!("{n:o}"),
            other => {
                return Err(format!(
                    "sequence: unsupported conversion %{other} in {format:?}"
                ));
            }
        };
        let left = spec.starts_with('-');
        let zero = spec.trim_start_matches('-').starts_with('0') && !left;
        let width: usize = spec.trim_start_matches('-').parse().unwrap_or(0);
        let padded = if digits.len() >= width {
            digits
        } else if left {
            format!("{digits:<width$}")
        } else if zero {
            let (sign, body) = digits
                .strip_prefix('-')
                .map_or(("", digits.as_str()), |b| ("-", b));
            format!("{sign}{body:0>w$}", w = width - sign.len())
        } else {
            format!("{digits:>width$}")
        };
        out.push_str(&padded);
        used = true;
    }
    if !used {
        return Err(format!("sequence: the format {format:?} has no conversion"));
    }
    Ok(out)
}

fn as_list(value: Value) -> Vec<Value> {
    match value {
        Value::Array(v) => v,
        Value::Null => vec![],
        other => vec![other],
    }
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

    /// No variables: loops that need no lookup.
    fn ctx() -> TaskLookup<'static> {
        static TEMPLAR: std::sync::LazyLock<Templar> = std::sync::LazyLock::new(Templar::new);
        static VARS: std::sync::LazyLock<Vars> = std::sync::LazyLock::new(Vars::new);
        TaskLookup {
            templar: &TEMPLAR,
            vars: &VARS,
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
