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

/// A value's `%` interpolation as ConfigParser's `get` does it: `%%` is `%`, `%(name)s`
/// the (interpolated) value of option `name` of the same section; anything else is an
/// error, worded as Python words it.
fn interpolate(section: &Map<String, Value>, name: &str, depth: usize) -> Result<String, String> {
    let raw = section
        .get(name)
        .and_then(Value::as_str)
        .unwrap_or_default();
    if depth > 10 {
        return Err(format!(
            "Recursion limit exceeded in value substitution: option '{name}' contains an interpolation key which cannot be substituted in 10 steps. Raw value: '{raw}'"
        ));
    }
    sandball_guest_sdk::configparser::interpolate(
        raw,
        |key| {
            if !section.contains_key(key) {
                return Err(format!(
                    "Bad value substitution: option '{name}' contains an interpolation key '{key}' which is not a valid option name. Raw value: '{raw}'"
                ));
            }
            interpolate(section, key, depth + 1)
        },
        |rest| format!("'%' must be followed by '%' or '(', found: '{rest}'"),
    )
}

/// The value of one fact file's text.
fn parse(text: &str, file: &str, m: &mut Module) -> Value {
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return v;
    }
    match ini(text) {
        Ok(sections) => {
            let mut fact = Map::new();
            for (name, raw) in &sections {
                let raw = raw.as_object().cloned().unwrap_or_default();
                let mut values = Map::new();
                for key in raw.keys() {
                    match interpolate(&raw, key, 1) {
                        Ok(v) => {
                            values.insert(key.clone(), json!(v));
                        }
                        Err(e) => {
                            let msg = format!(
                                "error loading facts as ini - please check content: {file} ({e})"
                            );
                            m.warn(msg.clone());
                            return json!(msg);
                        }
                    }
                }
                fact.insert(name.clone(), Value::Object(values));
            }
            Value::Object(fact)
        }
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
            Ok(None) => {
                // Listed but not there when followed: a dangling link.
                let msg = format!(
                    "Could not stat fact ({file}): [Errno 2] No such file or directory: '{file}'"
                );
                m.warn(msg.clone());
                local.insert(base, json!(msg));
                continue;
            }
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

    #[test]
    fn values_are_interpolated_as_configparser_does() {
        let section = ini("[s]\na = 50%%\nb = %(A)s off\nc = 5 % x\nd = %(none)s\n").unwrap();
        let s = section["s"].as_object().unwrap();
        assert_eq!(interpolate(s, "a", 1).unwrap(), "50%");
        assert_eq!(interpolate(s, "b", 1).unwrap(), "50% off");
        assert_eq!(
            interpolate(s, "c", 1).unwrap_err(),
            "'%' must be followed by '%' or '(', found: '% x'"
        );
        assert!(interpolate(s, "d", 1).unwrap_err().contains("key 'none'"));
    }
}
