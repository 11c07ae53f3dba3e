//! The `slurp` module: reads a file on the node and returns its content base64-encoded
//! (`content`, `encoding: base64`, `source`), as Ansible's `slurp` does. It only needs
//! read access to `src`; a symlink is followed (its target read through the sandball
//! host interface where WASI cannot: an absolute one), so the file it leads to must be
//! granted too.

use base64::Engine;
use sandball_guest_sdk::files::realpath;
use sandball_guest_sdk::prelude::*;
use sandball_guest_sdk::{on_node, python_os_error};
use std::io;

sandball_guest_sdk::manifest!("../manifest.json");

/// Reads `src` where its symlinks lead, refusing directories (which some platforms let
/// one open).
/// Errors are the node's ([`on_node`]).
fn read_file(src: &str) -> io::Result<Vec<u8>> {
    let real = realpath(src);
    if std::fs::metadata(&real)
        .map_err(|e| on_node(e, &real))?
        .is_dir()
    {
        return Err(io::ErrorKind::IsADirectory.into());
    }
    std::fs::read(&real).map_err(|e| on_node(e, &real))
}

/// The module body.
fn slurp(m: &mut Module) -> Result<Map<String, Value>, Fail> {
    let src = m.get_str("src").unwrap_or_default().to_string();
    let content = read_file(&src).map_err(|e| {
        Fail::new(match e.kind() {
            io::ErrorKind::NotFound => format!("File not found: {src}"),
            io::ErrorKind::PermissionDenied => format!("File is not readable: {src}"),
            io::ErrorKind::IsADirectory => {
                format!("Source is a directory and must be a file: {src}")
            }
            _ => format!("Unable to slurp file: {}", python_os_error(&e, &src)),
        })
    })?;
    let encoded = base64::engine::general_purpose::STANDARD.encode(content);
    Ok(json_map!({"content": encoded, "source": src, "encoding": "base64"}))
}

fn main() {
    sandball_guest_sdk::run_with_paths(MANIFEST, slurp)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slurp_args(args: Value) -> sandball_guest_sdk::Outcome {
        let input = args.to_string();
        sandball_guest_sdk::execute(MANIFEST, input.as_bytes(), &|_| None, slurp)
    }

    #[test]
    fn returns_base64_content() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("motd");
        std::fs::write(&p, b"hello\n\x00\xff").unwrap();
        let p = p.to_string_lossy().into_owned();
        let out = slurp_args(json!({"path": p}));
        assert!(!out.failed, "{:?}", out.result);
        assert_eq!(out.result["content"], json!("aGVsbG8KAP8="));
        assert_eq!(out.result["encoding"], json!("base64"));
        assert_eq!(out.result["source"], json!(p));
        assert_eq!(out.result["changed"], json!(false));
        assert_eq!(out.result["invocation"]["module_args"], json!({"src": p}));
    }

    #[test]
    fn missing_files_and_directories_fail() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope").to_string_lossy().into_owned();
        let out = slurp_args(json!({"src": missing}));
        assert!(out.failed);
        assert_eq!(
            out.result["msg"],
            json!(format!("File not found: {missing}"))
        );
        let d = dir.path().to_string_lossy().into_owned();
        let out = slurp_args(json!({"src": d}));
        assert_eq!(
            out.result["msg"],
            json!(format!("Source is a directory and must be a file: {d}"))
        );
        let below_file = format!("{d}/nope/x");
        std::fs::write(format!("{d}/nope"), b"").unwrap();
        let out = slurp_args(json!({"src": below_file}));
        assert_eq!(
            out.result["msg"],
            json!(format!(
                "Unable to slurp file: [Errno 20] Not a directory: '{below_file}'"
            ))
        );
        let out = slurp_args(json!({}));
        assert_eq!(out.result["msg"], json!("missing required arguments: src"));
    }

    #[test]
    fn symlinks_are_followed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("orig"), b"test").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(dir.path().join("orig"), &link).unwrap();
        let link = link.to_string_lossy().into_owned();
        let out = slurp_args(json!({"src": link}));
        assert_eq!(out.result["content"], json!("dGVzdA=="));
        assert_eq!(out.result["source"], json!(link));
    }
}
