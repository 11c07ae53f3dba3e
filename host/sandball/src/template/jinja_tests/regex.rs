//! Regular-expression tests with Python `re` semantics: `match` (anchored at the start,
//! like `re.match`), `search`, and `regex(pattern, match_type=...)`.

use minijinja::value::Kwargs;
use minijinja::{Error, ErrorKind, State, Value};

use crate::template::filters::re_error;
use crate::template::python::text_arg;
use crate::template::undefined::Plugins;
use sandball_guest_sdk::pyre::{Anchor, Pattern};

pub(super) fn register(env: &mut Plugins<'_>) {
    env.add_test(
        "match",
        |state: &State, value: &Value, pattern: String, kwargs: Kwargs| {
            test(state, value, &pattern, Some(Anchor::Match), kwargs)
        },
    );
    env.add_test(
        "search",
        |state: &State, value: &Value, pattern: String, kwargs: Kwargs| {
            test(state, value, &pattern, Some(Anchor::Search), kwargs)
        },
    );
    env.add_test(
        "regex",
        |state: &State, value: &Value, pattern: String, kwargs: Kwargs| {
            test(state, value, &pattern, None, kwargs)
        },
    );
}

/// Whether `pattern` is found in the value; `anchor` is taken from `match_type` when not
/// given by the test's name.
fn test(
    state: &State,
    value: &Value,
    pattern: &str,
    anchor: Option<Anchor>,
    kwargs: Kwargs,
) -> Result<bool, Error> {
    let text = text_arg(state, value)?;
    let ignorecase = kwargs.get::<Option<bool>>("ignorecase")?.unwrap_or(false);
    let multiline = kwargs.get::<Option<bool>>("multiline")?.unwrap_or(false);
    let anchor = match anchor {
        Some(anchor) => anchor,
        None => match kwargs.get::<Option<String>>("match_type")?.as_deref() {
            None | Some("search") => Anchor::Search,
            Some("match") => Anchor::Match,
            Some("fullmatch") => Anchor::Full,
            Some(other) => {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!("regex: match_type must be search, match or fullmatch, not {other:?}"),
                ));
            }
        },
    };
    kwargs.assert_all_used()?;
    Pattern::new(pattern, ignorecase, multiline, anchor)
        .and_then(|p| p.is_match(&text))
        .map_err(re_error)
}

#[cfg(test)]
mod tests {
    use crate::template::filters::testing::{error, eval};
    use serde_json::json;

    #[test]
    fn match_and_search() {
        assert_eq!(
            eval("'http://example.com/users' is match('http://example.com/users/.*/resources')"),
            json!(false)
        );
        assert_eq!(
            eval(
                "'http://example.com/users/1/resources' is match('http://example.com/users/.*/resources')"
            ),
            json!(true)
        );
        assert_eq!(eval("'xab' is match('ab')"), json!(false));
        assert_eq!(eval("'abx' is match('ab')"), json!(true));
        assert_eq!(eval("'xab' is search('ab')"), json!(true));
        assert_eq!(eval("'XAB' is search('ab', ignorecase=true)"), json!(true));
        assert_eq!(eval("'a\\nb' is search('^b')"), json!(false));
        assert_eq!(eval("'a\\nb' is search('^b', multiline=true)"), json!(true));
        assert_eq!(eval("'abc' is regex('b')"), json!(true));
        assert_eq!(
            eval("'abc' is regex('b', match_type='match')"),
            json!(false)
        );
        assert_eq!(
            eval("'abc' is regex('abc', match_type='fullmatch')"),
            json!(true)
        );
        assert_eq!(
            eval("['a1', 'b2'] | select('match', 'a') | list"),
            json!(["a1"])
        );
        assert!(error("'a' is regex('a', match_type='x')").contains("match_type"));
    }
}
