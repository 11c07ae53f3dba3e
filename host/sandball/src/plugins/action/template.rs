//! `template`: renders a Jinja template on the controller and writes the result on the
//! node with the `copy` module, as Ansible's template action does. The template is
//! found in the role's `templates/`, then the playbook's; it sees the task's variables
//! plus `template_path`, `template_fullpath`, `template_destpath`, `template_host`,
//! `template_uid`, `template_mtime`, `template_run_date` and `ansible_managed`. The rendered text is
//! sent to the node as a file (never as an argument: it stays out of the results and
//! the audit log), and `copy` puts it in place atomically, idempotently, with check
//! and diff modes and the file attributes the task gives. `output_encoding` picks the
//! character set the file is written in (see [`crate::template::encoding`]).

use super::{ArgError, Context, Failure, args, raised};
use crate::playbook::search_path;
use crate::plugins::action::TaskResult;
use crate::template::FileOptions;
use futures::future::LocalBoxFuture;
use serde_json::{Map, Value};
use std::path::Path;

/// The `template` action (its line in [`super::PLUGINS`] says where it works).
pub fn work<'a>(ctx: &'a dyn Context, args: Map<String, Value>) -> LocalBoxFuture<'a, TaskResult> {
    Box::pin(async move {
        // ansible-core's template action raises each of these.
        let (rendered, module_args) = match render(ctx, args) {
            Ok(r) => r,
            Err(e) => return TaskResult::from(raised(Failure::Raised, e)),
        };
        let dest = module_args
            .get("dest")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if let Some(r) = super::copy::dry_run_into_missing_dir(
            ctx,
            &dest,
            Some(&rendered.bytes),
            &rendered.source,
        )
        .await
        {
            return r.into();
        }
        let result = super::copy::put_made(
            ctx,
            "copy",
            module_args,
            rendered.basename,
            &rendered.bytes,
            "template",
        )
        .await;
        super::copy::diff_after_from(result, &rendered.source)
    })
}

/// Arguments of the template action itself; the others go to `copy`.
const OWN_ARGS: &[&str] = &[
    "src",
    "newline_sequence",
    "variable_start_string",
    "variable_end_string",
    "block_start_string",
    "block_end_string",
    "comment_start_string",
    "comment_end_string",
    "trim_blocks",
    "lstrip_blocks",
    "output_encoding",
];

/// A template rendered for a task.
struct Rendered {
    /// The text to write, in the task's `output_encoding`.
    bytes: Vec<u8>,
    /// The template's file name (a destination directory gets a file of that name).
    basename: String,
    /// Where the template was found.
    source: String,
}

/// Renders the task's template; returns the text and the arguments left for `copy`.
fn render(
    ctx: &dyn Context,
    mut args: Map<String, Value>,
) -> Result<(Rendered, Map<String, Value>), String> {
    if args.contains_key("state") {
        return Err("'state' cannot be specified on a template".into());
    }
    let (Some(src), Some(dest)) = (
        args.get("src").and_then(Value::as_str).map(str::to_string),
        args.get("dest").and_then(Value::as_str).map(str::to_string),
    ) else {
        return Err("src and dest are required".into());
    };
    let options = options(&args).map_err(|e| e.to_string())?;
    let newline = match args.get("newline_sequence").and_then(Value::as_str) {
        None => "\n",
        Some(s @ ("\n" | "\r" | "\r\n")) => s,
        // Written escaped (`'\r\n'` in single quotes), as Ansible also takes it.
        Some("\\n") => "\n",
        Some("\\r") => "\r",
        Some("\\r\\n") => "\r\n",
        Some(_) => return Err("newline_sequence needs to be one of: \n, \r or \r\n".into()),
    };
    let path = search_path::find(ctx.vars(), "templates", &src).map_err(|e| e.to_string())?;
    let source = std::fs::read_to_string(&path)
        .map_err(|e| format!("Could not read the template {}: {e}", path.display()))?;
    let mut vars = ctx.vars().clone();
    let managed = vars.contains("ansible_managed");
    for (name, value) in crate::template::file_vars(&path, Some(&dest), managed) {
        vars.set_data(name, value);
    }
    let mut file_options = options;
    file_options.search = search_path::template_dirs(ctx.vars(), &path);
    let text = ctx
        .templar()
        .render_file(&source, &vars, &file_options)
        .map_err(|e| {
            crate::yaml::location::error_appears_in(
                format_args!("the template '{}'", path.display()),
                e,
            )
        })?;
    let text = if newline == "\n" {
        text
    } else {
        text.replace('\n', newline)
    };
    let encoding = args
        .get("output_encoding")
        .and_then(Value::as_str)
        .unwrap_or_default();
    // ansible-core's words: the encoder's error, as the task's.
    let bytes = crate::template::encoding::encode(&text, encoding)
        .map_err(|e| format!("Task failed: {e}"))?;
    let basename = Path::new(&src)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| src.clone());
    args.retain(|k, _| !OWN_ARGS.contains(&k.as_str()));
    super::copy::preserve_mode(&mut args, &path)?;
    let source = path.display().to_string();
    Ok((
        Rendered {
            bytes,
            basename,
            source,
        },
        args,
    ))
}

/// The delimiters and whitespace control the task asks for.
fn options(args: &Map<String, Value>) -> Result<FileOptions, ArgError> {
    let mut o = FileOptions::default();
    for (key, into) in [
        ("block_start_string", &mut o.block.0),
        ("block_end_string", &mut o.block.1),
        ("variable_start_string", &mut o.variable.0),
        ("variable_end_string", &mut o.variable.1),
        ("comment_start_string", &mut o.comment.0),
        ("comment_end_string", &mut o.comment.1),
    ] {
        if let Some(s) = args::text(args, key)? {
            *into = s;
        }
    }
    o.trim_blocks = args::flag(args, "trim_blocks", true)?;
    o.lstrip_blocks = args::flag(args, "lstrip_blocks", false)?;
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::action::testing::{FakeContext, args, project};
    use serde_json::json;

    /// A project whose variables say who to greet.
    fn greeting(files: &[(&str, &str)]) -> (tempfile::TempDir, FakeContext) {
        let (dir, mut ctx) = project(files);
        ctx.vars.set_data("who", json!("world"));
        (dir, ctx)
    }

    fn rendered(ctx: &FakeContext, a: Value) -> Result<String, String> {
        render(ctx, args(a)).map(|(r, _)| String::from_utf8_lossy(&r.bytes).into_owned())
    }

    #[test]
    fn renders_from_templates_with_includes_and_the_template_vars() {
        let (dir, ctx) = greeting(&[
            (
                "templates/a.j2",
                "# {{ ansible_managed }}\nhello {{ who }}\n{% include 'part.j2' %}{{ template_destpath }}\n",
            ),
            ("templates/part.j2", "{% if true %}\npart\n{% endif %}\n"),
        ]);
        let text = rendered(&ctx, json!({"src": "a.j2", "dest": "/etc/a"})).unwrap();
        assert_eq!(text, "# Ansible managed\nhello world\npart\n/etc/a\n");
        let (r, rest) = render(
            &ctx,
            args(json!({"src": "a.j2", "dest": "/etc/a", "mode": "0644", "trim_blocks": true})),
        )
        .unwrap();
        assert_eq!(r.basename, "a.j2");
        assert_eq!(rest, args(json!({"dest": "/etc/a", "mode": "0644"})));
        drop(dir);
    }

    #[test]
    fn honours_delimiters_whitespace_and_newlines() {
        let (_dir, ctx) = greeting(&[(
            "t.j2",
            "  {% if true %}\n[[ who ]] {{ raw }}\n  {% endif %}\n",
        )]);
        let text = rendered(
            &ctx,
            json!({"src": "t.j2", "dest": "/x", "variable_start_string": "[[",
                   "variable_end_string": "]]", "lstrip_blocks": true,
                   "newline_sequence": "\r\n"}),
        )
        .unwrap();
        assert_eq!(text, "world {{ raw }}\r\n");
        // The sequence written escaped, as YAML's single quotes leave it.
        for (escaped, newline) in [(r"\r\n", "\r\n"), (r"\r", "\r"), (r"\n", "\n")] {
            let text = rendered(
                &ctx,
                json!({"src": "t.j2", "dest": "/x", "variable_start_string": "[[",
                       "variable_end_string": "]]", "lstrip_blocks": true,
                       "newline_sequence": escaped}),
            )
            .unwrap();
            assert_eq!(text, format!("world {{{{ raw }}}}{newline}"), "{escaped}");
        }
        let text = rendered(&ctx, json!({"src": "t.j2", "dest": "/x", "variable_start_string": "[[", "variable_end_string": "]]", "trim_blocks": false})).unwrap();
        assert_eq!(text, "  \nworld {{ raw }}\n  \n");
    }

    #[test]
    fn a_template_of_one_value_that_is_no_string_is_that_value_alone() {
        let (_dir, ctx) = greeting(&[
            ("n.j2", "{{ 40 + 2 }}\n"),
            ("l.j2", "{{ [1, 'a'] }}\n"),
            ("s.j2", "{{ '42' }}\n"),
            ("t.j2", "a {{ 42 }}\n"),
            ("b.j2", "{% if true %}{{ true }}{% endif %}\n"),
            ("two.j2", "{{ 1 }}\n\n"),
        ]);
        for (src, text) in [
            ("n.j2", "42"),
            ("l.j2", "[1, 'a']"),
            ("s.j2", "42\n"),
            ("t.j2", "a 42\n"),
            ("b.j2", "True"),
            ("two.j2", "1\n\n"),
        ] {
            let got = rendered(&ctx, json!({"src": src, "dest": "/x"})).unwrap();
            assert_eq!(got, text, "{src}");
        }
    }

    #[test]
    fn bad_input_says_what_and_where() {
        let (_dir, ctx) = greeting(&[("templates/u.j2", "line\n{{ nope }}\n")]);
        let e = rendered(&ctx, json!({"src": "u.j2"})).unwrap_err();
        assert_eq!(e, "src and dest are required");
        let e = rendered(&ctx, json!({"src": "missing.j2", "dest": "/x"})).unwrap_err();
        assert!(e.contains("Could not find or access 'missing.j2'"), "{e}");
        let e = rendered(&ctx, json!({"src": "u.j2", "dest": "/x"})).unwrap_err();
        assert!(e.contains("'nope' is undefined"), "{e}");
        assert!(e.contains("templates/u.j2"), "{e}");
        let e = rendered(
            &ctx,
            json!({"src": "u.j2", "dest": "/x", "newline_sequence": "x"}),
        )
        .unwrap_err();
        assert!(e.contains("newline_sequence"), "{e}");
    }

    #[tokio::test]
    async fn copy_writes_the_rendered_file() {
        let (_dir, ctx) = greeting(&[("templates/a.j2", "hi {{ who }}\n")]);
        let r = work(
            &ctx,
            args(json!({"src": "a.j2", "dest": "/tmp/a", "mode": "0600"})),
        )
        .await;
        assert_eq!(r["ran"], "copy");
        let run = ctx.modules.borrow()[0].clone();
        assert_eq!(run.args["dest"], "/tmp/a");
        assert_eq!(run.args["mode"], "0600");
        assert_eq!(run.args["remote_src"], true);
        assert_eq!(run.args["_original_basename"], "a.j2");
        assert!(
            !run.args.contains_key("content"),
            "the text is never an argument"
        );
        assert_eq!(run.transfers.len(), 1);
    }

    #[tokio::test]
    async fn preserve_is_the_templates_own_mode() {
        use std::os::unix::fs::PermissionsExt;
        let (dir, ctx) = greeting(&[("templates/a.j2", "hi\n")]);
        let template = dir.path().join("templates/a.j2");
        std::fs::set_permissions(&template, std::fs::Permissions::from_mode(0o640)).unwrap();
        work(
            &ctx,
            args(json!({"src": "a.j2", "dest": "/tmp/a", "mode": "preserve"})),
        )
        .await;
        assert_eq!(ctx.modules.borrow()[0].args["mode"], "0640");
    }
}
