//! The imports a Python file makes, read without running it: every `import` and
//! `from … import` statement, wherever it is (inside `try`, `if`, functions), with
//! comments and string literals (docstrings, `EXAMPLES`) ignored.

/// One import statement's target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Import {
    /// `import a.b.c` (one per name of a comma-separated list).
    Module(String),
    /// `from <module> import <names>`; `level` counts the leading dots of a relative
    /// import (0 for absolute), `module` is what follows them (possibly empty).
    From {
        /// Leading dots.
        level: usize,
        /// The module after the dots.
        module: String,
        /// The imported names (`*` for a star import).
        names: Vec<String>,
    },
}

/// The imports of a Python source, in order.
pub fn imports(src: &str) -> Vec<Import> {
    let mut out = Vec::new();
    for line in logical_lines(src) {
        for stmt in line.split(';') {
            parse_statement(stmt.trim(), &mut out);
        }
    }
    out
}

fn parse_statement(stmt: &str, out: &mut Vec<Import>) {
    if let Some(rest) = keyword(stmt, "import") {
        for part in rest.split(',') {
            if let Some(name) = part.split_whitespace().next()
                && is_dotted(name)
            {
                out.push(Import::Module(name.to_string()));
            }
        }
    } else if let Some(rest) = keyword(stmt, "from") {
        let Some((module, names)) = split_from(rest) else {
            return;
        };
        let level = module.len() - module.trim_start_matches('.').len();
        let module = module.trim_start_matches('.').to_string();
        if !(module.is_empty() || is_dotted(&module)) || (level == 0 && module.is_empty()) {
            return;
        }
        let names = names
            .trim()
            .trim_start_matches('(')
            .trim_end_matches(')')
            .split(',')
            .filter_map(|n| n.split_whitespace().next())
            .filter(|n| *n == "*" || is_dotted(n))
            .map(str::to_string)
            .collect();
        out.push(Import::From {
            level,
            module,
            names,
        });
    }
}

/// `from X import Y`: X and Y, where X may touch `import` (`from . import x`,
/// `from .import x`).
fn split_from(rest: &str) -> Option<(&str, &str)> {
    let idx = rest.find("import")?;
    let module = rest[..idx].trim();
    let after = &rest[idx + "import".len()..];
    if !after.starts_with([' ', '\t', '(']) || module.contains(char::is_whitespace) {
        return None;
    }
    Some((module, after))
}

fn keyword<'a>(stmt: &'a str, kw: &str) -> Option<&'a str> {
    let rest = stmt.strip_prefix(kw)?;
    rest.starts_with([' ', '\t', '.', '('])
        .then_some(rest.trim_start())
}

fn is_dotted(name: &str) -> bool {
    !name.is_empty()
        && name
            .split('.')
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '_'))
}

/// Splits a source into logical lines: comments dropped, string literals replaced by
/// `""`, lines joined inside brackets and after a trailing backslash.
fn logical_lines(src: &str) -> Vec<String> {
    let chars: Vec<char> = src.chars().collect();
    let mut lines = Vec::new();
    let mut cur = String::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '#' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '\'' | '"' => {
                i = skip_string(&chars, i);
                cur.push_str("\"\"");
                continue;
            }
            '\\' if chars.get(i + 1) == Some(&'\n') => {
                cur.push(' ');
                i += 2;
                continue;
            }
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            '\n' if depth == 0 => {
                lines.push(std::mem::take(&mut cur));
                i += 1;
                continue;
            }
            '\n' => {
                cur.push(' ');
                i += 1;
                continue;
            }
            _ => {}
        }
        cur.push(c);
        i += 1;
    }
    lines.push(cur);
    lines
}

/// Index just past the string literal starting at `start` (a quote character).
fn skip_string(chars: &[char], start: usize) -> usize {
    let q = chars[start];
    let triple = chars.get(start + 1) == Some(&q) && chars.get(start + 2) == Some(&q);
    let mut i = start + if triple { 3 } else { 1 };
    while i < chars.len() {
        match chars[i] {
            // Raw strings too cannot end on an escaped quote, so skipping is right for both.
            '\\' => i += 2,
            c if c == q => {
                if !triple {
                    return i + 1;
                }
                if chars.get(i + 1) == Some(&q) && chars.get(i + 2) == Some(&q) {
                    return i + 3;
                }
                i += 1;
            }
            '\n' if !triple => return i,
            _ => i += 1,
        }
    }
    chars.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(level: usize, module: &str, names: &[&str]) -> Import {
        Import::From {
            level,
            module: module.into(),
            names: names.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn every_import_form() {
        let src = r#"
import os, ansible.module_utils.basic as b
from ansible.module_utils.common.text.converters import to_text, to_native as n
from ansible.module_utils import (
    urls,  # comment
    six,
)
from . import sibling
from .import other
from ..module_utils.helper import thing
from ...plugins.module_utils import (a,
   b)
x = 1; import json
from ansible.module_utils.basic import \
    AnsibleModule
"#;
        assert_eq!(
            imports(src),
            vec![
                Import::Module("os".into()),
                Import::Module("ansible.module_utils.basic".into()),
                from(
                    0,
                    "ansible.module_utils.common.text.converters",
                    &["to_text", "to_native"]
                ),
                from(0, "ansible.module_utils", &["urls", "six"]),
                from(1, "", &["sibling"]),
                from(1, "", &["other"]),
                from(2, "module_utils.helper", &["thing"]),
                from(3, "plugins.module_utils", &["a", "b"]),
                Import::Module("json".into()),
                from(0, "ansible.module_utils.basic", &["AnsibleModule"]),
            ]
        );
    }

    #[test]
    fn imports_inside_blocks_count_and_strings_do_not() {
        let src = r#"
DOCUMENTATION = r'''
module: x
description: |
  from ansible.module_utils.fake import nothing
'''
EXAMPLES = """
import ansible.module_utils.also_fake
"""
s = 'import ansible.module_utils.quoted \' still'
try:
    from ansible.module_utils.urls import fetch_url
except ImportError:
    if True:
        import ansible.module_utils.six
def f():
    from ansible.module_utils.facts import ansible_collector
"#;
        let got: Vec<String> = imports(src)
            .into_iter()
            .map(|i| match i {
                Import::Module(m) => m,
                Import::From { module, .. } => module,
            })
            .collect();
        assert_eq!(
            got,
            [
                "ansible.module_utils.urls",
                "ansible.module_utils.six",
                "ansible.module_utils.facts"
            ]
        );
    }

    #[test]
    fn words_that_look_like_imports_are_not() {
        assert!(imports("important = 1\nfromage = 2\nfrom_x = 3\nprint(import_x)\n").is_empty());
        assert!(imports("from __future__ import annotations\n").len() == 1);
    }
}
