//! Text templates shown as ansible-core 2.19 shows one it cannot render (a task's
//! name in its banner): each error in its place as `<< error N - why >>`. A syntax
//! error stands for the whole text; an undefined value printed (`{{ nope }}`,
//! `{{ nope.a }}`) is shown where it would be and the rest is rendered; any other
//! failure (an operation on an undefined value, a filter that failed, a condition on
//! one) ends the text there, followed by `<< error N - template potentially truncated
//! >>`.

use minijinja::machinery::{Token, tokenize};
use minijinja::syntax::SyntaxConfig;

use super::error::SYNTAX_ERROR;
use super::{Templar, Vars};

/// ansible-core's words for the text lost after a failure.
const TRUNCATED: &str = "template potentially truncated";

/// A template rendered with its errors in place.
#[derive(Debug, Default, PartialEq)]
pub struct Marked {
    /// The text, with a marker where each error was.
    pub text: String,
    /// The errors, in order (for ansible-core's "Encountered N template errors.").
    pub errors: Vec<String>,
}

impl Marked {
    fn error(&mut self, why: String) {
        self.errors.push(why);
        self.text.push_str(&format!(
            "<< error {} - {} >>",
            self.errors.len(),
            self.errors[self.errors.len() - 1]
        ));
    }

    fn truncated(&mut self, why: String) {
        self.error(why);
        self.error(TRUNCATED.into());
    }

    /// ansible-core's warning for the errors ("Encountered 2 template errors.", then
    /// `error N - why` lines); `None` when there were none.
    pub fn warning(&self) -> Option<String> {
        if self.errors.is_empty() {
            return None;
        }
        let plural = if self.errors.len() == 1 { "" } else { "s" };
        let mut out = format!("Encountered {} template error{plural}.", self.errors.len());
        for (i, why) in self.errors.iter().enumerate() {
            out.push_str(&format!("\nerror {} - {why}", i + 1));
        }
        Some(out)
    }
}

/// One piece of a template's top level.
enum Piece<'s> {
    Text(&'s str),
    /// A `{{ }}` tag: its whole source and the expression inside.
    Expr {
        source: &'s str,
        expr: &'s str,
    },
}

/// The template's top-level text and `{{ }}` tags up to its first other tag, and
/// whether that was all of it.
fn top_level(source: &str) -> (Vec<Piece<'_>>, bool) {
    let mut pieces = Vec::new();
    let mut start = None;
    for token in tokenize(source, false, SyntaxConfig::default()) {
        let Ok((token, span)) = token else {
            return (pieces, false);
        };
        let (from, to) = (span.start_offset as usize, span.end_offset as usize);
        match token {
            Token::TemplateData(text) => pieces.push(Piece::Text(text)),
            Token::VariableStart => start = Some((from, to)),
            Token::VariableEnd => {
                let Some((tag, inner)) = start.take() else {
                    return (pieces, false);
                };
                match (source.get(tag..to), source.get(inner..from)) {
                    (Some(source), Some(expr)) => pieces.push(Piece::Expr { source, expr }),
                    _ => return (pieces, false),
                }
            }
            _ if start.is_some() => {}
            _ => return (pieces, false),
        }
    }
    (pieces, true)
}

impl Templar {
    /// Renders a text template as ansible-core 2.19 shows one it cannot render (see
    /// the module's doc): the text and the errors met.
    pub fn render_marked(&self, source: &str, vars: &Vars) -> Marked {
        let mut marked = Marked::default();
        let failure = match self.render(source, vars) {
            Ok(text) => {
                marked.text = text;
                return marked;
            }
            // Unknown filters and tests are syntax errors too, found as it runs.
            Err(e) if e.cause().starts_with(SYNTAX_ERROR) => {
                marked.error(e.cause());
                return marked;
            }
            Err(e) => e,
        };
        let (pieces, whole) = top_level(source);
        for piece in pieces {
            match piece {
                Piece::Text(text) => marked.text.push_str(text),
                Piece::Expr { source, expr } => match self.render(source, vars) {
                    Ok(text) => marked.text.push_str(&text),
                    Err(e) if self.gives_undefined(expr, vars) => marked.error(e.cause()),
                    Err(e) => {
                        marked.truncated(e.cause());
                        return marked;
                    }
                },
            }
        }
        if !whole {
            // A statement failed: the text stops at it.
            marked.truncated(failure.cause());
        }
        marked
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn marked(source: &str) -> (String, Option<String>) {
        let mut vars = Vars::new();
        vars.set_data("good", json!("G"));
        let m = Templar::new().render_marked(source, &vars);
        let warning = m.warning();
        (m.text, warning)
    }

    /// The banners and warnings ansible-playbook 2.19 printed for these names.
    #[test]
    fn errors_shown_in_place() {
        assert_eq!(marked("{{ good }} ok"), ("G ok".into(), None));
        assert_eq!(
            marked("x {{ nope }}"),
            (
                "x << error 1 - 'nope' is undefined >>".into(),
                Some("Encountered 1 template error.\nerror 1 - 'nope' is undefined".into())
            )
        );
        assert_eq!(
            marked("a {{ nope }} b {{ 1/0 }} c {{ good }}").0,
            "a << error 1 - 'nope' is undefined >> b << error 2 - Error rendering template: division by zero >><< error 3 - template potentially truncated >>"
        );
        assert_eq!(
            marked("{{ nope.x }}").0,
            "<< error 1 - 'nope' is undefined >>"
        );
        assert_eq!(
            marked("s {{ nope ~ 'x' }} t").0,
            "s << error 1 - 'nope' is undefined >><< error 2 - template potentially truncated >>"
        );
        assert_eq!(
            marked("i {% if nope %}y{% endif %} j").0,
            "i << error 1 - 'nope' is undefined >><< error 2 - template potentially truncated >>"
        );
        assert_eq!(
            marked("u {{ 'a' | nofilter }} v").0,
            "<< error 1 - Syntax error in template: No filter named 'nofilter'. >>"
        );
        assert_eq!(
            marked("d {{ nope | default('D') }} {{ [1,2] }}"),
            ("d D [1, 2]".into(), None)
        );
    }
}
