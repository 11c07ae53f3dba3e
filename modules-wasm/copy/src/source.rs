//! What is being copied: inline `content`, a file on the node, or a directory on the
//! node (`src`), with its checksums and its side of the diff.

use crate::diff::Side;
use sandball_guest_sdk::describe_io_error;
use sandball_guest_sdk::files::{HashAlgorithm, digest_file, digest_reader};
use sandball_guest_sdk::prelude::*;
use sandball_pycompat::pyfmt::{json_dumps, py_str};
use std::fs::{self, File};
use std::io::{self, Read};

/// The source of a copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `content`: the bytes themselves.
    Content(Vec<u8>),
    /// `src` naming a file (or a symlink to one).
    File(String),
    /// `src` naming a directory.
    Dir(String),
}

impl Source {
    /// Reads `content` or `src` from the module's parameters.
    pub fn from_module(m: &Module) -> Result<Source, Fail> {
        if let Some(content) = m.get("content") {
            return Ok(Source::Content(content_bytes(content)));
        }
        let Some(src) = m.get_str("src") else {
            return Err(Fail::new("src (or content) is required"));
        };
        match fs::metadata(src) {
            Ok(meta) if meta.is_dir() => Ok(Source::Dir(src.to_string())),
            Ok(_) => match File::open(src) {
                Ok(_) => Ok(Source::File(src.to_string())),
                Err(e) => Err(Fail::new(format!("Source {src} not readable"))
                    .with("details", describe_io_error(&e))),
            },
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                Err(Fail::new(format!("Source {src} not found")))
            }
            Err(e) => Err(Fail::new(format!("Source {src} not readable"))
                .with("details", describe_io_error(&e))),
        }
    }

    /// The `src` path, when the source is one.
    pub fn path(&self) -> Option<&str> {
        match self {
            Source::Content(_) => None,
            Source::File(p) | Source::Dir(p) => Some(p),
        }
    }

    /// A reader over a file source's bytes (a directory has none).
    pub fn reader(&self) -> io::Result<Box<dyn Read + '_>> {
        match self {
            Source::Content(bytes) => Ok(Box::new(&bytes[..])),
            Source::File(p) => Ok(Box::new(File::open(p)?)),
            Source::Dir(p) => Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                format!("{p} is a directory"),
            )),
        }
    }

    /// The source's digest with `algorithm` (`None` for a directory).
    pub fn digest(&self, algorithm: HashAlgorithm) -> Result<Option<String>, Fail> {
        let digest = match self {
            Source::Content(bytes) => digest_reader(&bytes[..], algorithm),
            Source::File(p) => digest_file(p, algorithm),
            Source::Dir(_) => return Ok(None),
        };
        digest.map(Some).map_err(|e| {
            Fail::new(format!(
                "cannot checksum the source: {}",
                describe_io_error(&e)
            ))
        })
    }

    /// The new side of the diff.
    pub fn diff_side(&self) -> io::Result<Side> {
        match self {
            Source::Content(bytes) => Ok(Side::of(bytes.clone())),
            Source::File(p) => Side::read(p),
            Source::Dir(_) => Ok(Side::Absent),
        }
    }
}

/// The bytes `content` stands for, as Ansible's copy action writes them: a mapping
/// or list as `json.dumps` text, anything else as Python's `str()`.
fn content_bytes(content: &Value) -> Vec<u8> {
    match content {
        Value::Array(_) | Value::Object(_) => json_dumps(content).into_bytes(),
        other => py_str(other).into_bytes(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_is_text_or_json() {
        assert_eq!(content_bytes(&json!("a\nb")), b"a\nb");
        assert_eq!(content_bytes(&json!({"k": [1, 2]})), br#"{"k": [1, 2]}"#);
        assert_eq!(content_bytes(&json!(42)), b"42");
        assert_eq!(content_bytes(&json!(true)), b"True");
    }

    #[test]
    fn checksums_content_like_sha1sum() {
        let s = Source::Content(b"hello\n".to_vec());
        assert_eq!(
            s.digest(HashAlgorithm::Sha1).unwrap().as_deref(),
            Some("f572d396fae9206628714fb2ce00f72e94f2258f")
        );
        assert_eq!(
            Source::Dir("/x".into())
                .digest(HashAlgorithm::Sha1)
                .unwrap(),
            None
        );
    }
}
