//! YAML filters: `to_yaml`, `to_nice_yaml`, `from_yaml`, `from_yaml_all`.
//!
//! The emitter writes what PyYAML's `yaml.dump` writes for Ansible's settings: keys
//! sorted, block style (`to_nice_yaml`, indent 4, sequences in mappings not indented,
//! `-   key: v` items) or block style with collections of scalars in flow style
//! (`to_yaml`), scalars plain unless they would read back as something else. Two
//! differences remain: strings with line breaks are written double-quoted on one line,
//! and long lines are not folded at 80 columns; the YAML reads back to the same data.
//! `to_yaml` also takes PyYAML's `canonical` (every node tagged, collections in flow
//! style) and `default_style` `"` or `|` (every scalar double-quoted, or a literal block
//! where one can hold it; those that are no string tagged `!`).
//! Parsing uses saphyr's YAML 1.2 core schema (so `yes` stays a string).

use minijinja::value::{Kwargs, ValueKind};
use minijinja::{Error, ErrorKind, State, Value};

use crate::template::convert::{ensure_defined, from_json, invalid};
use crate::template::undefined::Plugins;

pub(super) fn register(env: &mut Plugins<'_>) {
    env.add_filter("to_yaml", to_yaml);
    env.add_filter("to_nice_yaml", to_nice_yaml);
    env.add_filter("from_yaml", from_yaml);
    env.add_filter("from_yaml_all", from_yaml_all);
}

/// `to_yaml(indent=2, default_flow_style=None, default_style=None, canonical=False)`.
fn to_yaml(state: &State, value: &Value, kwargs: Kwargs) -> Result<String, Error> {
    ensure_defined(state, value)?;
    let indent = kwargs.get::<Option<usize>>("indent")?.unwrap_or(2);
    let flow_style = kwargs.get::<Option<Value>>("default_flow_style")?;
    let style = match kwargs.get::<Option<String>>("default_style")?.as_deref() {
        None | Some("") => None,
        Some("\"") => Some(Style::Double),
        Some("|") => Some(Style::Literal),
        Some(other) => {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                format!("to_yaml: sandball writes default_style '\"' and '|', not {other:?}"),
            ));
        }
    };
    let canonical = kwargs
        .get::<Option<Value>>("canonical")?
        .is_some_and(|v| v.is_true());
    kwargs.assert_all_used()?;
    if canonical {
        let mut out = String::from("---\n");
        canonical_node(value, 0, &mut out)?;
        out.push('\n');
        return Ok(out);
    }
    // PyYAML's `default_flow_style=None` puts collections of scalars in flow style
    // (unless their scalars have a style); `False` never uses flow style.
    let flow_leaves = match flow_style {
        Some(v) if v.kind() == ValueKind::Bool && !v.is_true() => false,
        _ => style.is_none(),
    };
    Emitter {
        style,
        ..Emitter::new(indent, flow_leaves)
    }
    .document(value)
}

/// A node as PyYAML's canonical form writes it, at `column`: a scalar double-quoted
/// after its tag (`!!int "1"`), a collection in flow style with one entry per line
/// (`? key` and `: value` in a mapping), each followed by a comma.
fn canonical_node(value: &Value, column: usize, out: &mut String) -> Result<(), Error> {
    if !is_collection(value) {
        let tag = match value.kind() {
            ValueKind::None => "null",
            ValueKind::Bool => "bool",
            ValueKind::Number if value.is_integer() => "int",
            ValueKind::Number => "float",
            _ => "str",
        };
        out.push_str(&format!("!!{tag} {}", double_quoted(&scalar_text(value)?)));
        return Ok(());
    }
    let pad = " ".repeat(column + 2);
    let map = value.kind() == ValueKind::Map;
    out.push_str(if map { "!!map {" } else { "!!seq [" });
    let mut empty = true;
    if map {
        for (key, item) in sorted_entries(value)? {
            out.push_str(&format!("\n{pad}? "));
            canonical_node(&key, column + 2, out)?;
            out.push_str(&format!("\n{pad}: "));
            canonical_node(&item, column + 2, out)?;
            out.push(',');
            empty = false;
        }
    } else {
        for item in value.try_iter()?.checked() {
            out.push_str(&format!("\n{pad}"));
            canonical_node(&item?, column + 2, out)?;
            out.push(',');
            empty = false;
        }
    }
    if !empty {
        out.push('\n');
        out.push_str(&" ".repeat(column));
    }
    out.push(if map { '}' } else { ']' });
    Ok(())
}

/// `to_nice_yaml(indent=4)`: block style throughout.
fn to_nice_yaml(
    state: &State,
    value: &Value,
    indent: Option<usize>,
    kwargs: Kwargs,
) -> Result<String, Error> {
    ensure_defined(state, value)?;
    let indent = match indent {
        Some(indent) => indent,
        None => kwargs.get::<Option<usize>>("indent")?.unwrap_or(4),
    };
    kwargs.assert_all_used()?;
    Emitter::new(indent, false).document(value)
}

/// `value` as PyYAML's `yaml.dump(value, default_flow_style=False)` writes it.
pub(crate) fn yaml_dump(value: &Value) -> Result<String, Error> {
    Emitter::new(2, false).document(value)
}

/// A result as ansible-core's callbacks write it with `callback_result_format = yaml`:
/// `yaml.dump` with indent 4, block style, and strings of several lines as literal
/// blocks (`|-`) with their trailing whitespace dropped. Every line of it starts at
/// `column`.
pub(crate) fn callback_yaml(value: &Value, column: usize) -> Result<String, Error> {
    let emitter = Emitter {
        literal: true,
        ..Emitter::new(4, false)
    };
    let text = emitter.document(value)?;
    let pad = " ".repeat(column);
    Ok(text
        .lines()
        .map(|l| {
            if l.is_empty() {
                String::new()
            } else {
                format!("{pad}{l}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n"))
}

/// Writes YAML as PyYAML does.
struct Emitter {
    indent: usize,
    flow_leaves: bool,
    /// Strings of several lines as literal blocks (`|-`), not double-quoted.
    literal: bool,
    /// PyYAML's `default_style`: the style of every scalar.
    style: Option<Style>,
    /// Whether the last literal block written kept its final line breaks (`|+`): the
    /// document then ends with `...`, as libyaml ends it.
    open_ended: std::cell::Cell<bool>,
}

/// A `default_style` sandball writes.
#[derive(Clone, Copy, PartialEq)]
enum Style {
    /// `"`: double-quoted.
    Double,
    /// `|`: a literal block where one can hold the text, else double-quoted.
    Literal,
}

/// Where a scalar is written: flow collections make more characters special.
#[derive(Clone, Copy, PartialEq)]
enum Context {
    Block,
    Flow,
}

impl Emitter {
    fn new(indent: usize, flow_leaves: bool) -> Emitter {
        Emitter {
            indent: indent.clamp(2, 9),
            flow_leaves,
            literal: false,
            style: None,
            open_ended: std::cell::Cell::new(false),
        }
    }

    fn document(&self, value: &Value) -> Result<String, Error> {
        if let Some(style) = self.style
            && !is_collection(value)
        {
            let (text, block) = styled(value, style, 0, self.indent)?;
            return Ok(if block == Some(true) {
                format!("{text}\n...\n")
            } else {
                format!("{text}\n")
            });
        }
        if !is_collection(value) {
            let (text, plain) = scalar(value, Context::Block)?;
            // PyYAML ends a document holding only a plain scalar explicitly.
            return Ok(if plain {
                format!("{text}\n...\n")
            } else {
                format!("{text}\n")
            });
        }
        if is_empty_collection(value)? || (self.flow_leaves && is_leaf_collection(value)?) {
            return Ok(format!("{}\n", flow(value)?));
        }
        let mut out = String::new();
        self.block(value, 0, &mut out)?;
        if self.open_ended.get() {
            out.push_str("...\n");
        }
        Ok(out)
    }

    /// Writes a non-empty collection in block style, its lines indented by `column`.
    fn block(&self, value: &Value, column: usize, out: &mut String) -> Result<(), Error> {
        if value.kind() == ValueKind::Map {
            for (key, item) in sorted_entries(value)? {
                out.push_str(&" ".repeat(column));
                match self.style {
                    // A key is never a block: double-quoted.
                    Some(_) => out.push_str(&styled(&key, Style::Double, column, self.indent)?.0),
                    None => out.push_str(&scalar(&key, Context::Block)?.0),
                }
                out.push(':');
                self.nested(&item, column, true, out)?;
            }
        } else {
            for item in value.try_iter()?.checked() {
                out.push_str(&" ".repeat(column));
                out.push('-');
                self.nested(&item?, column, false, out)?;
            }
        }
        Ok(())
    }

    /// Writes the value of a mapping entry or sequence item, after its `key:` or `-`.
    fn nested(
        &self,
        item: &Value,
        column: usize,
        in_map: bool,
        out: &mut String,
    ) -> Result<(), Error> {
        if self.literal
            && let Some(text) = item.as_str()
            && text.trim_end().contains('\n')
            && !text.chars().any(|c| c != '\n' && is_special(c))
        {
            // `|-` with the text's lines beneath, one level in.
            out.push_str(" |-\n");
            let pad = " ".repeat(column + self.indent);
            for line in text.trim_end().lines() {
                if !line.is_empty() {
                    out.push_str(&pad);
                    out.push_str(line.trim_end());
                }
                out.push('\n');
            }
        } else if let Some(style) = self.style
            && !is_collection(item)
        {
            let (text, block) = styled(item, style, column, self.indent)?;
            out.push(' ');
            out.push_str(&text);
            out.push('\n');
            if let Some(keep) = block {
                self.open_ended.set(keep);
            }
        } else if !is_collection(item) {
            out.push(' ');
            out.push_str(&scalar(item, Context::Block)?.0);
            out.push('\n');
        } else if is_empty_collection(item)? || (self.flow_leaves && is_leaf_collection(item)?) {
            out.push(' ');
            out.push_str(&flow(item)?);
            out.push('\n');
        } else if in_map {
            out.push('\n');
            // Sequences in mappings are not indented; mappings are.
            let child = if item.kind() == ValueKind::Map {
                column + self.indent
            } else {
                column
            };
            self.block(item, child, out)?;
        } else {
            // The first line of a collection in a sequence item follows the dash.
            let mut nested = String::new();
            self.block(item, column + self.indent, &mut nested)?;
            out.push_str(&" ".repeat(self.indent - 1));
            out.push_str(&nested[column + self.indent..]);
        }
        Ok(())
    }
}

fn is_collection(value: &Value) -> bool {
    matches!(
        value.kind(),
        ValueKind::Map | ValueKind::Seq | ValueKind::Iterable
    )
}

fn is_empty_collection(value: &Value) -> Result<bool, Error> {
    Ok(value.try_iter()?.next().is_none())
}

/// A collection holding only scalars.
fn is_leaf_collection(value: &Value) -> Result<bool, Error> {
    if value.kind() == ValueKind::Map {
        for key in value.try_iter()?.checked() {
            if is_collection(&value.get_item(&key?)?) {
                return Ok(false);
            }
        }
    } else {
        for item in value.try_iter()?.checked() {
            if is_collection(&item?) {
                return Ok(false);
            }
        }
    }
    Ok(true)
}

/// The entries of a mapping, sorted by key as `yaml.dump` sorts them: in their order
/// when Python cannot compare the keys (text with numbers, `None`).
fn sorted_entries(map: &Value) -> Result<Vec<(Value, Value)>, Error> {
    let mut entries = Vec::new();
    for key in map.try_iter()?.checked() {
        let key = key?;
        let item = map.get_item(&key)?;
        entries.push((key, item));
    }
    let all = |kinds: &[ValueKind]| entries.iter().all(|(k, _)| kinds.contains(&k.kind()));
    if all(&[ValueKind::String]) || all(&[ValueKind::Number, ValueKind::Bool]) {
        entries.sort_by(|a, b| a.0.cmp(&b.0));
    }
    Ok(entries)
}

/// A collection in flow style: `[a, b]`, `{a: 1}`.
fn flow(value: &Value) -> Result<String, Error> {
    let mut parts = Vec::new();
    if value.kind() == ValueKind::Map {
        for (key, item) in sorted_entries(value)? {
            parts.push(format!(
                "{}: {}",
                scalar(&key, Context::Flow)?.0,
                flow_item(&item)?
            ));
        }
        Ok(format!("{{{}}}", parts.join(", ")))
    } else {
        for item in value.try_iter()?.checked() {
            parts.push(flow_item(&item?)?);
        }
        Ok(format!("[{}]", parts.join(", ")))
    }
}

fn flow_item(item: &Value) -> Result<String, Error> {
    if is_collection(item) {
        flow(item)
    } else {
        Ok(scalar(item, Context::Flow)?.0)
    }
}

/// A scalar as YAML text, and whether it is plain (unquoted).
fn scalar(value: &Value, context: Context) -> Result<(String, bool), Error> {
    let text = scalar_text(value)?;
    Ok(match value.kind() {
        ValueKind::String => string(&text, context),
        ValueKind::None | ValueKind::Bool | ValueKind::Number => (text, true),
        _ => string(&text, context),
    })
}

/// A scalar's text as PyYAML represents it (`null`, `true`, `1.0e+30`, the string).
fn scalar_text(value: &Value) -> Result<String, Error> {
    Ok(match value.kind() {
        ValueKind::Undefined => {
            return Err(Error::new(
                ErrorKind::UndefinedError,
                "cannot write an undefined value as YAML",
            ));
        }
        ValueKind::Invalid => return Err(invalid(value)),
        ValueKind::None => "null".into(),
        ValueKind::Bool => if value.is_true() { "true" } else { "false" }.into(),
        ValueKind::Number if value.is_integer() => value.to_string(),
        ValueKind::Number => yaml_float(f64::try_from(value.clone())?),
        ValueKind::String => value.as_str().unwrap_or_default().to_string(),
        _ => value.to_string(),
    })
}

/// A scalar in a `default_style`, its lines (a literal block's) indented from
/// `column`: a value that is no string is tagged `!` (its text would read back as a
/// string otherwise). A literal block takes text without special characters, trailing
/// spaces or spaces before a line break; other text is double-quoted. Also, for a
/// literal block, whether it keeps its final line breaks (`|+`).
fn styled(
    value: &Value,
    style: Style,
    column: usize,
    indent: usize,
) -> Result<(String, Option<bool>), Error> {
    let text = scalar_text(value)?;
    let tag = if value.kind() == ValueKind::String {
        ""
    } else {
        "! "
    };
    let block = style == Style::Literal
        && !text.is_empty()
        && !text.ends_with(' ')
        && !text.contains(" \n")
        && !text
            .chars()
            .any(|c| c == '\r' || (c != '\n' && is_special(c)));
    if !block {
        return Ok((format!("{tag}{}", double_quoted(&text)), None));
    }
    // The header: an indentation digit when the text starts with a space or a line
    // break, `-` without a final line break, `+` with several.
    let mut out = format!("{tag}|");
    if text.starts_with([' ', '\n']) {
        out.push_str(&indent.to_string());
    }
    let keep = text.ends_with('\n') && (text.len() == 1 || text.ends_with("\n\n"));
    let body = match text.strip_suffix('\n') {
        None => {
            out.push('-');
            text.as_str()
        }
        Some(rest) => {
            if keep {
                out.push('+');
            }
            rest
        }
    };
    let pad = " ".repeat(column + indent);
    for line in body.split('\n') {
        out.push('\n');
        if !line.is_empty() {
            out.push_str(&pad);
            out.push_str(line);
        }
    }
    Ok((out, Some(keep)))
}

/// A float as PyYAML writes it: Python's repr, lowercase, `.0` before a bare exponent.
fn yaml_float(f: f64) -> String {
    if f.is_nan() {
        return ".nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { ".inf" } else { "-.inf" }.into();
    }
    let repr = sandball_pycompat::pyfmt::float_repr(f);
    match repr.split_once('e') {
        Some((mantissa, exponent)) if !mantissa.contains('.') => format!("{mantissa}.0e{exponent}"),
        _ => repr,
    }
}

/// A string: plain when PyYAML would write it plain, else single- or double-quoted.
fn string(s: &str, context: Context) -> (String, bool) {
    if s.chars().any(|c| c == '\n' || c == '\r' || is_special(c)) {
        return (double_quoted(s), false);
    }
    if plain_allowed(s, context) {
        return (s.to_string(), true);
    }
    (format!("'{}'", s.replace('\'', "''")), false)
}

/// Characters PyYAML only writes escaped in double quotes.
fn is_special(c: char) -> bool {
    let code = c as u32;
    (code < 0x20 && c != '\t') || (0x7f..0xa0).contains(&code) || c == '\u{feff}'
}

fn double_quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\0' => out.push_str("\\0"),
            c if is_special(c) => {
                let code = c as u32;
                if code <= 0xff {
                    out.push_str(&format!("\\x{code:02X}"));
                } else {
                    out.push_str(&format!("\\u{code:04X}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Whether a string can be written without quotes and still read back as that string.
fn plain_allowed(s: &str, context: Context) -> bool {
    if s.is_empty() || resolves_to_non_string(s) {
        return false;
    }
    if s.starts_with(' ') || s.ends_with(' ') || s.starts_with("---") || s.starts_with("...") {
        return false;
    }
    let chars: Vec<char> = s.chars().collect();
    let first = chars[0];
    let followed_by_space = |i: usize| chars.get(i + 1).is_none_or(|c| *c == ' ' || *c == '\t');
    if "#,[]{}&*!|>'\"%@`".contains(first) {
        return false;
    }
    if "-?:".contains(first) && (followed_by_space(0) || context == Context::Flow) {
        return false;
    }
    for (i, &c) in chars.iter().enumerate() {
        if context == Context::Flow && ",?[]{}".contains(c) {
            return false;
        }
        if c == ':' && (followed_by_space(i) || context == Context::Flow) {
            return false;
        }
        if c == '#' && i > 0 && (chars[i - 1] == ' ' || chars[i - 1] == '\t') {
            return false;
        }
    }
    true
}

/// Whether YAML 1.1 (as PyYAML reads it) would read `s` as a bool, null, number, date,
/// merge key or value key rather than a string.
fn resolves_to_non_string(s: &str) -> bool {
    const WORDS: [&str; 22] = [
        "yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE", "false", "False", "FALSE",
        "on", "On", "ON", "off", "Off", "OFF", "null", "Null", "NULL", "~",
    ];
    if WORDS.contains(&s) || s == "<<" || s == "=" {
        return true;
    }
    static PATTERNS: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    let pattern = PATTERNS.get_or_init(|| {
        regex::Regex::new(concat!(
            r"^(?:",
            // int: binary, octal, decimal, hex, sexagesimal
            r"[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+",
            r"|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+",
            // float
            r"|[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?",
            r"|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)",
            // timestamp
            r"|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}",
            r"(?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?)?",
            r")$"
        ))
        .ok()
    });
    pattern.as_ref().is_some_and(|re| re.is_match(s))
}

/// `from_yaml`: the value of a single-document YAML text; non-strings pass through.
fn from_yaml(state: &State, value: &Value) -> Result<Value, Error> {
    ensure_defined(state, value)?;
    let Some(text) = value.as_str() else {
        return Ok(value.clone());
    };
    let mut documents = load(text)?;
    match documents.len() {
        0 => Ok(Value::from(())),
        1 => Ok(documents.remove(0)),
        n => Err(Error::new(
            ErrorKind::InvalidOperation,
            format!("from_yaml: expected a single document, found {n} (use from_yaml_all)"),
        )),
    }
}

/// `from_yaml_all`: the values of every document of a YAML text (none for `None`);
/// other non-strings pass through.
fn from_yaml_all(state: &State, value: &Value) -> Result<Value, Error> {
    ensure_defined(state, value)?;
    match value.as_str() {
        Some(text) => Ok(Value::from(load(text)?)),
        None if value.is_none() => Ok(Value::from(Vec::<Value>::new())),
        None => Ok(value.clone()),
    }
}

/// The documents of a YAML text, typed as Ansible's loader (YAML 1.1, as PyYAML) types
/// them: `yes` is true, `017` is octal; `!unsafe` text is plain text here.
fn load(text: &str) -> Result<Vec<Value>, Error> {
    let documents =
        crate::yaml::load_all_data(text, std::path::Path::new("<string>")).map_err(|err| {
            Error::new(
                ErrorKind::InvalidOperation,
                format!("from_yaml: invalid YAML: {err}"),
            )
        })?;
    Ok(documents
        .iter()
        .map(|d| from_json(&crate::template::trust::without_unsafe_marks(d)))
        .collect())
}

#[cfg(test)]
mod tests {
    use crate::template::filters::testing::{error, eval};
    use serde_json::json;

    #[test]
    fn to_nice_yaml_like_pyyaml() {
        assert_eq!(
            eval("{'b': [1, 'two'], 'a': {'y': none, 'x': true}, 'c': [], 'd': {}} | to_nice_yaml"),
            json!("a:\n    x: true\n    y: null\nb:\n- 1\n- two\nc: []\nd: {}\n")
        );
        assert_eq!(
            eval("[{'name': 'n', 'v': 1}, [1, 2]] | to_nice_yaml"),
            json!("-   name: n\n    v: 1\n-   - 1\n    - 2\n")
        );
        assert_eq!(
            eval("[{'name': 'n', 'v': 1}] | to_nice_yaml(indent=2)"),
            json!("- name: n\n  v: 1\n")
        );
    }

    /// Outputs ansible-playbook 2.19 printed for the same expressions.
    #[test]
    fn to_yaml_canonical_and_default_style() {
        let d = "{'a': [1, 'x', 2.5, true, none], 'b': {'c': 'multi\nline'}, 'e': [], 'f': ' lead', 'g': 'two\n', 'h': 'three\n\n', 'i': 'trail ', 'j': ''}";
        assert_eq!(
            eval(&format!(
                "['thing' | to_yaml(default_style='|'), 'thing' | to_yaml(canonical=True),
                  {d} | to_yaml(default_style='|'), {d} | to_yaml(default_style='\"'),
                  [[], {{}}, [[1]], {{'k': 'v'}}] | to_yaml(canonical=True),
                  {{1: 'x', 'é': 1e30, 'n': none}} | to_yaml(canonical=True),
                  {{'h': 'three\n\n', 'z': {{'y': 'w'}}}} | to_yaml(default_style='|'),
                  [{{'a': 'b'}}] | to_yaml(default_style='|', indent=4), 5 | to_yaml(default_style='|')]"
            )),
            json!([
                "|-\n  thing\n",
                "---\n!!str \"thing\"\n",
                "\"a\":\n- ! |-\n  1\n- |-\n  x\n- ! |-\n  2.5\n- ! |-\n  true\n- ! |-\n  null\n\"b\":\n  \"c\": |-\n    multi\n    line\n\"e\": []\n\"f\": |2-\n   lead\n\"g\": |\n  two\n\"h\": |+\n  three\n\n\"i\": \"trail \"\n\"j\": \"\"\n...\n",
                "\"a\":\n- ! \"1\"\n- \"x\"\n- ! \"2.5\"\n- ! \"true\"\n- ! \"null\"\n\"b\":\n  \"c\": \"multi\\nline\"\n\"e\": []\n\"f\": \" lead\"\n\"g\": \"two\\n\"\n\"h\": \"three\\n\\n\"\n\"i\": \"trail \"\n\"j\": \"\"\n",
                "---\n!!seq [\n  !!seq [],\n  !!map {},\n  !!seq [\n    !!seq [\n      !!int \"1\",\n    ],\n  ],\n  !!map {\n    ? !!str \"k\"\n    : !!str \"v\",\n  },\n]\n",
                "---\n!!map {\n  ? !!int \"1\"\n  : !!str \"x\",\n  ? !!str \"é\"\n  : !!float \"1.0e+30\",\n  ? !!str \"n\"\n  : !!null \"null\",\n}\n",
                "\"h\": |+\n  three\n\n\"z\":\n  \"y\": |-\n    w\n",
                "-   \"a\": |-\n        b\n",
                "! |-\n  5\n"
            ])
        );
        assert!(error("'x' | to_yaml(default_style='>')").contains("not \">\""));
    }

    #[test]
    fn to_yaml_uses_flow_for_leaf_collections() {
        assert_eq!(
            eval("{'a': 1, 'b': 'x'} | to_yaml"),
            json!("{a: 1, b: x}\n")
        );
        assert_eq!(
            eval("{'a': [1, 2], 'b': {'c': 'd'}, 'e': 1} | to_yaml"),
            json!("a: [1, 2]\nb: {c: d}\ne: 1\n")
        );
        assert_eq!(eval("[{'a': 1}, 2] | to_yaml"), json!("- {a: 1}\n- 2\n"));
        assert_eq!(eval("'abc' | to_yaml"), json!("abc\n...\n"));
        assert_eq!(
            eval("{'a': [1]} | to_yaml(default_flow_style=false)"),
            json!("a:\n- 1\n")
        );
    }

    #[test]
    fn scalars_are_quoted_when_needed() {
        let cases = [
            ("''", "''\n"),
            ("'yes'", "'yes'\n"),
            ("'123'", "'123'\n"),
            ("'1.5'", "'1.5'\n"),
            ("'null'", "'null'\n"),
            ("'2024-01-02'", "'2024-01-02'\n"),
            ("'a: b'", "'a: b'\n"),
            ("'- x'", "'- x'\n"),
            ("'#x'", "'#x'\n"),
            ("\"it's\"", "it's\n...\n"),
            ("' pad'", "' pad'\n"),
            ("'a\\nb'", "\"a\\nb\"\n"),
            ("'a:b'", "a:b\n...\n"),
            ("'x # y'", "'x # y'\n"),
            ("1.0", "1.0\n...\n"),
            ("1e20", "1.0e+20\n...\n"),
        ];
        for (expr, yaml) in cases {
            assert_eq!(eval(&format!("{expr} | to_yaml")), json!(yaml), "{expr}");
        }
        assert_eq!(eval("['a,b', 'c'] | to_yaml"), json!("['a,b', c]\n"));
    }

    #[test]
    fn from_yaml_parses() {
        assert_eq!(
            eval("'a: 1\\nb: [x, 2.5, true, null]\\nc: yes' | from_yaml"),
            json!({"a": 1, "b": ["x", 2.5, true, null], "c": true})
        );
        assert_eq!(eval("'' | from_yaml"), json!(null));
        assert_eq!(
            eval("'a: &x 1\\nb: *x' | from_yaml"),
            json!({"a": 1, "b": 1})
        );
        assert_eq!(eval("'--- 1\\n--- 2\\n' | from_yaml_all"), json!([1, 2]));
        assert_eq!(eval("none | from_yaml_all"), json!([]));
        assert_eq!(
            eval("'a: yes\\nb: 017\\nc: !unsafe \\'{{ x }}\\'' | from_yaml"),
            json!({"a": true, "b": 15, "c": "{{ x }}"})
        );
        assert_eq!(
            eval("'--- &a 1\\n---\\n--- [2]\\n' | from_yaml_all"),
            json!([1, null, [2]])
        );
        assert!(error("'--- 1\\n--- 2\\n' | from_yaml").contains("single document"));
        assert!(error("'a: [' | from_yaml").contains("invalid YAML"));
        assert_eq!(eval("{'a': 1} | to_nice_yaml | from_yaml"), json!({"a": 1}));
    }
}
