//! The `stat` module: what `stat(2)` says about a path, in the shape of Ansible's
//! `stat` result (`exists`, `mode`, the `is*` flags, owner and group ids and names,
//! times, permission bits, `blocks`/`block_size`/`device_type`, `checksum` for regular files, `lnk_source`/`lnk_target` for
//! links), `mimetype`/`charset` (from the node's `file`) and `attr_flags`/`attributes`/
//! `version` (from `lsattr`), or `{exists: false}`. It needs read access to `path` and
//! may run `file` and `lsattr` on that path only.

use sandball_guest_sdk::files::{HashAlgorithm, digest_reader, read_link, realpath, stat_fields};
use sandball_guest_sdk::host::{FileKind, FileStat};
use sandball_guest_sdk::prelude::*;

sandball_guest_sdk::manifest!("../manifest.json");

/// The fields of Ansible's `stat` result that come from the metadata alone.
fn metadata_fields(path: &str, st: &FileStat) -> Map<String, Value> {
    let mut out = json_map!({"exists": true, "path": path});
    out.extend(stat_fields(st));
    out
}

/// The module body.
fn stat(m: &mut Module) -> Result<Map<String, Value>, Fail> {
    let path = m.get_str("path").unwrap_or_default().to_string();
    // As os.stat's error, by its text alone ("Not a directory"); missing is no error.
    let st = host::stat(&path, m.get_bool("follow")).map_err(|e| match e.strerror() {
        Some(text) => Fail::new(text),
        None => Fail::from(e),
    })?;
    let Some(st) = st else {
        return Ok(json_map!({"changed": false, "stat": {"exists": false}}));
    };
    let mut out = metadata_fields(&path, &st);
    if let Some(storage) = host::stat_storage(&path, m.get_bool("follow")).map_err(Fail::from)? {
        out.insert("blocks".into(), Value::from(storage.blocks));
        out.insert("block_size".into(), Value::from(storage.block_size));
        out.insert("device_type".into(), Value::from(storage.device_type));
    }
    // As os.access answers for the module's user, on what the path finally names; a
    // dangling link is none of them.
    let may = |mode: u32| host::access(&path, mode).unwrap_or(false);
    out.insert("readable".into(), Value::Bool(may(4)));
    out.insert("writeable".into(), Value::Bool(may(2)));
    out.insert("executable".into(), Value::Bool(may(1)));
    if st.kind == FileKind::Symlink {
        match read_link(std::path::Path::new(&path)) {
            Ok(link) => {
                out.insert("lnk_source".into(), Value::from(realpath(&path)));
                out.insert(
                    "lnk_target".into(),
                    Value::from(link.to_string_lossy().into_owned()),
                );
            }
            Err(e) => m.warn(format!(
                "cannot read the symlink {path}: {}",
                sandball_guest_sdk::describe_io_error(&e)
            )),
        }
    }
    if let Some(name) = host::user_name(st.uid) {
        out.insert("pw_name".into(), Value::from(name));
    }
    if let Some(name) = host::group_name(st.gid) {
        out.insert("gr_name".into(), Value::from(name));
    }
    // Like Ansible: a checksum only for a regular file (not a link to one, unless followed).
    let wants_checksum = st.kind == FileKind::File && m.get_bool("get_checksum");
    if wants_checksum && out.get("readable") == Some(&Value::Bool(true)) {
        let algorithm: HashAlgorithm = m
            .get_str("checksum_algorithm")
            .unwrap_or("sha1")
            .parse()
            .map_err(Fail::new)?;
        // A followed link is read at its target (WASI itself will not follow a link
        // to an absolute path).
        let target = if m.get_bool("follow") {
            realpath(&path)
        } else {
            path.clone()
        };
        match std::fs::File::open(&target) {
            Ok(file) => {
                out.insert(
                    "checksum".into(),
                    Value::from(digest_reader(file, algorithm)?),
                );
            }
            Err(e) => m.warn(format!(
                "cannot open {path} to checksum it: {}",
                sandball_guest_sdk::describe_io_error(&e)
            )),
        }
    }
    if m.get_bool("get_mime") {
        let (mimetype, charset) = mime(&path);
        out.insert("mimetype".into(), Value::from(mimetype));
        out.insert("charset".into(), Value::from(charset));
    }
    if m.get_bool("get_attributes") {
        let (version, flags) = attributes(&path);
        let names: Vec<Value> = flags
            .chars()
            .filter_map(attribute_name)
            .map(Value::from)
            .collect();
        out.insert("version".into(), version.map_or(Value::Null, Value::from));
        out.insert("attr_flags".into(), Value::from(flags));
        out.insert("attributes".into(), Value::Array(names));
    }
    Ok(json_map!({"changed": false, "stat": out}))
}

/// Runs a program the manifest grants for `path`; its stdout when it succeeds.
fn output_of(argv: &[&str]) -> Option<String> {
    let out = host::run(host::Command {
        argv: argv.iter().map(|a| a.to_string()).collect(),
        ..host::Command::default()
    })
    .ok()?;
    (out.rc == 0).then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The MIME type and encoding `file` gives the path, else `unknown` for both.
fn mime(path: &str) -> (String, String) {
    let unknown = || ("unknown".to_string(), "unknown".to_string());
    let Some(text) = output_of(&["file", "--mime-type", "--mime-encoding", path]) else {
        return unknown();
    };
    // `PATH: TYPE; charset=ENCODING`
    let Some((_, rest)) = text.trim_end().rsplit_once(':') else {
        return unknown();
    };
    match rest.split_once(';') {
        Some((kind, charset)) => (
            kind.trim().to_string(),
            charset
                .split_once('=')
                .map_or("unknown", |(_, c)| c.trim())
                .to_string(),
        ),
        None => unknown(),
    }
}

/// The file's version and attribute flags as `lsattr -vd` shows them (no version and
/// no flags where it cannot tell, as for a symlink).
fn attributes(path: &str) -> (Option<String>, String) {
    let Some(text) = output_of(&["lsattr", "-vd", path]) else {
        return (None, String::new());
    };
    let mut words = text.split_whitespace();
    let version = words.next().map(str::to_string);
    let flags = words
        .next()
        .map(|f| f.chars().filter(|c| *c != '-').collect())
        .unwrap_or_default();
    (version, flags)
}

/// The name of an attribute flag, as chattr(1) calls it.
fn attribute_name(flag: char) -> Option<&'static str> {
    Some(match flag {
        'A' => "noatime",
        'a' => "append",
        'c' => "compressed",
        'C' => "nocow",
        'd' => "nodump",
        'D' => "dirsync",
        'e' => "extents",
        'E' => "encrypted",
        'F' => "casefold",
        'h' => "blocksize",
        'i' => "immutable",
        'I' => "indexed",
        'j' => "journalled",
        'm' => "dontcompress",
        'N' => "inline",
        'P' => "projinherit",
        's' => "zero",
        'S' => "synchronous",
        't' => "notail",
        'T' => "blockroot",
        'u' => "undelete",
        'V' => "verity",
        'x' => "dax",
        'X' => "compressedraw",
        'Z' => "compresseddirty",
        _ => return None,
    })
}

fn main() {
    sandball_guest_sdk::run_with_paths(MANIFEST, stat)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    fn stat_args(args: Value) -> sandball_guest_sdk::Outcome {
        let input = args.to_string();
        sandball_guest_sdk::execute(MANIFEST, input.as_bytes(), &|_| None, stat)
    }

    #[test]
    fn regular_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f").to_string_lossy().into_owned();
        std::fs::write(&p, b"hello\n").unwrap();
        host::chmod(&p, 0o4754).unwrap();
        let out = stat_args(json!({"path": p}));
        assert!(!out.failed, "{:?}", out.result);
        let s = &out.result["stat"];
        assert_eq!(s["exists"], json!(true));
        assert_eq!(s["mode"], json!("4754"));
        assert_eq!(s["isreg"], json!(true));
        assert_eq!(s["isdir"], json!(false));
        assert_eq!(s["size"], json!(6));
        assert_eq!(
            s["checksum"],
            json!("f572d396fae9206628714fb2ce00f72e94f2258f")
        );
        assert_eq!(
            (s["rusr"].clone(), s["wusr"].clone(), s["xusr"].clone()),
            (json!(true), json!(true), json!(true))
        );
        assert_eq!(
            (s["rgrp"].clone(), s["wgrp"].clone(), s["xgrp"].clone()),
            (json!(true), json!(false), json!(true))
        );
        assert_eq!(
            (s["roth"].clone(), s["woth"].clone(), s["xoth"].clone()),
            (json!(true), json!(false), json!(false))
        );
        assert_eq!(
            (s["isuid"].clone(), s["isgid"].clone()),
            (json!(true), json!(false))
        );
        assert_eq!(
            (
                s["readable"].clone(),
                s["writeable"].clone(),
                s["executable"].clone()
            ),
            (json!(true), json!(true), json!(true))
        );
        assert!(s["pw_name"].is_string() && s["gr_name"].is_string() && s["mtime"].is_f64());
        // `file` and `lsattr` answer where the node has them (Debian's file and
        // e2fsprogs); `unknown` and no flags otherwise, as Ansible's stat gives.
        if std::path::Path::new("/usr/bin/file").exists() {
            assert_eq!(
                (s["mimetype"].clone(), s["charset"].clone()),
                (json!("text/plain"), json!("us-ascii"))
            );
        } else {
            assert_eq!(s["mimetype"], json!("unknown"));
        }
        assert!(
            s["attributes"].is_array() && s["attr_flags"].is_string(),
            "{s}"
        );
        assert!(s.get("lnk_source").is_none());
        let meta = std::fs::metadata(&p).unwrap();
        assert_eq!(
            (
                s["blocks"].clone(),
                s["block_size"].clone(),
                s["device_type"].clone()
            ),
            (json!(meta.blocks()), json!(meta.blksize()), json!(0))
        );
        let out = stat_args(json!({"path": p, "checksum_algorithm": "sha256", "get_mime": false}));
        assert_eq!(
            out.result["stat"]["checksum"],
            json!("5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03")
        );
        let out = stat_args(json!({"path": p, "get_checksum": false}));
        assert!(out.result["stat"].get("checksum").is_none());
    }

    #[test]
    fn missing_path() {
        let out = stat_args(json!({"path": "/nonexistent/sandball"}));
        assert!(!out.failed);
        assert_eq!(out.result["stat"], json!({"exists": false}));
        assert_eq!(out.result["changed"], json!(false));
        // Below a file, as os.stat fails there.
        let out = stat_args(json!({"path": "/etc/passwd/x"}));
        assert!(out.failed);
        assert_eq!(out.result["msg"], json!("Not a directory"));
    }

    #[test]
    fn links_with_and_without_follow() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let target = root.join("t").to_string_lossy().into_owned();
        let link = root.join("l").to_string_lossy().into_owned();
        std::fs::write(&target, b"x").unwrap();
        host::symlink("t", &link).unwrap();
        let out = stat_args(json!({"path": link}));
        let s = &out.result["stat"];
        assert_eq!(s["islnk"], json!(true));
        assert_eq!(s["isreg"], json!(false));
        assert_eq!(s["lnk_target"], json!("t"));
        assert_eq!(s["lnk_source"], json!(target));
        assert!(s.get("checksum").is_none(), "links have no checksum");
        let out = stat_args(json!({"path": link, "follow": true}));
        let s = &out.result["stat"];
        assert_eq!(
            (s["islnk"].clone(), s["isreg"].clone()),
            (json!(false), json!(true))
        );
        assert!(s["checksum"].is_string());
    }

    #[test]
    fn directories() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_string_lossy().into_owned();
        let out = stat_args(json!({"name": d}));
        let s = &out.result["stat"];
        assert_eq!(s["isdir"], json!(true));
        assert_eq!(s["readable"], json!(true));
        assert!(s.get("checksum").is_none());
    }

    #[test]
    fn bad_algorithm_is_refused() {
        let out = stat_args(json!({"path": "/", "checksum_algorithm": "crc32"}));
        assert_eq!(
            out.result["msg"],
            json!(
                "value of checksum_algorithm must be one of: md5, sha1, sha224, sha256, sha384, sha512, got: crc32"
            )
        );
    }
}
