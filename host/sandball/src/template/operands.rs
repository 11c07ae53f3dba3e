//! Operations on undefined values where attributes of undefined values chain, as
//! ansible-core 2.19 has them: `nope.a | default('x')` is `x`, but an operation given an
//! undefined value (`nope.a ~ 'x'`, `nope.a + 1`, `nope.a == 1`, `1 in nope.a`, `not
//! nope.a`, the test of `x if nope.a else y`, the left side of `and`/`or`, `{% if
//! nope.a %}`, `{% for i in nope.a %}`) is the undefined error, even under `default`.
//!
//! minijinja's chainable undefined values are lenient in operations (`~` prints them as
//! nothing, comparisons are false), so the templates the chained environment runs are
//! rewritten before they are compiled: every operand that may be undefined becomes a
//! call of [`DEFINED`], which fails on an undefined value. Filters, calls, attributes
//! and the branches of `x if c else y` still pass undefined values on.

use std::borrow::Cow;

use minijinja::syntax::SyntaxConfig;
use minijinja::{Error, State, Value};

use crate::template::convert::ensure_defined;
use crate::template::percent::{Edit, apply, each_node, span};
use crate::template::undefined::Plugins;

/// The global function an operand that may be undefined is passed through.
pub(crate) const DEFINED: &str = "__sandball_defined";

/// Registers [`DEFINED`].
pub(crate) fn register(env: &mut Plugins<'_>) {
    env.taking_undefined().add_function(DEFINED, defined);
}

/// An operand as it is, or the undefined error naming what is undefined.
fn defined(state: &State, value: Value) -> Result<Value, Error> {
    ensure_defined(state, &value)?;
    Ok(value)
}

/// A template's source with its operands checked (see the module's doc); the source
/// itself when it does not parse (compiling it reports the error).
pub(crate) fn guard_template<'s>(source: &'s str, syntax: &SyntaxConfig) -> Cow<'s, str> {
    match minijinja::machinery::parse(source, "template", syntax.clone()) {
        Ok(ast) => guard(source, serde_json::to_value(&ast).ok()),
        Err(_) => Cow::Borrowed(source),
    }
}

/// [`guard_template`] for a bare expression.
pub(crate) fn guard_expression(expr: &str) -> Cow<'_, str> {
    match minijinja::machinery::parse_expr(expr) {
        Ok(ast) => guard(expr, serde_json::to_value(&ast).ok()),
        Err(_) => Cow::Borrowed(expr),
    }
}

fn guard<'s>(source: &'s str, ast: Option<serde_json::Value>) -> Cow<'s, str> {
    let mut edits = Vec::new();
    if let Some(ast) = ast {
        collect(source, &ast, &mut edits);
    }
    apply(source, edits)
}

/// Records the edits of the operands under `node` (the engine's syntax tree as JSON:
/// each node is `{"expr" or "stmt": kind, "inner": [fields, span]}`).
fn collect(source: &str, node: &serde_json::Value, edits: &mut Vec<Edit>) {
    each_node(node, &mut |node| {
        if let Some(fields) = node.get("inner").and_then(|i| i.get(0)) {
            for operand in operands(node, fields) {
                wrap(source, operand, edits);
            }
        }
    });
}

/// The operands of `node` whose value an operation uses (`fields` are its fields).
fn operands<'n>(
    node: &serde_json::Value,
    fields: &'n serde_json::Value,
) -> Vec<&'n serde_json::Value> {
    let field = |name: &str| fields.get(name).into_iter().collect::<Vec<_>>();
    let kind = node.get("expr").or_else(|| node.get("stmt"));
    match kind.and_then(|k| k.as_str()) {
        Some("BinOp") => match fields.get("op").and_then(|o| o.as_str()) {
            // `a and b` is `b` when `a` holds: only `a` is tested.
            Some("ScAnd" | "ScOr") => field("left"),
            _ => [field("left"), field("right")].concat(),
        },
        Some("UnaryOp") => field("expr"),
        Some("Compare") => {
            let mut all = field("expr");
            if let Some(ops) = fields.get("ops").and_then(|o| o.as_array()) {
                all.extend(ops.iter().filter_map(|op| op.get("expr")));
            }
            all
        }
        Some("IfExpr") => field("test_expr"),
        Some("IfCond") => field("expr"),
        Some("ForLoop") => field("iter"),
        _ => Vec::new(),
    }
}

/// Whether a node's value may be undefined: names, attributes, items, calls, filters,
/// conditional expressions and `and`/`or` may give one; operations, tests and
/// literals never do.
fn may_be_undefined(node: &serde_json::Value) -> bool {
    match node.get("expr").and_then(|k| k.as_str()) {
        Some("Var" | "GetAttr" | "GetItem" | "Slice" | "Call" | "Filter" | "IfExpr") => true,
        Some("BinOp") => node
            .get("inner")
            .and_then(|i| i.get(0))
            .and_then(|f| f.get("op"))
            .and_then(|o| o.as_str())
            .is_some_and(|op| op == "ScAnd" || op == "ScOr"),
        _ => false,
    }
}

/// The edits that pass `operand` through [`DEFINED`].
fn wrap(source: &str, operand: &serde_json::Value, edits: &mut Vec<Edit>) {
    if !may_be_undefined(operand) {
        return;
    }
    let Some((start, end)) = extent(source, operand) else {
        return;
    };
    edits.push(Edit {
        at: start,
        remove: 0,
        order: 2,
        text: Cow::Owned(format!("{DEFINED}(")),
    });
    edits.push(Edit {
        at: end,
        remove: 0,
        order: 0,
        text: Cow::Borrowed(")"),
    });
}

/// The text of a node as byte offsets: the engine's spans leave out what comes before
/// some nodes' own part (`x | f` starts at `f`) and the parentheses around them, so the
/// extent covers every span under the node, then the parentheses it leaves open.
fn extent(source: &str, node: &serde_json::Value) -> Option<(usize, usize)> {
    let (mut start, mut end) = covered(node)?;
    let (closes, opens) = unbalanced(source.get(start..end)?);
    for _ in 0..closes {
        start = source.get(..start)?.trim_end().strip_suffix('(')?.len();
    }
    for _ in 0..opens {
        let rest = source.get(end..)?;
        let trimmed = rest.trim_start().strip_prefix(')')?;
        end += rest.len() - trimmed.len();
    }
    Some((start, end))
}

/// The smallest and largest offsets of the spans under `node`.
fn covered(node: &serde_json::Value) -> Option<(usize, usize)> {
    let mut found = span(node);
    let children: Box<dyn Iterator<Item = &serde_json::Value>> = match node {
        serde_json::Value::Array(items) => Box::new(items.iter()),
        serde_json::Value::Object(map) => Box::new(map.values()),
        _ => return found,
    };
    for child in children {
        if let Some((s, e)) = covered(child) {
            found = Some(found.map_or((s, e), |(fs, fe)| (fs.min(s), fe.max(e))));
        }
    }
    found
}

/// How many `)` in `text` close a parenthesis opened before it, and how many `(` stay
/// open at its end (string literals skipped).
fn unbalanced(text: &str) -> (usize, usize) {
    let (mut closes, mut depth) = (0usize, 0usize);
    outside_strings(text, |c| match c {
        '(' => depth += 1,
        ')' if depth == 0 => closes += 1,
        ')' => depth -= 1,
        _ => {}
    });
    (closes, depth)
}

/// Calls `f` on each character of an expression's text outside its string literals;
/// the quote character of a literal still open at the end.
pub(crate) fn outside_strings(text: &str, mut f: impl FnMut(char)) -> Option<char> {
    let mut open = None;
    let mut escaped = false;
    for c in text.chars() {
        match open {
            Some(_) if escaped => escaped = false,
            Some(_) if c == '\\' => escaped = true,
            Some(q) if c == q => open = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => open = Some(c),
            None => f(c),
        }
    }
    open
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operands_that_may_be_undefined_are_checked() {
        let d = DEFINED;
        for (expr, want) in [
            ("a ~ 'x'", format!("{d}(a) ~ 'x'")),
            (
                "(a.b ~ 'x') | default(1)",
                format!("({d}(a.b) ~ 'x') | default(1)"),
            ),
            (
                "(a | f) ~ b[1] | g",
                format!("({d}(a | f)) ~ {d}(b[1] | g)"),
            ),
            (
                "(a ~ b) | d(1) ~ c",
                format!("{d}(({d}(a) ~ {d}(b)) | d(1)) ~ {d}(c)"),
            ),
            ("not a.b", format!("not {d}(a.b)")),
            ("-(a)", format!("-({d}(a))")),
            ("a < b < 'c'", format!("{d}(a) < {d}(b) < 'c'")),
            ("a not in b", format!("{d}(a) not in {d}(b)")),
            ("x if a.b else y.z", format!("x if {d}(a.b) else y.z")),
            ("a and b or c", format!("{d}({d}(a) and b) or c")),
            ("f(')(') + 1", format!("{d}(f(')(')) + 1")),
            ("a | default(1)", "a | default(1)".to_string()),
            ("(1 + 2) * 3", "(1 + 2) * 3".to_string()),
        ] {
            assert_eq!(guard_expression(expr), want, "{expr}");
        }
        let syntax = SyntaxConfig::default();
        assert_eq!(
            guard_template(
                "{% if a %}x{% elif b.c %}{% endif %}{% for i in l %}{% endfor %}",
                &syntax
            ),
            format!(
                "{{% if {d}(a) %}}x{{% elif {d}(b.c) %}}{{% endif %}}{{% for i in {d}(l) %}}{{% endfor %}}"
            )
        );
    }
}
