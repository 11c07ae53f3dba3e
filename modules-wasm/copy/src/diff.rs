//! The `diff` a copy reports in diff mode: the old and new text of the destination,
//! or markers instead when a side is binary or too large to show, with the fields
//! Ansible's copy action uses (`before`, `after`, `before_header`, `after_header`,
//! `dst_binary`, `src_binary`, `dst_larger`, `src_larger`).

use serde_json::{Map, Value, json};
use std::fs::File;
use std::io::{self, Read};

/// Largest file whose text is put in a diff (Ansible's `MAX_FILE_SIZE_FOR_DIFF`).
pub const MAX_DIFF_SIZE: u64 = 104_448;

/// How much of the old destination is read to decide whether it is binary.
const PEEK_SIZE: usize = 8192;

/// One side of the diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Side {
    /// The file does not exist (the old side of a new file).
    Absent,
    /// The file is larger than [`MAX_DIFF_SIZE`].
    Larger,
    /// The file's bytes.
    Bytes(Vec<u8>),
}

impl Side {
    /// Reads a file for a diff: absent, too large, or its bytes.
    pub fn read(path: &str) -> io::Result<Side> {
        let mut file = match File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Side::Absent),
            Err(e) => return Err(e),
        };
        if file.metadata()?.len() > MAX_DIFF_SIZE {
            return Ok(Side::Larger);
        }
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        Ok(Side::of(bytes))
    }

    /// Bytes already in memory (e.g. `content`), marked too large when they are.
    pub fn of(bytes: Vec<u8>) -> Side {
        if bytes.len() as u64 > MAX_DIFF_SIZE {
            Side::Larger
        } else {
            Side::Bytes(bytes)
        }
    }
}

/// Builds the diff of replacing `before` at `dest` with `after`, whose header is
/// `after_header` (the source path, or `dest` for inline content).
pub fn content_diff(
    dest: &str,
    before: Side,
    after: Side,
    after_header: &str,
) -> Map<String, Value> {
    let mut diff = Map::new();
    match before {
        Side::Absent => {
            diff.insert("before".into(), json!(""));
        }
        Side::Bytes(b) if b[..b.len().min(PEEK_SIZE)].contains(&0) => {
            diff.insert("dst_binary".into(), json!(1));
        }
        Side::Larger => {
            diff.insert("dst_larger".into(), json!(MAX_DIFF_SIZE));
        }
        Side::Bytes(b) => {
            diff.insert("before_header".into(), json!(dest));
            diff.insert("before".into(), json!(String::from_utf8_lossy(&b)));
        }
    }
    match after {
        Side::Larger => {
            diff.insert("src_larger".into(), json!(MAX_DIFF_SIZE));
        }
        Side::Bytes(b) if b.contains(&0) => {
            diff.insert("src_binary".into(), json!(1));
        }
        Side::Bytes(b) => {
            diff.insert("after_header".into(), json!(after_header));
            diff.insert("after".into(), json!(String::from_utf8_lossy(&b)));
        }
        Side::Absent => {
            diff.insert("after".into(), json!(""));
        }
    }
    diff
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_on_both_sides_gives_headers_and_text() {
        let d = content_diff(
            "/etc/motd",
            Side::Bytes(b"old\n".to_vec()),
            Side::Bytes(b"new\n".to_vec()),
            "/tmp/src",
        );
        assert_eq!(
            Value::Object(d),
            json!({"before_header": "/etc/motd", "before": "old\n", "after_header": "/tmp/src", "after": "new\n"})
        );
    }

    #[test]
    fn new_file_has_empty_before() {
        let d = content_diff("/x", Side::Absent, Side::of(b"hi".to_vec()), "/x");
        assert_eq!(
            Value::Object(d),
            json!({"before": "", "after_header": "/x", "after": "hi"})
        );
    }

    #[test]
    fn binary_and_large_sides_are_marked_not_shown() {
        let d = content_diff(
            "/x",
            Side::Bytes(vec![1, 0, 2]),
            Side::of(vec![b'a'; MAX_DIFF_SIZE as usize + 1]),
            "/s",
        );
        assert_eq!(
            Value::Object(d),
            json!({"dst_binary": 1, "src_larger": 104448})
        );
        let d = content_diff("/x", Side::Larger, Side::Bytes(vec![0]), "/s");
        assert_eq!(
            Value::Object(d),
            json!({"dst_larger": 104448, "src_binary": 1})
        );
    }

    #[test]
    fn reads_files_by_size() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("small");
        let big = dir.path().join("big");
        std::fs::write(&small, "text").unwrap();
        std::fs::write(&big, vec![b'x'; MAX_DIFF_SIZE as usize + 1]).unwrap();
        assert_eq!(
            Side::read(small.to_str().unwrap()).unwrap(),
            Side::Bytes(b"text".to_vec())
        );
        assert_eq!(Side::read(big.to_str().unwrap()).unwrap(), Side::Larger);
        let missing = dir.path().join("missing");
        assert_eq!(Side::read(missing.to_str().unwrap()).unwrap(), Side::Absent);
    }
}
