//! `assemble`: one file from the fragments of a directory, as Ansible's assemble action
//! makes it. With `remote_src` (the default) the fragments are on the node and
//! ansible-core's `assemble` module does the work there. With `remote_src: false` they
//! are on the controller (found in the role's `files/`, then the playbook's): they are
//! joined here, in name order (`regexp` picks them, `ignore_hidden` skips dot files,
//! `delimiter` goes between them, vaulted fragments are decrypted unless
//! `decrypt: false`), and the result is written on the node by the `copy` component,
//! atomically and idempotently, with `validate`, `backup` and the file's attributes.

use super::args::flag;
use super::{ArgError, Context, Failure, ModuleRequest, failed, raised};
use crate::playbook::search_path;
use crate::plugins::action::TaskResult;
use futures::future::LocalBoxFuture;
use sandball_guest_sdk::pyre::{Anchor, Pattern};
use serde_json::{Map, Value};
use std::path::Path;

/// The `assemble` action (its line in [`super::PLUGINS`] says where it works).
pub fn work<'a>(
    ctx: &'a dyn Context,
    mut args: Map<String, Value>,
) -> LocalBoxFuture<'a, TaskResult> {
    Box::pin(async move {
        let remote = match flag(&args, "remote_src", true) {
            Ok(r) => r,
            Err(e) => return TaskResult::from(failed(e.to_string())),
        };
        if remote {
            return ctx
                .execute_module(ModuleRequest {
                    name: MODULE,
                    args,
                    legacy: true,
                    transfers: Vec::new(),
                    foreground: false,
                })
                .await;
        }
        let (Some(src), Some(_)) = (
            args.get("src").and_then(Value::as_str).map(String::from),
            args.get("dest").and_then(Value::as_str),
        ) else {
            return raised(Failure::Raised, "src and dest are required").into();
        };
        let dir = match search_path::find(ctx.vars(), "files", &src) {
            Ok(d) => d,
            Err(e) => return failed(e.with_remote_src_hint()).into(),
        };
        if !dir.is_dir() {
            return raised(
                Failure::Raised,
                format!("Source ({}) is not a directory", dir.display()),
            )
            .into();
        }
        let options = match Options::of(&args) {
            Ok(o) => o,
            Err(e) => return failed(e.to_string()).into(),
        };
        let joined = match assemble(&dir, &options) {
            Ok(j) => j,
            Err(e) => return failed(e).into(),
        };
        for own in OWN_ARGS {
            args.remove(*own);
        }
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        super::copy::put_made(ctx, "copy", args, name, &joined, "assemble").await
    })
}

/// The module of fragments on the node.
const MODULE: &str = "assemble";

/// Arguments of the action itself; the others go to `copy`.
const OWN_ARGS: &[&str] = &[
    "src",
    "remote_src",
    "regexp",
    "delimiter",
    "ignore_hidden",
    "decrypt",
];

/// How the fragments are picked and joined.
struct Options {
    regexp: Option<Pattern>,
    delimiter: Option<Vec<u8>>,
    ignore_hidden: bool,
    decrypt: bool,
}

impl Options {
    fn of(args: &Map<String, Value>) -> Result<Options, ArgError> {
        let text = |k: &str| {
            args.get(k)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        };
        let regexp = text("regexp")
            .map(|p| {
                Pattern::new(p, false, false, Anchor::Search)
                    .map_err(|e| ArgError::bad_pattern("regexp", p, e))
            })
            .transpose()?;
        Ok(Options {
            regexp,
            delimiter: text("delimiter").map(unescape),
            ignore_hidden: flag(args, "ignore_hidden", false)?,
            decrypt: flag(args, "decrypt", true)?,
        })
    }
}

/// The fragments of `dir` joined: regular files in name order; a fragment that does not
/// end a line gets a newline before the next one; the delimiter, followed by a newline,
/// goes between fragments (Ansible always adds that newline, even after a delimiter
/// that ends in one).
fn assemble(dir: &Path, options: &Options) -> Result<Vec<u8>, String> {
    let unreadable = |e: std::io::Error| format!("could not read {}: {e}", dir.display());
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map_err(unreadable)?
        .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect::<Result<_, _>>()
        .map_err(unreadable)?;
    names.sort();
    let mut out = Vec::new();
    let mut first = true;
    let mut ends_line = true;
    for name in names {
        if let Some(regexp) = &options.regexp
            && !regexp.is_match(&name).map_err(|e| e.to_string())?
        {
            continue;
        }
        let path = dir.join(&name);
        if !path.is_file() || (options.ignore_hidden && name.starts_with('.')) {
            continue;
        }
        let unreadable = |e: std::io::Error| format!("could not read {}: {e}", path.display());
        let mut content = std::fs::read(&path).map_err(unreadable)?;
        if options.decrypt
            && let Some(plain) =
                crate::vault::decrypted_content(&content, &path).map_err(unreadable)?
        {
            content = plain;
        }
        if !ends_line {
            out.push(b'\n');
        }
        if !first && let Some(d) = &options.delimiter {
            out.extend_from_slice(d);
            out.push(b'\n');
        }
        out.extend_from_slice(&content);
        first = false;
        ends_line = content.ends_with(b"\n");
    }
    Ok(out)
}

/// A delimiter's backslash escapes decoded, as Python's `escape_decode` decodes them
/// (`\n`, `\t`, `\\`, `\xHH`, octal; an unknown escape stays as written).
fn unescape(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b != b'\\' || i + 1 == bytes.len() {
            out.push(b);
            i += 1;
            continue;
        }
        let next = bytes[i + 1];
        i += 2;
        let simple = match next {
            b'n' => Some(b'\n'),
            b't' => Some(b'\t'),
            b'r' => Some(b'\r'),
            b'a' => Some(7),
            b'b' => Some(8),
            b'f' => Some(12),
            b'v' => Some(11),
            b'\\' => Some(b'\\'),
            b'\'' => Some(b'\''),
            b'"' => Some(b'"'),
            _ => None,
        };
        if let Some(c) = simple {
            out.push(c);
        } else if next == b'\n' {
            // A backslash before a newline joins the lines.
        } else if next == b'x'
            && let Some(v) = text
                .get(i..i + 2)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 2;
        } else if (b'0'..=b'7').contains(&next) {
            let mut v = u32::from(next - b'0');
            let mut taken = 0;
            while taken < 2 && i < bytes.len() && (b'0'..=b'7').contains(&bytes[i]) {
                v = v * 8 + u32::from(bytes[i] - b'0');
                i += 1;
                taken += 1;
            }
            out.push((v & 0xff) as u8);
        } else {
            out.push(b'\\');
            out.push(next);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::action::testing::{FakeContext, args, project};
    use serde_json::json;

    /// Fragments in the playbook's `files/frags`, a directory among them.
    fn fragments() -> (tempfile::TempDir, FakeContext) {
        project(&[
            ("files/frags/01-a", "one\n"),
            ("files/frags/02-b", "two-no-nl"),
            ("files/frags/03-c", "three\n"),
            ("files/frags/.h", "hidden\n"),
            ("files/frags/subdir/x", "not a fragment\n"),
        ])
    }

    fn joined(dir: &Path, a: Value) -> String {
        let options = Options::of(&args(a)).unwrap();
        String::from_utf8(assemble(&dir.join("files/frags"), &options).unwrap()).unwrap()
    }

    #[test]
    fn fragments_are_joined_as_ansible_joins_them() {
        let (dir, _) = fragments();
        let d = dir.path();
        assert_eq!(joined(d, json!({})), "hidden\none\ntwo-no-nl\nthree\n");
        assert_eq!(
            joined(d, json!({"ignore_hidden": true, "delimiter": "--\n"})),
            "one\n--\n\ntwo-no-nl\n--\n\nthree\n"
        );
        assert_eq!(
            joined(d, json!({"regexp": "^0[13]", "delimiter": "### x\\t"})),
            "one\n### x\t\nthree\n"
        );
    }

    #[test]
    fn escapes_are_decoded_as_python_decodes_them() {
        assert_eq!(unescape(r"a\tb\n\x41\101\q\\"), b"a\tb\nAA\\q\\");
    }

    #[tokio::test]
    async fn controller_fragments_go_to_copy_and_node_fragments_to_the_module() {
        let (_dir, ctx) = fragments();
        work(
            &ctx,
            args(json!({"src": "frags", "dest": "/etc/x.conf", "remote_src": false, "mode": "0600", "regexp": "a$"})),
        )
        .await;
        work(
            &ctx,
            args(json!({"src": "/srv/frags", "dest": "/etc/y.conf"})),
        )
        .await;
        {
            let runs = ctx.modules.borrow();
            assert_eq!(runs[0].name, "copy");
            assert_eq!(
                runs[0].args,
                args(
                    json!({"dest": "/etc/x.conf", "mode": "0600", "remote_src": true, "_original_basename": "frags"})
                )
            );
            assert_eq!(runs[1].name, "assemble");
            assert!(runs[1].legacy);
        }
        let r = work(
            &ctx,
            args(json!({"src": "frags/01-a", "dest": "/x", "remote_src": false})),
        )
        .await;
        assert!(
            r["msg"]
                .as_str()
                .unwrap()
                .ends_with("01-a) is not a directory")
        );
    }
}
