//! The Templar's minijinja environments: the strict one with Ansible's filters, tests,
//! lookups and settings, the same with chained undefined values, and a template file's
//! own settings (`FileOptions`: delimiters, whitespace control, where `{% include %}`
//! finds templates).

use minijinja::syntax::SyntaxConfig;
use minijinja::{AutoEscape, Environment, UndefinedBehavior};

use crate::template::OMIT;
use crate::template::undefined::Plugins;
use crate::template::{filters, jinja_tests, methods, python};

/// Sets a template file's delimiters, whitespace control and search directories.
pub(crate) fn configure(
    env: &mut Environment<'_>,
    options: &FileOptions,
) -> Result<(), minijinja::Error> {
    let mut syntax = SyntaxConfig::builder();
    syntax
        .block_delimiters(options.block.0.clone(), options.block.1.clone())
        .variable_delimiters(options.variable.0.clone(), options.variable.1.clone())
        .comment_delimiters(options.comment.0.clone(), options.comment.1.clone())
        .trim_blocks(options.trim_blocks)
        .lstrip_blocks(options.lstrip_blocks)
        .keep_trailing_newline(true);
    if let Some(prefix) = &options.line_statement_prefix {
        syntax.line_statement_prefix(prefix.clone());
    }
    let syntax = syntax.build()?;
    env.set_syntax(syntax.clone());
    load_from(env, options.search.clone(), syntax);
    Ok(())
}

/// Makes `{% include %}`, `{% import %}` and `{% extends %}` find templates in `dirs`,
/// in order. A loaded template loses one trailing newline, as Jinja's templates do in
/// Ansible (only the outermost template keeps its own).
fn load_from(env: &mut Environment<'_>, dirs: Vec<std::path::PathBuf>, syntax: SyntaxConfig) {
    env.set_loader(move |name| {
        let Some(path) = dirs.iter().map(|d| d.join(name)).find(|p| p.is_file()) else {
            return Ok(None);
        };
        std::fs::read_to_string(&path)
            .map(|text| {
                let text = super::overrides::without_trailing_newline(&text);
                Some(super::percent::rewrite_template(text, &syntax).into_owned())
            })
            .map_err(|e| {
                minijinja::Error::new(
                    minijinja::ErrorKind::TemplateNotFound,
                    format!("cannot read {}: {e}", path.display()),
                )
            })
    });
}

/// The strict environment with Ansible's filters, tests and settings: undefined
/// variables are errors, blocks trim the newline after them, a trailing newline is
/// kept, nothing is HTML-escaped, values print as Python prints them, and `omit` is
/// defined.
pub(super) fn native_environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    // Debug mode names undefined variables in errors ("'foo' is undefined").
    env.set_debug(true);
    env.set_auto_escape_callback(|_| AutoEscape::None);
    let syntax = SyntaxConfig::builder()
        .trim_blocks(true)
        .keep_trailing_newline(true)
        .build();
    // Only custom delimiters can make the build fail; the defaults are kept.
    if let Ok(syntax) = syntax {
        env.set_syntax(syntax);
    }
    env.set_formatter(python::format_output);
    env.set_unknown_method_callback(methods::call_method);
    env.add_global("omit", OMIT);
    let mut plugins = Plugins::new(&mut env);
    filters::register(&mut plugins);
    super::jinja_globals::register(&mut plugins);
    jinja_tests::register(&mut plugins);
    crate::template::lookups::jinja::register(&mut plugins);
    crate::template::percent::register(&mut plugins);
    crate::template::operands::register(&mut plugins);
    crate::template::vaulted::register(&mut plugins);
    crate::template::plugin_calls::register(&mut plugins);
    crate::template::protomatter::register(&mut plugins);
    env
}

/// The strict environment with chained undefined values (see [`super::Templar`]'s `chained`).
pub(super) fn chained(strict: &Environment<'static>) -> Environment<'static> {
    let mut env = strict.clone();
    env.set_undefined_behavior(UndefinedBehavior::Chainable);
    env.set_formatter(|out, state, value| {
        if value.is_undefined() {
            return Err(minijinja::Error::new(
                minijinja::ErrorKind::UndefinedError,
                "an undefined value cannot be printed",
            ));
        }
        python::format_output(out, state, value)
    });
    env
}

/// How a template file is read (the `template` action's options).
#[derive(Clone, Debug)]
pub struct FileOptions {
    /// `block_start_string`, `block_end_string`.
    pub block: (String, String),
    /// `variable_start_string`, `variable_end_string`.
    pub variable: (String, String),
    /// `comment_start_string`, `comment_end_string`.
    pub comment: (String, String),
    /// `trim_blocks`: the newline after a block tag is removed.
    pub trim_blocks: bool,
    /// `lstrip_blocks`: whitespace before a block tag on its line is removed.
    pub lstrip_blocks: bool,
    /// `line_statement_prefix`: a line starting with it is a statement.
    pub line_statement_prefix: Option<String>,
    /// Where other templates are found, in order.
    pub search: Vec<std::path::PathBuf>,
}

impl Default for FileOptions {
    fn default() -> Self {
        let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
        FileOptions {
            block: pair("{%", "%}"),
            variable: pair("{{", "}}"),
            comment: pair("{#", "#}"),
            trim_blocks: true,
            lstrip_blocks: false,
            line_statement_prefix: None,
            search: Vec::new(),
        }
    }
}
