//! Results and diffs as text, as ansible-core's callbacks write them: JSON as Python's
//! `json.dumps` writes it (keys sorted, `indent=4` or compact), diffs as unified diffs.

use serde_json::{Map, Value};

/// Serialises like Python's `json.dumps(..., indent=4, sort_keys=True)`, or compact
/// like `json.dumps(..., sort_keys=True)`.
pub fn dump(value: &Map<String, Value>, pretty: bool) -> String {
    let sorted = super::sorted_keys(&Value::Object(value.clone()));
    if pretty {
        pretty_json(&sorted)
    } else {
        python_separators(&serde_json::to_string(&sorted).unwrap_or_default())
    }
}

/// Pretty JSON with 4-space indentation.
pub fn pretty_json<T: serde::Serialize>(value: &T) -> String {
    let mut buf = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
    if value.serialize(&mut ser).is_err() {
        return String::new();
    }
    String::from_utf8(buf).unwrap_or_default()
}

/// JSON text with each character past ASCII written as `\\uXXXX` (UTF-16 units), as
/// Python's `json.dumps` writes it by default (serde_json escapes no such character, so
/// each one is inside a string).
fn ascii_escaped(json: String) -> String {
    if json.is_ascii() {
        return json;
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            for unit in c.encode_utf16(&mut [0; 2]) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out
}

/// Python's `json.dumps` puts a space after `:` and `,`; serde_json does not.
fn python_separators(compact: &str) -> String {
    let mut out = String::with_capacity(compact.len() + compact.len() / 8);
    let mut in_str = false;
    let mut escaped = false;
    for c in compact.chars() {
        out.push(c);
        if in_str {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_str = false,
                _ => {}
            }
        } else {
            match c {
                '"' => in_str = true,
                ':' | ',' => out.push(' '),
                _ => {}
            }
        }
    }
    out
}

/// Renders an Ansible diff dict (or list of them) as ansible-core's callbacks do: the
/// notes of a skipped diff, a unified diff of `before` and `after` followed by a blank
/// line, and a `prepared` text as it is.
pub fn render_diff(diff: &Value) -> String {
    let items: Vec<&Value> = match diff {
        Value::Array(v) => v.iter().collect(),
        v => vec![v],
    };
    let mut out = String::new();
    for d in items {
        let Some(d) = d.as_object() else { continue };
        for (key, side) in [("dst_binary", "destination"), ("src_binary", "source")] {
            if d.contains_key(key) {
                out.push_str(&format!("diff skipped: {side} file appears to be binary\n"));
            }
        }
        for (key, side) in [("dst_larger", "destination"), ("src_larger", "source")] {
            if let Some(size) = d.get(key) {
                let size = size
                    .as_str()
                    .map_or_else(|| size.to_string(), str::to_string);
                out.push_str(&format!(
                    "diff skipped: {side} file size is greater than {size}\n"
                ));
            }
        }
        if let (Some(before), Some(after)) = (d.get("before"), d.get("after")) {
            // A structure as ansible-core writes it: `json.dumps` with the keys sorted,
            // indented by 4, non-ASCII text escaped.
            let text = |v: &Value| match v {
                Value::Null => String::new(),
                Value::String(s) => s.clone(),
                v => ascii_escaped(pretty_json(&super::sorted_keys(v))) + "\n",
            };
            let (before, after) = (text(before), text(after));
            let header = |k: &str, word: &str| match d.get(k).and_then(Value::as_str) {
                Some(h) => format!("{word}: {h}"),
                None => word.to_string(),
            };
            // A last line without its end is marked, as ansible-core marks it.
            let lines = |text: &str| {
                let mut lines: Vec<String> = sandball_pycompat::pyops::splitlines_keepends(text)
                    .into_iter()
                    .map(str::to_string)
                    .collect();
                if let Some(last) = lines.last_mut().filter(|l| !l.ends_with('\n')) {
                    last.push_str("\n\\ No newline at end of file\n");
                }
                lines
            };
            let unified = super::unified::unified_diff(
                &lines(&before),
                &lines(&after),
                &header("before_header", "before"),
                &header("after_header", "after"),
                3,
            );
            if !unified.is_empty() {
                out.push_str(&unified);
                out.push('\n');
            }
        }
        if let Some(Value::String(p)) = d.get("prepared") {
            out.push_str(p);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn diffs_render_unified() {
        let d = render_diff(
            &json!({"before": {"path": "/x", "state": "absent"}, "after": {"path": "/x", "state": "touch"}}),
        );
        assert!(d.contains("--- before\n+++ after\n"), "{d}");
        assert!(
            d.contains("-    \"state\": \"absent\"\n+    \"state\": \"touch\"\n"),
            "{d}"
        );
    }

    #[test]
    fn diffs_of_structures_sort_keys_and_escape_past_ascii() {
        // As ansible-playbook shows a file task's diff (json.dumps, sort_keys, indent 4).
        let d = render_diff(&json!({
            "before": {"path": "/tmp/é", "mode": "0644"},
            "after": {"path": "/tmp/é", "mode": "0600", "sub": {"b": 1, "a": "😀"}}
        }));
        assert_eq!(
            d,
            "--- before\n+++ after\n@@ -1,4 +1,8 @@\n {\n-    \"mode\": \"0644\",\n\
             -    \"path\": \"/tmp/\\u00e9\"\n+    \"mode\": \"0600\",\n\
             +    \"path\": \"/tmp/\\u00e9\",\n+    \"sub\": {\n\
             +        \"a\": \"\\ud83d\\ude00\",\n+        \"b\": 1\n+    }\n }\n\n"
        );
    }

    #[test]
    fn diffs_mark_a_last_line_without_its_end() {
        // As ansible-playbook prints a file that gains its last newline.
        assert_eq!(
            render_diff(&json!({"before": "a\nb", "after": "a\nb\n"})),
            "--- before\n+++ after\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n\n"
        );
    }

    #[test]
    fn diffs_render_prepared_text_as_is_and_null_as_empty() {
        assert_eq!(render_diff(&json!({"prepared": "one\ntwo"})), "one\ntwo");
        assert_eq!(
            render_diff(&json!([{"dst_binary": 1}, {"before": null, "after": "x\n"}])),
            "diff skipped: destination file appears to be binary\n--- before\n+++ after\n@@ -0,0 +1 @@\n+x\n\n"
        );
    }
}
