//! The `copy` module, node side: puts `content`, or a file or directory already on the
//! node (`src`), at `dest`, as Ansible's copy module does there. Files are compared by
//! sha1 and replaced atomically (a temporary file in dest's directory, renamed over
//! it), after an optional `validate` command and `backup`; then mode, owner and group
//! are applied. The controller's copy action stages local files and passes them as
//! `src`.

mod diff;
mod source;
mod stage;
mod tree;

#[cfg(all(test, unix))]
mod module_tests;

use diff::{Side, content_diff};
use sandball_guest_sdk::describe_io_error;
use sandball_guest_sdk::files::{FileArgs, HashAlgorithm, join, path_info, realpath, sha1_file};
use sandball_guest_sdk::host::{FileKind, FileStat};
use sandball_guest_sdk::prelude::*;
use source::Source;
use stage::{Keep, Staged};
use std::fs;
use tree::TreeCopy;

sandball_guest_sdk::manifest!("../manifest.json");

fn main() {
    sandball_guest_sdk::run_with_paths(MANIFEST, copy);
}

/// The module body.
fn copy(m: &mut Module) -> Result<Map<String, Value>, Fail> {
    let source = Source::from_module(m)?;
    let mut args = m.file_args();
    if args.mode.as_ref().and_then(Value::as_str) == Some("preserve") {
        args.mode = source_mode(&source)?;
    }
    let checksum_src = source.digest(HashAlgorithm::Sha1)?;
    if let Some(expected) = m.get_str("checksum")
        && checksum_src.as_deref() != Some(expected)
    {
        return Err(Fail::new(
            "Copied file does not match the expected checksum. Transfer failed.",
        )
        .with("checksum", checksum_src)
        .with("expected_checksum", expected));
    }

    let mut dest = m.get_str("dest").unwrap_or_default().to_string();
    // Always have a directory part, as Ansible does.
    if !dest.contains('/') {
        dest = format!("./{dest}");
    }
    if let Source::Dir(src) = &source {
        return copy_directory(m, &args, src, &dest);
    }
    let is_content = matches!(source, Source::Content(_));
    let basename = m
        .get_str("_original_basename")
        .or_else(|| source.path().map(base_name))
        .unwrap_or_default()
        .to_string();

    if dest.ends_with('/') {
        if is_content {
            return Err(Fail::new("can not use content with a dir as dest"));
        }
        if let Some(name) = m.get_str("_original_basename") {
            dest.push_str(name);
        }
        let dir = dirname(&dest);
        if stat(&dir)?.is_none() {
            if m.check_mode() {
                let mut result = Map::new();
                result.insert(
                    "msg".into(),
                    json!(format!("dest directory {dir} would be created")),
                );
                result.insert("changed".into(), json!(true));
                result.insert("src".into(), json!(source.path()));
                return Ok(result);
            }
            make_parents(m, &args, &dir)?;
        }
    }
    if is_kind(&dest, FileKind::Directory)? {
        if is_content {
            return Err(Fail::new("can not use content with a dir as dest"));
        }
        dest = join(&dest, &basename);
    }

    let mut checksum_dest = None;
    if stat(&dest)?.is_some() {
        if m.get_bool("follow") && is_link(&dest) {
            let target = realpath(&dest);
            if target == dest {
                return Err(Fail::new(format!(
                    "cannot follow the symlink {dest}: its target cannot be read in the sandbox (an absolute target); use follow: false to replace the link"
                )));
            }
            dest = target;
        }
        if !m.get_bool("force") {
            return Ok(already_exists(source.path(), &dest));
        }
        if is_kind(&dest, FileKind::File)? {
            checksum_dest = sha1_file(&dest).ok();
        }
    } else {
        let dir = dirname(&dest);
        if stat(&dir)?.is_none() {
            return Err(Fail::new(format!(
                "Destination directory {dir} does not exist"
            )));
        }
    }

    let mut changed = false;
    let mut backup_file = None;
    let mut diff = None;
    if checksum_src != checksum_dest || is_link(&dest) {
        if m.diff_mode() {
            diff = Some(file_diff(&dest, &source, is_content)?);
        }
        if !m.check_mode() {
            if m.get_bool("backup") && stat(&dest)?.is_some() {
                backup_file = Some(files::backup_local(&dest)?);
            }
            put(m, &args, &source, &dest)?;
        }
        changed = true;
    }

    let mut result = Map::new();
    result.insert("dest".into(), json!(dest));
    if let Some(src) = source.path() {
        result.insert("src".into(), json!(src));
    }
    result.insert("md5sum".into(), json!(source.digest(HashAlgorithm::Md5)?));
    result.insert("checksum".into(), json!(checksum_src));
    if let Some(b) = backup_file {
        result.insert("backup_file".into(), json!(b));
    }
    let changed = m.set_fs_attributes_if_different(&args, &dest, changed, None)?;
    result.insert("changed".into(), json!(changed));
    add_path_info(&mut result, &dest);
    if let Some(d) = diff {
        result.insert("diff".into(), Value::Object(d));
    }
    Ok(result)
}

/// Stages the source next to `dest`, validates it, and moves it into place.
fn put(m: &Module, args: &FileArgs, source: &Source, dest: &str) -> Result<(), Fail> {
    let failed = |e: std::io::Error| {
        Fail::new(format!(
            "Failed to copy {} to {dest}: {}",
            source.path().unwrap_or("content"),
            describe_io_error(&e)
        ))
    };
    let mut reader = source.reader().map_err(failed)?;
    let staged = Staged::write(dest, &mut reader).map_err(failed)?;
    if let Some(validate) = m.get_str("validate") {
        // Validators may care about the mode and owner (e.g. sshd's config).
        m.set_fs_attributes_if_different(args, staged.path(), false, None)?;
        let output = files::run_validation(validate, staged.path())?;
        if output.rc != 0 {
            return Err(Fail::new("failed to validate")
                .with("exit_status", json!(output.rc))
                .with("stdout", json!(String::from_utf8_lossy(&output.stdout)))
                .with("stderr", json!(String::from_utf8_lossy(&output.stderr))));
        }
    }
    let keep = match (m.get_bool("remote_src"), source.path()) {
        (true, Some(src)) => Keep::Source(src),
        _ => Keep::Destination,
    };
    staged.commit(dest, keep)
}

/// `src` is a directory on the node: copy or merge it (see [`tree`]).
fn copy_directory(
    m: &Module,
    args: &FileArgs,
    src: &str,
    dest: &str,
) -> Result<Map<String, Value>, Fail> {
    let target = if src.ends_with('/') {
        dest.trim_end_matches('/').to_string()
    } else {
        format!("{}/{}", dest.trim_end_matches('/'), base_name(src))
    };
    // As for a file: only a `dest` ending in `/` has its missing parents made.
    if !dest.ends_with('/') && stat(dest)?.is_none() {
        let dir = dirname(dest);
        if stat(&dir)?.is_none() {
            return Err(Fail::new(format!(
                "Destination directory {dir} does not exist"
            )));
        }
    }
    if stat(dest)?.is_some_and(|st| st.kind != FileKind::Directory) {
        return Err(Fail::new(format!(
            "Cannot copy the directory {src} to {dest}: {dest} is not a directory"
        )));
    }
    // Ansible reports (and applies mode to) dest, or dest/<name> when dest already is
    // a directory.
    let reported = if is_kind(dest, FileKind::Directory)? {
        join(dest, base_name(src))
    } else {
        dest.to_string()
    };
    if stat(&reported)?.is_some() && !m.get_bool("force") {
        return Ok(already_exists(Some(src), &reported));
    }
    if !m.check_mode() {
        let top = dirname(&target);
        if stat(&top)?.is_none() {
            make_parents(m, args, &top)?;
        }
    }
    let owner_args = FileArgs {
        mode: None,
        attributes: None,
        follow: false,
        ..args.clone()
    };
    let set_owner = |path: &str| m.set_fs_attributes_if_different(&owner_args, path, false, None);
    let copier = TreeCopy {
        check_mode: m.check_mode(),
        follow_links: m.get("local_follow").and_then(Value::as_bool) == Some(true),
        set_owner: &set_owner,
    };
    let mut changed = copier.copy(src, &target)?;
    if stat(&reported)?.is_some() {
        changed = m.set_fs_attributes_if_different(args, &reported, changed, None)?;
    }
    let mut result = Map::new();
    result.insert("dest".into(), json!(reported));
    result.insert("src".into(), json!(src));
    result.insert("md5sum".into(), Value::Null);
    result.insert("checksum".into(), Value::Null);
    result.insert("changed".into(), json!(changed));
    add_path_info(&mut result, &reported);
    Ok(result)
}

/// The result of `force: false` when dest is already there.
fn already_exists(src: Option<&str>, dest: &str) -> Map<String, Value> {
    let mut result = Map::new();
    result.insert("msg".into(), json!("file already exists"));
    result.insert("src".into(), json!(src));
    result.insert("dest".into(), json!(dest));
    result.insert("changed".into(), json!(false));
    add_path_info(&mut result, dest);
    result
}

/// Creates `dir` and its missing parents; each new directory gets `directory_mode`
/// (or the default mode) and the task's owner and group.
fn make_parents(m: &Module, args: &FileArgs, dir: &str) -> Result<(), Fail> {
    let mut missing = Vec::new();
    let mut current = dir.to_string();
    while !current.is_empty() && current != "/" && stat(&current)?.is_none() {
        missing.push(current.clone());
        current = dirname(&current);
    }
    let dir_args = FileArgs {
        mode: m.get("directory_mode").cloned(),
        ..args.clone()
    };
    for d in missing.iter().rev() {
        fs::create_dir(d).map_err(|e| {
            Fail::new(format!(
                "Could not create directory {d}: {}",
                describe_io_error(&e)
            ))
        })?;
        m.set_fs_attributes_if_different(&dir_args, d, true, None)?;
    }
    Ok(())
}

/// The diff of replacing `dest` by the source.
fn file_diff(dest: &str, source: &Source, is_content: bool) -> Result<Map<String, Value>, Fail> {
    let read_fail = |what: &str, e: std::io::Error| {
        Fail::new(format!(
            "cannot read {what} for the diff: {}",
            describe_io_error(&e)
        ))
    };
    // A symlink the sandbox cannot follow shows as new content.
    let before = match Side::read(dest) {
        Err(_) if is_link(dest) => Side::Absent,
        other => other.map_err(|e| read_fail(dest, e))?,
    };
    let after = source.diff_side().map_err(|e| read_fail("the source", e))?;
    let header = match source.path() {
        Some(src) if !is_content => src,
        _ => dest,
    };
    Ok(content_diff(dest, before, after, header))
}

/// The permission bits of the source, as `mode: preserve` asks (none for `content`).
fn source_mode(source: &Source) -> Result<Option<Value>, Fail> {
    let Some(src) = source.path() else {
        return Ok(None);
    };
    Ok(host::stat(src, true)?.map(|st| json!(format!("0{:03o}", st.mode))))
}

/// Adds owner, group, mode, state and size of `path` when it exists (Ansible's
/// `add_path_info`).
fn add_path_info(result: &mut Map<String, Value>, path: &str) {
    if !matches!(host::stat(path, true), Ok(Some(_))) {
        return;
    }
    for (k, v) in path_info(path) {
        if k != "path" {
            result.insert(k, v);
        }
    }
}

/// Metadata of `path` following symlinks, asked of the host (WASI cannot follow a
/// symlink with an absolute target); `None` when nothing is there, a failure naming
/// the capability when the grant does not cover it.
fn stat(path: &str) -> Result<Option<FileStat>, Fail> {
    // A failure on the node in the words of ansible-core's copy action, whose own
    // stat of the destination meets it first.
    host::stat(path, true).map_err(|e| match e.strerror() {
        Some(text) => Fail::new(format!(
            "Failed to get information on remote file ({path}): {text}"
        )),
        None => Fail::from(e),
    })
}

/// Whether `path` is (through links) of the given kind.
fn is_kind(path: &str, kind: FileKind) -> Result<bool, Fail> {
    Ok(stat(path)?.is_some_and(|st| st.kind == kind))
}

fn is_link(path: &str) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// The directory part of `path`, as Python's `os.path.dirname` gives it: everything
/// before the last `/` (`a/b/` gives `a/b`), without trailing slashes unless that
/// is all there is.
fn dirname(path: &str) -> String {
    let Some(i) = path.rfind('/') else {
        return String::new();
    };
    let head = &path[..=i];
    match head.trim_end_matches('/') {
        "" => head.to_string(),
        trimmed => trimmed.to_string(),
    }
}

/// What follows the last `/` of `path` (Python's `os.path.basename`: empty for a
/// path ending in `/`).
fn base_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dirname_matches_python() {
        assert_eq!(dirname("a/b/"), "a/b");
        assert_eq!(dirname("a/b/name"), "a/b");
        assert_eq!(dirname("./name"), ".");
        assert_eq!(dirname("/top"), "/");
        assert_eq!(dirname("name"), "");
        assert_eq!(base_name("/srv/files/app.conf"), "app.conf");
        assert_eq!(base_name("/srv/files/"), "");
        assert_eq!(join("/srv/", "x"), "/srv/x");
        assert_eq!(join("/srv", ""), "/srv/");
    }
}
