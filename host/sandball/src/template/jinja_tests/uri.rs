//! `uri`, `url` and `urn`: whether text reads as a URI as Python's `urlparse` reads it
//! (with `schemes`, whether its scheme is one of them), a URL (a URI with a host, or a
//! `file:` one), a URN (a URI of the `urn` scheme).

use crate::template::undefined::Plugins;
use minijinja::value::Kwargs;
use minijinja::{Error, Value};

pub(super) fn register(env: &mut Plugins<'_>) {
    env.add_test(
        "uri",
        |value: &Value, schemes: Option<Value>, kwargs: Kwargs| {
            Ok::<_, Error>(is_uri(value, schemes_arg(schemes, &kwargs)?.as_ref()))
        },
    );
    env.add_test(
        "url",
        |value: &Value, schemes: Option<Value>, kwargs: Kwargs| {
            Ok::<_, Error>(
                is_uri(value, schemes_arg(schemes, &kwargs)?.as_ref())
                    && value.as_str().is_some_and(|text| {
                        let (scheme, rest) = split_scheme(text);
                        scheme == "file" || !netloc(rest).is_empty()
                    }),
            )
        },
    );
    env.add_test("urn", |value: &Value| {
        is_uri(value, Some(&Value::from(vec!["urn"])))
    });
}

/// The `schemes` argument, given by position or by name.
fn schemes_arg(schemes: Option<Value>, kwargs: &Kwargs) -> Result<Option<Value>, Error> {
    let named: Option<Value> = kwargs.get("schemes")?;
    kwargs.assert_all_used()?;
    Ok(schemes.or(named))
}

/// `urlparse`'s scheme (lower-cased, empty when there is none) and what follows it.
fn split_scheme(url: &str) -> (String, &str) {
    if let Some(colon) = url.find(':')
        && colon > 0
        && url.starts_with(|c: char| c.is_ascii_alphabetic())
        && url[..colon]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    {
        return (url[..colon].to_ascii_lowercase(), &url[colon + 1..]);
    }
    (String::new(), url)
}

/// `urlparse`'s network location: what follows a leading `//` up to the path, query or
/// fragment.
fn netloc(rest: &str) -> &str {
    match rest.strip_prefix("//") {
        Some(after) => &after[..after.find(['/', '?', '#']).unwrap_or(after.len())],
        None => "",
    }
}

/// Whether `value` is text `urlparse` takes (any text is), with a scheme among
/// `schemes` when they are given.
fn is_uri(value: &Value, schemes: Option<&Value>) -> bool {
    let Some(text) = value.as_str() else {
        return false;
    };
    let (scheme, rest) = split_scheme(text);
    // `urlparse` refuses a host with an unbalanced IPv6 bracket.
    let host = netloc(rest);
    if host.contains('[') != host.contains(']') {
        return false;
    }
    match schemes.filter(|s| !s.is_none() && s.is_true()) {
        None => true,
        Some(schemes) => schemes
            .try_iter()
            .is_ok_and(|mut names| names.any(|name| name.as_str() == Some(scheme.as_str()))),
    }
}

#[cfg(test)]
mod tests {
    use crate::template::filters::testing::eval;
    use serde_json::json;

    #[test]
    fn uris_urls_and_urns_as_urlparse_reads_them() {
        assert_eq!(eval("'http://x.org/p' is uri"), json!(true));
        assert_eq!(eval("'anything' is uri"), json!(true));
        assert_eq!(eval("42 is uri"), json!(false));
        assert_eq!(eval("'http://x.org' is uri(['ftp'])"), json!(false));
        assert_eq!(eval("'HTTP://x.org' is uri(schemes=['http'])"), json!(true));
        assert_eq!(eval("'http://x.org' is url"), json!(true));
        assert_eq!(eval("'file:///etc/hosts' is url"), json!(true));
        assert_eq!(eval("'mailto:a@b.c' is url"), json!(false));
        assert_eq!(eval("'http://[::1' is url"), json!(false));
        assert_eq!(eval("'urn:isbn:0451' is urn"), json!(true));
        assert_eq!(eval("'http://x.org' is urn"), json!(false));
    }
}
