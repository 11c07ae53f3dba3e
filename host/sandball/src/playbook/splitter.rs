//! Ansible's `key=value` argument strings: splitting on spaces while keeping quoted text
//! and Jinja `{{ }}`/`{% %}`/`{# #}` blocks whole, then reading `key=value` pairs, with
//! what is not a pair (or, for free-form actions, not a recognised key) joined into
//! `_raw_params`. Values stay strings: the module's argument spec types them.

use serde_json::{Map, Value};

/// Keys that free-form actions (`command`, `shell`…) take out of their `k=v` string; any
/// other `k=v` word stays part of the command line.
const FREE_FORM_KEYS: &[&str] = &[
    "creates",
    "removes",
    "chdir",
    "executable",
    "warn",
    "stdin",
    "stdin_add_newline",
    "strip_empty_ends",
];

/// The Jinja delimiters that keep words together.
const JINJA_PAIRS: [(&str, &str); 3] = [("{{", "}}"), ("{%", "%}"), ("{#", "#}")];

/// An argument string whose quotes or Jinja blocks do not close.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("failed at splitting arguments, either an unbalanced jinja2 block or quotes: {0}")]
pub(crate) struct SplitError(String);

/// Splits an argument string into words as Ansible does: on spaces and newlines, except
/// inside quotes or Jinja blocks; quotes are kept; a lone `\` at the end of a line joins
/// it with the next.
pub(crate) fn split_args(args: &str) -> Result<Vec<String>, SplitError> {
    let mut words: Vec<String> = Vec::new();
    let mut quote: Option<char> = None;
    let mut depths = [0usize; 3];
    let lines: Vec<&str> = args.split('\n').collect();
    for (line_index, line) in lines.iter().enumerate() {
        let mut continued = false;
        for (index, token) in line.split(' ').enumerate() {
            if token.is_empty() && index > 0 {
                // a run of spaces: kept inside the word being built
                if let Some(last) = words.last_mut() {
                    last.push(' ');
                }
                continue;
            }
            if token == "\\" && quote.is_none() {
                continued = true;
                continue;
            }
            let was_quoted = quote.is_some();
            quote = quote_after(token, quote);
            let in_jinja = depths.iter().any(|depth| *depth > 0);
            let mut placed = false;
            if quote.is_some() && !was_quoted && !in_jinja {
                words.push(token.to_owned());
                placed = true;
            } else if (in_jinja || quote.is_some() || was_quoted)
                && let Some(last) = words.last_mut()
            {
                // inside quotes or Jinja: part of the word being built
                if index > 0 {
                    last.push(' ');
                }
                last.push_str(token);
                placed = true;
            }
            for (depth, (open, close)) in depths.iter_mut().zip(JINJA_PAIRS) {
                let before = *depth;
                *depth = block_depth(token, before, open, close);
                if *depth != before && !placed {
                    words.push(token.to_owned());
                    placed = true;
                }
            }
            let in_jinja = depths.iter().any(|depth| *depth > 0);
            if !in_jinja && quote.is_none() && !placed && !token.is_empty() {
                words.push(token.to_owned());
            }
        }
        if line_index + 1 < lines.len() && !continued {
            match words.last_mut() {
                Some(last) => last.push('\n'),
                None => words.push("\n".to_owned()),
            }
        }
    }
    if quote.is_some() || depths.iter().any(|depth| *depth > 0) {
        return Err(SplitError(args.to_owned()));
    }
    Ok(words)
}

/// The open quote after reading `token`, given the one open before it; a quote preceded
/// by a backslash does not count.
fn quote_after(token: &str, mut quote: Option<char>) -> Option<char> {
    let mut previous = None;
    for c in token.chars() {
        if (c == '"' || c == '\'') && previous != Some('\\') {
            match quote {
                Some(open) if open == c => quote = None,
                Some(_) => {}
                None => quote = Some(c),
            }
        }
        previous = Some(c);
    }
    quote
}

/// The nesting depth of one kind of Jinja block after `token`.
fn block_depth(token: &str, depth: usize, open: &str, close: &str) -> usize {
    let opened = token.matches(open).count();
    let closed = token.matches(close).count();
    (depth + opened).saturating_sub(closed)
}

/// Joins words back into one string: a space between words, none after a newline.
fn join_args(words: &[String]) -> String {
    let mut joined = String::new();
    for word in words {
        if !joined.is_empty() && !joined.ends_with('\n') {
            joined.push(' ');
        }
        joined.push_str(word);
    }
    joined
}

/// Reads `key=value` pairs out of an argument string. Words that are not pairs (and,
/// with `free_form`, pairs whose key is not one of the free-form keys) are joined into
/// `_raw_params`. Backslash escapes (`\n`, `\t`, `\"`, `\x41`, `\u00e9`…) are decoded in
/// pairs; a value's surrounding quotes are removed.
pub(crate) fn parse_kv(args: &str, free_form: bool) -> Result<Map<String, Value>, SplitError> {
    let mut options = Map::new();
    let mut raw: Vec<String> = Vec::new();
    for word in split_args(args)? {
        let decoded = decode_escapes(&word);
        if !decoded.contains('=') {
            raw.push(word);
            continue;
        }
        let Some(at) = unescaped_equals(&decoded) else {
            raw.push(decoded.replace("\\=", "="));
            continue;
        };
        let key = &decoded[..at];
        if free_form && !FREE_FORM_KEYS.contains(&key) {
            raw.push(word);
        } else {
            let value = unquote(decoded[at + 1..].trim());
            options.insert(key.trim().to_owned(), Value::String(value.to_owned()));
        }
    }
    if !raw.is_empty() {
        options.insert("_raw_params".to_owned(), Value::String(join_args(&raw)));
    }
    Ok(options)
}

/// The byte position of the first `=` after the first character that is not escaped.
fn unescaped_equals(word: &str) -> Option<usize> {
    let bytes = word.as_bytes();
    (1..bytes.len()).find(|&at| bytes[at] == b'=' && bytes[at - 1] != b'\\')
}

/// `text` without the matching quotes around it, unless the closing one is escaped.
pub(crate) fn unquote(text: &str) -> &str {
    let bytes = text.as_bytes();
    match bytes {
        [first, .., before_last, last]
            if (*first == b'"' || *first == b'\'') && first == last && *before_last != b'\\' =>
        {
            &text[1..text.len() - 1]
        }
        [first, last] if (*first == b'"' || *first == b'\'') && first == last => "",
        _ => text,
    }
}

/// Decodes Python-style backslash escapes; an escape that does not decode stays as
/// written.
fn decode_escapes(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut decoded = String::with_capacity(text.len());
    let mut at = 0;
    while at < chars.len() {
        if chars[at] == '\\'
            && let Some((c, used)) = escape_at(&chars[at + 1..])
        {
            decoded.push(c);
            at += 1 + used;
        } else {
            decoded.push(chars[at]);
            at += 1;
        }
    }
    decoded
}

/// The character an escape (given without its backslash) stands for, and how many
/// characters it used.
fn escape_at(rest: &[char]) -> Option<(char, usize)> {
    let hex = |digits: usize| -> Option<(char, usize)> {
        let text: String = rest.get(1..=digits)?.iter().collect();
        let code = u32::from_str_radix(&text, 16).ok()?;
        Some((char::from_u32(code)?, 1 + digits))
    };
    match rest.first()? {
        'U' => hex(8),
        'u' => hex(4),
        'x' => hex(2),
        // No octal escapes: `\1` stays a regular expression's back-reference.
        '\\' => Some(('\\', 1)),
        '\'' => Some(('\'', 1)),
        '"' => Some(('"', 1)),
        'a' => Some(('\u{7}', 1)),
        'b' => Some(('\u{8}', 1)),
        'f' => Some(('\u{c}', 1)),
        'n' => Some(('\n', 1)),
        'r' => Some(('\r', 1)),
        't' => Some(('\t', 1)),
        'v' => Some(('\u{b}', 1)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn split(args: &str) -> Vec<String> {
        match split_args(args) {
            Ok(words) => words,
            Err(error) => panic!("{error}"),
        }
    }

    fn kv(args: &str, free_form: bool) -> Value {
        match parse_kv(args, free_form) {
            Ok(map) => Value::Object(map),
            Err(error) => panic!("{error}"),
        }
    }

    #[test]
    fn splits_on_spaces_keeping_quotes_and_jinja() {
        assert_eq!(split("a=b c=d"), ["a=b", "c=d"]);
        assert_eq!(split("a=\"b c\" d"), ["a=\"b c\"", "d"]);
        assert_eq!(
            split("msg='it is {{ x }}' y=1"),
            ["msg='it is {{ x }}'", "y=1"]
        );
        assert_eq!(
            split("msg={{ a | default('b c') }} z"),
            ["msg={{ a | default('b c') }}", "z"]
        );
        assert_eq!(
            split("a={% if x %}1{% endif %} b"),
            ["a={% if x %}1{% endif %}", "b"]
        );
        assert_eq!(split("a={# note here #} b"), ["a={# note here #}", "b"]);
        assert_eq!(split("a=\"x  y\""), ["a=\"x  y\""]);
        assert_eq!(split("a=1  b=2"), ["a=1 ", "b=2"]);
        assert_eq!(split(""), Vec::<String>::new());
    }

    #[test]
    fn newlines_are_kept_and_backslash_continues_a_line() {
        assert_eq!(split("a=1\nb=2"), ["a=1\n", "b=2"]);
        assert_eq!(split("a=1 \\\nb=2"), ["a=1", "b=2"]);
        assert_eq!(split("a=\"x\ny\""), ["a=\"x\ny\""]);
    }

    #[test]
    fn escaped_quotes_do_not_open_or_close() {
        assert_eq!(split("a=\\\"b c"), ["a=\\\"b", "c"]);
        assert_eq!(split("a=\"b \\\" c\" d"), ["a=\"b \\\" c\"", "d"]);
    }

    #[test]
    fn unbalanced_quotes_or_jinja_are_errors() {
        assert_eq!(
            split_args("a=\"b c").map_err(|e| e.to_string()),
            Err("failed at splitting arguments, either an unbalanced jinja2 block or quotes: a=\"b c".to_owned())
        );
        assert!(split_args("a={{ b").is_err());
        assert!(split_args("a={% if").is_err());
    }

    #[test]
    fn parses_pairs_as_strings() {
        assert_eq!(
            kv("path=/tmp/x state=touch mode=0644", false),
            json!({"path": "/tmp/x", "state": "touch", "mode": "0644"})
        );
        assert_eq!(
            kv("msg=\"hello world\"", false),
            json!({"msg": "hello world"})
        );
        assert_eq!(kv("msg='a=b c'", false), json!({"msg": "a=b c"}));
        assert_eq!(
            kv("msg=\"{{ a }} = {{ b }}\"", false),
            json!({"msg": "{{ a }} = {{ b }}"})
        );
        assert_eq!(
            kv("msg={{ x | join(' ') }}", false),
            json!({"msg": "{{ x | join(' ') }}"})
        );
        assert_eq!(kv("a=1 a=2", false), json!({"a": "2"}));
        assert_eq!(kv("empty=", false), json!({"empty": ""}));
        assert_eq!(kv("q=\"\"", false), json!({"q": ""}));
    }

    #[test]
    fn decodes_escapes_in_pairs() {
        assert_eq!(kv("msg=a\\nb", false), json!({"msg": "a\nb"}));
        assert_eq!(
            kv("msg=\"say \\\"hi\\\"\"", false),
            json!({"msg": "say \"hi\""})
        );
        assert_eq!(kv("msg=\\x41\\u00e9", false), json!({"msg": "Aé"}));
        // Octal escapes are not decoded: `\1` stays a back-reference, as in Ansible.
        assert_eq!(
            kv("replace='\"\\1\"'", false),
            json!({"replace": "\"\\1\""})
        );
        assert_eq!(
            kv("path=C:\\Users\\x", false),
            json!({"path": "C:\\Users\\x"})
        );
    }

    #[test]
    fn words_that_are_not_pairs_become_raw_params() {
        assert_eq!(
            kv("flush_handlers", false),
            json!({"_raw_params": "flush_handlers"})
        );
        assert_eq!(
            kv("foo.yml a=1", false),
            json!({"a": "1", "_raw_params": "foo.yml"})
        );
        assert_eq!(kv("=x", false), json!({"_raw_params": "=x"}));
        assert_eq!(kv("a\\=b", false), json!({"_raw_params": "a=b"}));
    }

    #[test]
    fn free_form_keeps_unknown_pairs_in_the_command() {
        assert_eq!(
            kv("echo a=b chdir=/tmp creates=/x", true),
            json!({"chdir": "/tmp", "creates": "/x", "_raw_params": "echo a=b"})
        );
        assert_eq!(
            kv("echo \"hello  world\" | tr a-z A-Z", true),
            json!({"_raw_params": "echo \"hello  world\" | tr a-z A-Z"})
        );
        assert_eq!(kv("ls\n-l", true), json!({"_raw_params": "ls\n-l"}));
        assert_eq!(
            kv(
                "cat stdin=x stdin_add_newline=no strip_empty_ends=no executable=/bin/bash removes=/y warn=no",
                true
            ),
            json!({"stdin": "x", "stdin_add_newline": "no", "strip_empty_ends": "no", "executable": "/bin/bash", "removes": "/y", "warn": "no", "_raw_params": "cat"})
        );
        assert_eq!(kv("echo \\n", true), json!({"_raw_params": "echo \\n"}));
    }

    #[test]
    fn unquote_only_strips_matching_unescaped_quotes() {
        assert_eq!(unquote("\"a\""), "a");
        assert_eq!(unquote("'a'"), "a");
        assert_eq!(unquote("\"a'"), "\"a'");
        assert_eq!(unquote("\"a\\\""), "\"a\\\"");
        assert_eq!(unquote("\""), "\"");
        assert_eq!(unquote("''"), "");
        assert_eq!(unquote("plain"), "plain");
    }

    #[test]
    fn join_args_puts_no_space_after_a_newline() {
        let words = ["a\n".to_owned(), "b".to_owned(), "c".to_owned()];
        assert_eq!(join_args(&words), "a\nb c");
    }
}
