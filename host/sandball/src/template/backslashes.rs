//! Backslashes in string constants of `{{ }}` expressions, as Ansible keeps them: a
//! task's or a variable's template comes from YAML, which has already read its escapes,
//! so ansible-core 2.19 gives such constants their text as written (`'\1'` is a
//! backslash and a `1`, the backreference `regex_replace` wants, not Jinja's `\x01`).
//! Statements (`{% %}`), conditionals and template files keep Jinja's escapes.
//!
//! The engine reads escapes in every string constant, so before it compiles a value's
//! template, the constants of its expressions that hold a backslash are written anew
//! with each backslash (and quote) escaped: the engine then reads back the text as
//! written.

use std::borrow::Cow;

use minijinja::machinery::{Token, tokenize};
use minijinja::syntax::SyntaxConfig;

/// `source` (a template, or with `in_expr` a bare expression) with the string constants
/// of its expressions escaped so that the engine reads their text as written; `source`
/// itself when none holds a backslash (or it does not lex: compiling it says why).
pub(crate) fn keep_backslashes<'s>(
    source: &'s str,
    in_expr: bool,
    syntax: &SyntaxConfig,
) -> Cow<'s, str> {
    if !source.contains('\\') {
        return Cow::Borrowed(source);
    }
    let lexed = lexable(source);
    let mut out = String::with_capacity(source.len() + 8);
    let mut copied = 0;
    let mut in_variable = in_expr;
    for token in tokenize(&lexed, in_expr, syntax.clone()) {
        let Ok((token, span)) = token else {
            return Cow::Borrowed(source);
        };
        match token {
            Token::VariableStart => in_variable = true,
            Token::VariableEnd => in_variable = false,
            Token::Str(_) | Token::String(_) if in_variable => {
                let (start, end) = (span.start_offset as usize, span.end_offset as usize);
                let Some(raw) = source.get(start..end) else {
                    return Cow::Borrowed(source);
                };
                let Some(quote) = raw.chars().next() else {
                    continue;
                };
                let inner = &raw[quote.len_utf8()..raw.len() - quote.len_utf8()];
                if !inner.contains('\\') {
                    continue;
                }
                out.push_str(&source[copied..start]);
                out.push(quote);
                for c in inner.chars() {
                    if c == '\\' || c == quote {
                        out.push('\\');
                    }
                    out.push(c);
                }
                out.push(quote);
                copied = end;
            }
            _ => {}
        }
    }
    if copied == 0 {
        return Cow::Borrowed(source);
    }
    out.push_str(&source[copied..]);
    Cow::Owned(out)
}

/// `source` with each backslash the engine would refuse as an escape (`\d`, `\1`,
/// `\x41`) made a `_`, byte for byte: the engine's lexer then finds the same tokens at
/// the same offsets, and their text is taken from `source`.
fn lexable(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut chars = source.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let rest = &source[at + 1..];
        let valid = match rest.chars().next() {
            Some('"' | '\'' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't') => true,
            Some('u') => rest.len() >= 5 && rest[1..5].chars().all(|h| h.is_ascii_hexdigit()),
            _ => false,
        };
        if valid {
            out.push(c);
            if let Some((_, escaped)) = chars.next() {
                out.push(escaped);
            }
        } else {
            out.push('_');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::keep_backslashes;
    use minijinja::syntax::SyntaxConfig;

    fn kept(source: &str, in_expr: bool) -> String {
        keep_backslashes(source, in_expr, &SyntaxConfig::default()).into_owned()
    }

    #[test]
    fn expression_constants_keep_their_backslashes() {
        assert_eq!(
            kept(r"{{ x | f('\1', 'a') }}", false),
            r"{{ x | f('\\1', 'a') }}"
        );
        assert_eq!(kept(r#"{{ "it\"s" }}"#, false), r#"{{ "it\\\"s" }}"#);
        assert_eq!(kept(r"'\d+' ~ x", true), r"'\\d+' ~ x");
        // Statements and text outside expressions are left as they are.
        assert_eq!(
            kept(r"{% set a = '\n' %}\1{{ a }}", false),
            r"{% set a = '\n' %}\1{{ a }}"
        );
        assert_eq!(kept("{{ 'plain' }}", false), "{{ 'plain' }}");
        // Escapes the engine would refuse are kept as written too.
        assert_eq!(
            kept(r"{{ 'C:\x' ~ '\d\u00e9' }}", false),
            r"{{ 'C:\\x' ~ '\\d\\u00e9' }}"
        );
    }
}
