//! Python's `%` operator in templates: `'%s-%02d' % (name, n)` formats a string as
//! Python's printf-style formatting does, `7 % 3` is Python's modulo.
//!
//! minijinja's `%` only knows numbers, so a template's `%` operators are rewritten,
//! before it is compiled, into calls of the [`PERCENT`] global (found through the
//! engine's own parser: the rewrite follows its precedence); that global formats a
//! string left operand with [`printf`] and takes the modulo of numbers. The same pass
//! reads the filters and tests named by their full names (`| ansible.builtin.to_json`,
//! `is ansible.builtin.failed`) as their short names, blanking the prefix so that the
//! engine's error positions stay right, and turns the filters and tests sandball has
//! none of into calls of Python plugins (`plugin_calls.rs`).

use std::borrow::Cow;
use std::sync::LazyLock;

use minijinja::syntax::SyntaxConfig;
use minijinja::value::ValueKind;
use minijinja::{Error, ErrorKind, State, Value};

use crate::plugins::loader::Kind;
use crate::template::convert::ensure_defined;
use crate::template::filters::python_type;
use crate::template::plugin_calls::{dispatcher, native_name};
use crate::template::python::{py_repr, py_str};
use crate::template::undefined::Plugins;

/// The global function a rewritten `a % b` calls.
pub(crate) const PERCENT: &str = "__sandball_percent";

/// Registers the [`PERCENT`] global and the `format` filter (`"%s" | format(x)`, which
/// is `%` with the filter's arguments).
pub(crate) fn register(env: &mut Plugins<'_>) {
    env.taking_undefined().add_function(PERCENT, percent);
    env.add_filter("format", format_filter);
}

/// The prefix of the full names of ansible-core's own filters and tests.
pub(crate) const BUILTIN: &str = "ansible.builtin.";
/// The prefix of the names of ansible-core's own filters and tests or local plugins'.
pub(crate) const LEGACY: &str = "ansible.legacy.";
/// Both prefixes.
pub(crate) const BUILTIN_PREFIXES: &[&str] = &[BUILTIN, LEGACY];

/// What a prefix is blanked with (as long as the longest prefix).
const BLANK: &str = "                ";

/// A template's source with its `%` operators rewritten (see the module's doc); the
/// source itself when it has none or does not parse (compiling it reports the error).
pub(crate) fn rewrite_template<'s>(source: &'s str, syntax: &SyntaxConfig) -> Cow<'s, str> {
    if !may_have_operator(source)
        && !has_builtin_prefix(source)
        && !names_plugin(source)
        && !may_template_lookup_terms(source, 2)
    {
        return Cow::Borrowed(source);
    }
    match minijinja::machinery::parse(source, "template", syntax.clone()) {
        Ok(ast) => rewrite(source, serde_json::to_value(&ast).ok()),
        Err(_) => Cow::Borrowed(source),
    }
}

/// [`rewrite_template`] for a bare expression.
pub(crate) fn rewrite_expression(expr: &str) -> Cow<'_, str> {
    if !expr.contains('%')
        && !has_builtin_prefix(expr)
        && !names_plugin(expr)
        && !may_template_lookup_terms(expr, 1)
    {
        return Cow::Borrowed(expr);
    }
    match minijinja::machinery::parse_expr(expr) {
        Ok(ast) => rewrite(expr, serde_json::to_value(&ast).ok()),
        Err(_) => Cow::Borrowed(expr),
    }
}

/// Whether a template may pass a lookup a string constant holding a template (at
/// least `templates` template openings in all, the outer ones counted).
fn may_template_lookup_terms(source: &str, templates: usize) -> bool {
    (source.contains("lookup") || source.contains("query") || source.contains("q("))
        && source.matches("{{").count() + source.matches("{%").count() >= templates
}

/// Whether a template may name a filter or test by its full name.
fn has_builtin_prefix(source: &str) -> bool {
    BUILTIN_PREFIXES.iter().any(|p| source.contains(p))
}

/// Whether a template may name a filter or test sandball has none of (a cheap scan of
/// the names after `|` and `is`).
fn names_plugin(source: &str) -> bool {
    static NAMES: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(r"(\|\s*|\bis\s+(?:not\s+)?)([A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*)")
            .expect("a valid pattern")
    });
    NAMES.captures_iter(source).any(|c| {
        let kind = if c[1].starts_with('|') {
            Kind::Filter
        } else {
            Kind::Test
        };
        !native_name(kind, &c[2])
    })
}

/// Whether a template may hold a `%` operator: a `%` that is no part of a `{%` or `%}`
/// (a cheap test that spares parsing most templates twice).
fn may_have_operator(source: &str) -> bool {
    let bytes = source.as_bytes();
    bytes.iter().enumerate().any(|(i, &b)| {
        b == b'%'
            && (i == 0 || bytes[i - 1] != b'{')
            && bytes.get(i + 1).is_none_or(|&next| next != b'}')
    })
}

/// One change to the source at byte offset `at`: `text` in place of the `remove` bytes
/// there. `order` sorts the changes at one offset (changes of one order keep the order
/// they were recorded in).
pub(crate) struct Edit {
    pub(crate) at: usize,
    pub(crate) remove: usize,
    pub(crate) order: u8,
    pub(crate) text: Cow<'static, str>,
}

/// Applies the rewrite of every `%` operator in a parsed template (the engine's syntax
/// tree as JSON: each node is `{"inner": [node, span]}`).
fn rewrite<'s>(source: &'s str, ast: Option<serde_json::Value>) -> Cow<'s, str> {
    let mut edits = Vec::new();
    if let Some(ast) = ast {
        collect(source, &ast, &mut edits);
    }
    apply(source, edits)
}

/// `source` with `edits` made.
pub(crate) fn apply(source: &str, mut edits: Vec<Edit>) -> Cow<'_, str> {
    if edits.is_empty() {
        return Cow::Borrowed(source);
    }
    // At one offset a call's `)` closes before another opens.
    edits.sort_by_key(|e| (e.at, e.order));
    let mut out = String::with_capacity(source.len() + edits.len() * 24);
    let mut done = 0;
    for edit in edits {
        out.push_str(&source[done..edit.at]);
        out.push_str(&edit.text);
        done = edit.at + edit.remove;
    }
    out.push_str(&source[done..]);
    Cow::Owned(out)
}

/// The span of a node (`{"inner": [node, span]}`) as byte offsets.
pub(crate) fn span(node: &serde_json::Value) -> Option<(usize, usize)> {
    let span = node.get("inner")?.get(1)?;
    let start = span.get("start_offset")?.as_u64()?;
    let end = span.get("end_offset")?.as_u64()?;
    Some((usize::try_from(start).ok()?, usize::try_from(end).ok()?))
}

/// Calls `visit` on every mapping under `node` (the syntax tree's nodes among them),
/// parents before their children.
pub(crate) fn each_node(node: &serde_json::Value, visit: &mut dyn FnMut(&serde_json::Value)) {
    match node {
        serde_json::Value::Array(items) => {
            for item in items {
                each_node(item, visit);
            }
        }
        serde_json::Value::Object(map) => {
            visit(node);
            for value in map.values() {
                each_node(value, visit);
            }
        }
        _ => {}
    }
}

/// Finds the `%` operators under `node` and records their edits.
fn collect(source: &str, node: &serde_json::Value, edits: &mut Vec<Edit>) {
    each_node(node, &mut |node| {
        if node.get("expr").and_then(|e| e.as_str()) == Some("BinOp")
            && let Some(op) = node.get("inner").and_then(|i| i.get(0))
            && op.get("op").and_then(|o| o.as_str()) == Some("Rem")
            && let Some((start, end)) = span(node)
            && let Some((_, left_end)) = op.get("left").and_then(span)
            && let Some((right_start, _)) = op.get("right").and_then(span)
            && let Some(between) = source.get(left_end..right_start)
            && let Some(at) = between.find('%')
        {
            edits.push(Edit {
                at: start,
                remove: 0,
                order: 2,
                text: Cow::Borrowed("__sandball_percent("),
            });
            edits.push(Edit {
                at: left_end + at,
                remove: 1,
                order: 1,
                text: Cow::Borrowed(","),
            });
            edits.push(Edit {
                at: end,
                remove: 0,
                order: 0,
                text: Cow::Borrowed(")"),
            });
        }
        plugin_name(source, node, edits);
        lookup_terms(node, edits);
    });
}

/// The edits that have a lookup call `node` render the string constants holding a
/// template it is given as terms or options (not its name), before it runs, through
/// [`CONST_TEMPLATE`]: ansible-core 2.19 still templates those, where it never renders
/// templates inside other functions' constants.
///
/// [`CONST_TEMPLATE`]: crate::template::lookups::jinja::CONST_TEMPLATE
fn lookup_terms(node: &serde_json::Value, edits: &mut Vec<Edit>) {
    for constant in lookup_term_templates(node) {
        if let Some((start, end)) = span(constant) {
            edits.push(Edit {
                at: start,
                remove: 0,
                order: 2,
                text: Cow::Owned(format!("{}(", super::lookups::jinja::CONST_TEMPLATE)),
            });
            edits.push(Edit {
                at: end,
                remove: 0,
                order: 0,
                text: Cow::Borrowed(")"),
            });
        }
    }
}

/// The string constants holding a template that a lookup call `node` is given as terms
/// or options.
fn lookup_term_templates(node: &serde_json::Value) -> Vec<&serde_json::Value> {
    let args = (|| {
        if node.get("expr")?.as_str()? != "Call" {
            return None;
        }
        let call = node.get("inner")?.get(0)?;
        let callee = call.get("expr")?;
        let name = callee.get("inner")?.get(0)?.get("id")?.as_str()?;
        if callee.get("expr")?.as_str()? != "Var" || !["lookup", "query", "q"].contains(&name) {
            return None;
        }
        call.get("args")?.as_array()
    })();
    let constants = args
        .into_iter()
        .flatten()
        .enumerate()
        .filter_map(|(i, arg)| match (arg.get("Pos"), arg.get("Kwarg")) {
            (Some(pos), _) if i > 0 => Some(pos),
            (_, Some(kwarg)) => kwarg.get(1),
            _ => None,
        });
    constants.filter(|c| template_constant(c)).collect()
}

/// Whether a node is a string constant holding a template.
fn template_constant(node: &serde_json::Value) -> bool {
    node.get("expr").and_then(|e| e.as_str()) == Some("Const")
        && node
            .get("inner")
            .and_then(|i| i.get(0))
            .and_then(|c| c.get("value"))
            .and_then(|v| v.as_str())
            .is_some_and(super::scope::is_template)
}

/// Whether every string constant holding a template in `expr` is given to a lookup
/// (which templates it itself, see [`lookup_terms`]); `false` when `expr` does not
/// parse.
pub(crate) fn templates_only_in_lookup_terms(expr: &str) -> bool {
    let Ok(ast) = minijinja::machinery::parse_expr(expr) else {
        return false;
    };
    let Ok(ast) = serde_json::to_value(&ast) else {
        return false;
    };
    let (mut all, mut terms) = (0, 0);
    each_node(&ast, &mut |node| {
        all += usize::from(template_constant(node));
        terms += lookup_term_templates(node).len();
    });
    all == terms
}

/// The edits of a filter or test `node` names: a full name's builtin prefix blanked
/// where sandball has the filter (or test), and the call of a Python plugin where it
/// has not (see the module's doc).
fn plugin_name(source: &str, node: &serde_json::Value, edits: &mut Vec<Edit>) -> Option<()> {
    let kind = match node.get("expr")?.as_str()? {
        "Filter" => Kind::Filter,
        "Test" => Kind::Test,
        _ => return None,
    };
    let inner = node.get("inner")?.get(0)?;
    let written = inner.get("name")?.as_str()?;
    let (start, end) = span(node)?;
    // The name follows the value it applies to.
    let from = inner.get("expr").and_then(span).map_or(start, |(_, e)| e);
    let at = from + find_word(source.get(from..end)?, written)?;
    if native_name(kind, written) {
        let prefix = BUILTIN_PREFIXES.iter().find(|p| written.starts_with(**p))?;
        edits.push(Edit {
            at,
            remove: prefix.len(),
            order: 1,
            text: Cow::Borrowed(&BLANK[..prefix.len()]),
        });
        return Some(());
    }
    let name: String = written.chars().filter(|c| !c.is_whitespace()).collect();
    let call = dispatcher(kind);
    let after = at + written.len();
    let args = inner
        .get("args")
        .and_then(|a| a.as_array())
        .map_or(0, Vec::len);
    let rest = source.get(after..end)?;
    if rest.trim_start().starts_with('(') {
        // `name(args)` → `call("name", args)`.
        let paren = after + rest.find('(')?;
        let comma = if args > 0 { ", " } else { "" };
        edits.push(Edit {
            at,
            remove: paren + 1 - at,
            order: 1,
            text: Cow::Owned(format!("{call}(\"{name}\"{comma}")),
        });
    } else if args == 1 {
        // A test's one argument without parentheses: `is name arg` → `is call("name", arg)`.
        let (_, arg_end) = first_span(inner.get("args")?)?;
        edits.push(Edit {
            at,
            remove: written.len(),
            order: 1,
            text: Cow::Owned(format!("{call}(\"{name}\",")),
        });
        edits.push(Edit {
            at: arg_end,
            remove: 0,
            order: 0,
            text: Cow::Borrowed(")"),
        });
    } else {
        edits.push(Edit {
            at,
            remove: written.len(),
            order: 1,
            text: Cow::Owned(format!("{call}(\"{name}\")")),
        });
    }
    Some(())
}

/// Where `word` first stands as a whole name in `text` (not inside a longer one).
fn find_word(text: &str, word: &str) -> Option<usize> {
    let name_char = |c: char| c.is_alphanumeric() || c == '_' || c == '.';
    text.match_indices(word).map(|(i, _)| i).find(|&i| {
        !text[..i].ends_with(name_char) && !text[i + word.len()..].starts_with(name_char)
    })
}

/// The span of the first node under `value` that has one.
fn first_span(value: &serde_json::Value) -> Option<(usize, usize)> {
    if let Some(found) = span(value) {
        return Some(found);
    }
    match value {
        serde_json::Value::Array(items) => items.iter().find_map(first_span),
        serde_json::Value::Object(map) => map.values().find_map(first_span),
        _ => None,
    }
}

/// `left % right` as Python computes it: a string formatted with `right`, or the
/// modulo of two numbers.
fn percent(state: &State, left: &Value, right: &Value) -> Result<Value, Error> {
    ensure_defined(state, left)?;
    ensure_defined(state, right)?;
    if let Some(format) = left.as_str() {
        return printf(format, right).map(Value::from);
    }
    match (number(left), number(right)) {
        (Some(Number::Int(a)), Some(Number::Int(b))) => {
            if b == 0 {
                return Err(type_error("integer modulo by zero"));
            }
            let r = a.wrapping_rem(b);
            Ok(Value::from(if r != 0 && (r < 0) != (b < 0) {
                r + b
            } else {
                r
            }))
        }
        (Some(a), Some(b)) => {
            let (a, b) = (a.float(), b.float());
            if b == 0.0 {
                return Err(type_error("float modulo"));
            }
            let mut r = a % b;
            if r != 0.0 && (r < 0.0) != (b < 0.0) {
                r += b;
            } else if r == 0.0 {
                r = 0.0_f64.copysign(b);
            }
            Ok(Value::from(r))
        }
        _ => Err(type_error(&format!(
            "unsupported operand type(s) for %: '{}' and '{}'",
            python_type(left),
            python_type(right)
        ))),
    }
}

/// Jinja's `format` filter: the value `%` the positional arguments (as a tuple) or the
/// keyword arguments (as a mapping), never both.
fn format_filter(
    state: &State,
    value: &Value,
    args: minijinja::value::Rest<minijinja::value::ValueOrKwargs>,
) -> Result<String, Error> {
    ensure_defined(state, value)?;
    let (positional, kwargs): (Vec<Value>, Vec<Value>) =
        args.into_values().into_iter().partition(|a| !a.is_kwargs());
    let args = match kwargs.first() {
        Some(_) if !positional.is_empty() => {
            return Err(type_error(
                "can't handle positional and keyword arguments at the same time",
            ));
        }
        Some(kwargs) => Value::from_pairs(
            kwargs
                .try_iter()?
                .map(|k| (k.clone(), kwargs.get_item(&k).unwrap_or_default())),
        ),
        None => Value::from(minijinja::value::Tuple::from(positional)),
    };
    printf(&py_str(value)?, &args)
}

/// A number as Python's `%` sees it (a bool is an int).
#[derive(Clone, Copy)]
enum Number {
    Int(i128),
    Float(f64),
}

impl Number {
    fn float(self) -> f64 {
        match self {
            // Precision lost beyond 2^53, as Python's float() loses it.
            #[allow(clippy::cast_precision_loss)]
            Number::Int(i) => i as f64,
            Number::Float(f) => f,
        }
    }
}

fn number(value: &Value) -> Option<Number> {
    match value.kind() {
        ValueKind::Bool => Some(Number::Int(i128::from(value.is_true()))),
        ValueKind::Number if value.is_integer() => {
            i128::try_from(value.clone()).ok().map(Number::Int)
        }
        ValueKind::Number => f64::try_from(value.clone()).ok().map(Number::Float),
        _ => None,
    }
}

fn type_error(message: &str) -> Error {
    Error::new(ErrorKind::InvalidOperation, message.to_string())
}

/// The state of one formatting: Python's rules for which argument a conversion takes.
struct Args<'a> {
    /// The tuple's items, or the single value.
    items: Vec<Value>,
    /// The tuple's length, or -1 for a single value.
    len: isize,
    /// The next item; -2 for a single value not taken yet.
    next: isize,
    /// The mapping `%(key)s` reads from, when the value is one.
    mapping: Option<&'a Value>,
}

impl Args<'_> {
    fn take(&mut self) -> Result<Value, Error> {
        if self.next >= self.len {
            return Err(type_error("not enough arguments for format string"));
        }
        self.next += 1;
        if self.len < 0 {
            Ok(self.items.first().cloned().unwrap_or_default())
        } else {
            let index = usize::try_from(self.next - 1).unwrap_or_default();
            Ok(self.items.get(index).cloned().unwrap_or_default())
        }
    }
}

/// Python's `format % args`: a tuple's items are the arguments, any other value is
/// the only one (and a mapping serves `%(key)s`); errors are Python's.
pub(crate) fn printf(format: &str, args: &Value) -> Result<String, Error> {
    let tuple = args.kind() == ValueKind::Seq && super::python::is_tuple(args);
    let items: Vec<Value> = if tuple {
        args.try_iter()?.collect()
    } else {
        vec![args.clone()]
    };
    let len = if tuple {
        isize::try_from(items.len()).unwrap_or(isize::MAX)
    } else {
        -1
    };
    let mapping =
        (!tuple && matches!(args.kind(), ValueKind::Map | ValueKind::Seq)).then_some(args);
    let mut state = Args {
        items,
        next: if tuple { 0 } else { -2 },
        len,
        mapping,
    };
    let chars: Vec<char> = format.chars().collect();
    let mut out = String::with_capacity(format.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '%' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        i += 1;
        if chars.get(i) == Some(&'%') {
            out.push('%');
            i += 1;
            continue;
        }
        i = conversion(&chars, i, &mut state, &mut out)?;
    }
    if state.next < state.len && state.mapping.is_none() {
        return Err(type_error(
            "not all arguments converted during string formatting",
        ));
    }
    Ok(out)
}

/// A conversion's flags, width and precision.
#[derive(Default)]
struct Spec {
    left: bool,
    zero: bool,
    plus: bool,
    space: bool,
    alternate: bool,
    width: usize,
    precision: Option<usize>,
}

/// Formats the conversion starting at `chars[i]` (after its `%`); returns the index
/// after it.
fn conversion(
    chars: &[char],
    mut i: usize,
    args: &mut Args,
    out: &mut String,
) -> Result<usize, Error> {
    let incomplete = || type_error("incomplete format");
    if chars.get(i) == Some(&'(') {
        let Some(mapping) = args.mapping else {
            return Err(type_error("format requires a mapping"));
        };
        let mut depth = 1;
        let start = i + 1;
        while depth > 0 {
            i += 1;
            match chars.get(i) {
                None => return Err(type_error("incomplete format key")),
                Some('(') => depth += 1,
                Some(')') => depth -= 1,
                Some(_) => {}
            }
        }
        let key: String = chars[start..i].iter().collect();
        i += 1;
        if mapping.kind() != ValueKind::Map {
            return Err(type_error(&format!(
                "{} indices must be integers or slices, not str",
                python_type(mapping)
            )));
        }
        let value = mapping.get_item(&Value::from(key.as_str()))?;
        if value.is_undefined() {
            let mut quoted = String::new();
            py_repr(&Value::from(key), &mut quoted)?;
            return Err(type_error(&quoted));
        }
        args.items = vec![value];
        args.len = -1;
        args.next = -2;
    }
    let mut spec = Spec::default();
    while let Some(&c) = chars.get(i) {
        match c {
            '-' => spec.left = true,
            '+' => spec.plus = true,
            ' ' => spec.space = true,
            '#' => spec.alternate = true,
            '0' => spec.zero = true,
            _ => break,
        }
        i += 1;
    }
    if chars.get(i) == Some(&'*') {
        let width = star(args)?;
        spec.left |= width < 0;
        spec.width = usize::try_from(width.unsigned_abs()).unwrap_or(usize::MAX);
        i += 1;
    } else {
        (spec.width, i) = digits(chars, i);
    }
    if chars.get(i) == Some(&'.') {
        i += 1;
        if chars.get(i) == Some(&'*') {
            spec.precision = Some(usize::try_from(star(args)?.max(0)).unwrap_or(0));
            i += 1;
        } else {
            let (precision, next) = digits(chars, i);
            spec.precision = Some(precision);
            i = next;
        }
    }
    while matches!(chars.get(i), Some('h' | 'l' | 'L')) {
        i += 1;
    }
    let c = *chars.get(i).ok_or_else(incomplete)?;
    // Python takes the argument before it checks the conversion.
    let value = args.take()?;
    if !"diuoxXeEfFgGcrsa".contains(c) {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            format!(
                "unsupported format character '{c}' (0x{:x}) at index {i}",
                c as u32
            ),
        ));
    }
    let text = convert(c, &value, &spec)?;
    out.push_str(&text);
    Ok(i + 1)
}

/// A `*` width or precision: the next argument, an int.
fn star(args: &mut Args) -> Result<i128, Error> {
    match number(&args.take()?) {
        Some(Number::Int(n)) => Ok(n),
        _ => Err(type_error("* wants int")),
    }
}

/// The decimal number at `chars[i]` (0 when there is none) and the index after it.
fn digits(chars: &[char], mut i: usize) -> (usize, usize) {
    let mut n: usize = 0;
    while let Some(d) = chars.get(i).and_then(|c| c.to_digit(10)) {
        n = n.saturating_mul(10).saturating_add(d as usize);
        i += 1;
    }
    (n, i)
}

/// One converted value, padded to its width.
fn convert(c: char, value: &Value, spec: &Spec) -> Result<String, Error> {
    match c {
        's' | 'r' | 'a' => {
            let mut text = match c {
                's' => py_str(value)?,
                _ => {
                    let mut repr = String::new();
                    py_repr(value, &mut repr)?;
                    if c == 'a' { ascii(&repr) } else { repr }
                }
            };
            if let Some(precision) = spec.precision {
                text = text.chars().take(precision).collect();
            }
            Ok(pad("", &text, spec, false))
        }
        'c' => {
            let ch = match (number(value), value.as_str()) {
                (Some(Number::Int(n)), _) => u32::try_from(n)
                    .ok()
                    .and_then(char::from_u32)
                    .ok_or_else(|| type_error("%c arg not in range(0x110000)"))?,
                (_, Some(s)) if s.chars().count() == 1 => s.chars().next().unwrap_or_default(),
                _ => return Err(type_error("%c requires int or char")),
            };
            Ok(pad("", &ch.to_string(), spec, false))
        }
        'd' | 'i' | 'u' | 'o' | 'x' | 'X' => {
            let n = match number(value) {
                Some(Number::Int(n)) => n,
                Some(Number::Float(f)) if matches!(c, 'd' | 'i' | 'u') => float_to_int(f)?,
                Some(Number::Float(_)) => {
                    return Err(type_error(&format!(
                        "%{c} format: an integer is required, not float"
                    )));
                }
                None => {
                    let wanted = if matches!(c, 'd' | 'i' | 'u') {
                        "a real number"
                    } else {
                        "an integer"
                    };
                    return Err(type_error(&format!(
                        "%{c} format: {wanted} is required, not {}",
                        python_type(value)
                    )));
                }
            };
            let magnitude = n.unsigned_abs();
            let (mut body, prefix) = match c {
                'o' => (format!("{magnitude:o}"), "0o"),
                'x' => (format!("{magnitude:x}"), "0x"),
                'X' => (format!("{magnitude:X}"), "0X"),
                _ => (magnitude.to_string(), ""),
            };
            if let Some(precision) = spec.precision
                && body.len() < precision
            {
                body = format!("{}{body}", "0".repeat(precision - body.len()));
            }
            let prefix = if spec.alternate { prefix } else { "" };
            let sign = sign(n < 0, spec);
            Ok(pad(&format!("{sign}{prefix}"), &body, spec, true))
        }
        'e' | 'E' | 'f' | 'F' | 'g' | 'G' => {
            let f = match number(value) {
                Some(n) => n.float(),
                None => {
                    return Err(type_error(&format!(
                        "must be real number, not {}",
                        python_type(value)
                    )));
                }
            };
            let body = float_body(c, f.abs(), spec);
            let sign = sign(f.is_sign_negative() && !f.is_nan(), spec);
            Ok(pad(sign, &body, spec, f.is_finite()))
        }
        _ => Err(type_error("incomplete format")),
    }
}

/// A float's value truncated to an int, as `%d` takes it.
fn float_to_int(f: f64) -> Result<i128, Error> {
    if f.is_nan() {
        return Err(type_error("cannot convert float NaN to integer"));
    }
    if f.is_infinite() {
        return Err(type_error("cannot convert float infinity to integer"));
    }
    // Floats beyond i128 are out of any playbook's range; they saturate.
    #[allow(clippy::cast_possible_truncation)]
    Ok(f.trunc() as i128)
}

/// The sign a number's text starts with.
fn sign(negative: bool, spec: &Spec) -> &'static str {
    if negative {
        "-"
    } else if spec.plus {
        "+"
    } else if spec.space {
        " "
    } else {
        ""
    }
}

/// `prefix` and `body` padded to the width: spaces on the left (on the right with
/// `-`), or zeros between them with `0` on a number.
fn pad(prefix: &str, body: &str, spec: &Spec, numeric: bool) -> String {
    let len = prefix.chars().count() + body.chars().count();
    if len >= spec.width {
        return format!("{prefix}{body}");
    }
    let fill = spec.width - len;
    if spec.left {
        format!("{prefix}{body}{}", " ".repeat(fill))
    } else if spec.zero && numeric {
        format!("{prefix}{}{body}", "0".repeat(fill))
    } else {
        format!("{}{prefix}{body}", " ".repeat(fill))
    }
}

/// A non-negative float in `%e`, `%f` or `%g` form.
fn float_body(c: char, f: f64, spec: &Spec) -> String {
    let upper = c.is_ascii_uppercase();
    if !f.is_finite() {
        let text = if f.is_nan() { "nan" } else { "inf" };
        return if upper {
            text.to_uppercase()
        } else {
            text.to_string()
        };
    }
    let precision = spec.precision.unwrap_or(6);
    let text = match c.to_ascii_lowercase() {
        'f' => {
            let mut text = format!("{f:.precision$}");
            if spec.alternate && precision == 0 {
                text.push('.');
            }
            text
        }
        'e' => exponent(f, precision, spec.alternate),
        _ => {
            let precision = precision.max(1);
            let exp = if f == 0.0 {
                0
            } else {
                exponent_of(&format!("{f:.prec$e}", prec = precision - 1))
            };
            let text = if exp < -4 || exp >= i64::try_from(precision).unwrap_or(i64::MAX) {
                exponent(f, precision - 1, spec.alternate)
            } else {
                let decimals =
                    usize::try_from(i64::try_from(precision).unwrap_or(0) - 1 - exp).unwrap_or(0);
                let mut text = format!("{f:.decimals$}");
                if spec.alternate && decimals == 0 {
                    text.push('.');
                }
                text
            };
            if spec.alternate {
                text
            } else {
                strip_zeros(&text)
            }
        }
    };
    if upper { text.to_uppercase() } else { text }
}

/// Rust's `1.5e3` exponent, as a number.
fn exponent_of(text: &str) -> i64 {
    text.rsplit_once('e')
        .and_then(|(_, e)| e.parse().ok())
        .unwrap_or(0)
}

/// `%e`: a mantissa with `precision` decimals and a signed exponent of two digits or
/// more (`1.5e+03`).
fn exponent(f: f64, precision: usize, alternate: bool) -> String {
    let text = format!("{f:.precision$e}");
    let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
    let exp: i64 = exp.parse().unwrap_or(0);
    let dot = if alternate && precision == 0 { "." } else { "" };
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}{dot}e{sign}{:02}", exp.abs())
}

/// `%g` without its trailing zeros (nor a trailing dot), in the mantissa.
fn strip_zeros(text: &str) -> String {
    let (mantissa, exp) = match text.split_once('e') {
        Some((m, e)) => (m, format!("e{e}")),
        None => (text, String::new()),
    };
    let mantissa = if mantissa.contains('.') {
        mantissa.trim_end_matches('0').trim_end_matches('.')
    } else {
        mantissa
    };
    format!("{mantissa}{exp}")
}

/// Python's `ascii()` of a repr: characters beyond ASCII escaped.
fn ascii(repr: &str) -> String {
    let mut out = String::with_capacity(repr.len());
    for c in repr.chars() {
        match c as u32 {
            0..=0x7f => out.push(c),
            n @ 0x80..=0xff => out.push_str(&format!("\\x{n:02x}")),
            n @ 0x100..=0xffff => out.push_str(&format!("\\u{n:04x}")),
            n => out.push_str(&format!("\\U{n:08x}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_in_lookup_terms_are_the_lookups() {
        for (expr, only) in [
            ("lookup('x', '{{ a }}')[1] == 42", true),
            ("query('x', 1, default='{{ b }}') | length", true),
            ("lookup('x', '{{ a }}') == '{{ b }}'", false),
            ("f('{{ a }}')", false),
            ("'{{ a }}' == 'a'", false),
            ("{{ a }}", false),
        ] {
            assert_eq!(templates_only_in_lookup_terms(expr), only, "{expr}");
        }
    }

    #[test]
    fn rewrites_follow_the_engine_precedence() {
        let syntax = SyntaxConfig::default();
        let rewritten = |s: &str| rewrite_template(s, &syntax).into_owned();
        assert_eq!(
            rewritten("{{ 'x' ~ '%s' % a ~ 'y' }}"),
            "{{ 'x' ~ __sandball_percent('%s' , a) ~ 'y' }}"
        );
        assert_eq!(
            rewritten("{{ '%s' % a | upper }}"),
            "{{ __sandball_percent('%s' , a | upper) }}"
        );
        assert_eq!(
            rewritten("{% set x = (a) % (b, c) % d %}"),
            "{% set x = __sandball_percent(__sandball_percent((a) , (b, c)) , d) %}"
        );
        assert_eq!(
            rewritten("100% {% if a %}b{% endif %}"),
            "100% {% if a %}b{% endif %}"
        );
        assert_eq!(
            rewrite_expression("a % 2 == 1"),
            "__sandball_percent(a , 2) == 1"
        );
    }

    #[test]
    fn formats_as_python() {
        let tuple = |items: Vec<Value>| Value::from(minijinja::value::Tuple::from(items));
        assert_eq!(
            printf(
                "%s-%02d|%5.1f|%x",
                &tuple(vec!["a".into(), 3.into(), 2.25.into(), 255.into()])
            )
            .unwrap(),
            "a-03|  2.2|ff"
        );
        assert_eq!(
            printf(
                "%g %g %G",
                &tuple(vec![1e-5.into(), 123456.5.into(), 1e20.into()])
            )
            .unwrap(),
            "1e-05 123456 1E+20"
        );
        assert_eq!(printf("%s", &Value::from(vec![1, 2])).unwrap(), "[1, 2]");
        assert_eq!(
            printf("%s %s", &tuple(vec![1.into()]))
                .unwrap_err()
                .detail(),
            Some("not enough arguments for format string")
        );
    }
}
