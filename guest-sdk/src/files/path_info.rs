//! `path_info`: what Ansible's file modules report about a path (`add_path_info`):
//! owner, group, mode, state and size, or `state: absent`.

use super::attributes::mode_text;
use crate::host::{self, FileKind};
use serde_json::{Map, Value};

/// `{path, uid, gid, owner, group, mode, state, size}` of `path` (not following a final
/// symlink), with `state` one of `file`, `directory`, `link`, `hard`; `{path, state:
/// absent}` when it does not exist or cannot be seen (a dangling link counts as absent,
/// as in Ansible).
pub fn path_info(path: &str) -> Map<String, Value> {
    let mut info = Map::new();
    info.insert("path".into(), Value::from(path));
    let (Ok(Some(st)), Ok(Some(followed))) = (host::stat(path, false), host::stat(path, true))
    else {
        info.insert("state".into(), Value::from("absent"));
        return info;
    };
    let state = if st.kind == FileKind::Symlink {
        "link"
    } else if followed.kind == FileKind::Directory {
        "directory"
    } else if followed.nlink > 1 {
        "hard"
    } else {
        "file"
    };
    info.insert("uid".into(), Value::from(st.uid));
    info.insert("gid".into(), Value::from(st.gid));
    info.insert(
        "owner".into(),
        Value::from(host::user_name(st.uid).unwrap_or_else(|| st.uid.to_string())),
    );
    info.insert(
        "group".into(),
        Value::from(host::group_name(st.gid).unwrap_or_else(|| st.gid.to_string())),
    );
    info.insert("mode".into(), Value::from(mode_text(st.mode)));
    info.insert("state".into(), Value::from(state));
    info.insert("size".into(), Value::from(st.size));
    info
}

/// What kind of file `path` is, following symlinks, as Python's `os.path.exists`
/// sees it: `None` when nothing is there or the node cannot examine it (below a file,
/// in a directory the user may not search); an error only when the grant does not
/// cover it.
pub fn existing_kind(path: &str) -> Result<Option<FileKind>, host::HostError> {
    match host::stat(path, true) {
        Ok(st) => Ok(st.map(|st| st.kind)),
        Err(e) if !e.denied => Ok(None),
        Err(e) => Err(e),
    }
}

/// Ansible's `add_path_info`, which `exit_json` and `fail_json` apply to every
/// result: when `result` has a `path` (else a `dest`) that exists, adds its
/// [`path_info`] fields (a missing path adds nothing).
pub fn add_path_info(result: &mut Map<String, Value>) {
    let Some(path) = result
        .get("path")
        .or_else(|| result.get("dest"))
        .and_then(Value::as_str)
        .map(str::to_string)
    else {
        return;
    };
    let info = path_info(&path);
    if info.get("state").and_then(Value::as_str) == Some("absent") {
        return;
    }
    for (k, v) in info {
        if k != "path" {
            result.insert(k, v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reports_each_state() {
        let dir = tempfile::tempdir().unwrap();
        let p = |n: &str| dir.path().join(n).to_string_lossy().into_owned();
        std::fs::write(p("f"), b"abc").unwrap();
        host::chmod(&p("f"), 0o640).unwrap();
        let info = path_info(&p("f"));
        assert_eq!(info["state"], json!("file"));
        assert_eq!(existing_kind(&p("f")), Ok(Some(FileKind::File)));
        assert_eq!(existing_kind(&p("f/x")), Ok(None));
        assert_eq!(existing_kind(&p("nope")), Ok(None));
        assert_eq!(info["mode"], json!("0640"));
        assert_eq!(info["size"], json!(3));
        assert!(info["owner"].is_string() && info["uid"].is_u64());
        std::fs::hard_link(p("f"), p("h")).unwrap();
        assert_eq!(path_info(&p("h"))["state"], json!("hard"));
        host::symlink("f", &p("l")).unwrap();
        assert_eq!(path_info(&p("l"))["state"], json!("link"));
        assert_eq!(
            path_info(&dir.path().to_string_lossy())["state"],
            json!("directory")
        );
        host::symlink("nowhere", &p("dangling")).unwrap();
        assert_eq!(
            Value::Object(path_info(&p("dangling"))),
            json!({"path": p("dangling"), "state": "absent"})
        );
        assert_eq!(path_info(&p("missing"))["state"], json!("absent"));
    }
}
