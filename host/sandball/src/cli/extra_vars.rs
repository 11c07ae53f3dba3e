//! `-e/--extra-vars`: `k=v` pairs, inline JSON or YAML, or `@file`, as
//! ansible-playbook reads them.

use super::CliError;
use serde_json::{Map, Value};
use std::path::Path;

/// Parses one `-e` value into variables.
pub fn parse(text: &str) -> Result<Map<String, Value>, CliError> {
    let (value, origin) = if let Some(file) = text.strip_prefix('@') {
        let path = Path::new(file);
        let content = crate::yaml::read_file(path)
            .map_err(|e| CliError::options(format!("cannot read extra vars file {file}: {e}")))?;
        (
            crate::yaml::load_data(&content, path).map_err(CliError::parse)?,
            file.to_string(),
        )
    } else if text.trim_start().starts_with('{') || text.trim_start().starts_with('[') {
        (
            crate::yaml::load_data(text, Path::new("<extra vars>")).map_err(CliError::parse)?,
            text.to_string(),
        )
    } else if text.trim().is_empty() {
        return Ok(Map::new());
    } else {
        return crate::playbook::parse_kv(text)
            .map_err(|e| CliError::options(format!("invalid extra vars '{text}': {e}")));
    };
    match value {
        Value::Object(m) => Ok(m),
        Value::Null => Ok(Map::new()),
        // The value is not quoted: it may come from a vault-encrypted file.
        other => Err(CliError::options(format!(
            "extra vars from {origin} must be a mapping of variable names to values, got {}",
            crate::inventory::script::json_type(&other)
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_pairs_json_and_files() {
        assert_eq!(
            parse("a=1 b='x y'").unwrap(),
            *json!({"a": "1", "b": "x y"}).as_object().unwrap()
        );
        assert_eq!(parse(r#"{"n": 2}"#).unwrap()["n"], 2);
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("v.yml");
        std::fs::write(&f, "x: yes\nl: [1, 2]\n").unwrap();
        let m = parse(&format!("@{}", f.display())).unwrap();
        assert_eq!(m["x"], true);
        assert_eq!(m["l"], json!([1, 2]));
        assert_eq!(parse("@/nonexistent/file").unwrap_err().code, 5);
        assert_eq!(parse("[1]").unwrap_err().code, 5);
    }
}
