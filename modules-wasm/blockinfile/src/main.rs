//! The `blockinfile` module: keeps a block of lines between two marker lines in a
//! file. An existing block (both markers found) is replaced in place, or removed;
//! a new one goes after or before the last line a Python pattern matches, or at
//! either end. The file is written atomically after an optional `validate` and
//! `backup`, then the file attributes are applied.

#[cfg(all(test, unix))]
mod module_tests;

use sandball_guest_sdk::describe_io_error;
use sandball_guest_sdk::files::{
    backup_local, existing_kind, read_text, realpath, write_validated,
};
use sandball_guest_sdk::host::FileKind;
use sandball_guest_sdk::prelude::*;
use sandball_guest_sdk::pyre::{Anchor, Pattern};

sandball_guest_sdk::manifest!("../manifest.json");

fn main() {
    sandball_guest_sdk::run_with_paths(MANIFEST, blockinfile);
}

/// The module body.
fn blockinfile(m: &mut Module) -> Result<Map<String, Value>, Fail> {
    let path = m.get_str("path").unwrap_or_default().to_string();
    let kind = existing_kind(&path)?;
    if kind == Some(FileKind::Directory) {
        return Err(Fail::new(format!("Path {path} is a directory !")).with("rc", 256));
    }
    let exists = kind.is_some();
    let present = m.get_str("state") != Some("absent");
    let original = if exists {
        Some(read_text(&realpath(&path), "blockinfile")?)
    } else {
        if !m.get_bool("create") {
            return Err(Fail::new(format!("Path {path} does not exist !")).with("rc", 257));
        }
        let dir = match path.rfind('/') {
            Some(0) => "/",
            Some(i) => &path[..i],
            None => "",
        };
        if !dir.is_empty() && existing_kind(dir)?.is_none() && !m.check_mode() {
            std::fs::create_dir_all(dir).map_err(|e| {
                Fail::new(format!("Error creating {dir}: {}", describe_io_error(&e)))
            })?;
        }
        None
    };
    let mut lines = original.as_deref().map(split_lines).unwrap_or_default();
    let mut diff = json!({
        "before": "",
        "after": "",
        "before_header": format!("{path} (content)"),
        "after_header": format!("{path} (content)"),
    });
    if m.diff_mode()
        && let Some(text) = original.as_deref().filter(|t| !t.is_empty())
    {
        diff["before"] = json!(text);
    }
    if !present && !exists {
        return Ok(json_map!({"changed": false, "msg": format!("File {path} not present")}));
    }

    let marker = m.get_str("marker").unwrap_or_default();
    let begin = format!(
        "{}\n",
        marker.replace("{mark}", m.get_str("marker_begin").unwrap_or_default())
    );
    let end = format!(
        "{}\n",
        marker.replace("{mark}", m.get_str("marker_end").unwrap_or_default())
    );
    let block = m.get_str("block").unwrap_or_default();
    let block_lines: Vec<String> = if present && !block.is_empty() {
        let mut block = block.to_string();
        if !block.ends_with('\n') {
            block.push('\n');
        }
        let mut all = vec![begin.clone()];
        all.extend(split_lines(&block));
        all.push(end.clone());
        all
    } else {
        Vec::new()
    };

    // Where the block is, or goes.
    let found_begin = lines.iter().rposition(|l| *l == begin);
    let found_end = lines.iter().rposition(|l| *l == end);
    let mut at = match (found_begin, found_end) {
        (Some(b), Some(e)) if b < e => {
            lines.drain(b..=e);
            b
        }
        (Some(b), Some(e)) => {
            lines.drain(e..=b);
            e
        }
        _ => insertion_point(m, &lines, original.as_deref().unwrap_or_default())?,
    };

    // The line before the block ends with a newline.
    if at > 0 && !lines[at - 1].ends_with('\n') {
        lines[at - 1].push('\n');
    }
    if m.get_bool("prepend_newline") && present && at != 0 && lines[at - 1] != "\n" {
        lines.insert(at, "\n".into());
        at += 1;
    }
    let block_len = block_lines.len();
    lines.splice(at..at, block_lines);
    if m.get_bool("append_newline") && present {
        let after = at + block_len;
        if after < lines.len() && lines[after] != "\n" {
            lines.insert(after, "\n".into());
        }
    }

    let result = lines.concat();
    if m.diff_mode() {
        diff["after"] = json!(result);
    }
    let msg = match &original {
        Some(text) if *text == result => "",
        None => "File created",
        Some(_) if block_len == 0 => "Block removed",
        Some(_) => "Block inserted",
    };
    let changed = !msg.is_empty();
    let mut backup_file = None;
    if changed && !m.check_mode() {
        if m.get_bool("backup") && exists {
            backup_file = Some(backup_local(&path)?);
        }
        write_validated(&path, result.as_bytes(), m.get_str("validate"))?;
    }
    if m.check_mode() && !exists {
        return Ok(json_map!({"changed": changed, "msg": msg, "diff": diff}));
    }
    let (changed, msg, attr_diff) = m.check_file_attrs(&path, changed, msg)?;
    let mut out = json_map!({"changed": changed, "msg": msg, "diff": [diff, attr_diff]});
    if let Some(backup) = backup_file {
        out.insert("backup_file".into(), json!(backup));
    }
    Ok(out)
}

/// Where a new block goes: after (or before) the last line `insertafter`
/// (`insertbefore`) matches, else at the end; `BOF` is the start, `EOF` the end. A
/// pattern in multiline mode (`(?m)`) is searched in the whole text instead.
fn insertion_point(m: &Module, lines: &[String], text: &str) -> Result<usize, Fail> {
    let (pattern, after) = match (m.get_str("insertafter"), m.get_str("insertbefore")) {
        (Some("EOF"), _) | (None, None) => return Ok(lines.len()),
        (None, Some("BOF")) => return Ok(0),
        (Some(after), _) => (after, true),
        (None, Some(before)) => (before, false),
    };
    let failed = |e: sandball_guest_sdk::pyre::PyreError| Fail::new(e.to_string());
    let regex = Pattern::new(pattern, false, false, Anchor::Search).map_err(failed)?;
    let mut found = None;
    if multiline(pattern) {
        if let Some(hit) = regex.search(text).map_err(failed)? {
            let upto = if after { hit.end } else { hit.start };
            found = Some(text[..upto].matches('\n').count());
        }
    } else {
        for (index, line) in lines.iter().enumerate() {
            if regex.is_match(line).map_err(failed)? {
                found = Some(index);
            }
        }
    }
    Ok(match found {
        None => lines.len(),
        Some(index) if after => index + 1,
        Some(index) => index,
    })
}

/// Whether the pattern turns on multiline mode (`(?m)` among its leading flags).
fn multiline(pattern: &str) -> bool {
    pattern
        .strip_prefix("(?")
        .and_then(|rest| rest.split_once(')'))
        .is_some_and(|(flags, _)| {
            flags.chars().all(|c| c.is_ascii_alphabetic()) && flags.contains('m')
        })
}

/// Python's `splitlines(keepends=True)` for `\n`, `\r\n` and `\r` line ends.
fn split_lines(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                lines.push(text[start..=i].to_string());
                start = i + 1;
            }
            b'\r' => {
                let end = if bytes.get(i + 1) == Some(&b'\n') {
                    i + 1
                } else {
                    i
                };
                lines.push(text[start..=end].to_string());
                i = end;
                start = end + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if start < text.len() {
        lines.push(text[start..].to_string());
    }
    lines
}
