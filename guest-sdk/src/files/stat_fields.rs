//! `stat_fields`: the keys Ansible's `stat` and `find` results share for one
//! `stat(2)` answer — mode, the `is*` type flags, owner and group ids, size, inode,
//! device, link count, times and the permission bits.

use crate::host::{FileKind, FileStat};
use serde_json::{Map, Value};

/// `mode` (four octal digits), `isdir`…`issock`, `uid`, `gid`, `size`, `inode`, `dev`,
/// `nlink`, `atime`/`mtime`/`ctime`, `wusr`…`xoth`, `isuid`, `isgid` of `st`.
pub fn stat_fields(st: &FileStat) -> Map<String, Value> {
    let bit = |b: u32| Value::Bool(st.mode & b != 0);
    let mut out = Map::new();
    let mut put = |k: &str, v: Value| {
        out.insert(k.to_string(), v);
    };
    put("mode", Value::from(format!("{:04o}", st.mode)));
    put("isdir", Value::Bool(st.kind == FileKind::Directory));
    put("ischr", Value::Bool(st.kind == FileKind::CharDevice));
    put("isblk", Value::Bool(st.kind == FileKind::BlockDevice));
    put("isreg", Value::Bool(st.kind == FileKind::File));
    put("isfifo", Value::Bool(st.kind == FileKind::Fifo));
    put("islnk", Value::Bool(st.kind == FileKind::Symlink));
    put("issock", Value::Bool(st.kind == FileKind::Socket));
    put("uid", Value::from(st.uid));
    put("gid", Value::from(st.gid));
    put("size", Value::from(st.size));
    put("inode", Value::from(st.inode));
    put("dev", Value::from(st.dev));
    put("nlink", Value::from(st.nlink));
    put("atime", Value::from(st.atime));
    put("mtime", Value::from(st.mtime));
    put("ctime", Value::from(st.ctime));
    for (name, b) in [
        ("wusr", 0o200),
        ("rusr", 0o400),
        ("xusr", 0o100),
        ("wgrp", 0o020),
        ("rgrp", 0o040),
        ("xgrp", 0o010),
        ("woth", 0o002),
        ("roth", 0o004),
        ("xoth", 0o001),
        ("isuid", 0o4000),
        ("isgid", 0o2000),
    ] {
        put(name, bit(b));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_of_a_setuid_file() {
        let st = FileStat {
            kind: FileKind::File,
            mode: 0o4751,
            uid: 1,
            gid: 2,
            size: 3,
            inode: 4,
            dev: 5,
            nlink: 6,
            atime: 7.5,
            mtime: 8.0,
            ctime: 9.0,
        };
        let f = stat_fields(&st);
        assert_eq!(f["mode"], json!("4751"));
        assert_eq!(
            (f["isreg"].clone(), f["isdir"].clone()),
            (json!(true), json!(false))
        );
        assert_eq!(
            (f["xusr"].clone(), f["wgrp"].clone(), f["xoth"].clone()),
            (json!(true), json!(false), json!(true))
        );
        assert_eq!(
            (f["isuid"].clone(), f["isgid"].clone()),
            (json!(true), json!(false))
        );
        assert_eq!(
            (f["atime"].clone(), f["nlink"].clone()),
            (json!(7.5), json!(6))
        );
        assert_eq!(f.len(), 28);
    }
}
