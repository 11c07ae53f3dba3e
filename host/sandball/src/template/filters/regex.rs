//! Regular-expression filters with Python `re` semantics: `regex_replace`,
//! `regex_search`, `regex_findall`, `regex_escape`.

use minijinja::value::{Kwargs, Rest};
use minijinja::{Error, ErrorKind, State, Value};

use crate::template::python::text_arg;
use crate::template::undefined::Plugins;
use sandball_guest_sdk::pyre::{self, Anchor, Pattern, PyreError};

pub(super) fn register(env: &mut Plugins<'_>) {
    env.add_filter("regex_replace", regex_replace);
    env.add_filter("regex_search", regex_search);
    env.add_filter("regex_findall", regex_findall);
    env.add_filter("regex_escape", regex_escape);
}

/// A pattern or match error as a template error.
pub(crate) fn re_error(err: PyreError) -> Error {
    Error::new(ErrorKind::InvalidOperation, err.to_string())
}

/// The `ignorecase` and `multiline` flags every regex filter takes by keyword.
fn flags(kwargs: &Kwargs) -> Result<(bool, bool), Error> {
    Ok((
        kwargs.get::<Option<bool>>("ignorecase")?.unwrap_or(false),
        kwargs.get::<Option<bool>>("multiline")?.unwrap_or(false),
    ))
}

/// `regex_replace(pattern, replacement='', ignorecase=False, multiline=False, count=0,
/// mandatory_count=0)`: `re.sub` (all matches when `count` is 0).
fn regex_replace(
    state: &State,
    value: &Value,
    pattern: Option<String>,
    replacement: Option<String>,
    kwargs: Kwargs,
) -> Result<String, Error> {
    let text = text_arg(state, value)?;
    let pattern = super::positional_or_named(pattern, &kwargs, "pattern")?.unwrap_or_default();
    let replacement =
        super::positional_or_named(replacement, &kwargs, "replacement")?.unwrap_or_default();
    let (ignorecase, multiline) = flags(&kwargs)?;
    let count = kwargs.get::<Option<usize>>("count")?.unwrap_or(0);
    let mandatory_count = kwargs.get::<Option<usize>>("mandatory_count")?.unwrap_or(0);
    kwargs.assert_all_used()?;
    let regex = Pattern::new(&pattern, ignorecase, multiline, Anchor::Search).map_err(re_error)?;
    let (replaced, made) = regex.sub(&replacement, &text, count).map_err(re_error)?;
    if mandatory_count > 0 && made != mandatory_count {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            // ansible-core's words, which give the `count` argument where the number
            // of replacements made would be.
            format!(
                "'{pattern}' should match {mandatory_count} times, but matches {count} times in '{text}'"
            ),
        ));
    }
    Ok(replaced.into_owned())
}

/// `regex_search(pattern, '\\1', '\\g<name>', ..., ignorecase=False, multiline=False)`:
/// the first match, or the listed groups of it; `none` when nothing matches.
fn regex_search(
    state: &State,
    value: &Value,
    pattern: String,
    groups: Rest<String>,
    kwargs: Kwargs,
) -> Result<Value, Error> {
    let text = text_arg(state, value)?;
    let (ignorecase, multiline) = flags(&kwargs)?;
    kwargs.assert_all_used()?;
    let regex = Pattern::new(&pattern, ignorecase, multiline, Anchor::Search).map_err(re_error)?;
    let Some(captures) = regex.search(&text).map_err(re_error)? else {
        return Ok(Value::from(()));
    };
    if groups.is_empty() {
        return Ok(Value::from(captures.get(0).unwrap_or("")));
    }
    let mut found = Vec::with_capacity(groups.len());
    for group in groups.iter() {
        let matched = if let Some(name) =
            group.strip_prefix("\\g<").and_then(|g| g.strip_suffix('>'))
        {
            match name.parse::<usize>() {
                Ok(index) => captures.get(index),
                Err(_) => captures.name(name),
            }
        } else if let Some(index) = group
            .strip_prefix('\\')
            .and_then(|g| g.parse::<usize>().ok())
        {
            captures.get(index)
        } else {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                format!(
                    "regex_search: unknown argument {group:?} (expected '\\\\N' or '\\\\g<name>')"
                ),
            ));
        };
        found.push(matched.map_or(Value::from(()), Value::from));
    }
    Ok(Value::from(found))
}

/// `regex_findall(pattern, multiline=False, ignorecase=False)`: `re.findall` — the
/// matches, or the group of each (one group), or the groups of each (several).
fn regex_findall(
    state: &State,
    value: &Value,
    pattern: String,
    kwargs: Kwargs,
) -> Result<Value, Error> {
    let text = text_arg(state, value)?;
    let (ignorecase, multiline) = flags(&kwargs)?;
    kwargs.assert_all_used()?;
    let regex = Pattern::new(&pattern, ignorecase, multiline, Anchor::Search).map_err(re_error)?;
    let groups = regex.groups();
    let group_text =
        |captures: &pyre::Match, index: usize| Value::from(captures.get(index).unwrap_or(""));
    let found = regex
        .find_all(&text)
        .map_err(re_error)?
        .iter()
        .map(|captures| match groups {
            0 => group_text(captures, 0),
            1 => group_text(captures, 1),
            _ => Value::from(
                (1..=groups)
                    .map(|i| group_text(captures, i))
                    .collect::<Vec<_>>(),
            ),
        })
        .collect::<Vec<_>>();
    Ok(Value::from(found))
}

/// `regex_escape(re_type='python')`: the text as a pattern matching itself.
fn regex_escape(
    state: &State,
    value: &Value,
    re_type: Option<String>,
    kwargs: Kwargs,
) -> Result<String, Error> {
    let re_type = super::positional_or_named(re_type, &kwargs, "re_type")?;
    kwargs.assert_all_used()?;
    let text = text_arg(state, value)?;
    match re_type.as_deref().unwrap_or("python") {
        "python" => Ok(pyre::escape_python(&text)),
        "posix_basic" => Ok(pyre::escape_posix_basic(&text)),
        "posix_extended" => Err(Error::new(
            ErrorKind::InvalidOperation,
            "Regex type (posix_extended) not yet implemented",
        )),
        other => Err(Error::new(
            ErrorKind::InvalidOperation,
            format!("Invalid regex type ({other})"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use crate::template::filters::testing::{error, eval};
    use serde_json::json;

    #[test]
    fn replace() {
        assert_eq!(
            eval("'ansible' | regex_replace('^a.*i(.*)$', 'a\\\\1')"),
            json!("able")
        );
        assert_eq!(
            eval("'foobar' | regex_replace('^f.*o(.*)$', '\\\\1')"),
            json!("bar")
        );
        assert_eq!(
            eval(
                "'localhost:80' | regex_replace('^(?P<host>.+):(?P<port>\\\\d+)$', '\\\\g<host>, \\\\g<port>')"
            ),
            json!("localhost, 80")
        );
        assert_eq!(
            eval("'aaa' | regex_replace('a', 'b', count=2)"),
            json!("bba")
        );
        assert_eq!(
            eval("'ABC' | regex_replace('b', 'x', ignorecase=true)"),
            json!("AxC")
        );
        assert_eq!(
            eval("'a\\nb' | regex_replace('^', '# ', multiline=true)"),
            json!("# a\n# b")
        );
        assert_eq!(eval("'path/to' | regex_replace('/', '')"), json!("pathto"));
        assert_eq!(eval("123 | regex_replace('1', 'x')"), json!("x23"));
        assert!(
            error("'aa' | regex_replace('a', 'b', mandatory_count=1)")
                .contains("'a' should match 1 times, but matches 0 times in 'aa'")
        );
        assert!(error("'a' | regex_replace('(', 'b')").contains("invalid regular expression"));
    }

    #[test]
    fn search() {
        assert_eq!(
            eval("'server1/database42' | regex_search('database[0-9]+')"),
            json!("database42")
        );
        assert_eq!(eval("'ab' | regex_search('x')"), json!(null));
        assert_eq!(
            eval(
                "'server1/database42' | regex_search('server([0-9]+)/database([0-9]+)', '\\\\1', '\\\\2')"
            ),
            json!(["1", "42"])
        );
        assert_eq!(
            eval("'a=1' | regex_search('(?P<k>\\\\w)=(?P<v>\\\\d)', '\\\\g<v>')"),
            json!(["1"])
        );
        assert_eq!(
            eval("'FOO' | regex_search('foo', ignorecase=true)"),
            json!("FOO")
        );
        assert!(error("'a' | regex_search('a', 'x')").contains("unknown argument"));
    }

    #[test]
    fn findall() {
        assert_eq!(
            eval("'a1b22c333' | regex_findall('[0-9]+')"),
            json!(["1", "22", "333"])
        );
        assert_eq!(
            eval("'k1=v1 k2=v2' | regex_findall('(\\\\w+)=')"),
            json!(["k1", "k2"])
        );
        assert_eq!(
            eval("'k1=v1 k2=v2' | regex_findall('(\\\\w+)=(\\\\w+)')"),
            json!([["k1", "v1"], ["k2", "v2"]])
        );
        assert_eq!(eval("'x' | regex_findall('y')"), json!([]));
    }

    #[test]
    fn escape() {
        assert_eq!(
            eval("'^f.*o(.*)$' | regex_escape"),
            json!("\\^f\\.\\*o\\(\\.\\*\\)\\$")
        );
        assert_eq!(
            eval("'^f.*o(.*)$' | regex_escape('posix_basic')"),
            json!("\\^f\\.\\*o(\\.\\*)\\$")
        );
        assert!(
            error("'a' | regex_escape('posix_extended')")
                .contains("Regex type (posix_extended) not yet implemented")
        );
    }
}
