//! `validate`: a command run on a staged file before it replaces the destination
//! (e.g. `visudo -cf %s`). The command is split into words like a shell would split
//! it, then `%s` in each word becomes the staged file's path and `%%` a literal `%`.
//! It runs through the sandball host interface, so the program must be in the grant.
//! [`write_validated`] is how the text-editing modules (`lineinfile`, `replace`,
//! `blockinfile`) write: stage, validate, then replace the file atomically.

use super::{atomic_write, random_u64, realpath};
use crate::prelude::*;
use crate::{describe_io_error, python_os_error};
use sandball_pycompat::shlex;

/// Writes `content` to the file `path` names (through symlinks, as Ansible's text
/// modules write the real file) atomically; with `validate`, first to a hidden copy
/// beside it that the command must accept ("failed to validate: rc:N error:…").
pub fn write_validated(path: &str, content: &[u8], validate: Option<&str>) -> Result<(), Fail> {
    if let Some(validate) = validate {
        if !validate.contains("%s") {
            return Err(Fail::new(format!("validate must contain %s: {validate}")));
        }
        let staged = hidden_sibling(path);
        write_file(&staged, content)?;
        let output = run_validation(validate, &staged);
        // Best effort: the copy is hidden and ours; a failure leaves only litter.
        let _ = std::fs::remove_file(&staged);
        let output = output?;
        if output.rc != 0 {
            return Err(Fail::new(format!(
                "failed to validate: rc:{} error:{}",
                output.rc,
                String::from_utf8_lossy(&output.stderr)
            )));
        }
    }
    write_file(&realpath(path), content)
}

fn write_file(path: &str, content: &[u8]) -> Result<(), Fail> {
    atomic_write(path, content).map_err(|e| {
        Fail::new(format!(
            "Unable to write {path}: {}",
            python_os_error(&e, path)
        ))
    })
}

/// A hidden, unpredictable name beside `path`.
fn hidden_sibling(path: &str) -> String {
    let (dir, name) = match path.rfind('/') {
        Some(i) => (&path[..=i], &path[i + 1..]),
        None => ("", path),
    };
    format!("{dir}.{name}.{:016x}.sandball-validate", random_u64())
}

/// The text of the file at `path`, which must be UTF-8 (`module` names who refuses
/// other encodings, and how to run ansible-core's module instead).
pub fn read_text(path: &str, module: &str) -> Result<String, Fail> {
    let bytes = std::fs::read(path).map_err(|e| {
        Fail::new(format!(
            "Unable to read the contents of {path}: {}",
            describe_io_error(&e)
        ))
    })?;
    String::from_utf8(bytes).map_err(|_| {
        Fail::new(format!(
            "{path} is not UTF-8 text: the built-in {module} edits UTF-8 files only (sandball_legacy_modules: [{module}] runs ansible-core's)"
        ))
    })
}

/// Runs `validate` on `path` and returns how it ended; fails when it cannot run.
pub fn run_validation(validate: &str, path: &str) -> Result<host::Output, Fail> {
    let argv = validation_argv(validate, path)?;
    let program = argv.first().cloned().unwrap_or_default();
    let output = host::run(host::Command {
        argv,
        ..host::Command::default()
    })
    .map_err(|e| {
        if e.denied {
            Fail::new(format!(
                "failed to validate: running '{program}' was denied by the grant: {}",
                e.message
            ))
        } else {
            Fail::new(format!("failed to validate: {}", e.message))
        }
    })?;
    Ok(output)
}

/// The words to run: `validate` split, with `%s` replaced by `path`.
fn validation_argv(validate: &str, path: &str) -> Result<Vec<String>, Fail> {
    if !validate.contains("%s") {
        return Err(Fail::new(format!("validate must contain %s: {validate}")));
    }
    let words = shlex::split(validate)
        .map_err(|e| Fail::new(format!("cannot split validate command {validate:?}: {e}")))?;
    Ok(words.iter().map(|w| substitute(w, path)).collect())
}

/// Replaces `%s` by `path` and `%%` by `%`, left to right, as Python's `%` does.
fn substitute(word: &str, path: &str) -> String {
    let mut out = String::with_capacity(word.len());
    let mut chars = word.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('%', Some('s')) => {
                chars.next();
                out.push_str(path);
            }
            ('%', Some('%')) => {
                chars.next();
                out.push('%');
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_argv_with_the_staged_path() {
        let argv = validation_argv("visudo -cf %s", "/etc/.sudoers.tmp").unwrap();
        assert_eq!(argv, ["visudo", "-cf", "/etc/.sudoers.tmp"]);
        let argv = validation_argv("sh -c 'test -s \"%s\" && echo 100%%'", "/a b").unwrap();
        assert_eq!(argv, ["sh", "-c", "test -s \"/a b\" && echo 100%"]);
    }

    #[test]
    fn requires_the_placeholder() {
        let err = validation_argv("true", "/x").unwrap_err();
        assert_eq!(err.to_string(), "validate must contain %s: true");
    }

    #[cfg(unix)]
    #[test]
    fn the_validator_runs_on_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "").unwrap();
        let path = file.to_str().unwrap();
        assert_eq!(run_validation("test -f %s", path).unwrap().rc, 0);
        assert_eq!(run_validation("test -s %s", path).unwrap().rc, 1);
    }

    #[cfg(unix)]
    #[test]
    fn validated_writes_replace_the_file_only_when_the_command_accepts() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        let path = file.to_str().unwrap();
        write_validated(path, b"one\n", None).unwrap();
        let err = write_validated(path, b"two\n", Some("grep -q one %s")).unwrap_err();
        assert!(
            err.msg().starts_with("failed to validate: rc:1 error:"),
            "{err}"
        );
        assert_eq!(read_text(path, "m").unwrap(), "one\n");
        write_validated(path, b"one two\n", Some("grep -q one %s")).unwrap();
        assert_eq!(read_text(path, "m").unwrap(), "one two\n");
        let err = write_validated(path, b"x", Some("true")).unwrap_err();
        assert_eq!(err.msg(), "validate must contain %s: true");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no staged copies left"
        );
        std::fs::write(&file, b"\xff").unwrap();
        assert!(
            read_text(path, "m")
                .unwrap_err()
                .msg()
                .contains("not UTF-8")
        );
    }
}
