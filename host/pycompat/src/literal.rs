//! Python's `ast.literal_eval` as Ansible's INI plugin applies it to variable values:
//! numbers, strings (any prefix, escapes, implicit concatenation), `True`/`False`/`None`,
//! tuples, lists, dicts, sets, `set()`, signed numbers and complex sums; comments after
//! the value are ignored. Anything else is not a literal and the INI plugin keeps the text.
//!
//! Values become JSON the way Ansible coerces them: tuples and sets become lists, bytes
//! become text, complex numbers and `...` become their text.

use serde_json::{Map, Number, Value};

/// The deepest nesting Python's tokenizer accepts ("too many nested parentheses").
const MAX_NESTING: usize = 200;

/// Evaluates `text` as a Python literal: `Ok(Some(value))` for a literal, `Ok(None)` when
/// it is not one (Python raises a syntax or value error), and an error where Python raises
/// another error (an unhashable dict key or set member).
pub fn literal_eval(text: &str) -> Result<Option<Value>, String> {
    let source = text.trim_start_matches([' ', '\t']);
    let Some(tokens) = tokenize(source) else {
        return Ok(None);
    };
    let mut parser = Parser {
        tokens,
        pos: 0,
        depth: 0,
    };
    let Some(node) = parser.top() else {
        return Ok(None);
    };
    to_json(&node.value)
}

/// A Python value a literal can denote.
#[derive(Clone, Debug, PartialEq)]
enum Py {
    None,
    Bool(bool),
    Int(i128),
    Float(f64),
    Complex(f64, f64),
    Str(String),
    Bytes(Vec<u8>),
    Ellipsis,
    Tuple(Vec<Py>),
    List(Vec<Py>),
    Set(Vec<Py>),
    Dict(Vec<(Py, Py)>),
}

/// What kind of syntax node produced a value: `literal_eval` allows a sign only before a
/// number constant and `+`/`-` only between a real and an imaginary constant.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Constant,
    Signed,
    Other,
}

#[derive(Debug)]
struct Node {
    value: Py,
    kind: Kind,
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Int(i128),
    Float(f64),
    Imaginary(f64),
    Str(String),
    Bytes(Vec<u8>),
    /// An f-string: valid syntax, never a literal.
    FString,
    Name(String),
    Punct(char),
    Ellipsis,
}

fn is_ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Splits `src` into tokens; `None` on anything Python's tokenizer rejects or that cannot
/// be part of a literal.
fn tokenize(src: &str) -> Option<Vec<Token>> {
    let chars: Vec<char> = src.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == ' ' || c == '\t' || c == '\x0c' || c == '\n' || c == '\r' {
            i += 1;
        } else if c == '#' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c.is_ascii_digit()
            || (c == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit))
        {
            let (token, next) = number(&chars, i)?;
            tokens.push(token);
            i = next;
        } else if c == '.' {
            if chars.get(i + 1) == Some(&'.') && chars.get(i + 2) == Some(&'.') {
                tokens.push(Token::Ellipsis);
                i += 3;
            } else {
                return None;
            }
        } else if c == '\'' || c == '"' {
            let (token, next) = string(&chars, i, "")?;
            tokens.push(token);
            i = next;
        } else if is_ident_start(c) {
            let start = i;
            while i < chars.len() && is_ident_char(chars[i]) {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            if chars.get(i).is_some_and(|q| *q == '\'' || *q == '"') && is_string_prefix(&word) {
                let (token, next) = string(&chars, i, &word.to_ascii_lowercase())?;
                tokens.push(token);
                i = next;
            } else {
                tokens.push(Token::Name(word));
            }
        } else if "()[]{},:+-".contains(c) {
            tokens.push(Token::Punct(c));
            i += 1;
        } else {
            return None;
        }
    }
    Some(tokens)
}

fn is_string_prefix(word: &str) -> bool {
    matches!(
        word.to_ascii_lowercase().as_str(),
        "r" | "u" | "b" | "br" | "rb" | "f" | "fr" | "rf"
    )
}

/// `digit (["_"] digit)*` in `radix` from `i`; the digits without underscores and the end.
fn digit_part(chars: &[char], mut i: usize, radix: u32) -> (String, usize) {
    let mut digits = String::new();
    while i < chars.len() {
        if chars[i].is_digit(radix) {
            digits.push(chars[i]);
            i += 1;
        } else if chars[i] == '_'
            && !digits.is_empty()
            && chars.get(i + 1).is_some_and(|d| d.is_digit(radix))
        {
            i += 1;
        } else {
            break;
        }
    }
    (digits, i)
}

/// A numeric literal starting at `start`.
fn number(chars: &[char], start: usize) -> Option<(Token, usize)> {
    let prefixed = chars
        .get(start + 1)
        .filter(|_| chars[start] == '0')
        .and_then(|p| match p.to_ascii_lowercase() {
            'x' => Some(16),
            'o' => Some(8),
            'b' => Some(2),
            _ => None,
        });
    if let Some(radix) = prefixed {
        // An underscore may follow the prefix: 0x_ff.
        let mut i = start + 2;
        if chars.get(i) == Some(&'_') {
            i += 1;
        }
        let (digits, end) = digit_part(chars, i, radix);
        if digits.is_empty() || chars.get(end).is_some_and(|c| is_ident_char(*c)) {
            return None;
        }
        return Some((Token::Int(i128::from_str_radix(&digits, radix).ok()?), end));
    }
    let (int_part, mut i) = digit_part(chars, start, 10);
    let mut text = int_part.clone();
    let mut is_float = false;
    if chars.get(i) == Some(&'.') {
        is_float = true;
        let (frac, end) = digit_part(chars, i + 1, 10);
        text.push('.');
        text.push_str(&frac);
        i = end;
    }
    if chars.get(i).is_some_and(|e| *e == 'e' || *e == 'E') {
        let mut j = i + 1;
        let mut exponent = String::from("e");
        if let Some(sign) = chars.get(j).filter(|s| **s == '+' || **s == '-') {
            exponent.push(*sign);
            j += 1;
        }
        let (digits, end) = digit_part(chars, j, 10);
        if digits.is_empty() {
            return None;
        }
        exponent.push_str(&digits);
        text.push_str(&exponent);
        is_float = true;
        i = end;
    }
    if chars.get(i).is_some_and(|j| *j == 'j' || *j == 'J') {
        let value: f64 = text.parse().ok()?;
        if chars.get(i + 1).is_some_and(|c| is_ident_char(*c)) {
            return None;
        }
        return Some((Token::Imaginary(value), i + 1));
    }
    if chars.get(i).is_some_and(|c| is_ident_char(*c)) {
        return None;
    }
    if is_float {
        return Some((Token::Float(text.parse().ok()?), i));
    }
    // Decimal integers other than zero may not start with 0.
    if int_part.starts_with('0') && int_part.chars().any(|d| d != '0') {
        return None;
    }
    Some((Token::Int(int_part.parse().ok()?), i))
}

/// A string literal whose opening quote is at `start`, with `prefix` (lowercase).
fn string(chars: &[char], start: usize, prefix: &str) -> Option<(Token, usize)> {
    let quote = chars[start];
    let triple = chars.get(start + 1) == Some(&quote) && chars.get(start + 2) == Some(&quote);
    let raw = prefix.contains('r');
    let bytes = prefix.contains('b');
    let mut i = start + if triple { 3 } else { 1 };
    let mut out: Vec<u32> = Vec::new();
    loop {
        let c = *chars.get(i)?;
        if c == quote
            && (!triple || (chars.get(i + 1) == Some(&quote) && chars.get(i + 2) == Some(&quote)))
        {
            i += if triple { 3 } else { 1 };
            break;
        }
        if c == '\n' && !triple {
            return None;
        }
        if bytes && !c.is_ascii() {
            return None;
        }
        if c != '\\' {
            out.push(u32::from(c));
            i += 1;
            continue;
        }
        let next = *chars.get(i + 1)?;
        if raw {
            out.push(u32::from('\\'));
            out.push(u32::from(next));
            i += 2;
            continue;
        }
        i += 2;
        match next {
            '\n' => {}
            '\\' | '\'' | '"' => out.push(u32::from(next)),
            'a' => out.push(7),
            'b' => out.push(8),
            'f' => out.push(12),
            'n' => out.push(10),
            'r' => out.push(13),
            't' => out.push(9),
            'v' => out.push(11),
            '0'..='7' => {
                let mut value = next.to_digit(8)?;
                for _ in 0..2 {
                    match chars.get(i).and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            value = value * 8 + d;
                            i += 1;
                        }
                        None => break,
                    }
                }
                out.push(if bytes { value & 0xff } else { value });
            }
            'x' => {
                out.push(hex_escape(chars, i, 2)?);
                i += 2;
            }
            'u' | 'U' if !bytes => {
                let len = if next == 'u' { 4 } else { 8 };
                out.push(hex_escape(chars, i, len)?);
                i += len;
            }
            // Character names need Unicode's name table, which we do not carry.
            'N' if !bytes => return None,
            other => {
                out.push(u32::from('\\'));
                out.push(u32::from(other));
            }
        }
    }
    let token = if prefix.contains('f') {
        Token::FString
    } else if bytes {
        Token::Bytes(out.iter().map(|b| (*b & 0xff) as u8).collect())
    } else {
        Token::Str(
            out.iter()
                .map(|c| char::from_u32(*c))
                .collect::<Option<String>>()?,
        )
    };
    Some((token, i))
}

fn hex_escape(chars: &[char], i: usize, len: usize) -> Option<u32> {
    let digits: String = chars.get(i..i + len)?.iter().collect();
    if !digits.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let value = u32::from_str_radix(&digits, 16).ok()?;
    (value <= 0x10ffff).then_some(value)
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    fn at_punct(&self, c: char) -> bool {
        self.peek() == Some(&Token::Punct(c))
    }

    fn eat(&mut self, c: char) -> Option<()> {
        self.at_punct(c).then(|| self.pos += 1)
    }

    /// The whole input: one value or a bare tuple, then nothing.
    fn top(&mut self) -> Option<Node> {
        let node = self.values(None)?;
        (self.pos == self.tokens.len()).then_some(node)
    }

    /// A value, or a tuple when commas follow, up to `close` (or the end).
    fn values(&mut self, close: Option<char>) -> Option<Node> {
        let first = self.single()?;
        if !self.at_punct(',') {
            return Some(first);
        }
        let mut items = vec![first.value];
        while self.eat(',').is_some() {
            let done = match close {
                Some(c) => self.at_punct(c),
                None => self.peek().is_none(),
            };
            if done {
                break;
            }
            items.push(self.single()?.value);
        }
        Some(Node {
            value: Py::Tuple(items),
            kind: Kind::Other,
        })
    }

    /// One value: an atom, a signed number, or a real plus/minus an imaginary number.
    fn single(&mut self) -> Option<Node> {
        let left = if self.at_punct('+') || self.at_punct('-') {
            let negative = self.at_punct('-');
            self.pos += 1;
            let operand = self.atom()?;
            if operand.kind != Kind::Constant {
                return None;
            }
            let value = match operand.value {
                Py::Int(i) if negative => Py::Int(-i),
                Py::Float(f) if negative => Py::Float(-f),
                Py::Complex(re, im) if negative => Py::Complex(-re, -im),
                v @ (Py::Int(_) | Py::Float(_) | Py::Complex(..)) => v,
                _ => return None,
            };
            Node {
                value,
                kind: Kind::Signed,
            }
        } else {
            self.atom()?
        };
        if !(self.at_punct('+') || self.at_punct('-')) {
            return Some(left);
        }
        let negative = self.at_punct('-');
        self.pos += 1;
        let right = self.atom()?;
        let real = match left.value {
            Py::Int(i) if left.kind != Kind::Other => i as f64,
            Py::Float(f) if left.kind != Kind::Other => f,
            _ => return None,
        };
        match (right.kind, right.value) {
            (Kind::Constant, Py::Complex(re, im)) => {
                let (re, im) = if negative {
                    (real - re, -im)
                } else {
                    (real + re, im)
                };
                Some(Node {
                    value: Py::Complex(re, im),
                    kind: Kind::Other,
                })
            }
            _ => None,
        }
    }

    fn atom(&mut self) -> Option<Node> {
        let token = self.peek()?.clone();
        self.pos += 1;
        let constant = |value| {
            Some(Node {
                value,
                kind: Kind::Constant,
            })
        };
        match token {
            Token::Int(i) => constant(Py::Int(i)),
            Token::Float(f) => constant(Py::Float(f)),
            Token::Imaginary(f) => constant(Py::Complex(0.0, f)),
            Token::Ellipsis => constant(Py::Ellipsis),
            Token::FString => None,
            Token::Str(s) => {
                let mut s = s;
                while let Some(Token::Str(more)) = self.peek() {
                    s.push_str(more);
                    self.pos += 1;
                }
                if matches!(self.peek(), Some(Token::Bytes(_) | Token::FString)) {
                    return None;
                }
                constant(Py::Str(s))
            }
            Token::Bytes(b) => {
                let mut b = b;
                while let Some(Token::Bytes(more)) = self.peek() {
                    b.extend_from_slice(more);
                    self.pos += 1;
                }
                if matches!(self.peek(), Some(Token::Str(_) | Token::FString)) {
                    return None;
                }
                constant(Py::Bytes(b))
            }
            Token::Name(name) => match name.as_str() {
                "True" => Some(Node {
                    value: Py::Bool(true),
                    kind: Kind::Other,
                }),
                "False" => Some(Node {
                    value: Py::Bool(false),
                    kind: Kind::Other,
                }),
                "None" => Some(Node {
                    value: Py::None,
                    kind: Kind::Other,
                }),
                "set" => {
                    self.eat('(')?;
                    self.eat(')')?;
                    Some(Node {
                        value: Py::Set(Vec::new()),
                        kind: Kind::Other,
                    })
                }
                _ => None,
            },
            Token::Punct('(') => self.nested(|p| {
                if p.eat(')').is_some() {
                    return Some(Node {
                        value: Py::Tuple(Vec::new()),
                        kind: Kind::Other,
                    });
                }
                let inner = p.values(Some(')'))?;
                p.eat(')')?;
                Some(inner)
            }),
            Token::Punct('[') => self.nested(|p| {
                let items = p.sequence(']')?;
                Some(Node {
                    value: Py::List(items),
                    kind: Kind::Other,
                })
            }),
            Token::Punct('{') => self.nested(Parser::braces),
            Token::Punct(_) => None,
        }
    }

    fn nested(&mut self, f: impl FnOnce(&mut Parser) -> Option<Node>) -> Option<Node> {
        self.depth += 1;
        if self.depth >= MAX_NESTING {
            return None;
        }
        let node = f(self);
        self.depth -= 1;
        node
    }

    /// Comma-separated values up to `close` (consumed), a trailing comma allowed.
    fn sequence(&mut self, close: char) -> Option<Vec<Py>> {
        let mut items = Vec::new();
        while self.eat(close).is_none() {
            items.push(self.single()?.value);
            if self.eat(',').is_none() {
                self.eat(close)?;
                break;
            }
        }
        Some(items)
    }

    /// A dict or a set, after `{`.
    fn braces(&mut self) -> Option<Node> {
        if self.eat('}').is_some() {
            return Some(Node {
                value: Py::Dict(Vec::new()),
                kind: Kind::Other,
            });
        }
        let first = self.single()?.value;
        if self.eat(':').is_none() {
            let mut items = vec![first];
            if self.eat(',').is_some() {
                items.extend(self.sequence('}')?);
            } else {
                self.eat('}')?;
            }
            return Some(Node {
                value: Py::Set(items),
                kind: Kind::Other,
            });
        }
        let mut pairs = vec![(first, self.single()?.value)];
        while self.eat(',').is_some() {
            if self.eat('}').is_some() {
                return Some(Node {
                    value: Py::Dict(pairs),
                    kind: Kind::Other,
                });
            }
            let key = self.single()?.value;
            self.eat(':')?;
            pairs.push((key, self.single()?.value));
        }
        self.eat('}')?;
        Some(Node {
            value: Py::Dict(pairs),
            kind: Kind::Other,
        })
    }
}

fn type_name(v: &Py) -> &'static str {
    match v {
        Py::List(_) => "list",
        Py::Dict(_) => "dict",
        Py::Set(_) => "set",
        _ => "tuple",
    }
}

/// Python's hashability: lists, dicts and sets are not, nor tuples that hold one.
fn check_hashable(v: &Py) -> Result<(), String> {
    match v {
        Py::List(_) | Py::Dict(_) | Py::Set(_) => {
            Err(format!("unhashable type: '{}'", type_name(v)))
        }
        Py::Tuple(items) => items.iter().try_for_each(check_hashable),
        _ => Ok(()),
    }
}

/// Python's `str()` of a float inside a complex number (integral values lose `.0`).
fn complex_part(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 1e16 {
        format!("{}", f as i64)
    } else {
        format!("{f}")
    }
}

/// The text Python's `str()` gives a complex number.
fn complex_text(re: f64, im: f64) -> String {
    if re == 0.0 && re.is_sign_positive() {
        format!("{}j", complex_part(im))
    } else {
        let sign = if im < 0.0 || (im == 0.0 && im.is_sign_negative()) {
            '-'
        } else {
            '+'
        };
        format!("({}{sign}{}j)", complex_part(re), complex_part(im.abs()))
    }
}

/// The JSON form of a value; `Ok(None)` for numbers JSON cannot hold (beyond 64 bits,
/// infinities), which are then kept as text.
fn to_json(v: &Py) -> Result<Option<Value>, String> {
    Ok(Some(match v {
        Py::None => Value::Null,
        Py::Bool(b) => Value::Bool(*b),
        Py::Int(i) => match (i64::try_from(*i), u64::try_from(*i)) {
            (Ok(n), _) => Value::from(n),
            (_, Ok(n)) => Value::from(n),
            _ => return Ok(None),
        },
        Py::Float(f) => match Number::from_f64(*f) {
            Some(n) if f.is_finite() => Value::Number(n),
            _ => return Ok(None),
        },
        Py::Complex(re, im) => Value::String(complex_text(*re, *im)),
        Py::Str(s) => Value::String(s.clone()),
        Py::Bytes(b) => Value::String(String::from_utf8_lossy(b).into_owned()),
        Py::Ellipsis => Value::String("...".into()),
        Py::Tuple(items) | Py::List(items) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                match to_json(item)? {
                    Some(value) => out.push(value),
                    None => return Ok(None),
                }
            }
            Value::Array(out)
        }
        Py::Set(items) => {
            items.iter().try_for_each(check_hashable)?;
            let mut unique: Vec<&Py> = Vec::new();
            for item in items {
                if !unique.contains(&item) {
                    unique.push(item);
                }
            }
            let mut out = Vec::with_capacity(unique.len());
            for item in unique {
                match to_json(item)? {
                    Some(value) => out.push(value),
                    None => return Ok(None),
                }
            }
            Value::Array(out)
        }
        Py::Dict(pairs) => {
            let mut map = Map::new();
            for (k, value) in pairs {
                check_hashable(k)?;
                let (Some(key), Some(value)) = (to_json(k)?, to_json(value)?) else {
                    return Ok(None);
                };
                let key = match key {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                map.insert(key, value);
            }
            Value::Object(map)
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn eval(s: &str) -> Option<Value> {
        literal_eval(s).unwrap()
    }

    #[test]
    fn numbers() {
        assert_eq!(eval("5"), Some(json!(5)));
        assert_eq!(eval("-5"), Some(json!(-5)));
        assert_eq!(eval("+5"), Some(json!(5)));
        assert_eq!(eval("1_000"), Some(json!(1000)));
        assert_eq!(eval("0x1F"), Some(json!(31)));
        assert_eq!(eval("0o17"), Some(json!(15)));
        assert_eq!(eval("0b101"), Some(json!(5)));
        assert_eq!(eval("1.5"), Some(json!(1.5)));
        assert_eq!(eval("1e3"), Some(json!(1000.0)));
        assert_eq!(eval(".5"), Some(json!(0.5)));
        assert_eq!(eval("5."), Some(json!(5.0)));
        assert_eq!(eval("00"), Some(json!(0)));
        assert_eq!(eval("-(1)"), Some(json!(-1)));
    }

    #[test]
    fn not_literals_stay_text() {
        for s in [
            "007",
            "1__0",
            "1_",
            "1abc",
            "--5",
            "-True",
            "1+2",
            "true",
            "yes",
            "FALSE",
            "hello world",
            "x",
            "a.b",
            "[1, 2",
            "1 2",
            "",
            "f'x'",
            "{**a}",
            "1.2.3",
            "192.168.1.1",
            "'a' b'c'",
            "(1+2j)+1",
        ] {
            assert_eq!(eval(s), None, "{s}");
        }
    }

    #[test]
    fn constants_and_strings() {
        assert_eq!(eval("True"), Some(json!(true)));
        assert_eq!(eval("None"), Some(json!(null)));
        assert_eq!(eval("'5'"), Some(json!("5")));
        assert_eq!(eval("\"a b\""), Some(json!("a b")));
        assert_eq!(eval("'a' \"b\""), Some(json!("ab")));
        assert_eq!(
            eval(r"'tab\there\x41\u00e9\101'"),
            Some(json!("tab\there\u{41}é\u{41}"))
        );
        assert_eq!(eval(r"r'\d+'"), Some(json!(r"\d+")));
        assert_eq!(eval(r"'\d'"), Some(json!(r"\d")));
        assert_eq!(eval("b'raw'"), Some(json!("raw")));
        assert_eq!(eval("'''tri'ple'''"), Some(json!("tri'ple")));
        assert_eq!(eval("..."), Some(json!("...")));
    }

    #[test]
    fn containers() {
        assert_eq!(eval("[1, 'a', [2]]"), Some(json!([1, "a", [2]])));
        assert_eq!(eval("(1, 2)"), Some(json!([1, 2])));
        assert_eq!(eval("1, 2,"), Some(json!([1, 2])));
        assert_eq!(eval("()"), Some(json!([])));
        assert_eq!(
            eval("{'a': 1, 2: [3], True: None,}"),
            Some(json!({"a": 1, "2": [3], "true": null}))
        );
        assert_eq!(eval("{1, 2, 1}"), Some(json!([1, 2])));
        assert_eq!(eval("set()"), Some(json!([])));
        assert_eq!(eval("{}"), Some(json!({})));
    }

    #[test]
    fn comments_and_leading_blanks() {
        assert_eq!(eval("  23 # a comment"), Some(json!(23)));
        assert_eq!(eval("hello # a comment"), None);
    }

    #[test]
    fn complex_numbers_become_text() {
        assert_eq!(eval("2j"), Some(json!("2j")));
        assert_eq!(eval("1+2j"), Some(json!("(1+2j)")));
        assert_eq!(eval("-1.5-2j"), Some(json!("(-1.5-2j)")));
    }

    #[test]
    fn unhashable_keys_are_errors() {
        assert_eq!(
            literal_eval("{[1]: 2}").unwrap_err(),
            "unhashable type: 'list'"
        );
        assert!(literal_eval("{(1, [2])}").is_err());
    }

    #[test]
    fn numbers_json_cannot_hold_stay_text() {
        assert_eq!(eval("123456789012345678901234567890"), None);
        assert_eq!(eval("1e400"), None);
        assert_eq!(
            eval("18446744073709551615"),
            Some(json!(18446744073709551615u64))
        );
    }

    #[test]
    fn deep_nesting_is_not_a_literal() {
        let deep = format!("{}1{}", "[".repeat(250), "]".repeat(250));
        assert_eq!(eval(&deep), None);
    }
}
