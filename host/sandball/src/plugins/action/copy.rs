//! The `copy` action: a `src` on the controller (not `remote_src`) is sent to the node
//! by the module runner, over the host's shim session, in raw chunks, content-addressed by sha256 (nothing is
//! sent when the node already holds the same content), and the `copy` module then
//! copies it from the node's copy. `content` and `remote_src` need no transfer. A
//! controller directory is sent file by file, as Ansible's copy action sends it: one
//! `copy` run per file (its path below `dest` given as `_original_basename`, so the
//! module makes the directories on the way), then `file` runs for the directories no
//! file lands in and for the links kept as links (`local_follow: false`).

use super::{ActionPlugin, Context, ModuleRequest, Runs, Transfer, failed, ok_with};
use crate::plugins::action::TaskResult;
use crate::template::Vars;
use futures::future::LocalBoxFuture;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

/// The `copy` action plugin.
pub struct Copy;

impl ActionPlugin for Copy {
    fn runs<'a>(&self, action: &'a str) -> Runs<'a> {
        Runs::Module {
            name: action,
            legacy: false,
        }
    }

    fn run<'a>(
        &'a self,
        ctx: &'a dyn Context,
        action: &'a str,
        mut args: Map<String, Value>,
    ) -> LocalBoxFuture<'a, TaskResult> {
        Box::pin(async move {
            // The action's own checks, as ansible-core's makes them (its failures, not
            // the module's), before the node makes the directories a `dest/` asks for.
            if let Some(msg) = refusal(&args) {
                return TaskResult::from(super::raised(super::Failure::Action, msg));
            }
            // An empty `src` is none, as ansible-core's copy action takes it.
            if args.get("src").and_then(Value::as_str) == Some("") {
                args.remove("src");
            }
            let decrypt = match sandball_pycompat::boolean::truthy(args.get("decrypt"), true) {
                Ok(d) => d,
                Err(e) => return failed(format!("decrypt: {e}")).into(),
            };
            let source = match controller_source(&args, ctx.vars()) {
                Ok(None) => None,
                Ok(Some(local)) if local.is_dir() => {
                    return copy_tree(ctx, action, args, &local, decrypt).await;
                }
                Ok(Some(local)) => match Sendable::of(&local, decrypt) {
                    Ok(sent) => Some((local, sent)),
                    Err(e) => return failed(e).into(),
                },
                Err(e) => return failed(e).into(),
            };
            if let Some((local, _)) = &source {
                if let Err(e) = preserve_mode(&mut args, local) {
                    return failed(e).into();
                }
                // Once sent, the source is on the node, under its content's name:
                // a directory `dest` gets the file under the source's own name.
                args.insert("remote_src".into(), Value::Bool(true));
                if let Some(name) = local.file_name() {
                    args.insert(
                        "_original_basename".into(),
                        Value::String(name.to_string_lossy().into_owned()),
                    );
                }
            }
            if source.is_some() || args.contains_key("content") {
                let mut dest = args
                    .get("dest")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                // Into a directory: the file of the source's name.
                if dest.ends_with('/')
                    && let Some(name) = source.as_ref().and_then(|(local, _)| local.file_name())
                {
                    dest.push_str(&name.to_string_lossy());
                }
                let after = match (&source, args.get("content")) {
                    (Some((_, sent)), _) => std::fs::read(sent.path()).ok(),
                    (None, Some(Value::String(c))) => Some(c.clone().into_bytes()),
                    _ => None,
                };
                let header = source
                    .as_ref()
                    .map(|(local, _)| local.display().to_string())
                    .unwrap_or_else(|| dest.to_string());
                if let Some(r) =
                    dry_run_into_missing_dir(ctx, &dest, after.as_deref(), &header).await
                {
                    return r.into();
                }
            }
            // ansible-core's copy module takes no `content` of its own: its action
            // plugin sends it as a file, and so does this one for the legacy module.
            if source.is_none() && ctx.runs_legacy(action) {
                match args.remove("content") {
                    Some(Value::String(content)) => {
                        let dest = args.get("dest").and_then(Value::as_str).map(str::to_string);
                        let result = put_made(
                            ctx,
                            action,
                            args,
                            "source".into(),
                            content.as_bytes(),
                            "content",
                        )
                        .await;
                        return match dest {
                            Some(dest) => diff_after_from(result, &dest),
                            None => result,
                        };
                    }
                    Some(other) => {
                        args.insert("content".into(), other);
                    }
                    None => {}
                }
            }
            let transfers = source
                .iter()
                .map(|(_, sent)| Transfer {
                    arg: "src",
                    local: sent.path().to_path_buf(),
                })
                .collect();
            let result = ctx
                .execute_module(ModuleRequest {
                    name: action,
                    args,
                    legacy: false,
                    transfers,
                    foreground: false,
                })
                .await;
            match &source {
                Some((local, _)) => diff_after_from(result, &local.display().to_string()),
                None => result,
            }
        })
    }
}

/// A dry run of a copy from the controller into a directory the node does not have
/// yet (an earlier task of a real run would make it): `changed`, with the diff of a new
/// file, as Ansible's copy action reports it without running the module. `None` when
/// not in check mode or when the directory exists.
pub async fn dry_run_into_missing_dir(
    ctx: &dyn Context,
    dest: &str,
    after: Option<&[u8]>,
    after_header: &str,
) -> Option<Map<String, Value>> {
    if !ctx.check_mode() || dest.is_empty() {
        return None;
    }
    let dir = if dest.ends_with('/') {
        dest.trim_end_matches('/').to_string()
    } else {
        Path::new(dest).parent()?.display().to_string()
    };
    if dir.is_empty() {
        return None;
    }
    let stat = ctx
        .execute_module(ModuleRequest::new(
            "stat",
            json!({"path": dir, "get_checksum": false}),
        ))
        .await;
    if stat.get("stat").and_then(|s| s.get("exists")) != Some(&Value::Bool(false)) {
        return None;
    }
    let mut result = ok_with(json!({"changed": true}));
    if ctx.diff() {
        let text = after
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default();
        result.insert(
            "diff".into(),
            json!([{"before": "", "after": text, "after_header": after_header}]),
        );
    }
    Some(result)
}

/// Why ansible-core's copy action refuses these arguments, if it does.
fn refusal(args: &Map<String, Value>) -> Option<&'static str> {
    let given = |k: &str| match args.get(k) {
        None | Some(Value::Null) => false,
        Some(Value::String(s)) => !s.is_empty(),
        Some(_) => true,
    };
    let content = args.get("content").is_some_and(|c| !c.is_null());
    let dest = args.get("dest").and_then(Value::as_str);
    if !given("src") && !content {
        Some("src (or content) is required")
    } else if !given("dest") {
        Some("dest is required")
    } else if given("src") && content {
        Some("src and content are mutually exclusive")
    } else if content && dest.is_some_and(|d| d.ends_with('/')) {
        Some("can not use content with a dir as dest")
    } else {
        None
    }
}

/// The controller file a `copy` task sends, `None` when it sends none (`content`,
/// `remote_src`). A relative `src` is looked up as Ansible does: the role's `files/`
/// and directory, then the playbook's ([`crate::playbook::search_path`]).
pub fn controller_source(
    args: &Map<String, Value>,
    vars: &Vars,
) -> Result<Option<PathBuf>, String> {
    let Some(src) = args.get("src").and_then(Value::as_str) else {
        return Ok(None);
    };
    if sandball_pycompat::boolean::truthy(args.get("remote_src"), false)? {
        return Ok(None);
    }
    let found = crate::playbook::search_path::find(vars, "files", src)
        .map_err(|e| e.with_remote_src_hint())?;
    Ok(Some(found))
}

/// `mode: preserve` as ansible-core's copy and template actions read it: the mode of
/// the controller's file `local` (its permission bits, `0644`), not of the copy the
/// node is sent.
pub fn preserve_mode(args: &mut Map<String, Value>, local: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    if args.get("mode").and_then(Value::as_str) != Some("preserve") {
        return Ok(());
    }
    let meta = std::fs::metadata(local)
        .map_err(|e| format!("Could not stat the source file {}: {e}", local.display()))?;
    let mode = format!("0{:03o}", meta.permissions().mode() & 0o7777);
    args.insert("mode".into(), Value::String(mode));
    Ok(())
}

/// Bytes made on the controller (a rendered template, assembled fragments) in a private
/// temporary file, removed when dropped.
pub fn private_file(prefix: &str, bytes: &[u8]) -> std::io::Result<tempfile::NamedTempFile> {
    let mut file = tempfile::Builder::new().prefix(prefix).tempfile()?;
    std::io::Write::write_all(&mut file, bytes)?;
    std::io::Write::flush(&mut file)?;
    Ok(file)
}

/// Writes `bytes`, made on the controller, on the node with the `copy` module (`args`
/// say where and how; `basename` is the source's name, for a directory `dest`):
/// sent as a file of their own, never as an argument, so they stay out of results and
/// the audit log.
pub async fn put_made(
    ctx: &dyn Context,
    action: &str,
    mut args: Map<String, Value>,
    basename: String,
    bytes: &[u8],
    what: &str,
) -> TaskResult {
    let file = match private_file(&format!("sandball-{what}-"), bytes) {
        Ok(f) => f,
        Err(e) => return failed(format!("cannot keep the {what}: {e}")).into(),
    };
    args.insert("remote_src".into(), Value::Bool(true));
    args.insert("_original_basename".into(), Value::String(basename));
    ctx.execute_module(ModuleRequest {
        name: action,
        args,
        legacy: false,
        transfers: vec![Transfer {
            arg: "src",
            local: file.path().to_path_buf(),
        }],
        foreground: false,
    })
    .await
}

/// A result whose diff names `header` as the file its `after` side comes from, where
/// the module named the copy staged on the node: ansible-core's copy action names the
/// controller's source (or `dest`, for `content`), its template action a file named
/// after the template.
pub fn diff_after_from(mut result: TaskResult, header: &str) -> TaskResult {
    let diffs = match result.get_mut("diff") {
        Some(Value::Array(ds)) => ds.iter_mut().collect(),
        Some(d @ Value::Object(_)) => vec![d],
        _ => vec![],
    };
    for d in diffs {
        if let Some(h) = d.get_mut("after_header") {
            *h = Value::String(header.to_string());
        }
    }
    result
}

/// A controller file as it is sent: itself, or, when it is vault-encrypted and
/// `decrypt` is on (Ansible's default), its decrypted content in a private temporary
/// file (removed when this is dropped).
pub enum Sendable {
    /// The file itself.
    AsIs(PathBuf),
    /// Its decrypted content.
    Decrypted(tempfile::NamedTempFile),
}

impl Sendable {
    /// What to send for the controller file `local`.
    pub fn of(local: &Path, decrypt: bool) -> Result<Sendable, String> {
        let plain = if decrypt {
            crate::vault::decrypted_file(local)
                .map_err(|e| format!("Could not read the source file {}: {e}", local.display()))?
        } else {
            None
        };
        match plain {
            None => Ok(Sendable::AsIs(local.to_path_buf())),
            Some(plain) => private_file("sandball-decrypted-", &plain)
                .map(Sendable::Decrypted)
                .map_err(|e| format!("cannot keep the decrypted {}: {e}", local.display())),
        }
    }

    /// The file to send.
    pub fn path(&self) -> &Path {
        match self {
            Sendable::AsIs(p) => p,
            Sendable::Decrypted(f) => f.path(),
        }
    }
}

/// What a controller directory holds, as the copy action sends it. Paths are relative
/// to `dest`: they start with the directory's own name unless `src` ends with `/`.
#[derive(Debug, Default, PartialEq)]
struct Tree {
    /// Files (and, with `local_follow`, links to files): the controller's path, the
    /// path below `dest`.
    files: Vec<(PathBuf, String)>,
    /// Directories no file or link lands in (the others are made on the way).
    dirs: Vec<String>,
    /// Links kept as links (`local_follow: false`): the path below `dest`, the target.
    links: Vec<(String, String)>,
}

impl Tree {
    /// Walks `root` in name order. Links are followed when `follow` (a link back into a
    /// directory being walked is an error, not a loop).
    fn walk(root: &Path, keep_name: bool, follow: bool) -> Result<Tree, String> {
        let mut tree = Tree::default();
        let mut all_dirs = Vec::new();
        let prefix = if keep_name {
            root.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        } else {
            String::new()
        };
        let mut walking = Vec::new();
        tree.visit(root, &prefix, follow, &mut all_dirs, &mut walking)?;
        let landed: Vec<&str> = tree
            .files
            .iter()
            .map(|(_, rel)| rel.as_str())
            .chain(tree.links.iter().map(|(rel, _)| rel.as_str()))
            .collect();
        tree.dirs = all_dirs
            .into_iter()
            .filter(|d| {
                !landed.iter().any(|p| {
                    p.strip_prefix(d.as_str())
                        .is_some_and(|r| r.starts_with('/'))
                })
            })
            .collect();
        Ok(tree)
    }

    fn visit(
        &mut self,
        dir: &Path,
        rel: &str,
        follow: bool,
        all_dirs: &mut Vec<String>,
        walking: &mut Vec<PathBuf>,
    ) -> Result<(), String> {
        let unreadable = |e: std::io::Error| format!("could not read {}: {e}", dir.display());
        let real = dir.canonicalize().map_err(unreadable)?;
        if walking.contains(&real) {
            return Err(format!(
                "copy: {} links back to a directory being copied",
                dir.display()
            ));
        }
        walking.push(real);
        if !rel.is_empty() {
            all_dirs.push(rel.to_string());
        }
        let mut entries = std::fs::read_dir(dir)
            .map_err(unreadable)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(unreadable)?;
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let below = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            let meta = std::fs::symlink_metadata(&path).map_err(unreadable)?;
            let is_link = meta.file_type().is_symlink();
            if is_link && !follow {
                let target = std::fs::read_link(&path).map_err(unreadable)?;
                self.links
                    .push((below, target.to_string_lossy().into_owned()));
            } else if path.is_dir() {
                self.visit(&path, &below, follow, all_dirs, walking)?;
            } else if path.is_file() {
                self.files.push((path, below));
            } else if is_link {
                return Err(format!(
                    "copy: {} is a link to nothing (use local_follow: false to copy it as a link)",
                    path.display()
                ));
            }
        }
        walking.pop();
        Ok(())
    }
}

/// The task's `file` settings that apply to what it makes besides files.
const FILE_SETTINGS: &[&str] = &[
    "owner",
    "group",
    "seuser",
    "serole",
    "setype",
    "selevel",
    "unsafe_writes",
    "attributes",
];

/// Copies the controller directory `local`: each file with the `copy` module, then the
/// empty directories and the kept links with the `file` module. One file gives that
/// copy's result; more give `changed`, `dest` and `src`, as Ansible's copy action.
async fn copy_tree(
    ctx: &dyn Context,
    action: &str,
    args: Map<String, Value>,
    local: &Path,
    decrypt: bool,
) -> TaskResult {
    let src = args.get("src").and_then(Value::as_str).unwrap_or_default();
    let trailing = src.ends_with('/');
    let follow = match sandball_pycompat::boolean::truthy(args.get("local_follow"), true) {
        Ok(f) => f,
        Err(e) => return failed(format!("local_follow: {e}")).into(),
    };
    let tree = match Tree::walk(local, !trailing, follow) {
        Ok(t) => t,
        Err(e) => return failed(e).into(),
    };
    let mut dest = args
        .get("dest")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if dest.is_empty() {
        return failed("src (or content) and dest are required").into();
    }
    if !dest.ends_with('/') {
        dest.push('/');
    }
    let mut changed = false;
    let mut diffs = Vec::new();
    let mut last = TaskResult::default();
    for (file, below) in &tree.files {
        let mut one = args.clone();
        one.remove("local_follow");
        one.insert("dest".into(), Value::String(dest.clone()));
        one.insert("remote_src".into(), Value::Bool(true));
        one.insert("_original_basename".into(), Value::String(below.clone()));
        if let Err(e) = preserve_mode(&mut one, file) {
            return failed(e).into();
        }
        let sent = match Sendable::of(file, decrypt) {
            Ok(s) => s,
            Err(e) => return failed(e).into(),
        };
        let result = ctx
            .execute_module(ModuleRequest {
                name: action,
                args: one,
                legacy: false,
                transfers: vec![Transfer {
                    arg: "src",
                    local: sent.path().to_path_buf(),
                }],
                foreground: false,
            })
            .await;
        if is_failure(&result) {
            return result;
        }
        changed |= result.get("changed") == Some(&Value::Bool(true));
        if let Some(Value::Array(d)) = result.get("diff") {
            diffs.extend(d.iter().cloned());
        }
        last = result;
    }
    let settings: Map<String, Value> = args
        .iter()
        .filter(|(k, _)| FILE_SETTINGS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let made = tree
        .dirs
        .iter()
        .map(|d| {
            let mut a = settings.clone();
            a.insert("state".into(), json!("directory"));
            a.insert("path".into(), json!(format!("{dest}{d}")));
            if let Some(mode) = args.get("directory_mode") {
                a.insert("mode".into(), mode.clone());
            }
            a
        })
        .chain(tree.links.iter().map(|(below, target)| {
            let mut a = settings.clone();
            a.insert("state".into(), json!("link"));
            a.insert("path".into(), json!(format!("{dest}{below}")));
            a.insert("src".into(), json!(target));
            a.insert("force".into(), json!(true));
            a
        }));
    for file_args in made {
        let result = ctx
            .execute_module(ModuleRequest::new("file", Value::Object(file_args)))
            .await;
        if is_failure(&result) {
            return result;
        }
        changed |= result.get("changed") == Some(&Value::Bool(true));
        last = result;
    }
    // One file gives the last module's result (a `file` run's, when the directory also
    // held empty directories or kept links), as Ansible's copy action gives it.
    if tree.files.len() == 1 {
        if let Some(path) = last.get("path").cloned() {
            last.entry("dest").or_insert(path);
        }
        return last;
    }
    let mut shown = local
        .display()
        .to_string()
        .trim_end_matches('/')
        .to_string();
    if trailing {
        shown.push('/');
    }
    let mut result = ok_with(json!({"changed": changed, "dest": dest, "src": shown}));
    if !diffs.is_empty() {
        result.insert("diff".into(), Value::Array(diffs));
    }
    result.into()
}

fn is_failure(result: &Map<String, Value>) -> bool {
    result.get("failed") == Some(&Value::Bool(true))
        || result.get("unreachable") == Some(&Value::Bool(true))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::action::testing::{args, project};
    use serde_json::json;

    #[test]
    fn a_diff_names_the_controller_file_not_the_staged_copy() {
        let staged = "/root/.sandball/files/session-1/ab12";
        let one =
            json!({"changed": true, "diff": {"before": "", "after": "x", "after_header": staged}});
        let r = diff_after_from(one.as_object().unwrap().clone().into(), "/p/files/a.conf");
        assert_eq!(r["diff"]["after_header"], "/p/files/a.conf");
        let two = json!({"diff": [{"before_header": "/etc/a", "after_header": staged}, {"before": "", "after": ""}]});
        let r = diff_after_from(two.as_object().unwrap().clone().into(), "/p/t.j2");
        assert_eq!(
            r["diff"],
            json!([{"before_header": "/etc/a", "after_header": "/p/t.j2"}, {"before": "", "after": ""}])
        );
    }

    #[test]
    fn the_actions_own_checks_come_first_in_ansibles_order() {
        let refused = |a| refusal(&args(a));
        assert_eq!(
            refused(json!({"dest": "/d"})),
            Some("src (or content) is required")
        );
        assert_eq!(
            refused(json!({"src": "", "dest": "/d"})),
            Some("src (or content) is required")
        );
        assert_eq!(refused(json!({"content": ""})), Some("dest is required"));
        assert_eq!(
            refused(json!({"src": "a", "content": "b", "dest": "/d/"})),
            Some("src and content are mutually exclusive")
        );
        assert_eq!(
            refused(json!({"content": "b", "dest": "/d/"})),
            Some("can not use content with a dir as dest")
        );
        assert_eq!(
            refused(json!({"src": "", "content": "b", "dest": "/d"})),
            None
        );
        assert_eq!(refused(json!({"src": "a/", "dest": "/d/"})), None);
    }

    #[test]
    fn only_a_controller_source_is_sent() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("files")).unwrap();
        std::fs::write(dir.path().join("files/a.txt"), "a").unwrap();
        let mut vars = Vars::new();
        vars.set_trusted("playbook_dir", json!(dir.path().display().to_string()));
        let found = controller_source(&args(json!({"src": "a.txt"})), &vars);
        assert_eq!(found.unwrap(), Some(dir.path().join("files/a.txt")));
        let remote = args(json!({"src": "a.txt", "remote_src": true}));
        assert_eq!(controller_source(&remote, &vars).unwrap(), None);
        let content = args(json!({"content": "x"}));
        assert_eq!(controller_source(&content, &vars).unwrap(), None);
        let missing = controller_source(&args(json!({"src": "nope"})), &vars);
        assert!(
            missing
                .unwrap_err()
                .contains("Could not find or access 'nope'")
        );
    }

    #[test]
    fn a_directory_is_walked_as_ansible_sends_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("tree");
        std::fs::create_dir_all(root.join("sub/deeper")).unwrap();
        std::fs::create_dir_all(root.join("empty")).unwrap();
        std::fs::write(root.join("a.txt"), "a").unwrap();
        std::fs::write(root.join("sub/deeper/c.txt"), "c").unwrap();
        std::os::unix::fs::symlink("a.txt", root.join("link.txt")).unwrap();
        let t = Tree::walk(&root, true, true).unwrap();
        let files: Vec<&str> = t.files.iter().map(|(_, r)| r.as_str()).collect();
        assert_eq!(
            files,
            ["tree/a.txt", "tree/link.txt", "tree/sub/deeper/c.txt"]
        );
        assert_eq!(t.dirs, ["tree/empty"]);
        assert!(t.links.is_empty());
        let t = Tree::walk(&root, false, false).unwrap();
        let files: Vec<&str> = t.files.iter().map(|(_, r)| r.as_str()).collect();
        assert_eq!(files, ["a.txt", "sub/deeper/c.txt"]);
        assert_eq!(t.dirs, ["empty"]);
        assert_eq!(t.links, [("link.txt".to_string(), "a.txt".to_string())]);
        std::os::unix::fs::symlink("..", root.join("sub/up")).unwrap();
        assert!(
            Tree::walk(&root, true, true)
                .unwrap_err()
                .contains("links back")
        );
    }

    #[tokio::test]
    async fn a_directory_is_copied_file_by_file() {
        let (dir, ctx) = project(&[("files/tree/a.txt", "a"), ("files/tree/sub/b.txt", "b")]);
        std::fs::create_dir_all(dir.path().join("files/tree/empty")).unwrap();
        let r = Copy
            .run(
                &ctx,
                "copy",
                args(json!({"src": "tree/", "dest": "/srv/x", "directory_mode": "0750", "owner": "www"})),
            )
            .await;
        assert_eq!(r["dest"], "/srv/x/");
        assert_eq!(r["src"], format!("{}/files/tree/", dir.path().display()));
        let runs = ctx.modules.borrow();
        let shown: Vec<(String, Value, Value)> = runs
            .iter()
            .map(|m| {
                let at = m.args.get("_original_basename").or(m.args.get("path"));
                (
                    m.name.clone(),
                    at.cloned().unwrap_or_default(),
                    m.args["owner"].clone(),
                )
            })
            .collect();
        assert_eq!(
            shown,
            [
                ("copy".into(), json!("a.txt"), json!("www")),
                ("copy".into(), json!("sub/b.txt"), json!("www")),
                ("file".into(), json!("/srv/x/empty"), json!("www")),
            ]
        );
        assert_eq!(runs[0].args["dest"], "/srv/x/");
        assert_eq!(runs[2].args["mode"], "0750");
        assert_eq!(runs[2].args["state"], "directory");
    }

    #[tokio::test]
    async fn the_module_copies_the_sent_file_on_the_node() {
        let (dir, ctx) = project(&[("a.txt", "a")]);
        let r = Copy
            .run(
                &ctx,
                "ansible.builtin.copy",
                args(json!({"src": "a.txt", "dest": "/tmp/x"})),
            )
            .await;
        assert_eq!(r["ran"], "ansible.builtin.copy");
        let first = ctx.modules.borrow()[0].clone();
        assert_eq!(first.args["remote_src"], true);
        assert_eq!(
            first.transfers,
            vec![Transfer {
                arg: "src",
                local: dir.path().join("a.txt")
            }]
        );
        // A source that is missing fails before any module runs.
        let r = Copy
            .run(&ctx, "copy", args(json!({"src": "nope", "dest": "/tmp/x"})))
            .await;
        assert_eq!(r["failed"], true);
        assert_eq!(ctx.modules.borrow().len(), 1);
        // `mode: preserve` is the controller file's mode, not the sent copy's.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            dir.path().join("a.txt"),
            std::fs::Permissions::from_mode(0o4750),
        )
        .unwrap();
        Copy.run(
            &ctx,
            "copy",
            args(json!({"src": "a.txt", "dest": "/tmp/x", "mode": "preserve"})),
        )
        .await;
        assert_eq!(ctx.modules.borrow()[1].args["mode"], "04750");
    }

    #[tokio::test]
    async fn content_goes_as_a_file_to_the_legacy_module_only() {
        let (_dir, mut ctx) = project(&[]);
        let task = || args(json!({"content": "hello\n", "dest": "/tmp/x"}));
        Copy.run(&ctx, "copy", task()).await;
        let component = ctx.modules.borrow()[0].clone();
        assert_eq!(component.args["content"], "hello\n");
        assert!(component.transfers.is_empty());

        ctx.legacy = vec!["copy".into()];
        ctx.modules.borrow_mut().clear();
        Copy.run(&ctx, "copy", task()).await;
        let legacy = ctx.modules.borrow()[0].clone();
        assert!(!legacy.args.contains_key("content"), "{:?}", legacy.args);
        assert_eq!(legacy.args["remote_src"], true);
        assert_eq!(legacy.transfers.len(), 1);
        assert_eq!(legacy.transfers[0].arg, "src");

        // Content into a directory is refused before any module runs.
        ctx.modules.borrow_mut().clear();
        let r = Copy
            .run(
                &ctx,
                "copy",
                args(json!({"content": "x", "dest": "/tmp/new/"})),
            )
            .await;
        assert_eq!(r["msg"], "can not use content with a dir as dest");
        assert!(ctx.modules.borrow().is_empty());
    }
}
