//! How a module's output becomes its result, as ansible-core 2.19 reads it: the lines
//! before the first line that starts with `{` are dropped, those after the last line
//! that ends with `}` are junk (warned about when not blank), and what is between is
//! parsed as Python's `json.loads` parses it ([`sandball_pycompat::pyjson`]). Output
//! without such lines, or that does not parse, is the action's failure ("Module result
//! deserialization failed: …", with the output); a value nested too deep, or holding
//! text UTF-8 cannot encode, is refused as ansible-core raises it. What a module may
//! not return is then taken out of its result, with ansible-core's warnings
//! ([`clean`], [`settle_warnings`]).

use crate::plugins::action::{Failure, TaskResult, failed, raised};
use sandball_pycompat::pyfmt::{py_str, short_type_name, type_name};
use sandball_pycompat::pyjson::{self, LoadError};
use sandball_pycompat::pyops::py_truth;
use serde_json::{Map, Value, json};

/// The setting (ansible.cfg's `module_strict_utf8_response`) that, false, lets a
/// module's strings hold what is not UTF-8 (replaced by U+FFFD) instead of refusing
/// its result.
const STRICT_UTF8: &str = "ANSIBLE_MODULE_STRICT_UTF8_RESPONSE";

/// ansible-core's help text for output that is no module result.
pub const SEE_OUTPUT: &str = "See stdout/stderr for the returned output.";

/// How ansible-core refuses a string that is not UTF-8.
const REFUSED_UTF8: &str = "Refusing to deserialize an invalid UTF8 string value";

/// Why output is no module result.
#[derive(Debug, PartialEq, Eq)]
pub enum Unreadable {
    /// No JSON object was found in it, or it did not parse: ansible-core's reason.
    Deserialization(String),
    /// It parsed, but ansible-core refuses the value: the message it raises.
    Refused(String),
}

/// The module's result in its output, and the warning about junk after it, if any.
pub fn parse(out: &[u8]) -> Result<(Map<String, Value>, Option<String>), Unreadable> {
    let lines = splitlines(out);
    let start = lines
        .iter()
        .position(|l| stripped(l).starts_with('{'))
        .ok_or_else(|| Unreadable::Deserialization("No start of json char found".into()))?;
    let end = start
        + lines[start..]
            .iter()
            .rposition(|l| stripped(l).ends_with('}'))
            .ok_or_else(|| Unreadable::Deserialization("No end of json char found".into()))?;
    let trailing = &lines[end + 1..];
    let junk = trailing.iter().any(|l| !stripped(l).is_empty()).then(|| {
        let text: Vec<String> = trailing
            .iter()
            .map(|l| String::from_utf8_lossy(l).into_owned())
            .collect();
        format!(
            "Module invocation had junk after the JSON data: {}",
            text.join("\n")
        )
    });
    let json = lines[start..=end].join(&b'\n');
    let strict = crate::config::settings().flag(STRICT_UTF8, true);
    match pyjson::loads(&json, strict) {
        Ok(Value::Object(m)) => Ok((m, junk)),
        // A text that starts with `{` and parses is an object.
        Ok(_) => Err(Unreadable::Deserialization(
            "the result is not a JSON object".into(),
        )),
        Err(e @ LoadError::Decode { .. }) => Err(Unreadable::Deserialization(e.to_string())),
        Err(e @ LoadError::TooDeep { .. }) => Err(Unreadable::Refused(e.to_string())),
        Err(e @ LoadError::Surrogates(_)) => {
            Err(Unreadable::Refused(format!("{REFUSED_UTF8}: {e}")))
        }
    }
}

/// The task result of output that is no module result: as ansible-core makes it, the
/// action's failure with the output (`module_stdout`, `module_stderr`, `rc`), or the
/// error it raised.
pub fn unreadable(why: Unreadable, stdout: &[u8], stderr: &str, rc: i32) -> TaskResult {
    match why {
        Unreadable::Deserialization(cause) => {
            let mut m = TaskResult::from(raised(
                Failure::Action,
                format!("Module result deserialization failed: {cause}"),
            ));
            m.insert(
                "module_stdout".into(),
                Value::String(String::from_utf8_lossy(stdout).into_owned()),
            );
            m.insert("module_stderr".into(), Value::String(stderr.to_string()));
            m.insert("rc".into(), json!(rc));
            m.error_help = Some(SEE_OUTPUT.into());
            m
        }
        Unreadable::Refused(msg) => {
            let mut m = TaskResult::from(failed(format!("Task failed: {msg}")));
            if msg.starts_with(REFUSED_UTF8) {
                m.error_help = Some(
                    "This check can be disabled with the `MODULE_STRICT_UTF8_RESPONSE` setting."
                        .into(),
                );
            }
            m
        }
    }
}

/// Takes out of a module's result what a module may not return, as ansible-core does
/// before anything reads it: internal keys (`_ansible_*`, `add_host`, `add_group`), a
/// warning each (a module cannot hide its result, nor add hosts); the interpreter
/// discovery's facts (`discovered_interpreter_*`), which only the discovery itself
/// sets; and it warns of each fact that would set how the host is reached or how
/// modules run there (never made a variable: `vars`). Returns the warnings, or the
/// result ansible-core raises instead (`ansible_facts` that is not a mapping).
pub fn clean(m: &mut Map<String, Value>) -> Result<Vec<String>, Map<String, Value>> {
    let internal: Vec<String> = m
        .keys()
        .filter(|k| k.starts_with("_ansible_") || *k == "add_host" || *k == "add_group")
        .cloned()
        .collect();
    let mut warnings = Vec::new();
    for k in internal {
        if let Some(v) = m.remove(&k)
            && k != "_ansible_parsed"
        {
            warnings.push(format!(
                "Removed unexpected internal key in module return: {k} = {}",
                py_str(&v)
            ));
        }
    }
    match m.get_mut("ansible_facts") {
        None => {}
        Some(Value::Object(facts)) => {
            facts.retain(|k, _| {
                !k.starts_with("discovered_interpreter_")
                    && !k.starts_with("ansible_discovered_interpreter_")
            });
            warnings.extend(
                facts
                    .keys()
                    .filter(|k| crate::vars::restricted_fact(k))
                    .map(|k| format!("Removed restricted key from module data: {k}")),
            );
        }
        Some(other) => {
            return Err(failed(format!(
                "Task failed: '{}' object has no attribute 'keys'",
                match other {
                    Value::Null => "NoneType",
                    v => short_type_name(v),
                }
            )));
        }
    }
    Ok(warnings)
}

/// A result's `warnings` and `deprecations` as ansible-core keeps them: empty ones
/// dropped, ones that are not lists dropped with a warning (returned), and each
/// warning text (Python's `str()` of one that is not); the items of `deprecations`
/// are the normal action's to read.
pub fn settle_warnings(m: &mut Map<String, Value>) -> Vec<String> {
    let mut said = Vec::new();
    for key in ["warnings", "deprecations"] {
        let Some(v) = m.get(key) else { continue };
        if py_truth(v) && !v.is_array() {
            said.push(format!(
                "Task result `{key}` was {} instead of <class 'list'>.",
                type_name(v)
            ));
            m.remove(key);
        } else if !py_truth(v) {
            m.remove(key);
        }
    }
    if let Some(Value::Array(list)) = m.get_mut("warnings") {
        for w in list.iter_mut().filter(|w| !w.is_string()) {
            *w = Value::String(py_str(w));
        }
    }
    said
}

/// The lines of `text` as Python's `str.splitlines` splits it once decoded: at `\n`,
/// `\r`, `\r\n`, `\v`, `\f`, `\x1c`–`\x1e`, U+0085, U+2028 and U+2029.
fn splitlines(text: &[u8]) -> Vec<&[u8]> {
    let mut lines = Vec::new();
    let (mut start, mut i) = (0, 0);
    while i < text.len() {
        let width = match &text[i..] {
            [b'\r', b'\n', ..] => 2,
            [b'\n' | b'\r' | 0x0b | 0x0c | 0x1c..=0x1e, ..] => 1,
            [0xc2, 0x85, ..] => 2,
            [0xe2, 0x80, 0xa8 | 0xa9, ..] => 3,
            _ => 0,
        };
        if width == 0 {
            i += 1;
        } else {
            lines.push(&text[start..i]);
            i += width;
            start = i;
        }
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

/// A line without the whitespace Python's `str.strip` removes around it.
fn stripped(line: &[u8]) -> String {
    String::from_utf8_lossy(line)
        .trim_matches(|c: char| c.is_whitespace() || ('\x1c'..='\x1f').contains(&c))
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn junk_of(out: &str) -> Option<String> {
        parse(out.as_bytes()).unwrap().1
    }

    fn why(out: &[u8]) -> Unreadable {
        parse(out).unwrap_err()
    }

    #[test]
    fn the_json_lines_are_found_among_junk_as_ansible_finds_them() {
        let (m, junk) = parse(b"motd noise {\n  {\"a\": 1,\r\n \"b\": 2}  \ntrailing\n\n").unwrap();
        assert_eq!(Value::Object(m), json!({"a": 1, "b": 2}));
        assert_eq!(
            junk.as_deref(),
            Some("Module invocation had junk after the JSON data: trailing\n")
        );
        assert_eq!(junk_of("{\"a\": 1}\n \n"), None);
        // The last line that ends with `}` ends it: two documents are one text.
        assert_eq!(
            why(b"{\"a\": 1}\n{\"b\": 2}\n"),
            Unreadable::Deserialization("Extra data: line 2 column 1 (char 9)".into())
        );
        // A list or a string is no result; a line must start with `{`.
        for out in [&b"[1, 2]\n"[..], b"\"hi\"", b"", b"pre {\"a\": 1}"] {
            assert_eq!(
                why(out),
                Unreadable::Deserialization("No start of json char found".into())
            );
        }
        assert_eq!(
            why(b"pre\n{\"changed\": false} post\n"),
            Unreadable::Deserialization("No end of json char found".into())
        );
        assert_eq!(
            why(b"{not json\n{\"changed\": false}\n"),
            Unreadable::Deserialization(
                "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"
                    .into()
            )
        );
    }

    #[test]
    fn refused_values_are_raised_and_others_are_the_actions_failure() {
        assert_eq!(
            why(b"{\"out\": \"ab\xff\xfecd\"}"),
            Unreadable::Refused("Refusing to deserialize an invalid UTF8 string value: 'utf-8' codec can't encode characters in position 2-3: surrogates not allowed".into())
        );
        // Bytes that are not UTF-8 outside the result are junk like any other.
        assert!(parse(b"\xff\xfe\n{\"a\": 1}\n").is_ok());
        let r = unreadable(why(b"oops"), b"oops", "err", 3);
        assert_eq!(
            r["msg"],
            "Module result deserialization failed: No start of json char found"
        );
        assert_eq!(
            (&r["module_stdout"], &r["module_stderr"], &r["rc"]),
            (&json!("oops"), &json!("err"), &json!(3))
        );
        assert_eq!(Failure::of(&r), Some(Failure::Action));
        let deep = format!(
            "{}{}",
            "{\"a\":".repeat(600),
            "1".to_string() + &"}".repeat(600)
        );
        let r = unreadable(why(deep.as_bytes()), deep.as_bytes(), "", 0);
        assert_eq!(
            r["msg"],
            "Task failed: maximum recursion depth exceeded while decoding a JSON object from a unicode string"
        );
    }

    #[test]
    fn what_a_module_may_not_return_is_taken_out_with_a_warning() {
        let mut m = json!({
            "changed": true, "_ansible_no_log": true, "_ansible_parsed": false,
            "add_host": {"host_name": "evil"},
            "ansible_facts": {"ok": 1, "ansible_host": "evil", "ansible_check_mode": true,
                "discovered_interpreter_python": "/tmp/evil", "ansible_ssh_host_key_rsa_public": "k"},
        });
        let m = m.as_object_mut().unwrap();
        let said = clean(m).unwrap();
        assert_eq!(
            said,
            vec![
                "Removed unexpected internal key in module return: _ansible_no_log = True",
                "Removed unexpected internal key in module return: add_host = {'host_name': 'evil'}",
                "Removed restricted key from module data: ansible_host",
            ]
        );
        // Facts stay facts (`ansible_facts.host`): only the variables are refused.
        assert_eq!(
            Value::Object(m.clone()),
            json!({"changed": true, "ansible_facts": {"ok": 1, "ansible_host": "evil",
                "ansible_check_mode": true, "ansible_ssh_host_key_rsa_public": "k"}})
        );
        let mut list = json!({"ansible_facts": [1]});
        assert_eq!(
            clean(list.as_object_mut().unwrap()).unwrap_err()["msg"],
            "Task failed: 'list' object has no attribute 'keys'"
        );
    }

    #[test]
    fn warnings_and_deprecations_are_lists_of_their_kind() {
        let mut m = json!({"warnings": "text", "deprecations": []});
        let said = settle_warnings(m.as_object_mut().unwrap());
        assert_eq!(
            said,
            vec!["Task result `warnings` was <class 'str'> instead of <class 'list'>."]
        );
        assert_eq!(m, json!({}));
        let mut m = json!({"warnings": [1, null, "w"], "deprecations": [1]});
        assert!(settle_warnings(m.as_object_mut().unwrap()).is_empty());
        assert_eq!(
            m,
            json!({"warnings": ["1", "None", "w"], "deprecations": [1]})
        );
    }

    #[test]
    fn lines_split_where_pythons_do() {
        assert_eq!(
            splitlines(b"a\r\nb\rc\x0bd\xc2\x85e\xe2\x80\xa8f\n"),
            vec![&b"a"[..], b"b", b"c", b"d", b"e", b"f"]
        );
        assert_eq!(splitlines(b"a\n\nb"), vec![&b"a"[..], b"", b"b"]);
    }
}
