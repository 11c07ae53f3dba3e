//! Python's `json.loads`, as ansible-core reads a module's output with it: the text is
//! the output's bytes as Python decodes them (`surrogateescape`: each byte that is not
//! UTF-8 one character), the errors are Python's (`Expecting value: line 1 column 7
//! (char 6)`), `NaN`, `Infinity` and `-Infinity` are numbers, integers have no bound,
//! a repeated key keeps its first place and its last value, and nesting deeper than
//! Python's recursion limit allows is refused with Python's `RecursionError` text.
//!
//! A JSON value cannot hold what Python's float can beyond it: `NaN` and the
//! infinities (`Infinity`, or a literal such as `1e400` too large for a float) are
//! kept as the text `json.dumps` writes for them (`"NaN"`, `"Infinity"`,
//! `"-Infinity"`), and an integer too large for 64 bits as the nearest float. A string
//! holding a lone surrogate (an escaped `\udcff`, or bytes that are not UTF-8) is
//! refused as ansible-core 2.19 refuses to deserialize it, or, when that check is off
//! (`MODULE_STRICT_UTF8_RESPONSE`), each surrogate becomes U+FFFD.

use serde_json::{Map, Number, Value};

/// How deep objects and arrays may nest. ansible-core's `json.loads` stops near 970
/// levels (Python's recursion limit of 1000 frames, less those of its caller), but a
/// result nested deeper than about 500 already fails there, when its worker hands it
/// over (pickling it hits the same limit); deeper values are refused here, so that
/// nothing downstream recurses without bound.
pub const MAX_DEPTH: usize = 512;

/// Why a text is not the JSON `json.loads` reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// A `JSONDecodeError`: what was expected, and where (in characters).
    #[error("{msg}: line {line} column {column} (char {position})")]
    Decode {
        msg: &'static str,
        line: usize,
        column: usize,
        position: usize,
    },
    /// A `RecursionError`: the objects (or arrays) nest too deep.
    #[error("maximum recursion depth exceeded while decoding a JSON {kind} from a unicode string")]
    TooDeep { kind: &'static str },
    /// A string holds lone surrogates, which UTF-8 cannot encode: Python's
    /// `UnicodeEncodeError` text.
    #[error("'utf-8' codec can't encode {0}: surrogates not allowed")]
    Surrogates(String),
}

/// Parses `text` as Python's `json.loads(text.decode(errors='surrogateescape'))` does;
/// a lone surrogate in a string is refused when `strict`, else replaced by U+FFFD.
pub fn loads(text: &[u8], strict: bool) -> Result<Value, LoadError> {
    let mut p = Parser {
        s: text,
        depth: 0,
        strict,
    };
    let start = p.ws(0);
    let (value, end) = match p.value(start) {
        Ok(v) => v,
        Err(Stop::Expecting(at)) => return Err(p.decode("Expecting value", at)),
        Err(Stop::Error(e)) => return Err(e),
    };
    let end = p.ws(end);
    if end != text.len() {
        return Err(p.decode("Extra data", end));
    }
    Ok(value)
}

/// The number of characters Python decodes `bytes` to (`surrogateescape`).
pub fn char_count(bytes: &[u8]) -> usize {
    bytes
        .utf8_chunks()
        .map(|c| c.valid().chars().count() + c.invalid().len())
        .sum()
}

/// Why a value could not be read where one was expected.
enum Stop {
    /// No value starts here (Python's `StopIteration`): "Expecting value" at its index.
    Expecting(usize),
    /// An error raised while reading it.
    Error(LoadError),
}

impl From<LoadError> for Stop {
    fn from(e: LoadError) -> Self {
        Stop::Error(e)
    }
}

struct Parser<'a> {
    s: &'a [u8],
    depth: usize,
    /// Whether a lone surrogate is refused.
    strict: bool,
}

impl Parser<'_> {
    /// A `JSONDecodeError` at byte `at`, placed as Python places it (in characters).
    fn decode(&self, msg: &'static str, at: usize) -> LoadError {
        let before = &self.s[..at.min(self.s.len())];
        let position = char_count(before);
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = match before.iter().rposition(|&b| b == b'\n') {
            Some(nl) => char_count(&before[nl + 1..]) + 1,
            None => position + 1,
        };
        LoadError::Decode {
            msg,
            line,
            column,
            position,
        }
    }

    /// The index after the JSON whitespace at `i`.
    fn ws(&self, mut i: usize) -> usize {
        while matches!(self.s.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            i += 1;
        }
        i
    }

    fn starts(&self, i: usize, word: &[u8]) -> bool {
        self.s.get(i..i + word.len()) == Some(word)
    }

    /// The value at `i` and the index after it.
    fn value(&mut self, i: usize) -> Result<(Value, usize), Stop> {
        let literal = |text: &str| Value::String(text.to_string());
        match self.s.get(i) {
            None => Err(Stop::Expecting(i)),
            Some(b'"') => {
                let (s, end) = self.string(i + 1)?;
                Ok((Value::String(s), end))
            }
            Some(b'{') => self.nested(i, "object"),
            Some(b'[') => self.nested(i, "array"),
            _ if self.starts(i, b"null") => Ok((Value::Null, i + 4)),
            _ if self.starts(i, b"true") => Ok((Value::Bool(true), i + 4)),
            _ if self.starts(i, b"false") => Ok((Value::Bool(false), i + 5)),
            _ if self.starts(i, b"NaN") => Ok((literal("NaN"), i + 3)),
            _ if self.starts(i, b"Infinity") => Ok((literal("Infinity"), i + 8)),
            _ if self.starts(i, b"-Infinity") => Ok((literal("-Infinity"), i + 9)),
            _ => self.number(i).ok_or(Stop::Expecting(i)),
        }
    }

    /// An object or array, one level deeper.
    fn nested(&mut self, i: usize, kind: &'static str) -> Result<(Value, usize), Stop> {
        if self.depth >= MAX_DEPTH {
            return Err(LoadError::TooDeep { kind }.into());
        }
        self.depth += 1;
        let r = if kind == "object" {
            self.object(i + 1)
        } else {
            self.array(i + 1)
        };
        self.depth -= 1;
        r
    }

    fn object(&mut self, i: usize) -> Result<(Value, usize), Stop> {
        let mut m = Map::new();
        let mut i = self.ws(i);
        if self.s.get(i) == Some(&b'}') {
            return Ok((Value::Object(m), i + 1));
        }
        loop {
            if self.s.get(i) != Some(&b'"') {
                return Err(self
                    .decode("Expecting property name enclosed in double quotes", i)
                    .into());
            }
            let (key, after) = self.string(i + 1)?;
            i = self.ws(after);
            if self.s.get(i) != Some(&b':') {
                return Err(self.decode("Expecting ':' delimiter", i).into());
            }
            i = self.ws(i + 1);
            let (value, after) = self.value(i)?;
            m.insert(key, value);
            i = self.ws(after);
            match self.s.get(i) {
                Some(b'}') => return Ok((Value::Object(m), i + 1)),
                Some(b',') => i = self.ws(i + 1),
                _ => return Err(self.decode("Expecting ',' delimiter", i).into()),
            }
        }
    }

    fn array(&mut self, i: usize) -> Result<(Value, usize), Stop> {
        let mut items = Vec::new();
        let mut i = self.ws(i);
        if self.s.get(i) == Some(&b']') {
            return Ok((Value::Array(items), i + 1));
        }
        loop {
            let (value, after) = self.value(i)?;
            items.push(value);
            i = self.ws(after);
            match self.s.get(i) {
                Some(b']') => return Ok((Value::Array(items), i + 1)),
                Some(b',') => i = self.ws(i + 1),
                _ => return Err(self.decode("Expecting ',' delimiter", i).into()),
            }
        }
    }

    /// A number as Python's scanner matches it (`-?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?`),
    /// or `None` when none starts at `i`.
    fn number(&self, i: usize) -> Option<(Value, usize)> {
        let digits = |from: usize| {
            self.s[from.min(self.s.len())..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count()
        };
        let mut end = i + usize::from(self.s.get(i) == Some(&b'-'));
        match self.s.get(end) {
            Some(b'0') => end += 1,
            Some(b'1'..=b'9') => end += digits(end),
            _ => return None,
        }
        let mut float = false;
        if self.s.get(end) == Some(&b'.') && digits(end + 1) > 0 {
            end += 1 + digits(end + 1);
            float = true;
        }
        if matches!(self.s.get(end), Some(b'e' | b'E')) {
            let sign = usize::from(matches!(self.s.get(end + 1), Some(b'+' | b'-')));
            let n = digits(end + 1 + sign);
            if n > 0 {
                end += 1 + sign + n;
                float = true;
            }
        }
        // ASCII by construction.
        let text = std::str::from_utf8(&self.s[i..end]).ok()?;
        let value = if !float && let Ok(n) = text.parse::<i64>() {
            Value::from(n)
        } else if !float && let Ok(n) = text.parse::<u64>() {
            Value::from(n)
        } else {
            float_value(text.parse::<f64>().ok()?)
        };
        Some((value, end))
    }

    /// The string whose text starts at `begin` (after its quote), and the index after
    /// its closing quote.
    fn string(&self, begin: usize) -> Result<(String, usize), LoadError> {
        let unterminated = || self.decode("Unterminated string starting at", begin - 1);
        let mut text = Text {
            strict: self.strict,
            ..Text::default()
        };
        let mut i = begin;
        loop {
            let run = self.s[i.min(self.s.len())..]
                .iter()
                .take_while(|&&b| b != b'"' && b != b'\\' && b >= 0x20)
                .count();
            text.push_bytes(&self.s[i..i + run]);
            i += run;
            match self.s.get(i) {
                None => return Err(unterminated()),
                Some(b'"') => return text.finish().map(|s| (s, i + 1)),
                Some(b'\\') => {}
                Some(_) => return Err(self.decode("Invalid control character at", i)),
            }
            let escaped = match self.s.get(i + 1) {
                None => return Err(unterminated()),
                Some(b'"') => '"',
                Some(b'\\') => '\\',
                Some(b'/') => '/',
                Some(b'b') => '\u{8}',
                Some(b'f') => '\u{c}',
                Some(b'n') => '\n',
                Some(b'r') => '\r',
                Some(b't') => '\t',
                Some(b'u') => {
                    let unit = self.hex4(i + 2)?;
                    i += 6;
                    if (0xD800..0xDC00).contains(&unit) && self.starts(i, b"\\u") {
                        let low = self.hex4(i + 2)?;
                        if (0xDC00..0xE000).contains(&low) {
                            let c = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                            text.push_unit(c);
                            i += 6;
                            continue;
                        }
                    }
                    text.push_unit(unit);
                    continue;
                }
                Some(_) => return Err(self.decode("Invalid \\escape", i)),
            };
            text.push_char(escaped);
            i += 2;
        }
    }

    /// The four hex digits at `at` (after a `\u`).
    fn hex4(&self, at: usize) -> Result<u32, LoadError> {
        self.s
            .get(at..at + 4)
            .filter(|h| h.iter().all(u8::is_ascii_hexdigit))
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .ok_or_else(|| self.decode("Invalid \\uXXXX escape", at - 1))
    }
}

/// A float as Python holds it, or the text `json.dumps` writes for what JSON cannot.
fn float_value(f: f64) -> Value {
    match Number::from_f64(f) {
        Some(n) => Value::Number(n),
        None if f.is_nan() => Value::String("NaN".into()),
        None if f > 0.0 => Value::String("Infinity".into()),
        None => Value::String("-Infinity".into()),
    }
}

/// A string being decoded, with the first run of lone surrogates it holds (Python's
/// character positions: each byte that is not UTF-8 one).
#[derive(Default)]
struct Text {
    /// Whether a lone surrogate is refused (else replaced by U+FFFD).
    strict: bool,
    text: String,
    /// Characters so far.
    chars: usize,
    /// The first lone surrogate, where it is, and how many follow it at once.
    lone: Option<(u32, usize, usize)>,
}

impl Text {
    fn push_char(&mut self, c: char) {
        self.text.push(c);
        self.chars += 1;
    }

    fn push_unit(&mut self, unit: u32) {
        match char::from_u32(unit) {
            Some(c) => self.push_char(c),
            None => self.surrogate(unit),
        }
    }

    fn push_bytes(&mut self, bytes: &[u8]) {
        for chunk in bytes.utf8_chunks() {
            self.text.push_str(chunk.valid());
            self.chars += chunk.valid().chars().count();
            for &b in chunk.invalid() {
                // As Python's surrogateescape decodes it.
                self.surrogate(0xDC00 + u32::from(b));
            }
        }
    }

    fn surrogate(&mut self, unit: u32) {
        if !self.strict {
            self.push_char(char::REPLACEMENT_CHARACTER);
            return;
        }
        match &mut self.lone {
            None => self.lone = Some((unit, self.chars, 1)),
            Some((_, at, n)) if *at + *n == self.chars => *n += 1,
            Some(_) => {}
        }
        self.chars += 1;
    }

    fn finish(self) -> Result<String, LoadError> {
        match self.lone {
            None => Ok(self.text),
            Some((unit, at, 1)) => Err(LoadError::Surrogates(format!(
                "character '\\u{unit:04x}' in position {at}"
            ))),
            Some((_, at, n)) => Err(LoadError::Surrogates(format!(
                "characters in position {at}-{}",
                at + n - 1
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(text: &str) -> String {
        loads(text.as_bytes(), true).unwrap_err().to_string()
    }

    #[test]
    fn errors_are_pythons() {
        // Each as Python 3.11's json.loads says it.
        for (text, said) in [
            ("", "Expecting value: line 1 column 1 (char 0)"),
            ("[", "Expecting value: line 1 column 2 (char 1)"),
            (
                "{",
                "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
            ),
            ("[1", "Expecting ',' delimiter: line 1 column 3 (char 2)"),
            (
                r#"{"a""#,
                "Expecting ':' delimiter: line 1 column 5 (char 4)",
            ),
            (r#"{"a":"#, "Expecting value: line 1 column 6 (char 5)"),
            (
                r#"{"a":1"#,
                "Expecting ',' delimiter: line 1 column 7 (char 6)",
            ),
            ("[1,]", "Expecting value: line 1 column 4 (char 3)"),
            (
                r#"{"a":1,}"#,
                "Expecting property name enclosed in double quotes: line 1 column 8 (char 7)",
            ),
            (
                r#"{"a":1 "b":2}"#,
                "Expecting ',' delimiter: line 1 column 8 (char 7)",
            ),
            (
                "\"abc",
                "Unterminated string starting at: line 1 column 1 (char 0)",
            ),
            (
                r#"{"a": "x\q"}"#,
                "Invalid \\escape: line 1 column 9 (char 8)",
            ),
            (
                r#""\ud800\u12""#,
                "Invalid \\uXXXX escape: line 1 column 9 (char 8)",
            ),
            (
                "{\"a\":\n\"b\u{1}\"}",
                "Invalid control character at: line 2 column 3 (char 8)",
            ),
            ("[1] x", "Extra data: line 1 column 5 (char 4)"),
            (
                "{\"a\": 1}\n{\"b\": 2}",
                "Extra data: line 2 column 1 (char 9)",
            ),
            ("1.", "Extra data: line 1 column 2 (char 1)"),
            ("[-]", "Expecting value: line 1 column 2 (char 1)"),
            ("[01]", "Expecting ',' delimiter: line 1 column 3 (char 2)"),
            // Positions count characters, not bytes.
            (
                "[\"é\" 1]",
                "Expecting ',' delimiter: line 1 column 6 (char 5)",
            ),
        ] {
            assert_eq!(err(text), said, "{text:?}");
        }
    }

    #[test]
    fn what_python_reads_json_cannot_hold_is_kept_as_its_text() {
        let v = loads(
            br#"{"v": NaN, "w": Infinity, "x": -Infinity, "big": 1e400, "n": 123456789012345678901234567890, "u": 18446744073709551615, "f": 1.5e3, "i": -7}"#,
            true,
        )
        .unwrap();
        assert_eq!(v["v"], "NaN");
        assert_eq!(v["w"], "Infinity");
        assert_eq!(v["x"], "-Infinity");
        assert_eq!(v["big"], "Infinity");
        assert_eq!(v["n"], json!(1.2345678901234568e29));
        assert_eq!(v["u"], json!(u64::MAX));
        assert_eq!(v["f"], json!(1500.0));
        assert_eq!(v["i"], json!(-7));
    }

    #[test]
    fn a_repeated_key_keeps_its_place_and_its_last_value() {
        let v = loads(br#"{"a": 1, "b": 2, "a": 3}"#, true).unwrap();
        assert_eq!(serde_json::to_string(&v).unwrap(), r#"{"a":3,"b":2}"#);
    }

    #[test]
    fn strings_decode_escapes_and_refuse_lone_surrogates() {
        let v = loads(br#"["a\"\\\/\b\f\n\r\t", "\u00e9\ud83d\ude00"]"#, true).unwrap();
        assert_eq!(v, json!(["a\"\\/\u{8}\u{c}\n\r\t", "é😀"]));
        assert_eq!(
            err(r#"{"out": "é\ud83d\ude00\udcff b"}"#),
            "'utf-8' codec can't encode character '\\udcff' in position 2: surrogates not allowed"
        );
        // Bytes that are not UTF-8, each a character of its own.
        assert_eq!(
            loads(b"{\"out\": \"ab\xff\xfecd\"}", true)
                .unwrap_err()
                .to_string(),
            "'utf-8' codec can't encode characters in position 2-3: surrogates not allowed"
        );
        assert_eq!(char_count(b"a\xff\xc3\xa9"), 3);
        // Or, unchecked, replaced.
        assert_eq!(
            loads(b"[\"a\xff\", \"\\udcff\"]", false).unwrap(),
            json!(["a\u{fffd}", "\u{fffd}"])
        );
    }

    #[test]
    fn nesting_is_bounded_as_pythons_recursion_is() {
        let deep = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
        assert!(loads(deep(MAX_DEPTH).as_bytes(), true).is_ok());
        assert_eq!(
            loads(deep(100_000).as_bytes(), true)
                .unwrap_err()
                .to_string(),
            "maximum recursion depth exceeded while decoding a JSON array from a unicode string"
        );
        let objects = format!(
            "{}1{}",
            "{\"a\":".repeat(MAX_DEPTH + 1),
            "}".repeat(MAX_DEPTH + 1)
        );
        assert_eq!(
            loads(objects.as_bytes(), true).unwrap_err(),
            LoadError::TooDeep { kind: "object" }
        );
    }
}
