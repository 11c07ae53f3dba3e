//! Args files: how WANT_JSON, binary and old-style modules get their arguments — a
//! file on the node whose path is the module's only command-line argument.
//!
//! WANT_JSON and binary modules read JSON; old-style modules read shell-quoted
//! `key=value` pairs separated by spaces (a shell script can `source` the file).

use sandball_pycompat::shell::quote;
use serde_json::Value;

/// The JSON args file.
pub fn json(args: &Value) -> Vec<u8> {
    args.to_string().into_bytes()
}

/// The old-style args file: `key=value` pairs, each value quoted for the shell. Values
/// are written as Python's `str()` writes them (`True`, `None`); lists and mappings as
/// JSON.
pub fn old_style(args: &Value) -> Vec<u8> {
    let Value::Object(map) = args else {
        return Vec::new();
    };
    map.iter()
        .map(|(k, v)| {
            let text = match v {
                Value::String(s) => s.clone(),
                Value::Bool(true) => "True".into(),
                Value::Bool(false) => "False".into(),
                Value::Null => "None".into(),
                other => other.to_string(),
            };
            format!("{k}={}", quote(&text))
        })
        .collect::<Vec<_>>()
        .join(" ")
        .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn old_style_pairs_are_shell_quoted() {
        let args = json!({"name": "it's a test", "count": 3, "force": true, "none": null, "list": [1, "a"]});
        let text = String::from_utf8(old_style(&args)).unwrap();
        assert_eq!(
            text,
            "name='it'\"'\"'s a test' count=3 force=True none=None list='[1,\"a\"]'"
        );
        // A shell reads the values back unchanged.
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "{text}\nprintf '%s|%s|%s' \"$name\" \"$count\" \"$list\""
            ))
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "it's a test|3|[1,\"a\"]"
        );
    }

    #[test]
    fn json_args_round_trip() {
        let args = json!({"a": "b", "_ansible_check_mode": false});
        let back: Value = serde_json::from_slice(&json(&args)).unwrap();
        assert_eq!(back, args);
    }
}
