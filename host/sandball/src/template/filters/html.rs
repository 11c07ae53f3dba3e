//! Jinja's HTML filters with Python's semantics: `escape` (`e`) and `forceescape`
//! (markupsafe's escaping), `striptags` (tags and comments removed, whitespace
//! collapsed, character references read as Python's `html.unescape` reads them),
//! `urlize` and `xmlattr`.

use std::sync::LazyLock;

use minijinja::value::{Kwargs, Rest, ValueKind};
use minijinja::{Error, ErrorKind, State, Value};
use sandball_guest_sdk::pyre::{Anchor, Pattern, PyreError};

use crate::template::convert::ensure_defined;
use crate::template::python::{py_str, text_arg};
use crate::template::undefined::Plugins;

pub(super) fn register(env: &mut Plugins<'_>) {
    env.add_filter("escape", escape);
    env.add_filter("e", escape);
    env.add_filter("forceescape", |state: &State, value: &Value| {
        Ok::<_, Error>(Value::from_safe_string(html_escape(&text_arg(
            state, value,
        )?)))
    });
    env.add_filter("striptags", |state: &State, value: &Value| {
        Ok::<_, Error>(striptags(&text_arg(state, value)?))
    });
    env.add_filter("urlize", urlize);
    env.add_filter("xmlattr", xmlattr);
}

fn invalid(msg: String) -> Error {
    Error::new(ErrorKind::InvalidOperation, msg)
}

/// markupsafe's `escape`: `&`, `<`, `>`, `"` and `'` as character references.
pub(crate) fn html_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Jinja's `escape`, which escapes trusted text too: the engine's mark of trusted text
/// is the one it gives escaped text (see `trust.rs`), so text `escape` already gave is
/// escaped again, where Jinja keeps it.
fn escape(state: &State, value: &Value) -> Result<Value, Error> {
    Ok(Value::from_safe_string(html_escape(&text_arg(
        state, value,
    )?)))
}

/// markupsafe's `striptags`: comments and tags removed (an unclosed one and what
/// follows it kept), runs of whitespace made one space, then character references
/// read.
fn striptags(text: &str) -> String {
    let mut kept = String::with_capacity(text.len());
    let mut pos = 0;
    while let Some(start) = text[pos..].find('<').map(|i| pos + i) {
        let end = if text[start..].starts_with("<!--") {
            text[start + 4..].find("-->").map(|i| start + 4 + i + 3)
        } else {
            text[start..].find('>').map(|i| start + i + 1)
        };
        let Some(end) = end else { break };
        kept.push_str(&text[pos..start]);
        pos = end;
    }
    kept.push_str(&text[pos..]);
    html_unescape(&kept.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// The named character references the HTML standard reads without their `;`.
const LEGACY_NAMES: [&str; 106] = [
    "AElig", "AMP", "Aacute", "Acirc", "Agrave", "Aring", "Atilde", "Auml", "COPY", "Ccedil",
    "ETH", "Eacute", "Ecirc", "Egrave", "Euml", "GT", "Iacute", "Icirc", "Igrave", "Iuml", "LT",
    "Ntilde", "Oacute", "Ocirc", "Ograve", "Oslash", "Otilde", "Ouml", "QUOT", "REG", "THORN",
    "Uacute", "Ucirc", "Ugrave", "Uuml", "Yacute", "aacute", "acirc", "acute", "aelig", "agrave",
    "amp", "aring", "atilde", "auml", "brvbar", "ccedil", "cedil", "cent", "copy", "curren", "deg",
    "divide", "eacute", "ecirc", "egrave", "eth", "euml", "frac12", "frac14", "frac34", "gt",
    "iacute", "icirc", "iexcl", "igrave", "iquest", "iuml", "laquo", "lt", "macr", "micro",
    "middot", "nbsp", "not", "ntilde", "oacute", "ocirc", "ograve", "ordf", "ordm", "oslash",
    "otilde", "ouml", "para", "plusmn", "pound", "quot", "raquo", "reg", "sect", "shy", "sup1",
    "sup2", "sup3", "szlig", "thorn", "times", "uacute", "ucirc", "ugrave", "uml", "uuml",
    "yacute", "yen", "yuml",
];

/// The text of the named character reference `name` (without `;`).
fn named_reference(name: &str) -> Option<&'static str> {
    let table = &html_escape::NAMED_ENTITIES;
    table
        .binary_search_by(|(n, _)| (*n).cmp(name.as_bytes()))
        .ok()
        .map(|i| table[i].1)
}

/// Python's `html.unescape`: named references (the legacy ones also without `;`, the
/// longest such name at the start of an unknown one), decimal and hexadecimal ones
/// (the C1 range as windows-1252, invalid code points replaced or dropped).
pub(crate) fn html_unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let after = &rest[amp + 1..];
        let (replacement, used) = character_reference(after);
        match replacement {
            Some(replacement) => out.push_str(&replacement),
            None => out.push('&'),
        }
        rest = &after[used..];
    }
    out.push_str(rest);
    out
}

/// The reference that starts `text` (just after a `&`): its replacement and how many
/// bytes it took, or `None` when there is none.
fn character_reference(text: &str) -> (Option<String>, usize) {
    if let Some(number) = text.strip_prefix('#') {
        let (digits, radix, skip) = match number.strip_prefix(['x', 'X']) {
            Some(hex) => (hex, 16, 2),
            None => (number, 10, 1),
        };
        let len = digits
            .find(|c: char| !c.is_digit(radix))
            .unwrap_or(digits.len());
        if len == 0 {
            return (None, 0);
        }
        let used = skip + len + usize::from(digits[len..].starts_with(';'));
        let code = u32::from_str_radix(&digits[..len], radix).unwrap_or(u32::MAX);
        return (Some(numeric_reference(code)), used);
    }
    let name_len: usize = text
        .chars()
        .take_while(|c| !matches!(c, '\t' | '\n' | '\x0c' | ' ' | '<' | '&' | '#' | ';'))
        .take(32)
        .map(char::len_utf8)
        .sum();
    if name_len == 0 {
        return (None, 0);
    }
    let name = &text[..name_len];
    let semicolon = text[name_len..].starts_with(';');
    let used = name_len + usize::from(semicolon);
    if semicolon && let Some(value) = named_reference(name) {
        return (Some(value.to_string()), used);
    }
    // The whole word, else the longest legacy name (two characters at least) it
    // starts with, the rest kept.
    let whole = &text[..used];
    let mut ends: Vec<usize> = whole.char_indices().map(|(i, _)| i).skip(2).collect();
    if !semicolon {
        ends.push(whole.len());
    }
    for end in ends.into_iter().rev() {
        if LEGACY_NAMES.contains(&&whole[..end])
            && let Some(value) = named_reference(&whole[..end])
        {
            return (Some(format!("{value}{}", &whole[end..])), used);
        }
    }
    (None, 0)
}

/// The character a numeric reference stands for, as Python's `html.unescape` reads it.
fn numeric_reference(code: u32) -> String {
    match code {
        0 => '\u{fffd}'.to_string(),
        0x0d => '\r'.to_string(),
        0x80..=0x9f => encoding_rs::WINDOWS_1252
            .decode_without_bom_handling(&[code as u8])
            .0
            .into_owned(),
        0xd800..=0xdfff | 0x11_0000.. => '\u{fffd}'.to_string(),
        0x01..=0x08 | 0x0b | 0x0e..=0x1f | 0x7f | 0xfdd0..=0xfdef => String::new(),
        _ if code & 0xfffe == 0xfffe => String::new(),
        _ => char::from_u32(code).map(String::from).unwrap_or_default(),
    }
}

/// Jinja's `urlize(trim_url_limit=None, nofollow=False, target=None, rel=None,
/// extra_schemes=None)`: the text escaped, its words that are URLs (`http://`,
/// `https://`, `www.`, bare domains of the common top-level domains), e-mail addresses
/// or of the extra schemes made links (`rel="noopener"` always, as Jinja's policy
/// adds it), punctuation around them left out.
fn urlize(
    state: &State,
    value: &Value,
    args: Rest<Value>,
    kwargs: Kwargs,
) -> Result<String, Error> {
    let text = text_arg(state, value)?;
    let [limit, nofollow, target, rel, extra_schemes] = super::python_args(
        "urlize",
        [
            "trim_url_limit",
            "nofollow",
            "target",
            "rel",
            "extra_schemes",
        ],
        &args,
        &kwargs,
    )?
    .map(|arg| arg.filter(|v| !v.is_none()));
    let limit = limit
        .map(|v| usize::try_from(v).map_err(|e| invalid(e.to_string())))
        .transpose()?;
    let mut rel_parts: Vec<String> = match rel {
        Some(rel) => text_arg(state, &rel)?
            .split_whitespace()
            .map(str::to_string)
            .collect(),
        None => Vec::new(),
    };
    if nofollow.is_some_and(|v| v.is_true()) {
        rel_parts.push("nofollow".into());
    }
    rel_parts.push("noopener".into());
    rel_parts.sort();
    rel_parts.dedup();
    let rel_attr = format!(" rel=\"{}\"", html_escape(&rel_parts.join(" ")));
    let target_attr = match target.filter(|t| t.is_true()) {
        Some(target) => format!(" target=\"{}\"", html_escape(&text_arg(state, &target)?)),
        None => String::new(),
    };
    let mut schemes = Vec::new();
    if let Some(extra) = extra_schemes {
        for scheme in extra.try_iter()? {
            let scheme = text_arg(state, &scheme)?;
            if !matches(&URI_SCHEME, &scheme)? {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!("'{scheme}' is not a valid URI scheme prefix."),
                ));
            }
            schemes.push(scheme);
        }
    }
    let trim = |url: &str| match limit {
        Some(limit) if url.chars().count() > limit => {
            format!("{}...", url.chars().take(limit).collect::<String>())
        }
        _ => url.to_string(),
    };
    let escaped = html_escape(&text);
    let mut out = String::with_capacity(escaped.len());
    let mut words = escaped.as_str();
    while !words.is_empty() {
        let space = words.find(char::is_whitespace).unwrap_or(words.len());
        let (word, after) = words.split_at(space);
        let blank = after
            .find(|c: char| !c.is_whitespace())
            .unwrap_or(after.len());
        let (head, middle, tail) = split_punctuation(word);
        let link = if matches(&HTTP, &middle)? {
            let href = if middle.starts_with("https://") || middle.starts_with("http://") {
                middle.clone()
            } else {
                format!("https://{middle}")
            };
            format!(
                "<a href=\"{href}\"{rel_attr}{target_attr}>{}</a>",
                trim(&middle)
            )
        } else if let Some(address) = middle.strip_prefix("mailto:")
            && matches(&EMAIL, address)?
        {
            format!("<a href=\"{middle}\">{address}</a>")
        } else if middle.contains('@')
            && !middle.starts_with("www.")
            && !middle.starts_with('@')
            && !middle.contains(':')
            && matches(&EMAIL, &middle)?
        {
            format!("<a href=\"mailto:{middle}\">{middle}</a>")
        } else if schemes
            .iter()
            .any(|s| middle != *s && middle.starts_with(s.as_str()))
        {
            format!("<a href=\"{middle}\"{rel_attr}{target_attr}>{middle}</a>")
        } else {
            middle
        };
        out.push_str(head);
        out.push_str(&link);
        out.push_str(&tail);
        out.push_str(&after[..blank]);
        words = &after[blank..];
    }
    Ok(out)
}

/// A word's leading `(`, `<` (escaped), the word, and its trailing `)`, `>`, `.`, `,`,
/// except the closing brackets that balance opening ones inside the word.
fn split_punctuation(word: &str) -> (&str, String, String) {
    let mut head_len = 0;
    loop {
        let rest = &word[head_len..];
        if rest.starts_with(['(', '<']) {
            head_len += 1;
        } else if rest.starts_with("&lt;") {
            head_len += 4;
        } else {
            break;
        }
    }
    let (head, body) = word.split_at(head_len);
    let mut middle_len = body.len();
    loop {
        let rest = &body[..middle_len];
        if rest.ends_with("&gt;") {
            middle_len -= 4;
        } else if rest.ends_with([')', '>', '.', ',', '\n']) {
            middle_len -= 1;
        } else {
            break;
        }
    }
    let mut middle = body[..middle_len].to_string();
    let mut tail = body[middle_len..].to_string();
    for (open, close) in [("(", ")"), ("<", ">"), ("&lt;", "&gt;")] {
        let opened = middle.matches(open).count();
        if opened <= middle.matches(close).count() {
            continue;
        }
        for _ in 0..opened.min(tail.matches(close).count()) {
            let Some(end) = tail.find(close).map(|i| i + close.len()) else {
                break;
            };
            middle.push_str(&tail[..end]);
            tail.drain(..end);
        }
    }
    (head, middle, tail)
}

type Compiled = LazyLock<Result<Pattern, PyreError>>;

/// What Jinja takes for a web address.
static HTTP: Compiled = LazyLock::new(|| {
    Pattern::new(
        concat!(
            r"^((https?://|www\.)(([\w%-]+\.)+)?([a-z]{2,63}|xn--[\w%]{2,59})",
            r"|([\w%-]{2,63}\.)+(com|net|int|edu|gov|org|info|mil)",
            r"|(https?://)((([\d]{1,3})(\.[\d]{1,3}){3})|(\[([\da-f]{0,4}:){2}([\da-f]{0,4}:?){1,6}])))",
            r"(?::[\d]{1,5})?(?:[/?#]\S*)?$"
        ),
        true,
        false,
        Anchor::Match,
    )
});

/// What Jinja takes for an e-mail address.
static EMAIL: Compiled =
    LazyLock::new(|| Pattern::new(r"^\S+@\w[\w.-]*\.\w+$", false, false, Anchor::Match));

/// A URI scheme prefix `urlize` accepts in `extra_schemes`.
static URI_SCHEME: Compiled =
    LazyLock::new(|| Pattern::new(r"^([\w.+-]{2,}:(/){0,2})$", false, false, Anchor::Full));

/// Whether one of the patterns above matches `text`.
fn matches(compiled: &'static Compiled, text: &str) -> Result<bool, Error> {
    let pattern = compiled.as_ref().map_err(|e| invalid(e.to_string()))?;
    pattern.is_match(text).map_err(super::re_error)
}

/// Jinja's `xmlattr(autospace=True)`: the mapping's items that are not none as
/// `key="value"` attributes, escaped, a space before them unless `autospace` is
/// false; a key holding whitespace, `/`, `>` or `=` is refused.
fn xmlattr(
    state: &State,
    value: &Value,
    args: Rest<Value>,
    kwargs: Kwargs,
) -> Result<String, Error> {
    ensure_defined(state, value)?;
    let [autospace] = super::python_args("xmlattr", ["autospace"], &args, &kwargs)?;
    if value.kind() != ValueKind::Map {
        return Err(invalid(format!(
            "'{}' object has no attribute 'items'",
            super::python_type(value)
        )));
    }
    let mut items = Vec::new();
    for key in value.try_iter()? {
        let item = value.get_item(&key)?;
        if item.is_none() || item.is_undefined() {
            continue;
        }
        let Some(name) = key.as_str() else {
            return Err(invalid(format!(
                "expected string or bytes-like object, got '{}'",
                super::python_type(&key)
            )));
        };
        if name.contains(|c: char| c.is_ascii_whitespace() || c == '\x0b' || "/>=".contains(c)) {
            let mut repr = String::new();
            crate::template::python::py_repr(&key, &mut repr)?;
            return Err(invalid(format!(
                "Invalid character in attribute name: {repr}"
            )));
        }
        items.push(format!(
            "{}=\"{}\"",
            html_escape(name),
            html_escape(&py_str(&item)?)
        ));
    }
    let attributes = items.join(" ");
    if autospace.is_none_or(|a| a.is_true()) && !attributes.is_empty() {
        return Ok(format!(" {attributes}"));
    }
    Ok(attributes)
}

#[cfg(test)]
mod tests {
    use crate::template::filters::testing::{error, eval, render};
    use serde_json::json;

    /// Outputs ansible-playbook 2.19 printed for the same expressions.
    #[test]
    fn jinjas_html_filters() {
        assert_eq!(
            render(
                r#"{{ 'a/"b<>&' | e }}|{{ 'a"b<c>&d' | forceescape }}|{{ 5 | forceescape }}|{{ none | forceescape }}"#
            ),
            "a/&#34;b&lt;&gt;&amp;|a&#34;b&lt;c&gt;&amp;d|5|None"
        );
        assert_eq!(
            eval(
                r#"['<p>Hello <b>World</b>&amp; &lt;x&gt; &copy; &#65;&#x42;</p>
                  <!-- c -->  end' | striptags,
                  'a <unclosed' | striptags, 'ab<!-- open' | striptags,
                  'x &amp y &notit; &nbsp;z &ampx &#0; &#128; &#55296; &#127; &#x1F600; &#xZZ &; &copy2024 &Eacute;t' | striptags]"#
            ),
            json!([
                "Hello World& <x> © AB end",
                "a <unclosed",
                "ab<!-- open",
                "x & y ¬it; \u{a0}z &x \u{fffd} € \u{fffd}  😀 &#xZZ &; ©2024 Ét"
            ])
        );
        assert_eq!(
            eval(
                r#"['see http://example.com/a?b=1 and www.foo.org or mail me@example.com' | urlize,
                  'see http://example.com/a-very-long-path-name-here ok' | urlize(20),
                  'see http://example.com/x' | urlize(nofollow=true, target='_blank'),
                  '(http://example.com/x). <https://a.b/c> (see http://a.com/(x))' | urlize,
                  'foo.com bar.org/x a.com x.io mailto:a@b.co mailto:a@b @a@b.co http://[::1]/x' | urlize,
                  'ftp:x git+ssh://h/r ftp:' | urlize(rel='me  you', extra_schemes=['ftp:', 'git+ssh://'])]"#
            ),
            json!([
                "see <a href=\"http://example.com/a?b=1\" rel=\"noopener\">http://example.com/a?b=1</a> and <a href=\"https://www.foo.org\" rel=\"noopener\">www.foo.org</a> or mail <a href=\"mailto:me@example.com\">me@example.com</a>",
                "see <a href=\"http://example.com/a-very-long-path-name-here\" rel=\"noopener\">http://example.com/a...</a> ok",
                "see <a href=\"http://example.com/x\" rel=\"nofollow noopener\" target=\"_blank\">http://example.com/x</a>",
                "(<a href=\"http://example.com/x\" rel=\"noopener\">http://example.com/x</a>). &lt;https://a.b/c&gt; (see <a href=\"http://a.com/(x)\" rel=\"noopener\">http://a.com/(x)</a>)",
                "<a href=\"https://foo.com\" rel=\"noopener\">foo.com</a> <a href=\"https://bar.org/x\" rel=\"noopener\">bar.org/x</a> a.com x.io <a href=\"mailto:a@b.co\">a@b.co</a> mailto:a@b @a@b.co <a href=\"http://[::1]/x\" rel=\"noopener\">http://[::1]/x</a>",
                "<a href=\"ftp:x\" rel=\"me noopener you\">ftp:x</a> <a href=\"git+ssh://h/r\" rel=\"me noopener you\">git+ssh://h/r</a> ftp:"
            ])
        );
        assert_eq!(
            render(
                r#"[{{ {'class':'my list','id':'list-1','n':5,'q':'a"<b>&','z':None} | xmlattr }}][{{ {'a':1} | xmlattr(false) }}][{{ {} | xmlattr }}]"#
            ),
            r#"[ class="my list" id="list-1" n="5" q="a&#34;&lt;b&gt;&amp;"][a="1"][]"#
        );
        assert!(
            error("{'a b': 1} | xmlattr").contains("Invalid character in attribute name: 'a b'")
        );
        assert!(error("'x' | xmlattr").contains("'str' object has no attribute 'items'"));
        assert!(
            error("'x' | urlize(extra_schemes=['f'])")
                .contains("'f' is not a valid URI scheme prefix.")
        );
    }
}
