//! `local`: the facts of `fact_path`'s `*.fact` files, by file name without `.fact`:
//! JSON, else INI (sections of lower-cased keys, as Python's ConfigParser reads them).
//! An executable fact file is run through the host interface, which only works when
//! the task grants it (`capabilities: [{kind: exec, program: /etc/ansible/facts.d/x.fact}]`);
//! a refusal or failure becomes the fact's value and a warning, as in ansible-core.

use sandball_guest_sdk::host;
use sandball_guest_sdk::prelude::*;

/// INI text as ConfigParser reads it (no interpolation), or the parse error.
fn ini(text: &str) -> Result<Map<String, Value>, String> {
    let mut out = Map::new();
    let mut section: Option<String> = None;
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim_end();
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        if let Some(name) = trimmed.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            out.entry(name.to_string()).or_insert_with(|| json!({}));
            section = Some(name.to_string());
            continue;
        }
        let Some(current) = &section else {
            return Err(format!("line {}: no section header", n + 1));
        };
        let (key, value) = match trimmed.find(['=', ':']) {
            Some(i) => (trimmed[..i].trim(), trimmed[i + 1..].trim()),
            None => return Err(format!("line {}: not key = value", n + 1)),
        };
        if let Some(Value::Object(s)) = out.get_mut(current) {
            s.insert(key.to_lowercase(), json!(value));
        }
    }
    Ok(out)
}

/// The value of one fact file's text.
fn parse(text: &str, file: &str, m: &mut Module) -> Value {
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return v;
    }
    match ini(text) {
        Ok(sections) => Value::Object(sections),
        Err(_) => {
            let msg = format!("error loading facts as JSON or ini - please check content: {file}");
            m.warn(msg.clone());
            json!(msg)
        }
    }
}

/// Adds `local`.
pub fn collect(fact_path: &str, facts: &mut Map<String, Value>, m: &mut Module) {
    let mut local = Map::new();
    let mut files: Vec<String> = std::fs::read_dir(fact_path)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".fact"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    for name in files {
        let file = format!("{}/{name}", fact_path.trim_end_matches('/'));
        let base = name.replace(".fact", "");
        let executable = match host::stat(&file, true) {
            Ok(Some(st)) => st.mode & 0o100 != 0,
            Ok(None) => false,
            Err(e) => {
                let msg = format!("Could not stat fact ({file}): {e}");
                m.warn(msg.clone());
                local.insert(base, json!(msg));
                continue;
            }
        };
        let text = if executable {
            let run = host::run(host::Command {
                argv: vec![file.clone()],
                ..host::Command::default()
            });
            match run {
                Ok(out) if out.rc == 0 => String::from_utf8(out.stdout).map_err(|_| ()),
                Ok(out) => {
                    let msg = format!(
                        "Failure executing fact script ({file}), rc: {}, err: {}",
                        out.rc,
                        String::from_utf8_lossy(&out.stderr)
                    );
                    m.warn(msg.clone());
                    local.insert(base, json!(msg));
                    continue;
                }
                Err(e) => {
                    let msg = format!("Could not execute fact script ({file}): {e}");
                    m.warn(msg.clone());
                    local.insert(base, json!(msg));
                    continue;
                }
            }
        } else {
            std::fs::read(&file)
                .map(|b| String::from_utf8(b).map_err(|_| ()))
                .unwrap_or(Ok(String::new()))
        };
        let value = match text {
            Ok(t) => parse(&t, &file, m),
            Err(()) => {
                let msg =
                    format!("error loading fact - output of running \"{file}\" was not utf-8");
                m.warn(msg.clone());
                json!(msg)
            }
        };
        local.insert(base, value);
    }
    facts.insert("local".into(), Value::Object(local));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ini_sections_with_lowercased_keys() {
        let got = ini("# c\n[General]\nName = x\nOther: y\n\n[empty]\n").unwrap();
        assert_eq!(
            Value::Object(got),
            json!({"General": {"name": "x", "other": "y"}, "empty": {}})
        );
        assert!(ini("key=value\n").is_err());
    }
}
