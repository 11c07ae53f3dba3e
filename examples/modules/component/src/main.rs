//! `json_key`, an example third-party module written only against the guest SDK's
//! public API: makes sure one key of a JSON document file holds a value
//! (`state: present`) or is not there (`state: absent`). The file is rewritten whole,
//! atomically, only when the document changes (after an optional `validate` command); check mode decides without writing,
//! diff mode shows the text before and after, `backup` keeps the old file, and the file
//! common arguments (`mode`, `owner`…) are applied after the edit.

use sandball_guest_sdk::files::{backup_local, read_text, write_validated};
use sandball_guest_sdk::prelude::*;
use sandball_guest_sdk::serde_json;
use serde::Serialize;

sandball_guest_sdk::manifest!("../manifest.json");

fn main() {
    sandball_guest_sdk::run_with_paths(MANIFEST, json_key);
}

/// The module body.
fn json_key(m: &mut Module) -> Result<Map<String, Value>, Fail> {
    let path = m.get_str("path").unwrap_or_default().to_string();
    let key = m.get_str("key").unwrap_or_default().to_string();
    let steps: Vec<&str> = key.split('.').collect();
    if steps.iter().any(|s| s.is_empty()) {
        return Err(Fail::new(format!(
            "key {key:?} has an empty part: write object keys joined by single dots"
        )));
    }
    let indent = usize::try_from(m.get_int("indent").unwrap_or(2))
        .map_err(|_| Fail::new("indent must be 0 or more"))?;

    let exists = host::stat(&path, true)?.is_some();
    let before_text = if exists {
        read_text(&path, "json_key")?
    } else if m.get_bool("create") {
        String::new()
    } else {
        return Err(Fail::new(format!(
            "{path} does not exist (create: true starts an empty document)"
        )));
    };
    let mut document: Value = if before_text.trim().is_empty() {
        json!({})
    } else {
        serde_json::from_str(&before_text)
            .map_err(|e| Fail::new(format!("{path} is not JSON: {e}")))?
    };

    let previous = match m.get_str("state") {
        Some("absent") => remove(&mut document, &steps, &key)?,
        _ => set(
            &mut document,
            &steps,
            &key,
            m.get("value").cloned().unwrap_or(Value::Null),
        )?,
    };
    let after_text = render(&document, indent)?;
    let changed = after_text != before_text;

    let mut result = json_map!({"path": path, "key": key});
    if let Some(previous) = previous {
        result.insert("previous".into(), previous);
    }
    if changed {
        if m.diff_mode() {
            result.insert(
                "diff".into(),
                json!({"before_header": path, "before": before_text,
                       "after_header": path, "after": after_text}),
            );
        }
        if !m.check_mode() {
            if exists && m.get_bool("backup") {
                result.insert("backup_file".into(), json!(backup_local(&path)?));
            }
            write_validated(&path, after_text.as_bytes(), m.get_str("validate"))?;
        }
    }
    let msg = if changed { "key updated" } else { "" };
    // In check mode a file that would be created has no attributes to compare yet.
    let (changed, msg, _) = if m.check_mode() && !exists {
        (changed, msg.to_string(), Value::Null)
    } else {
        m.check_file_attrs(&path, changed, msg)?
    };
    result.insert("changed".into(), json!(changed));
    result.insert("msg".into(), json!(msg));
    Ok(result)
}

/// Sets the value at `steps`, creating the objects on the way; returns the value it
/// replaced.
fn set(doc: &mut Value, steps: &[&str], key: &str, value: Value) -> Result<Option<Value>, Fail> {
    let Some((last, parents)) = steps.split_last() else {
        return Ok(None);
    };
    let mut node = doc;
    for (depth, step) in parents.iter().enumerate() {
        node = object(node, steps, depth, key)?
            .entry(step.to_string())
            .or_insert_with(|| json!({}));
    }
    Ok(object(node, steps, parents.len(), key)?.insert(last.to_string(), value))
}

/// Removes the value at `steps`; returns it (nothing when it was not there).
fn remove(doc: &mut Value, steps: &[&str], key: &str) -> Result<Option<Value>, Fail> {
    let Some((last, parents)) = steps.split_last() else {
        return Ok(None);
    };
    let mut node = doc;
    for (depth, step) in parents.iter().enumerate() {
        match object(node, steps, depth, key)?.get_mut(*step) {
            Some(child) => node = child,
            None => return Ok(None),
        }
    }
    Ok(object(node, steps, parents.len(), key)?.shift_remove(*last))
}

/// `node` as an object, or a failure naming where along `key` it is something else.
fn object<'a>(
    node: &'a mut Value,
    steps: &[&str],
    depth: usize,
    key: &str,
) -> Result<&'a mut Map<String, Value>, Fail> {
    match node {
        Value::Object(map) => Ok(map),
        other => {
            let at = if depth == 0 {
                "the document".to_string()
            } else {
                steps[..depth].join(".")
            };
            Err(Fail::new(format!(
                "cannot reach {key}: {at} is {}, not an object",
                kind(other)
            )))
        }
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// The document as the file holds it: `indent` spaces a level, a final newline.
fn render(doc: &Value, indent: usize) -> Result<String, Fail> {
    let spaces = " ".repeat(indent);
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(spaces.as_bytes());
    let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
    doc.serialize(&mut ser)
        .map_err(|e| Fail::new(format!("cannot write the document: {e}")))?;
    out.push(b'\n');
    String::from_utf8(out).map_err(|e| Fail::new(format!("cannot write the document: {e}")))
}
