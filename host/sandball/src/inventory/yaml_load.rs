//! YAML (and JSON) files read the way Ansible reads them: PyYAML's YAML 1.1 types
//! (`yes`/`no`/`on`/`off` booleans, `017` octal, `1_000`, `1:30` sexagesimal, dates),
//! `<<` merge keys, anchors and aliases, `!unsafe` strings; a file that is valid JSON is
//! read as JSON. Every node keeps its line so that callers can say where a problem is.
//!
//! saphyr resolves scalars with YAML 1.2 rules and does not report a scalar's style or core
//! tag, so each scalar is re-read from the source text between the previous node and it:
//! the quotes, the block indicator (`|`, `>`), the tag and the anchor are all there.

use super::error::InventoryError;
use regex::Regex;
use saphyr::{LoadableYamlNode, MarkedYaml, Scalar, YamlData};
use serde_json::{Map, Number, Value};
use std::collections::HashMap;
use std::sync::LazyLock;

/// A loaded YAML value with the line it starts on.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// 1-based line of the node in its file, when known.
    pub line: Option<usize>,
    /// The value.
    pub value: NodeValue,
}

/// The value of a [`Node`].
#[derive(Clone, Debug, PartialEq)]
pub enum NodeValue {
    /// A scalar (null, boolean, number or string).
    Scalar(Value),
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping, in document order, keys unique.
    Map(Vec<(Node, Node)>),
}

impl Node {
    fn new(line: Option<usize>, value: NodeValue) -> Self {
        Node { line, value }
    }

    /// The string value, if this is a string scalar.
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            NodeValue::Scalar(Value::String(s)) => Some(s),
            _ => None,
        }
    }

    /// Whether this is a null scalar.
    pub fn is_null(&self) -> bool {
        matches!(self.value, NodeValue::Scalar(Value::Null))
    }

    /// Python's truth value: false for null, `false`, zero, and empty strings and collections.
    pub fn is_truthy(&self) -> bool {
        match &self.value {
            NodeValue::Scalar(Value::Null) => false,
            NodeValue::Scalar(Value::Bool(b)) => *b,
            NodeValue::Scalar(Value::Number(n)) => n.as_f64() != Some(0.0),
            NodeValue::Scalar(Value::String(s)) => !s.is_empty(),
            NodeValue::Scalar(_) => true,
            NodeValue::Seq(items) => !items.is_empty(),
            NodeValue::Map(pairs) => !pairs.is_empty(),
        }
    }

    /// A short name of the node's type for messages ("a list", "a string", ...).
    pub fn type_name(&self) -> &'static str {
        match &self.value {
            NodeValue::Scalar(Value::Null) => "null",
            NodeValue::Scalar(Value::Bool(_)) => "a boolean",
            NodeValue::Scalar(Value::Number(n)) if n.is_f64() => "a float",
            NodeValue::Scalar(Value::Number(_)) => "an integer",
            NodeValue::Scalar(Value::String(_)) => "a string",
            NodeValue::Scalar(_) => "a value",
            NodeValue::Seq(_) => "a list",
            NodeValue::Map(_) => "a dictionary",
        }
    }

    /// The text a mapping key becomes in JSON (as Python's `json` writes non-string keys).
    pub fn key_text(&self) -> String {
        match &self.value {
            NodeValue::Scalar(Value::String(s)) => s.clone(),
            NodeValue::Scalar(other) => other.to_string(),
            _ => self.to_json().to_string(),
        }
    }

    /// The node as JSON.
    pub fn to_json(&self) -> Value {
        match &self.value {
            NodeValue::Scalar(v) => v.clone(),
            NodeValue::Seq(items) => Value::Array(items.iter().map(Node::to_json).collect()),
            NodeValue::Map(pairs) => Value::Object(
                pairs
                    .iter()
                    .map(|(k, v)| (k.key_text(), v.to_json()))
                    .collect(),
            ),
        }
    }
}

/// Loads the single document of `text` (from file `path`, for messages). `None` when the
/// file holds no document at all.
pub fn load(text: &str, path: &str) -> Result<Option<Node>, InventoryError> {
    let json = serde_json::from_str::<Value>(text).ok();
    let docs = match MarkedYaml::load_from_str(text) {
        Ok(docs) => docs,
        Err(e) => {
            return match json {
                Some(v) => Ok(Some(from_json(v))),
                None => Err(InventoryError::parse(
                    path,
                    Some(e.marker().line()),
                    format!(
                        "YAML syntax error: {} (column {})",
                        e.info(),
                        e.marker().col() + 1
                    ),
                )),
            };
        }
    };
    if docs.len() > 1 {
        let line = docs.get(1).map(|d| d.span.start.line());
        return Err(InventoryError::parse(
            path,
            line,
            "expected a single document in the stream",
        ));
    }
    let Some(doc) = docs.first() else {
        return Ok(None);
    };
    let mut converter = Converter {
        chars: text.chars().collect(),
        anchors: HashMap::new(),
        json: json.is_some(),
        path,
    };
    converter.node(doc, 0).map(Some)
}

fn from_json(v: Value) -> Node {
    let value = match v {
        Value::Array(items) => NodeValue::Seq(items.into_iter().map(from_json).collect()),
        Value::Object(map) => NodeValue::Map(
            map.into_iter()
                .map(|(k, v)| {
                    (
                        Node::new(None, NodeValue::Scalar(Value::String(k))),
                        from_json(v),
                    )
                })
                .collect(),
        ),
        scalar => NodeValue::Scalar(scalar),
    };
    Node::new(None, value)
}

/// What precedes a scalar in the source: its properties and whether it is a block scalar.
#[derive(Default)]
struct Decorations {
    tag: Option<String>,
    anchor: Option<String>,
    block: bool,
}

const CORE: &str = "tag:yaml.org,2002:";

struct Converter<'a> {
    chars: Vec<char>,
    anchors: HashMap<String, Node>,
    /// The text is valid JSON: plain scalars are JSON numbers and constants.
    json: bool,
    path: &'a str,
}

impl Converter<'_> {
    fn error(&self, line: usize, message: impl Into<String>) -> InventoryError {
        InventoryError::parse(self.path, Some(line), message)
    }

    fn raw(&self, node: &MarkedYaml) -> String {
        let end = node.span.end.index().min(self.chars.len());
        let start = node.span.start.index().min(end);
        self.chars[start..end].iter().collect()
    }

    /// Converts `node`, whose properties lie in the source between `lower` and its start.
    fn node(&mut self, node: &MarkedYaml, lower: usize) -> Result<Node, InventoryError> {
        let line = node.span.start.line();
        match &node.data {
            YamlData::Sequence(items) => {
                let mut out = Vec::with_capacity(items.len());
                let mut lower = node.span.start.index();
                for item in items {
                    out.push(self.node(item, lower)?);
                    lower = item.span.end.index();
                }
                Ok(Node::new(Some(line), NodeValue::Seq(out)))
            }
            YamlData::Mapping(pairs) => {
                let mut own = Vec::with_capacity(pairs.len());
                let mut merged = Vec::new();
                let mut lower = node.span.start.index();
                for (k, v) in pairs {
                    let key = self.node(k, lower)?;
                    let value = self.node(v, k.span.end.index())?;
                    lower = v.span.end.index();
                    if matches!(key.value, NodeValue::Seq(_) | NodeValue::Map(_)) {
                        return Err(self.error(k.span.start.line(), "found unhashable key"));
                    }
                    if self.raw(k) == "<<" {
                        merged = self.merge_sources(value)?;
                    } else {
                        own.push((key, value));
                    }
                }
                let mut pairs: Vec<(Node, Node)> = Vec::with_capacity(merged.len() + own.len());
                for (k, v) in merged.into_iter().chain(own) {
                    match pairs
                        .iter_mut()
                        .find(|(existing, _)| existing.value == k.value)
                    {
                        Some(slot) => slot.1 = v,
                        None => pairs.push((k, v)),
                    }
                }
                Ok(Node::new(Some(line), NodeValue::Map(pairs)))
            }
            YamlData::Tagged(tag, inner) => {
                let tag = format!("{}{}", tag.handle, tag.suffix);
                match &inner.data {
                    YamlData::Value(scalar) => self.scalar(node, scalar, Some(tag), lower),
                    _ => Err(self.error(
                        line,
                        format!("could not determine a constructor for the tag '{tag}'"),
                    )),
                }
            }
            YamlData::Value(scalar) => self.scalar(node, scalar, None, lower),
            YamlData::Alias(_) | YamlData::BadValue | YamlData::Representation(..) => {
                let raw = self.raw(node);
                match raw
                    .strip_prefix('*')
                    .and_then(|name| self.anchors.get(name))
                {
                    Some(n) => Ok(n.clone()),
                    None => Err(self.error(line, format!("invalid value: {raw}"))),
                }
            }
        }
    }

    /// The pairs a `<<` value merges in: a mapping, or a list of mappings of which earlier
    /// ones win (so they come last).
    fn merge_sources(&self, value: Node) -> Result<Vec<(Node, Node)>, InventoryError> {
        let line = value.line.unwrap_or(0);
        let not_mapping = || self.error(line, "expected a mapping or list of mappings for merging");
        match value.value {
            NodeValue::Map(pairs) => Ok(pairs),
            NodeValue::Seq(items) => {
                let mut out = Vec::new();
                for item in items.into_iter().rev() {
                    match item.value {
                        NodeValue::Map(pairs) => out.extend(pairs),
                        _ => return Err(not_mapping()),
                    }
                }
                Ok(out)
            }
            NodeValue::Scalar(_) => Err(not_mapping()),
        }
    }

    fn scalar(
        &mut self,
        node: &MarkedYaml,
        scalar: &Scalar,
        tag: Option<String>,
        lower: usize,
    ) -> Result<Node, InventoryError> {
        let line = node.span.start.line();
        let raw = self.raw(node);
        if let Some(name) = raw.strip_prefix('*')
            && let Some(found) = self.anchors.get(name)
        {
            return Ok(found.clone());
        }
        let decorations = self.decorations(lower, node.span.start.index());
        let tag = tag.or(decorations.tag);
        let text = match scalar {
            Scalar::String(s) => s.to_string(),
            _ => raw.clone(),
        };
        let plain = !decorations.block && !raw.starts_with(['\'', '"']);
        let value = match tag.as_deref() {
            None if plain && self.json => {
                serde_json::from_str(&text).unwrap_or(Value::String(text))
            }
            None if plain => resolve_plain(&text).map_err(|e| self.error(line, e))?,
            None => Value::String(text),
            Some(t) => construct_tagged(t, &text).map_err(|e| self.error(line, e))?,
        };
        let out = Node::new(Some(line), NodeValue::Scalar(value));
        if let Some(anchor) = decorations.anchor {
            self.anchors.insert(anchor, out.clone());
        }
        Ok(out)
    }

    /// Reads the properties and block indicator between `lower` and `start`, skipping
    /// comments and indicators of the enclosing collection.
    fn decorations(&self, lower: usize, start: usize) -> Decorations {
        let mut d = Decorations::default();
        let end = start.min(self.chars.len());
        let mut i = lower.min(end);
        let mut at_token_start = true;
        while i < end {
            let c = self.chars[i];
            if c.is_whitespace() {
                at_token_start = true;
                i += 1;
                continue;
            }
            let token_end = (i..end)
                .find(|j| self.chars[*j].is_whitespace())
                .unwrap_or(end);
            let token: String = self.chars[i..token_end].iter().collect();
            match c {
                '#' | '%' if at_token_start => {
                    i = (i..end).find(|j| self.chars[*j] == '\n').unwrap_or(end);
                    continue;
                }
                '!' => d.tag = Some(normalize_tag(&token)),
                '&' => d.anchor = Some(token[1..].to_string()),
                '|' | '>' => d.block = true,
                _ => d = Decorations::default(),
            }
            at_token_start = false;
            i = token_end;
        }
        d
    }
}

/// `!!str` and `!<tag:yaml.org,2002:str>` become the full core tag; others stay as written.
fn normalize_tag(token: &str) -> String {
    if let Some(suffix) = token.strip_prefix("!!") {
        format!("{CORE}{suffix}")
    } else if let Some(verbatim) = token.strip_prefix("!<").and_then(|t| t.strip_suffix('>')) {
        verbatim.to_string()
    } else {
        token.to_string()
    }
}

/// A scalar with an explicit tag, constructed as PyYAML's safe constructor and Ansible's
/// `!unsafe` do.
fn construct_tagged(tag: &str, text: &str) -> Result<Value, String> {
    let bad = |kind: &str| format!("invalid value for !!{kind}: '{text}'");
    match tag.strip_prefix(CORE) {
        Some("str") => Ok(Value::String(text.to_string())),
        Some("null") => Ok(Value::Null),
        Some("bool") => bool_value(text).map(Value::Bool).ok_or_else(|| bad("bool")),
        Some("int") => int_value(text).ok_or_else(|| bad("int")),
        Some("float") => float_value(text).ok_or_else(|| bad("float")),
        Some(other) => Err(format!(
            "could not determine a constructor for the tag '!!{other}'"
        )),
        None if tag == "!unsafe" => Ok(Value::String(text.to_string())),
        None if tag == "!vault" || tag == "!vault-encrypted" => {
            Err("vault-encrypted values are not supported".to_string())
        }
        None => Err(format!(
            "could not determine a constructor for the tag '{tag}'"
        )),
    }
}

static INT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$",
    )
    .expect("static regex")
});

static FLOAT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
    )
    .expect("static regex")
});

static TIMESTAMP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})(?:(?:[Tt]|[ \t]+)([0-9]{1,2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]*))?(?:[ \t]*(Z|([-+])([0-9]{1,2})(?::([0-9]{2}))?))?)?$",
    )
    .expect("static regex")
});

/// A plain scalar typed by YAML 1.1's implicit resolvers, as PyYAML does.
fn resolve_plain(text: &str) -> Result<Value, String> {
    if let Some(b) = bool_value(text) {
        return Ok(Value::Bool(b));
    }
    if matches!(text, "" | "~" | "null" | "Null" | "NULL") {
        return Ok(Value::Null);
    }
    if INT.is_match(text) {
        return Ok(int_value(text).unwrap_or_else(|| Value::String(text.to_string())));
    }
    if FLOAT.is_match(text) {
        return Ok(float_value(text).unwrap_or_else(|| Value::String(text.to_string())));
    }
    if let Some(c) = TIMESTAMP.captures(text) {
        return timestamp(&c);
    }
    Ok(Value::String(text.to_string()))
}

fn bool_value(text: &str) -> Option<bool> {
    match text {
        "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => Some(true),
        "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => Some(false),
        _ => None,
    }
}

/// Sign and magnitude of a YAML 1.1 number without underscores.
fn split_sign(text: &str) -> (bool, String) {
    let cleaned = text.replace('_', "");
    match cleaned.strip_prefix('-') {
        Some(rest) => (true, rest.to_string()),
        None => (
            false,
            cleaned.strip_prefix('+').unwrap_or(&cleaned).to_string(),
        ),
    }
}

/// A YAML 1.1 integer (binary, octal with a leading 0, hex, sexagesimal, decimal); `None`
/// when it is not one or does not fit 64 bits.
fn int_value(text: &str) -> Option<Value> {
    let (negative, digits) = split_sign(text);
    let magnitude: i128 = if digits == "0" {
        0
    } else if let Some(b) = digits.strip_prefix("0b") {
        i128::from_str_radix(b, 2).ok()?
    } else if let Some(h) = digits.strip_prefix("0x") {
        i128::from_str_radix(h, 16).ok()?
    } else if digits.starts_with('0') {
        i128::from_str_radix(&digits, 8).ok()?
    } else if digits.contains(':') {
        digits.split(':').try_fold(0i128, |acc, part| {
            Some(acc.checked_mul(60)? + part.parse::<i128>().ok()?)
        })?
    } else {
        digits.parse().ok()?
    };
    let n = if negative { -magnitude } else { magnitude };
    i64::try_from(n)
        .map(Value::from)
        .ok()
        .or_else(|| u64::try_from(n).map(Value::from).ok())
}

/// A YAML 1.1 float; infinities and NaN, which JSON cannot hold, are `None`.
fn float_value(text: &str) -> Option<Value> {
    let (negative, digits) = split_sign(text);
    let digits = digits.to_ascii_lowercase();
    let magnitude: f64 = if digits.contains(':') {
        digits.split(':').try_fold(0f64, |acc, part| {
            Some(acc * 60.0 + part.parse::<f64>().ok()?)
        })?
    } else {
        digits.parse().ok()?
    };
    let f = if negative { -magnitude } else { magnitude };
    Number::from_f64(f)
        .filter(|_| f.is_finite())
        .map(Value::Number)
}

/// A YAML 1.1 timestamp as Python's `isoformat()` writes the date or datetime PyYAML builds.
fn timestamp(c: &regex::Captures) -> Result<Value, String> {
    let num = |i: usize| {
        c.get(i)
            .map_or(0, |m| m.as_str().parse::<u32>().unwrap_or(0))
    };
    let (year, month, day) = (num(1), num(2), num(3));
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days_in_month = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return Err(format!("month must be in 1..12: {}", &c[0])),
    };
    if day == 0 || day > days_in_month {
        return Err(format!("day is out of range for month: {}", &c[0]));
    }
    let date = format!("{year:04}-{month:02}-{day:02}");
    if c.get(4).is_none() {
        return Ok(Value::String(date));
    }
    let (hour, minute, second) = (num(4), num(5), num(6));
    if hour > 23 || minute > 59 || second > 59 {
        return Err(format!("time is out of range: {}", &c[0]));
    }
    let mut out = format!("{date}T{hour:02}:{minute:02}:{second:02}");
    let fraction = c.get(7).map_or("", |m| m.as_str());
    let micros: String = fraction
        .chars()
        .chain(std::iter::repeat('0'))
        .take(6)
        .collect();
    if micros != "000000" {
        out.push('.');
        out.push_str(&micros);
    }
    match c.get(8).map(|m| m.as_str()) {
        Some("Z") => out.push_str("+00:00"),
        Some(_) => {
            let sign = c.get(9).map_or("+", |m| m.as_str());
            out.push_str(&format!("{sign}{:02}:{:02}", num(10), num(11)));
        }
        None => {}
    }
    Ok(Value::String(out))
}

/// Loads a vars file (`group_vars/…`, `host_vars/…`): a mapping, or nothing when empty.
pub fn load_mapping(text: &str, path: &str) -> Result<Option<Map<String, Value>>, InventoryError> {
    let Some(node) = load(text, path)? else {
        return Ok(None);
    };
    match node.to_json() {
        Value::Null => Ok(None),
        Value::Object(map) => Ok(Some(map)),
        _ => Err(InventoryError::parse(
            path,
            node.line,
            format!(
                "vars files must contain a dictionary, got {}",
                node.type_name()
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn json_of(text: &str) -> Value {
        load(text, "t.yml").unwrap().unwrap().to_json()
    }

    #[test]
    fn yaml_1_1_plain_scalars() {
        let v = json_of(
            "a: yes\nb: No\nc: on\nd: 017\ne: 1_000\nf: 1:30\ng: 0x1F\nh: 0b11\ni: 1e3\nj: 1.5e+3\nk: .5\n\
             l: ~\nm:\nn: 0o17\no: 09\np: +12\nq: y\nr: 1.0e3\ns: 190:20:30.15\n",
        );
        assert_eq!(
            v,
            json!({"a": true, "b": false, "c": true, "d": 15, "e": 1000, "f": 90, "g": 31, "h": 3,
                   "i": "1e3", "j": 1500.0, "k": 0.5, "l": null, "m": null, "n": "0o17", "o": "09",
                   "p": 12, "q": "y", "r": "1.0e3", "s": 685230.15})
        );
    }

    #[test]
    fn quoted_block_and_tagged_scalars_are_strings() {
        let v = json_of(
            "a: 'yes'\nb: \"017\"\nc: |-\n  yes\nd: >\n  on\ne: !!str yes\nf: !unsafe 5\ng: !!int \"12\"\n\
             h: !!str\n  on\ni: !!float '1'\n",
        );
        assert_eq!(
            v,
            json!({"a": "yes", "b": "017", "c": "yes", "d": "on\n", "e": "yes", "f": "5", "g": 12,
                   "h": "on", "i": 1.0})
        );
    }

    #[test]
    fn comments_anchors_aliases_and_merge_keys() {
        let v = json_of(
            "base: &b\n  x: 1\n  y: off  # comment\nother: &o {z: 2}\nv: &v yes\nw: *v\n\
             m:\n  <<: [*b, *o]\n  x: 9\nn:\n  <<: *b\n",
        );
        assert_eq!(v["w"], json!(true));
        assert_eq!(v["m"], json!({"z": 2, "x": 9, "y": false}));
        assert_eq!(v["n"], json!({"x": 1, "y": false}));
    }

    #[test]
    fn timestamps_become_iso_text() {
        let v = json_of(
            "a: 2024-1-5\nb: 2001-12-14t21:59:43.10-05:00\nc: 2001-12-14 21:59:43.10 -5\nd: 2002-12-14T01:02:03Z\n",
        );
        assert_eq!(
            v,
            json!({"a": "2024-01-05", "b": "2001-12-14T21:59:43.100000-05:00",
                   "c": "2001-12-14T21:59:43.100000-05:00", "d": "2002-12-14T01:02:03+00:00"})
        );
        assert!(load("a: 2024-13-01\n", "t.yml").is_err());
    }

    #[test]
    fn json_files_use_json_numbers() {
        assert_eq!(
            json_of(r#"{"a": 1e3, "b": [true, null], "c": "x"}"#),
            json!({"a": 1000.0, "b": [true, null], "c": "x"})
        );
    }

    #[test]
    fn lines_are_kept() {
        let node = load("# c\nall:\n  hosts:\n    a:\n", "t.yml")
            .unwrap()
            .unwrap();
        let NodeValue::Map(pairs) = &node.value else {
            panic!()
        };
        assert_eq!(pairs[0].0.line, Some(2));
        let NodeValue::Map(inner) = &pairs[0].1.value else {
            panic!()
        };
        assert_eq!(inner[0].0.line, Some(3));
    }

    #[test]
    fn errors_name_file_and_line() {
        let e = load("a: 1\nb: [1, 2\n", "/x/h.yml")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("/x/h.yml:"), "{e}");
        let e = load("a: !vault |\n  $ANSIBLE\n", "/x/h.yml")
            .unwrap_err()
            .to_string();
        // The block scalar starts on line 2.
        assert_eq!(e, "/x/h.yml:2: vault-encrypted values are not supported");
        let e = load("a: !foo 1\n", "/x/h.yml").unwrap_err().to_string();
        assert!(
            e.contains("could not determine a constructor for the tag '!foo'"),
            "{e}"
        );
        let e = load("--- 1\n--- 2\n", "/x/h.yml").unwrap_err().to_string();
        assert!(e.contains("single document"), "{e}");
        assert!(
            load_mapping("- a\n", "/x/v.yml")
                .unwrap_err()
                .to_string()
                .contains("dictionary")
        );
    }

    #[test]
    fn empty_documents() {
        assert_eq!(load("", "t").unwrap(), None);
        assert_eq!(load("# only a comment\n", "t").unwrap(), None);
        assert_eq!(load_mapping("---\n", "t").unwrap(), None);
    }
}
