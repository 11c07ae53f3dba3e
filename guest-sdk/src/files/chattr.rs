//! The `attributes` file argument: Linux file attributes (`chattr` flags such as `i`,
//! `a`, `e`), read with `lsattr -d` and set with `chattr`, both run through the host's
//! process interface (so the grant must allow them). `+flags` adds, `-flags` removes,
//! `flags` or `=flags` sets exactly.

use crate::Fail;
use crate::diff::Diff;
use crate::host::{self, Command};

fn run(argv: &[&str]) -> Result<host::Output, host::HostError> {
    host::run(Command {
        argv: argv.iter().map(|a| a.to_string()).collect(),
        ..Command::default()
    })
}

/// The attribute flags set on `path` (`lsattr`'s letters without the dashes).
pub fn file_attributes(path: &str) -> Result<String, Fail> {
    let out = run(&["lsattr", "-d", path]).map_err(|e| {
        Fail::new(format!(
            "cannot read the attributes of {path}: {}",
            e.message
        ))
        .with("path", path)
    })?;
    if out.rc != 0 {
        return Err(Fail::new(format!(
            "cannot read the attributes of {path}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
        .with("path", path)
        .with("rc", out.rc));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let flags = text.split_whitespace().next().unwrap_or("");
    Ok(flags.chars().filter(|c| *c != '-').collect())
}

/// Whether applying `op` (`+`, `-` or `=`) with `flags` to `existing` changes anything.
fn differs(op: char, flags: &str, existing: &str) -> bool {
    match op {
        '+' => flags.chars().any(|c| !existing.contains(c)),
        '-' => flags.chars().any(|c| existing.contains(c)),
        _ => {
            flags.chars().any(|c| !existing.contains(c))
                || existing.chars().any(|c| !flags.contains(c))
        }
    }
}

/// Applies the `attributes` argument to `path`; returns the new `changed`.
pub fn set_attributes_if_different(
    path: &str,
    attributes: Option<&str>,
    changed: bool,
    diff: Option<&mut Diff>,
    check_mode: bool,
) -> Result<bool, Fail> {
    let Some(attributes) = attributes else {
        return Ok(changed);
    };
    let (op, flags) = match attributes.chars().next() {
        Some(c @ ('+' | '-' | '=')) => (c, &attributes[1..]),
        _ => ('=', attributes),
    };
    let existing = file_attributes(path)?;
    if !differs(op, flags, &existing) {
        return Ok(changed);
    }
    let wanted = format!("{op}{flags}");
    if let Some(d) = diff {
        d.record("attributes", existing, wanted.as_str());
    }
    if check_mode {
        return Ok(true);
    }
    let failed = |details: String| {
        Fail::new("chattr failed")
            .with("path", path)
            .with("details", details)
    };
    let out = run(&["chattr", &wanted, path]).map_err(|e| failed(e.message))?;
    if out.rc != 0 || !out.stderr.is_empty() {
        let mut details = String::from_utf8_lossy(&out.stdout).into_owned();
        details.push_str(&String::from_utf8_lossy(&out.stderr));
        return Err(failed(format!(
            "Error while setting attributes: {}",
            details.trim()
        )));
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decides_changes_per_operator() {
        assert!(differs('+', "i", "e"));
        assert!(!differs('+', "e", "ie"));
        assert!(differs('-', "i", "ie"));
        assert!(!differs('-', "a", "ie"));
        assert!(!differs('=', "ei", "ie"));
        assert!(differs('=', "i", "ie"));
    }

    #[test]
    fn absent_argument_changes_nothing() {
        assert_eq!(
            set_attributes_if_different("/nonexistent", None, false, None, false),
            Ok(false)
        );
        assert_eq!(
            set_attributes_if_different("/nonexistent", None, true, None, false),
            Ok(true)
        );
    }

    #[test]
    fn unreadable_attributes_fail_clearly() {
        let err = set_attributes_if_different("/nonexistent/x", Some("+i"), false, None, true)
            .unwrap_err();
        assert!(
            err.msg()
                .starts_with("cannot read the attributes of /nonexistent/x"),
            "{err}"
        );
    }
}
