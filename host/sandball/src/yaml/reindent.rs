//! Lines that Ansible's YAML parser (libyaml) reads but saphyr refuses for their
//! indentation. libyaml ignores indentation inside a flow collection (`{…}`, `[…]`) and
//! on the continuation lines of a quoted scalar; saphyr applies YAML 1.2's rule that such
//! lines be indented deeper than the block holding them, so JSON pasted under a key with
//! its closing brace at column 0 is an error there. [`reindent`] finds those lines and
//! pads them: inside a flow collection or a quoted scalar leading blanks are never part
//! of the value, so the padded text means what the original means to libyaml.

/// A text with some lines padded, and by how much (per line, from the first).
pub(crate) struct Reindented {
    /// The padded text.
    pub(crate) text: String,
    /// The blanks added at the start of each line.
    pub(crate) pads: Vec<usize>,
}

/// Where a line starts, as far as the lexer is concerned.
#[derive(Clone, Copy)]
enum Context {
    /// In block context; `continues` when the previous line ended inside a plain scalar
    /// whose line was indented by that much (deeper lines continue that scalar).
    Block { continues: Option<usize> },
    /// Inside `depth` nested flow collections, the outermost opened at column `col`.
    Flow { depth: usize, col: usize },
    /// Inside a quoted scalar opened at column `col`, `in_flow` holding the flow state
    /// to return to when it closes.
    Quoted {
        quote: char,
        col: usize,
        in_flow: Option<(usize, usize)>,
    },
    /// Inside a block scalar (`|`, `>`) whose header line was indented by that much.
    BlockScalar { indent: usize },
}

/// `text` with the lines inside flow collections and quoted scalars padded to be deeper
/// than the column that opened them, or `None` when no line needs it.
pub(crate) fn reindent(text: &str) -> Option<Reindented> {
    let mut context = Context::Block { continues: None };
    let mut out = String::with_capacity(text.len() + 64);
    let mut pads = Vec::new();
    for line in text.split_inclusive('\n') {
        let chars: Vec<char> = line.chars().collect();
        let indent = chars.iter().take_while(|c| **c == ' ').count();
        let blank = chars[indent..].iter().all(|c| c.is_whitespace());
        if let Context::BlockScalar { indent: header } = context {
            if blank || indent > header {
                out.push_str(line);
                pads.push(0);
                continue;
            }
            context = Context::Block { continues: None };
        }
        let opened_at = match context {
            Context::Flow { col, .. } | Context::Quoted { col, .. } => Some(col),
            _ => None,
        };
        let pad = match opened_at {
            Some(col) if !blank && indent <= col && !is_document_marker(&chars) => col + 1 - indent,
            _ => 0,
        };
        out.extend(std::iter::repeat_n(' ', pad));
        out.push_str(line);
        pads.push(pad);
        context = scan_line(&chars, indent, context);
    }
    pads.iter()
        .any(|pad| *pad > 0)
        .then_some(Reindented { text: out, pads })
}

/// `---` or `...` at the start of a line.
fn is_document_marker(chars: &[char]) -> bool {
    let starts = |marker: char| {
        chars.len() >= 3
            && chars[..3].iter().all(|c| *c == marker)
            && chars.get(3).is_none_or(|c| c.is_whitespace())
    };
    starts('-') || starts('.')
}

/// Whether the character at `i` is a blank or the end of the line.
fn blank_at(chars: &[char], i: usize) -> bool {
    chars.get(i).is_none_or(|c| c.is_whitespace())
}

/// The context after the line `chars` (indented by `indent`), given the one it starts
/// in.
fn scan_line(chars: &[char], indent: usize, start: Context) -> Context {
    let mut context = start;
    let mut i = indent;
    // In block context: whether `i` is where a node may start (after an indicator).
    let mut node_start = true;
    if let Context::Block {
        continues: Some(scalar_indent),
    } = context
    {
        if indent > scalar_indent {
            return context;
        }
        context = Context::Block { continues: None };
    }
    while i < chars.len() {
        let c = chars[i];
        match context {
            Context::Quoted { quote, in_flow, .. } => {
                if c == '\\' && quote == '"' {
                    i += 2;
                    continue;
                }
                if c == quote {
                    if quote == '\'' && chars.get(i + 1) == Some(&'\'') {
                        i += 2;
                        continue;
                    }
                    context = match in_flow {
                        Some((depth, col)) => Context::Flow { depth, col },
                        None => Context::Block { continues: None },
                    };
                    node_start = false;
                }
            }
            Context::Flow { depth, col } => match c {
                '#' if i == 0 || chars[i - 1].is_whitespace() => return context,
                '"' | '\'' if starts_flow_token(chars, i) => {
                    context = Context::Quoted {
                        quote: c,
                        col,
                        in_flow: Some((depth, col)),
                    };
                }
                '[' | '{' => {
                    context = Context::Flow {
                        depth: depth + 1,
                        col,
                    }
                }
                ']' | '}' if depth == 1 => {
                    context = Context::Block { continues: None };
                    node_start = false;
                }
                ']' | '}' => {
                    context = Context::Flow {
                        depth: depth - 1,
                        col,
                    }
                }
                _ => {}
            },
            Context::Block { .. } => {
                if c.is_whitespace() {
                    i += 1;
                    continue;
                }
                if c == '#' && (i == 0 || chars[i - 1].is_whitespace()) {
                    return context;
                }
                if matches!(c, '-' | '?' | ':') && blank_at(chars, i + 1) {
                    node_start = true;
                } else if i == 0 && is_document_marker(chars) {
                    node_start = true;
                    i += 3;
                    continue;
                } else if node_start && matches!(c, '&' | '!' | '*') {
                    while i < chars.len() && !chars[i].is_whitespace() {
                        i += 1;
                    }
                    continue;
                } else if node_start && matches!(c, '[' | '{') {
                    context = Context::Flow { depth: 1, col: i };
                } else if node_start && matches!(c, '"' | '\'') {
                    context = Context::Quoted {
                        quote: c,
                        col: i,
                        in_flow: None,
                    };
                } else if node_start && matches!(c, '|' | '>') {
                    return Context::BlockScalar { indent };
                } else {
                    // A plain scalar: it runs to a `: `, a ` #` or the end of the line.
                    while i < chars.len() {
                        if chars[i] == ':' && blank_at(chars, i + 1) {
                            break;
                        }
                        if chars[i] == '#' && chars[i - 1].is_whitespace() {
                            return Context::Block { continues: None };
                        }
                        i += 1;
                    }
                    if i == chars.len() {
                        return Context::Block {
                            continues: Some(indent),
                        };
                    }
                    continue;
                }
            }
            Context::BlockScalar { .. } => return context,
        }
        i += 1;
    }
    context
}

/// Whether a quote at `i` in a flow collection opens a quoted scalar (rather than
/// being part of a plain one): it follows a blank, an indicator or the line's start.
fn starts_flow_token(chars: &[char], i: usize) -> bool {
    chars[..i]
        .iter()
        .rev()
        .find(|c| !c.is_whitespace())
        .is_none_or(|c| matches!(c, '[' | '{' | ',' | ':' | '?' | '-'))
        && (i == 0 || chars[i - 1].is_whitespace() || matches!(chars[i - 1], '[' | '{' | ','))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn padded(text: &str) -> Option<String> {
        reindent(text).map(|r| r.text)
    }

    #[test]
    fn pads_flow_lines_below_their_opening() {
        assert_eq!(
            padded("a: {\n  \"x\": [\n1\n  ]\n}\nb: 2\n").as_deref(),
            Some("a: {\n    \"x\": [\n    1\n    ]\n    }\nb: 2\n")
        );
        assert_eq!(
            padded("- [a,\nb]\n- c\n").as_deref(),
            Some("- [a,\n   b]\n- c\n")
        );
    }

    #[test]
    fn pads_quoted_continuations() {
        assert_eq!(
            padded("k: \"one\ntwo\"\nj: 'it''s\nx'\n").as_deref(),
            Some("k: \"one\n    two\"\nj: 'it''s\n    x'\n")
        );
    }

    #[test]
    fn leaves_plain_scalars_block_scalars_and_comments_alone() {
        assert_eq!(padded("a: b [c\nd: it's {\ne: # {\nf: x\n"), None);
        assert_eq!(padded("a: |\n  {\nb: {x: 1}\n"), None);
        assert_eq!(padded("a: one\n  [two\nb: 1\n"), None);
    }

    #[test]
    fn brackets_inside_quotes_do_not_count() {
        assert_eq!(
            padded("a: [\"]\", '{',\n\"x\\\"]\"\n]\nb: 1\n").as_deref(),
            Some("a: [\"]\", '{',\n    \"x\\\"]\"\n    ]\nb: 1\n")
        );
    }

    #[test]
    fn records_the_pads() {
        let reindented = reindent("a: [\n1]\n").map(|r| r.pads);
        assert_eq!(reindented, Some(vec![0, 4]));
    }
}
