//! Ansible's everyday filters that fit no family of their own: `random` and
//! `shuffle`, `strftime` and `to_datetime` (and the `now()` function), `urlsplit`,
//! `urldecode` and `urlencode` (Jinja2's: a string quoted, a dictionary or a list of
//! pairs as a query string), `comment`,
//! `human_readable` and `human_to_bytes`, the Windows path filters
//! (`win_basename`, `win_dirname`, `win_splitdrive`), and the `undef()` function.

use minijinja::value::{Kwargs, ValueKind};
use minijinja::{Error, ErrorKind, State, Value};

use crate::template::convert::from_json;
use crate::template::pyrandom::{Draws, Generator, PyRandom};
use crate::template::python::text_arg;
use crate::template::undefined::Plugins;

fn invalid(msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::InvalidOperation, msg.into())
}

pub(super) fn register(env: &mut Plugins<'_>) {
    env.add_filter("random", random);
    env.add_filter("shuffle", shuffle);
    env.add_filter("strftime", strftime);
    env.add_function("now", now);
    // `undef(hint)`: an undefined value, for a default that must be set elsewhere; a
    // variable it makes undefined is the error its hint words when used.
    env.add_function("undef", |hint: Option<String>| {
        crate::template::undefined::hinted(
            hint.unwrap_or_else(|| "Mandatory variable has not been overridden".into()),
        )
    });
    env.add_filter("to_datetime", to_datetime);
    env.add_filter("urlsplit", urlsplit);
    env.add_filter("urlencode", urlencode);
    env.add_filter("urldecode", |state: &State, v: &Value| {
        Ok::<_, Error>(urldecode(&text_arg(state, v)?))
    });
    env.add_filter("comment", comment);
    env.add_filter("human_readable", human_readable);
    env.add_filter("human_to_bytes", human_to_bytes);
    env.add_filter("win_basename", |state: &State, v: &Value| {
        let p = text_arg(state, v)?;
        Ok::<_, Error>(win_split(&p).1.to_string())
    });
    env.add_filter("win_dirname", |state: &State, v: &Value| {
        let p = text_arg(state, v)?;
        Ok::<_, Error>(win_split(&p).0.to_string())
    });
    env.add_filter("win_splitdrive", |state: &State, v: &Value| {
        let p = text_arg(state, v)?;
        let (drive, rest) = match p.find(':') {
            Some(1) => (p[..2].to_string(), p[2..].to_string()),
            _ => (String::new(), p.clone()),
        };
        Ok::<_, Error>(Value::from(vec![drive, rest]))
    });
}

/// Jinja2's `urlencode`: a string (or any value that is not a collection, as text)
/// percent-quoted with `/` left as it is; a dictionary's items, or a list of pairs, as
/// `k=v` joined with `&`, each side quoted for a query string (`/` quoted, space `+`).
fn urlencode(state: &State, value: &Value) -> Result<String, Error> {
    use minijinja::value::ValueKind;
    let quote = |v: &Value, for_query: bool| -> Result<String, Error> {
        let text = crate::template::python::py_str(v)?;
        let mut out = String::new();
        for b in text.bytes() {
            match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'.' | b'-' | b'~' => {
                    out.push(char::from(b));
                }
                b'/' if !for_query => out.push('/'),
                b' ' if for_query => out.push('+'),
                b => out.push_str(&format!("%{b:02X}")),
            }
        }
        Ok(out)
    };
    let pairs: Vec<(Value, Value)> = match value.kind() {
        ValueKind::Map => value
            .try_iter()?
            .map(|k| {
                let v = value.get_item(&k)?;
                Ok((k, v))
            })
            .collect::<Result<_, Error>>()?,
        ValueKind::Seq | ValueKind::Iterable => value
            .try_iter()?
            .map(|pair| {
                let mut it = pair.try_iter()?;
                match (it.next(), it.next(), it.next()) {
                    (Some(k), Some(v), None) => Ok((k, v)),
                    _ => Err(invalid(format!(
                        "urlencode: expected a pair, got {}",
                        crate::template::python::py_str(&pair)?
                    ))),
                }
            })
            .collect::<Result<_, Error>>()?,
        _ => return quote(&Value::from(text_arg(state, value)?), false),
    };
    pairs
        .iter()
        .map(|(k, v)| Ok(format!("{}={}", quote(k, true)?, quote(v, true)?)))
        .collect::<Result<Vec<_>, Error>>()
        .map(|p| p.join("&"))
}

/// Python's `unquote_plus`: `+` is a space, `%XX` a byte; the bytes read as UTF-8
/// (what is not UTF-8 replaced), a `%` not followed by two hex digits kept.
fn urldecode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A Windows path split at its last separator (`\` or `/`).
fn win_split(p: &str) -> (&str, &str) {
    match p.rfind(['\\', '/']) {
        Some(i) => (&p[..i], &p[i + 1..]),
        None => match p.find(':') {
            Some(1) => (&p[..2], &p[2..]),
            _ => ("", p),
        },
    }
}

/// The generator of a `seed` option: Python's `Random(seed)` for an integer or a text,
/// the system's when there is none.
fn generator(seed: Option<Value>) -> Result<Generator, Error> {
    Ok(match seed.as_ref().filter(|s| !s.is_none()) {
        None => Generator::System(rand::rng()),
        Some(seed) if seed.is_integer() => Generator::Seeded(Box::new(PyRandom::from_int(
            i128::try_from(seed.clone()).map_err(|_| invalid("the seed is too large"))?,
        ))),
        Some(seed) if let Some(text) = seed.as_str() => {
            Generator::Seeded(Box::new(PyRandom::from_text(text)))
        }
        Some(seed) => {
            return Err(invalid(format!(
                "a seed must be an integer or a text, not {}",
                super::python_type(seed)
            )));
        }
    })
}

/// `random(start=None, step=None, seed=None)`: a number of `range(start, end, step)`
/// for an integer, an item of anything else iterable, drawn as Python's `random`
/// draws (the same as ansible-core's for the same `seed`).
fn random(value: &Value, kwargs: Kwargs) -> Result<Value, Error> {
    let start: Option<Value> = kwargs.get("start")?;
    let step: Option<Value> = kwargs.get("step")?;
    let seed: Option<Value> = kwargs.get("seed")?;
    kwargs.assert_all_used()?;
    let mut draws = generator(seed)?;
    // Python's `start or 0`, `step or 1`.
    let given = |v: &Option<Value>| v.as_ref().filter(|v| v.is_true()).cloned();
    if value.is_integer() {
        let number = |v: Option<Value>, default: i64| -> Result<i64, Error> {
            v.map_or(Ok(default), |v| {
                i64::try_from(v).map_err(|_| invalid("start and step must be integers"))
            })
        };
        let end =
            i64::try_from(value.clone()).map_err(|_| invalid("random: the end is too large"))?;
        let start = number(given(&start), 0)?;
        let step = number(given(&step), 1)?;
        return draws
            .randrange(start, end, step)
            .map(Value::from)
            .ok_or_else(|| {
                // Python 3.11's words.
                invalid(if step == 1 {
                    format!(
                        "empty range for randrange() ({start}, {end}, {})",
                        end - start
                    )
                } else {
                    "empty range for randrange()".to_string()
                })
            });
    }
    if value.is_none()
        || value.is_undefined()
        || !matches!(
            value.kind(),
            ValueKind::Seq | ValueKind::Iterable | ValueKind::Map | ValueKind::String
        )
    {
        return Err(invalid("random can only be used on sequences and integers"));
    }
    if given(&start).is_some() || given(&step).is_some() {
        return Err(invalid(
            "start and step can only be used with integer values",
        ));
    }
    let items: Vec<Value> = value.try_iter()?.collect();
    draws
        .choice(items.len())
        .map(|i| items[i].clone())
        .ok_or_else(|| invalid("Cannot choose from an empty sequence"))
}

/// `shuffle(seed=None)`: the items in a random order (drawn as Python's `shuffle`
/// draws for a `seed`); what is not iterable comes back as it is.
fn shuffle(value: &Value, seed: Option<Value>, kwargs: Kwargs) -> Result<Value, Error> {
    let seed = super::positional_or_named(seed, &kwargs, "seed")?;
    kwargs.assert_all_used()?;
    let Ok(items) = value.try_iter() else {
        return Ok(value.clone());
    };
    let mut items: Vec<Value> = items.collect();
    // Python seeds only for a true seed (`if seed:`).
    let mut draws = generator(seed.filter(|s| s.is_true()))?;
    draws.shuffle(&mut items);
    Ok(Value::from(items))
}

/// `strftime(second=None, utc=False)`: the time formatted, the current one by default.
fn strftime(
    state: &State,
    format: &Value,
    second: Option<Value>,
    kwargs: Kwargs,
) -> Result<Value, Error> {
    let format = text_arg(state, format)?;
    let second = super::positional_or_named(second, &kwargs, "second")?;
    let utc: bool = kwargs.get::<Option<bool>>("utc")?.unwrap_or(false);
    kwargs.assert_all_used()?;
    // Python's `float(second)`: a number, or text that reads as one.
    let second = match second.filter(|s| !s.is_none()) {
        None => None,
        Some(s) => Some(
            f64::try_from(s.clone())
                .ok()
                .or_else(|| s.as_str().and_then(|t| t.trim().parse::<f64>().ok()))
                .filter(|f| f.is_finite())
                .ok_or_else(|| {
                    invalid(format!(
                        "Invalid value for epoch value ({})",
                        crate::template::python::py_str(&s).unwrap_or_default()
                    ))
                })?,
        ),
    };
    let when = match second {
        Some(s) => chrono::DateTime::from_timestamp(s.trunc() as i64, 0)
            .ok_or_else(|| invalid(format!("strftime: {s} is not a time")))?,
        None => chrono::Utc::now(),
    };
    Ok(Value::from(py_strftime(when, &format, utc)))
}

/// `now(utc=False, fmt=None)`: the current time, as Python prints a `datetime`, or
/// formatted with `fmt`.
fn now(kwargs: Kwargs) -> Result<Value, Error> {
    let utc: bool = kwargs.get::<Option<bool>>("utc")?.unwrap_or(false);
    let fmt: Option<String> = kwargs.get("fmt")?;
    kwargs.assert_all_used()?;
    let format = fmt.unwrap_or_else(|| "%Y-%m-%d %H:%M:%S.%f".into());
    Ok(Value::from(py_strftime(chrono::Utc::now(), &format, utc)))
}

/// A time formatted as Python's `strftime` formats it (`%f` is microseconds), in UTC or
/// local time.
fn py_strftime(when: chrono::DateTime<chrono::Utc>, format: &str, utc: bool) -> String {
    let format = format.replace("%f", "%6f");
    if utc {
        when.format(&format).to_string()
    } else {
        when.with_timezone(&chrono::Local)
            .format(&format)
            .to_string()
    }
}

/// `to_datetime(format='%Y-%m-%d %H:%M:%S')`: a date and time from text, as a mapping
/// with Python's `datetime` attributes.
fn to_datetime(
    state: &State,
    value: &Value,
    format: Option<String>,
    kwargs: Kwargs,
) -> Result<Value, Error> {
    let text = text_arg(state, value)?;
    let format = super::positional_or_named(format, &kwargs, "format")?
        .unwrap_or_else(|| "%Y-%m-%d %H:%M:%S".into());
    kwargs.assert_all_used()?;
    let t = chrono::NaiveDateTime::parse_from_str(&text, &format)
        .or_else(|_| {
            chrono::NaiveDate::parse_from_str(&text, &format)
                .map(|d| d.and_hms_opt(0, 0, 0).unwrap_or_default())
        })
        .map_err(|e| {
            invalid(format!(
                "time data '{text}' does not match format '{format}' ({e})"
            ))
        })?;
    use chrono::{Datelike, Timelike};
    Ok(from_json(&serde_json::json!({
        "year": t.year(), "month": t.month(), "day": t.day(),
        "hour": t.hour(), "minute": t.minute(), "second": t.second(),
        "microsecond": t.nanosecond() / 1000,
        "timestamp": t.and_utc().timestamp(),
        "text": t.format("%Y-%m-%d %H:%M:%S").to_string(),
    })))
}

/// `urlsplit(query='')`: a URL's parts (`scheme`, `netloc`, `path`, `query`,
/// `fragment`, `hostname`, `port`, `username`, `password`), or one of them.
fn urlsplit(
    state: &State,
    value: &Value,
    part: Option<String>,
    kwargs: Kwargs,
) -> Result<Value, Error> {
    let part = super::positional_or_named(part, &kwargs, "query")?;
    kwargs.assert_all_used()?;
    let url = text_arg(state, value)?;
    let (scheme, rest) = match url.split_once("://") {
        Some((s, r)) => (s.to_string(), format!("//{r}")),
        None => match url.split_once(':') {
            Some((s, r)) if !s.contains('/') => (s.to_string(), r.to_string()),
            _ => (String::new(), url.clone()),
        },
    };
    let (rest, fragment) = rest
        .split_once('#')
        .map_or((rest.as_str(), ""), |(a, b)| (a, b));
    let (rest, query) = rest.split_once('?').map_or((rest, ""), |(a, b)| (a, b));
    let (netloc, path) = match rest.strip_prefix("//") {
        Some(r) => match r.find('/') {
            Some(i) => (&r[..i], &r[i..]),
            None => (r, ""),
        },
        None => ("", rest),
    };
    let (userinfo, hostport) = netloc
        .rsplit_once('@')
        .map_or((None, netloc), |(u, h)| (Some(u), h));
    let (username, password) = match userinfo {
        Some(u) => match u.split_once(':') {
            Some((a, b)) => (Some(a), Some(b)),
            None => (Some(u), None),
        },
        None => (None, None),
    };
    let (host, port) = match hostport.rsplit_once(':') {
        Some((h, p)) if !h.is_empty() && p.chars().all(|c| c.is_ascii_digit()) && !p.is_empty() => {
            (h, p.parse::<u64>().ok())
        }
        _ => (hostport, None),
    };
    let parts = serde_json::json!({
        "scheme": scheme.to_lowercase(),
        "netloc": netloc,
        "path": path,
        "query": query,
        "fragment": fragment,
        "hostname": if host.is_empty() { serde_json::Value::Null } else { serde_json::Value::String(host.to_lowercase()) },
        "port": port,
        "username": username,
        "password": password,
    });
    match part {
        None => Ok(from_json(&parts)),
        Some(p) => parts
            .get(&p)
            .map(from_json)
            .ok_or_else(|| invalid(format!("urlsplit: unknown URL component: {p}"))),
    }
}

/// `comment(style='plain', **options)`: the text as a comment block. The style gives
/// the defaults (`plain` `# `, `erlang` `% `, `c` `// `, `cblock` and `xml` with a
/// beginning and an end line) that the options `beginning`, `prefix`,
/// `prefix_count`, `decoration`, `postfix`, `postfix_count`, `end` and `newline`
/// override; `prefix` and `postfix` default to the decoration without its trailing
/// blanks. Other options are ignored, as in ansible-core.
fn comment(
    state: &State,
    value: &Value,
    style: Option<String>,
    kwargs: Kwargs,
) -> Result<Value, Error> {
    let Some(text) = value.as_str() else {
        return Err(invalid(format!(
            "'{}' object has no attribute 'replace'",
            crate::template::filters::python_type(value)
        )));
    };
    let style = match style {
        Some(s) => s,
        None => kwargs
            .get::<Option<String>>("style")?
            .unwrap_or_else(|| "plain".into()),
    };
    let (beginning, decoration, end) = match style.as_str() {
        "plain" => ("", "# ", ""),
        "erlang" => ("", "% ", ""),
        "c" => ("", "// ", ""),
        "cblock" => ("/*", " * ", " */"),
        "xml" => ("<!--", " - ", "-->"),
        other => return Err(invalid(format!("Invalid style '{other}'."))),
    };
    let option = |name: &str, default: &str| -> Result<String, Error> {
        Ok(match kwargs.get::<Option<Value>>(name)? {
            None => default.to_string(),
            Some(v) => text_arg(state, &v)?,
        })
    };
    let count = |name: &str| -> Result<usize, Error> {
        match kwargs.get::<Option<Value>>(name)? {
            None => Ok(1),
            Some(v) => {
                let n = match v.as_str() {
                    Some(s) => s.trim().parse::<i64>().map_err(|_| {
                        invalid(format!(
                            "invalid literal for int() with base 10: {}",
                            sandball_pycompat::pyfmt::py_repr(&serde_json::Value::String(s.into()))
                        ))
                    })?,
                    None => i64::try_from(v.clone())
                        .map_err(|_| invalid(format!("{name} must be an integer")))?,
                };
                Ok(usize::try_from(n).unwrap_or(0))
            }
        }
    };
    let newline = option("newline", "\n")?;
    let beginning = option("beginning", beginning)?;
    let decoration = option("decoration", decoration)?;
    let bare = decoration.trim_end_matches([' ', '\t']).to_string();
    let prefix = option("prefix", &bare)?;
    let postfix = option("postfix", &bare)?;
    let end = option("end", end)?;
    let (prefix_count, postfix_count) = (count("prefix_count")?, count("postfix_count")?);
    let mut out = String::new();
    if !beginning.is_empty() {
        out.push_str(&beginning);
        out.push_str(&newline);
    }
    if prefix == newline {
        out.push_str(&newline.repeat(prefix_count));
    } else if !prefix.is_empty() {
        out.push_str(&format!("{prefix}{newline}").repeat(prefix_count));
    }
    let body = format!(
        "{decoration}{}",
        text.replace(&newline, &format!("{newline}{decoration}"))
    );
    let trimmed = decoration.trim_end();
    out.push_str(&body.replace(
        &format!("{decoration}{newline}"),
        &format!("{trimmed}{newline}"),
    ));
    for _ in 0..postfix_count {
        out.push_str(&newline);
        out.push_str(&postfix);
    }
    if !end.is_empty() {
        out.push_str(&newline);
        out.push_str(&end);
    }
    Ok(Value::from(out))
}

/// `human_readable(isbits=False, unit=None)`: a byte (or bit) count as `1.00 MB`, the
/// largest unit it reaches or the one-letter `unit` asked for, as ansible-core's
/// `bytes_to_human` writes it; a value that is no number is its error.
fn human_readable(
    value: &Value,
    isbits: Option<Value>,
    unit: Option<Value>,
    kwargs: Kwargs,
) -> Result<Value, Error> {
    let isbits = match isbits {
        Some(isbits) => Some(isbits),
        None => kwargs.get::<Option<Value>>("isbits")?,
    };
    let unit = match unit {
        Some(unit) => Some(unit),
        None => kwargs.get::<Option<Value>>("unit")?,
    };
    kwargs.assert_all_used()?;
    let unit = match unit.filter(|u| !u.is_none()) {
        None => None,
        Some(u) => Some(
            u.as_str()
                .map(str::to_uppercase)
                .ok_or_else(|| invalid("human_readable() can't interpret the input"))?,
        ),
    };
    let bad = |cause: String| invalid(format!("human_readable() failed on bad input: {cause}"));
    let kind = crate::template::filters::python_type(value);
    let size = match value.kind() {
        ValueKind::Number => f64::try_from(value.clone()).ok(),
        ValueKind::Bool => Some(if value.is_true() { 1.0 } else { 0.0 }),
        _ => None,
    };
    const RANGES: [(&str, i32); 9] = [
        ("Y", 80),
        ("Z", 70),
        ("E", 60),
        ("P", 50),
        ("T", 40),
        ("G", 30),
        ("M", 20),
        ("K", 10),
        ("B", 0),
    ];
    let mut chosen = RANGES[RANGES.len() - 1];
    for (suffix, shift) in RANGES {
        chosen = (suffix, shift);
        let reached = match (&unit, size) {
            (Some(unit), _) => unit == suffix,
            (None, Some(size)) => size >= 2f64.powi(shift),
            (None, None) => {
                return Err(bad(format!(
                    "'>=' not supported between instances of '{kind}' and 'int'"
                )));
            }
        };
        if reached {
            break;
        }
    }
    let size = size.ok_or_else(|| {
        bad(format!(
            "unsupported operand type(s) for /: '{kind}' and 'int'"
        ))
    })?;
    let base = if isbits.is_some_and(|b| b.is_true()) {
        "bits"
    } else {
        "Bytes"
    };
    let (suffix, shift) = chosen;
    let name = if shift == 0 {
        base.to_string()
    } else {
        format!("{suffix}{}", &base[..1])
    };
    Ok(Value::from(format!(
        "{:.2} {name}",
        size / 2f64.powi(shift)
    )))
}

/// `human_to_bytes(default_unit=None, isbits=False)`: `1K` as 1024.
fn human_to_bytes(
    state: &State,
    value: &Value,
    default_unit: Option<String>,
    isbits: Option<bool>,
    kwargs: Kwargs,
) -> Result<Value, Error> {
    let default_unit = match default_unit {
        Some(unit) => Some(unit),
        None => kwargs.get::<Option<String>>("default_unit")?,
    };
    let isbits = match isbits {
        Some(isbits) => Some(isbits),
        None => kwargs.get::<Option<bool>>("isbits")?,
    };
    kwargs.assert_all_used()?;
    let mut text = text_arg(state, value)?;
    if let Some(unit) = default_unit
        && text.trim().chars().all(|c| c.is_ascii_digit() || c == '.')
    {
        text.push_str(&unit);
    }
    sandball_guest_sdk::args::human_to_number(&text, isbits.unwrap_or(false))
        .map(Value::from)
        .map_err(invalid)
}

#[cfg(test)]
mod tests {
    use crate::template::filters::testing::{error, eval};
    use serde_json::json;

    #[test]
    fn everyday_filters_as_ansible() {
        assert!(error("'monkeys' | human_readable").contains(
            "human_readable() failed on bad input: '>=' not supported between instances of 'str' and 'int'"
        ));
        assert_eq!(eval("[1, 2, 3] | shuffle | length"), json!(3));
        assert_eq!(eval("[7] | random"), json!(7));
        assert_eq!(
            eval("'a%3D%C3%A9+b%2%zz%41' | urldecode"),
            json!("a=é b%2%zzA")
        );
        assert_eq!(eval("'a/b c' | urlencode"), json!("a/b%20c"));
        assert_eq!(
            eval("{'a b': 'c/d', 'n': 1} | urlencode"),
            json!("a+b=c%2Fd&n=1")
        );
        assert_eq!(
            eval("[('k', 'v'), ['x', 'é']] | urlencode"),
            json!("k=v&x=%C3%A9")
        );
        assert_eq!(eval("() | urlencode"), json!(""));
        assert_eq!(eval("'%Y' | strftime(0, utc=true)"), json!("1970"));
        assert_eq!(
            eval("'%Y-%m-%d' | strftime('1585247522.0', utc=True)"),
            json!("2020-03-26")
        );
        assert!(
            crate::template::filters::testing::error("'%Y' | strftime('foo')")
                .contains("Invalid value for epoch value (foo)")
        );
        assert_eq!(
            eval("('2020-01-02 03:04:05' | to_datetime).year"),
            json!(2020)
        );
        assert_eq!(
            eval("'http://u:p@a.B:8080/c?d=1#f' | urlsplit('hostname')"),
            json!("a.b")
        );
        assert_eq!(eval("'http://a.b:8080/c' | urlsplit('port')"), json!(8080));
        assert_eq!(eval("'x' | comment"), json!("#\n# x\n#"));
        // Compared with ansible-core 2.19's comment filter.
        for (expr, want) in [
            ("'a\\nb' | comment('cblock')", "/*\n *\n * a\n * b\n *\n */"),
            ("'a\\nb' | comment('xml')", "<!--\n -\n - a\n - b\n -\n-->"),
            ("'a\\nb' | comment(prefix='', postfix='')", "# a\n# b\n"),
            (
                "'a\\n\\nb' | comment('c', prefix_count=2, postfix_count=0)",
                "//\n//\n// a\n//\n// b",
            ),
            (
                "'a' | comment(decoration='; ', beginning='BEGIN', end='END')",
                "BEGIN\n;\n; a\n;\nEND",
            ),
            (
                "'a\\nb' | comment(prefix='##', postfix='%%')",
                "##\n# a\n# b\n%%",
            ),
            ("'a\\n' | comment", "#\n# a\n# \n#"),
            ("'' | comment", "#\n# \n#"),
            ("'a' | comment(prefix='\\n')", "\n# a\n#"),
            ("'a' | comment(bogus=1, prefix_count='2')", "#\n#\n# a\n#"),
        ] {
            assert_eq!(eval(expr), json!(want), "{expr}");
        }
        assert_eq!(eval("1048576 | human_readable"), json!("1.00 MB"));
        assert_eq!(eval("1 | human_readable(isbits=True)"), json!("1.00 bits"));
        assert_eq!(
            eval("102400000 | human_readable(isbits=True, unit='G')"),
            json!("0.10 Gb")
        );
        assert_eq!(
            eval("2048 | human_readable(unit='GB')"),
            json!("2048.00 Bytes")
        );
        assert_eq!(
            eval("'10.00 Kb' | human_to_bytes(isbits=True)"),
            json!(10240)
        );
        assert_eq!(eval("'1K' | human_to_bytes"), json!(1024));
        assert_eq!(eval("'C:/x/y.txt' | win_basename"), json!("y.txt"));
        assert_eq!(
            eval("'C:/x/y.txt' | win_splitdrive"),
            json!(["C:", "/x/y.txt"])
        );
    }
}
