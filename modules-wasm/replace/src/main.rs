//! The `replace` module: replaces every match of a Python pattern in a file, in
//! multiline mode, as Python's `re.subn` does, or only in the part of the file
//! between the first match of `after` and the last (or, with `after`, the next) match
//! of `before`. The file is written atomically after an optional `validate` and
//! `backup`, then the file attributes are applied.

#[cfg(all(test, unix))]
mod module_tests;

use sandball_guest_sdk::describe_io_error;
use sandball_guest_sdk::files::{Encoding, backup_local, existing_kind, realpath, write_validated};
use sandball_guest_sdk::host::FileKind;
use sandball_guest_sdk::prelude::*;
use sandball_guest_sdk::pyre::{Anchor, Pattern, PyreError};

sandball_guest_sdk::manifest!("../manifest.json");

fn main() {
    sandball_guest_sdk::run_with_paths(MANIFEST, replace);
}

/// The module body.
fn replace(m: &mut Module) -> Result<Map<String, Value>, Fail> {
    let path = m.get_str("path").unwrap_or_default().to_string();
    match existing_kind(&path)? {
        Some(FileKind::Directory) => {
            return Err(Fail::new(format!("Path {path} is a directory !")).with("rc", 256));
        }
        None => {
            return Err(Fail::new(format!("Path {path} does not exist !")).with("rc", 257));
        }
        Some(_) => {}
    }
    let encoding = Encoding::named(m.get_str("encoding").unwrap_or("utf-8"), "replace")?;
    let bytes = std::fs::read(realpath(&path)).map_err(|e| {
        Fail::new(format!(
            "Unable to read the contents of {path}: {}",
            describe_io_error(&e)
        ))
    })?;
    let mut contents = encoding.decode(&bytes, &path)?;
    // ansible-core 2.20 reads the file in text mode: Python's universal newlines make
    // each CRLF and lone CR a LF, and the file is written back with LFs.
    if m.internal().release_at_least(20) {
        contents = universal_newlines(&contents);
    }

    // The part of the file to work on: all of it, or what lies between after/before.
    let text = |name: &str| m.get_str(name).filter(|s| !s.is_empty());
    let section_pattern = match (text("after"), text("before")) {
        (Some(after), Some(before)) => Some(format!("{after}(?P<subsection>.*?){before}")),
        (Some(after), None) => Some(format!("{after}(?P<subsection>.*)")),
        (None, Some(before)) => Some(format!("(?P<subsection>.*){before}")),
        (None, None) => None,
    };
    let mut result = json_map!({"rc": 0});
    let span = match &section_pattern {
        None => 0..contents.len(),
        Some(pattern) => {
            let section = Pattern::new(&format!("(?s){pattern}"), false, false, Anchor::Search)
                .map_err(pattern_failed)?;
            match section.search(&contents).map_err(pattern_failed)? {
                Some(found) => found.span_of("subsection").unwrap_or(0..0),
                None => {
                    result.insert(
                        "msg".into(),
                        json!(format!(
                            "Pattern for before/after params did not match the given file: {pattern}"
                        )),
                    );
                    result.insert("changed".into(), json!(false));
                    return Ok(result);
                }
            }
        }
    };
    let section = &contents[span.clone()];
    let regexp = Pattern::new(
        m.get_str("regexp").unwrap_or_default(),
        false,
        true,
        Anchor::Search,
    )
    .map_err(pattern_failed)?;
    let (replaced, made) = regexp
        .sub(m.get_str("replace").unwrap_or_default(), section, 0)
        .map_err(|e| Fail::new(format!("Unable to process replace due to error: {e}")))?;

    let mut changed = false;
    let mut msg = String::new();
    if made > 0 && replaced != section {
        let after = format!(
            "{}{replaced}{}",
            &contents[..span.start],
            &contents[span.end..]
        );
        msg = format!("{made} replacements made");
        changed = true;
        if m.diff_mode() {
            result.insert(
                "diff".into(),
                json!({"before_header": path, "before": contents, "after_header": path, "after": after}),
            );
        }
        if !m.check_mode() {
            if m.get_bool("backup") {
                result.insert("backup_file".into(), json!(backup_local(&path)?));
            }
            write_validated(&path, &encoding.encode(&after)?, m.get_str("validate"))?;
        }
    }
    let (changed, msg, _) = m.check_file_attrs(&path, changed, &msg)?;
    result.insert("changed".into(), json!(changed));
    result.insert("msg".into(), json!(msg));
    Ok(result)
}

/// `text` as Python's universal newlines read it: CRLF and CR become LF.
fn universal_newlines(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}

fn pattern_failed(e: PyreError) -> Fail {
    Fail::new(e.to_string())
}
