//! String filters with Python's semantics: `quote` (shell), `join` (items as Python
//! `str()`), `splitlines`, and Jinja's `truncate`, `center`, `wordcount`,
//! `filesizeformat` and `wordwrap` (Python's `textwrap`); and the Python string
//! operations the methods share.

use minijinja::value::Kwargs;
use minijinja::value::ValueKind;
use minijinja::{Error, ErrorKind, State, Value};
use sandball_guest_sdk::pyre::{Anchor, Pattern, PyreError};
use std::sync::LazyLock;

use crate::template::convert::ensure_defined;
use crate::template::python::{py_str, text_arg};
use crate::template::undefined::Plugins;

pub(super) fn register(env: &mut Plugins<'_>) {
    env.add_filter("quote", quote);
    env.add_filter("join", join);
    env.add_filter("splitlines", |state: &State, value: &Value| {
        Ok::<_, Error>(Value::from(py_splitlines(&text_arg(state, value)?)))
    });
    env.add_filter("truncate", truncate);
    env.add_filter(
        "center",
        |state: &State, value: &Value, width: Option<usize>| {
            Ok::<_, Error>(center(&text_arg(state, value)?, width.unwrap_or(80)))
        },
    );
    env.add_filter("wordcount", |state: &State, value: &Value| {
        let words = regex::Regex::new(r"\w+").map_err(|e| invalid(e.to_string()))?;
        Ok::<_, Error>(words.find_iter(&text_arg(state, value)?).count())
    });
    env.add_filter("filesizeformat", filesizeformat);
    env.add_filter("wordwrap", wordwrap);
}

fn invalid(msg: String) -> Error {
    Error::new(ErrorKind::InvalidOperation, msg)
}

/// Jinja's `truncate(length=255, killwords=False, end='...', leeway=5)`: text longer
/// than `length` plus `leeway` cut to `length` with `end`, at a word's end unless
/// `killwords`.
fn truncate(
    state: &State,
    value: &Value,
    args: minijinja::value::Rest<Value>,
    kwargs: Kwargs,
) -> Result<String, Error> {
    let text = text_arg(state, value)?;
    let [length, killwords, end, leeway] = super::python_args(
        "truncate",
        ["length", "killwords", "end", "leeway"],
        &args,
        &kwargs,
    )?
    .map(|arg| arg.filter(|v| !v.is_none()));
    let count = |v: Value| usize::try_from(v).map_err(|e| invalid(e.to_string()));
    let length = length.map(count).transpose()?.unwrap_or(255);
    let killwords = killwords.is_some_and(|v| v.is_true());
    let end = end.map_or_else(|| Ok("...".to_string()), |v| text_arg(state, &v))?;
    let leeway = leeway.map(count).transpose()?;
    let chars: Vec<char> = text.chars().collect();
    let end_len = end.chars().count();
    if length < end_len {
        return Err(invalid(format!(
            "truncate: expected length >= {end_len}, got {length}"
        )));
    }
    if chars.len() <= length + leeway.unwrap_or(5) {
        return Ok(text);
    }
    let kept: String = chars[..length - end_len].iter().collect();
    if killwords {
        return Ok(kept + &end);
    }
    let head = kept
        .rsplit_once(' ')
        .map_or(kept.as_str(), |(head, _)| head);
    Ok(format!("{head}{end}"))
}

/// Python's `str.center(width)`: the text amid spaces, the odd one on the left when
/// `width` is odd, on the right otherwise.
fn center(text: &str, width: usize) -> String {
    let len = text.chars().count();
    if width <= len {
        return text.to_string();
    }
    let pad = width - len;
    let left = pad / 2 + (pad & width & 1);
    format!("{}{text}{}", " ".repeat(left), " ".repeat(pad - left))
}

/// Jinja's `filesizeformat(binary=False)`: a byte count in decimal (`kB`, `MB`…) or
/// binary (`KiB`, `MiB`…) units, one decimal.
fn filesizeformat(
    state: &State,
    value: &Value,
    binary: Option<bool>,
    kwargs: Kwargs,
) -> Result<String, Error> {
    ensure_defined(state, value)?;
    let binary = super::positional_or_named(binary, &kwargs, "binary")?.unwrap_or(false);
    kwargs.assert_all_used()?;
    let bytes = match value.kind() {
        ValueKind::Bool => f64::from(u8::from(value.is_true())),
        ValueKind::Number => f64::try_from(value.clone()).map_err(|e| invalid(e.to_string()))?,
        _ => value
            .as_str()
            .and_then(super::types::parse_python_float)
            .ok_or_else(|| {
                let mut repr = String::new();
                let _ = crate::template::python::py_repr(value, &mut repr);
                invalid(format!("could not convert string to float: {repr}"))
            })?,
    };
    let (base, prefixes): (f64, [&str; 8]) = if binary {
        (
            1024.0,
            ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"],
        )
    } else {
        (1000.0, ["kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"])
    };
    if bytes == 1.0 {
        return Ok("1 Byte".into());
    }
    if bytes < base {
        return Ok(format!("{} Bytes", bytes as i64));
    }
    // The first unit it is smaller than, else the largest.
    let (mut unit, mut shown) = (base, prefixes[0]);
    for prefix in prefixes {
        unit *= base;
        shown = prefix;
        if bytes < unit {
            break;
        }
    }
    Ok(format!("{:.1} {shown}", base * bytes / unit))
}

/// Jinja's `wordwrap(width=79, break_long_words=True, wrapstring=None,
/// break_on_hyphens=True)`: each line of the text wrapped as Python's `textwrap.wrap`
/// wraps it (tabs and other whitespace kept), the lines joined with `wrapstring` (a
/// newline by default).
fn wordwrap(
    state: &State,
    value: &Value,
    args: minijinja::value::Rest<Value>,
    kwargs: Kwargs,
) -> Result<String, Error> {
    ensure_defined(state, value)?;
    let [width, break_long_words, wrapstring, break_on_hyphens] = super::python_args(
        "wordwrap",
        [
            "width",
            "break_long_words",
            "wrapstring",
            "break_on_hyphens",
        ],
        &args,
        &kwargs,
    )?;
    let Some(text) = value.as_str() else {
        return Err(invalid(format!(
            "'{}' object has no attribute 'splitlines'",
            super::python_type(value)
        )));
    };
    let width = match width {
        None => 79,
        Some(w) if w.kind() == ValueKind::Bool => i64::from(w.is_true()),
        Some(w) if w.is_integer() => i64::try_from(w).map_err(|e| invalid(e.to_string()))?,
        Some(w) if w.kind() == ValueKind::Number => {
            return Err(invalid(
                "'float' object cannot be interpreted as an integer".into(),
            ));
        }
        Some(w) => {
            return Err(invalid(format!(
                "'<=' not supported between instances of '{}' and 'int'",
                super::python_type(&w)
            )));
        }
    };
    let break_long_words = break_long_words.is_none_or(|v| v.is_true());
    let break_on_hyphens = break_on_hyphens.is_none_or(|v| v.is_true());
    let wrapstring = match wrapstring.filter(|v| !v.is_none()) {
        Some(w) => text_arg(state, &w)?,
        None => "\n".to_string(),
    };
    let mut paragraphs = Vec::new();
    for line in sandball_pycompat::pyops::splitlines(text) {
        let width = usize::try_from(width)
            .ok()
            .filter(|w| *w > 0)
            .ok_or_else(|| invalid(format!("invalid width {width} (must be > 0)")))?;
        paragraphs
            .push(text_wrap(line, width, break_long_words, break_on_hyphens)?.join(&wrapstring));
    }
    Ok(paragraphs.join(&wrapstring))
}

/// Python's `textwrap.wrap(text, width, expand_tabs=False, replace_whitespace=False,
/// break_long_words, break_on_hyphens)`: the text's chunks (words, hyphenated parts,
/// runs of whitespace) laid on lines of at most `width` characters, whitespace dropped
/// at the lines' ends and at the start of every line but the first.
fn text_wrap(
    text: &str,
    width: usize,
    break_long_words: bool,
    break_on_hyphens: bool,
) -> Result<Vec<String>, Error> {
    let blank = |chunk: &[char]| chunk.iter().all(|c| c.is_whitespace());
    // The chunks, last first.
    let mut chunks: Vec<Vec<char>> = wrap_chunks(text, break_on_hyphens)?
        .into_iter()
        .rev()
        .map(|chunk| chunk.chars().collect())
        .collect();
    let mut lines = Vec::new();
    while !chunks.is_empty() {
        if !lines.is_empty() && chunks.last().is_some_and(|c| blank(c)) {
            chunks.pop();
        }
        let mut line: Vec<Vec<char>> = Vec::new();
        let mut len = 0;
        while let Some(chunk) = chunks.pop_if(|c| len + c.len() <= width) {
            len += chunk.len();
            line.push(chunk);
        }
        if let Some(chunk) = chunks.last_mut().filter(|c| c.len() > width) {
            if break_long_words {
                let space_left = width - len;
                let mut end = space_left;
                if break_on_hyphens && chunk.len() > space_left {
                    let hyphen = chunk[..space_left].iter().rposition(|&c| c == '-');
                    if let Some(h) =
                        hyphen.filter(|&h| h > 0 && chunk[..h].iter().any(|&c| c != '-'))
                    {
                        end = h + 1;
                    }
                }
                let rest = chunk.split_off(end);
                line.push(std::mem::replace(chunk, rest));
            } else if line.is_empty() {
                line.extend(chunks.pop());
            }
        }
        if line.last().is_some_and(|c| blank(c)) {
            line.pop();
        }
        if !line.is_empty() {
            lines.push(line.concat().into_iter().collect());
        }
    }
    Ok(lines)
}

/// The chunks `textwrap` splits a line into: runs of whitespace and, between them,
/// words, which `break_on_hyphens` splits after their hyphens and before em-dashes.
fn wrap_chunks(text: &str, break_on_hyphens: bool) -> Result<Vec<&str>, Error> {
    static SIMPLE: LazyLock<Result<Pattern, PyreError>> =
        LazyLock::new(|| Pattern::new(r"[\t\n\x0b\x0c\r ]+", false, false, Anchor::Search));
    static HYPHENS: LazyLock<Result<Pattern, PyreError>> = LazyLock::new(|| {
        let (ws, nws, punct, letter) = (
            r"[\t\n\x0b\x0c\r ]",
            r"[^\t\n\x0b\x0c\r ]",
            r#"[\w!"'&.,?]"#,
            r"[^\d\W]",
        );
        Pattern::new(
            &format!(
                "{ws}+|(?<={punct})-{{2,}}(?=\\w)|{nws}+?(?:-(?:(?<={letter}{{2}}-)|(?<={letter}-{letter}-))(?={letter}-?{letter})|(?={ws}|\\Z)|(?<={punct})(?=-{{2,}}\\w))"
            ),
            false,
            false,
            Anchor::Search,
        )
    });
    let pattern = if break_on_hyphens {
        &*HYPHENS
    } else {
        &*SIMPLE
    };
    let pattern = pattern.as_ref().map_err(|e| invalid(e.to_string()))?;
    let mut chunks = Vec::new();
    let mut last = 0;
    for found in pattern.find_all(text).map_err(super::re_error)? {
        chunks.push(&text[last..found.start]);
        chunks.push(&text[found.start..found.end]);
        last = found.end;
    }
    chunks.push(&text[last..]);
    chunks.retain(|c| !c.is_empty());
    Ok(chunks)
}

/// Python's `shlex.quote`: the text as one shell word.
fn quote(state: &State, value: &Value) -> Result<String, Error> {
    let text = if value.is_none() {
        String::new()
    } else {
        text_arg(state, value)?
    };
    Ok(sandball_pycompat::shell::quote(&text))
}

/// Jinja's `join(d='', attribute=None)`: the items (or an attribute of each) as Python
/// `str()`, joined.
fn join(
    state: &State,
    value: &Value,
    separator: Option<String>,
    attribute: Option<String>,
    kwargs: Kwargs,
) -> Result<String, Error> {
    ensure_defined(state, value)?;
    let separator = match separator {
        Some(s) => s,
        None => kwargs.get::<Option<String>>("d")?.unwrap_or_default(),
    };
    let attribute = match attribute {
        Some(a) => Some(a),
        None => kwargs.get::<Option<String>>("attribute")?,
    };
    kwargs.assert_all_used()?;
    let mut parts = Vec::new();
    for item in value.try_iter()?.checked() {
        let mut item = item?;
        if let Some(attribute) = &attribute {
            for part in attribute.split('.') {
                item = match part.parse::<usize>() {
                    Ok(index) => item.get_item(&Value::from(index))?,
                    Err(_) => item.get_attr(part)?,
                };
            }
        }
        ensure_defined(state, &item)?;
        parts.push(py_str(&item)?);
    }
    Ok(parts.join(&separator))
}

/// Python's `str.split(sep=None, maxsplit=-1)`.
pub(crate) fn py_split(s: &str, sep: Option<&str>, maxsplit: i64) -> Result<Value, Error> {
    let limit = usize::try_from(maxsplit).ok();
    let parts: Vec<Value> = match sep {
        Some("") => {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                "split: empty separator",
            ));
        }
        Some(sep) => match limit {
            Some(n) => s.splitn(n + 1, sep).map(Value::from).collect(),
            None => s.split(sep).map(Value::from).collect(),
        },
        None => {
            let mut parts = Vec::new();
            let mut rest = s.trim_start();
            while !rest.is_empty() {
                if limit.is_some_and(|n| parts.len() == n) {
                    parts.push(Value::from(rest));
                    break;
                }
                let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
                parts.push(Value::from(&rest[..end]));
                rest = rest[end..].trim_start();
            }
            parts
        }
    };
    Ok(Value::from(parts))
}

/// Python's `str.splitlines()`, as owned strings.
pub(crate) fn py_splitlines(s: &str) -> Vec<String> {
    sandball_pycompat::pyops::splitlines(s)
        .into_iter()
        .map(str::to_string)
        .collect()
}

/// Python's `str.strip(chars)` (and `lstrip`, `rstrip`): whitespace when `chars` is
/// `None`.
pub(crate) fn py_strip(s: &str, chars: Option<&str>, left: bool, right: bool) -> String {
    let strip = |c: char| match chars {
        Some(chars) => chars.contains(c),
        None => c.is_whitespace(),
    };
    let mut out = s;
    if left {
        out = out.trim_start_matches(strip);
    }
    if right {
        out = out.trim_end_matches(strip);
    }
    out.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::filters::testing::{error, eval, render};
    use serde_json::json;

    #[test]
    fn text_output_is_python_text() {
        assert_eq!(
            render("{{ 1.0 }} {{ true }} [{{ none }}] {{ {'a': [1, 'b']} }}"),
            "1.0 True [] {'a': [1, 'b']}"
        );
        assert_eq!(render("{{ ['x', 'y'] | join(', ') }}"), "x, y");
    }

    /// Outputs ansible-playbook 2.19 printed for the same expressions.
    #[test]
    fn jinjas_text_filters() {
        assert_eq!(
            render(
                "{{ 'hello wonderful world' | truncate(12) }}|{{ 'hello wonderful world' | truncate(12, True) }}|{{ 'hello wonderful world' | truncate(12, False, '..', 0) }}|{{ 'short' | truncate(20) }}|{{ 'hello wonderful world!' | truncate(18) }}|{{ 'hello wonderful world' | truncate(length=10, end='~') }}"
            ),
            "hello...|hello won...|hello..|short|hello wonderful world!|hello~"
        );
        assert_eq!(
            render(
                "[{{ 'ab cd' | center(20) }}][{{ 'abc' | center(8) }}][{{ 'abc' | center(2) }}][{{ 'ab' | center(7) }}]"
            ),
            "[       ab cd        ][  abc   ][abc][   ab  ]"
        );
        assert_eq!(eval("'hello, wörld: foo_bar 42!' | wordcount"), json!(4));
        assert_eq!(
            render(
                "{{ 1 | filesizeformat }}|{{ 999 | filesizeformat }}|{{ 1000 | filesizeformat }}|{{ 123456789 | filesizeformat }}|{{ 123456789 | filesizeformat(true) }}|{{ '2048' | filesizeformat(binary=True) }}|{{ 1e30 | filesizeformat }}"
            ),
            "1 Byte|999 Bytes|1.0 kB|123.5 MB|117.7 MiB|2.0 KiB|1000000.0 YB"
        );
        assert_eq!(
            eval(
                r"['The quick brown fox jumps over the lazy dog, again and again.' | wordwrap(20),
                  'a-very-long-hyphenated-word-here and more' | wordwrap(10),
                  'a-very-long-hyphenated-word-here and more' | wordwrap(10, break_on_hyphens=false),
                  'supercalifragilistic word' | wordwrap(8, false),
                  'supercalifragilistic word' | wordwrap(8),
                  'line one is here\nline two\n\nafter blank' | wordwrap(8, wrapstring='|'),
                  '  leading  spaces   and\ttabs here ' | wordwrap(10),
                  'end!--next x---y a--b foo--bar' | wordwrap(6, true, '|')]"
            ),
            json!([
                "The quick brown fox\njumps over the lazy\ndog, again and\nagain.",
                "a-very-\nlong-hyphe\nnated-\nword-here\nand more",
                "a-very-lon\ng-hyphenat\ned-word-he\nre and\nmore",
                "supercalifragilistic\nword",
                "supercal\nifragili\nstic\nword",
                "line one|is here|line two||after|blank",
                "  leading\nspaces\nand\ttabs\nhere",
                "end!--|next x|---y a|--b|foo--|bar"
            ])
        );
        assert!(error("'x' | wordwrap(0)").contains("invalid width 0 (must be > 0)"));
        assert!(error("12 | wordwrap").contains("'int' object has no attribute 'splitlines'"));
    }

    #[test]
    fn quote_like_shlex() {
        assert_eq!(eval("'simple' | quote"), json!("simple"));
        assert_eq!(eval("'a b' | quote"), json!("'a b'"));
        assert_eq!(eval("\"it's\" | quote"), json!("'it'\"'\"'s'"));
        assert_eq!(eval("'' | quote"), json!("''"));
        assert_eq!(
            eval("'/p/a-b_c.d@e%f+g=h:i,j' | quote"),
            json!("/p/a-b_c.d@e%f+g=h:i,j")
        );
        assert_eq!(eval("'$HOME' | quote"), json!("'$HOME'"));
    }

    #[test]
    fn join_uses_python_text() {
        assert_eq!(
            eval("[1, 'a', true, none] | join(',')"),
            json!("1,a,True,None")
        );
        assert_eq!(eval("['a', 'b'] | join"), json!("ab"));
        assert_eq!(
            eval("[{'n': 'x'}, {'n': 'y'}] | join(', ', attribute='n')"),
            json!("x, y")
        );
        assert!(error("[{'n': 'x'}, {}] | join(attribute='n')").contains("undefined"));
    }

    #[test]
    fn splitting() {
        assert_eq!(
            eval("'a\\nb\\r\\nc\\n' | splitlines"),
            json!(["a", "b", "c"])
        );
        assert_eq!(eval("'a,b,,c' | split(',')"), json!(["a", "b", "", "c"]));
        assert_eq!(eval("' a  b ' | split"), json!(["a", "b"]));
        let split = |s: &str, sep, n| {
            crate::template::convert::to_json(&py_split(s, sep, n).unwrap()).unwrap()
        };
        assert_eq!(split("a b  c", None, 1), json!(["a", "b  c"]));
        assert_eq!(split("a,b,c", Some(","), 1), json!(["a", "b,c"]));
        assert_eq!(split("  ", None, -1), json!([]));
        assert!(py_split("a", Some(""), -1).is_err());
    }

    #[test]
    fn stripping() {
        assert_eq!(py_strip("xxaxx", Some("x"), true, false), "axx");
        assert_eq!(py_strip("xxaxx", Some("x"), false, true), "xxa");
        assert_eq!(py_strip(" \ta\n", None, true, true), "a");
    }
}
