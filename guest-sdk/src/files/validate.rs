//! `validate`: a command run on a staged file before it replaces the destination
//! (e.g. `visudo -cf %s`); each module says what a non-zero exit means. The command is split into
//! words like a shell would split it, then `%s` in each word becomes the staged
//! file's path and `%%` a literal `%`. It runs through the sandball host interface,
//! so the program must be in the grant.

use crate::prelude::*;
use crate::shlex;

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
}
