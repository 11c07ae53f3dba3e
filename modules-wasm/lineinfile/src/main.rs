//! The `lineinfile` module: makes sure a line is in a file (`state: present`),
//! replacing the line a Python pattern (`regexp`) or a plain string (`search_string`)
//! finds, else inserting it after or before the line another pattern finds, or at
//! either end; or that no such line is left (`state: absent`). It reads and decides as
//! Ansible's lineinfile does, line by line with each line's newline kept, then writes
//! the whole file atomically after an optional `validate` and `backup`, and applies
//! the file attributes.

#[cfg(all(test, unix))]
mod module_tests;

use sandball_guest_sdk::describe_io_error;
use sandball_guest_sdk::files::{
    backup_local, existing_kind, read_text, realpath, write_validated,
};
use sandball_guest_sdk::host::FileKind;
use sandball_guest_sdk::prelude::*;
use sandball_guest_sdk::pyre::{Anchor, Pattern, PyreError};

sandball_guest_sdk::manifest!("../manifest.json");

fn main() {
    sandball_guest_sdk::run_with_paths(MANIFEST, lineinfile);
}

/// The module body.
fn lineinfile(m: &mut Module) -> Result<Map<String, Value>, Fail> {
    let path = m.get_str("path").unwrap_or_default().to_string();
    if kind(&path)? == Some(FileKind::Directory) {
        return Err(Fail::new(format!("Path {path} is a directory !")).with("rc", 256));
    }
    let regexp = m.get_str("regexp").map(str::to_string);
    let search_string = m.get_str("search_string").map(str::to_string);
    if regexp.as_deref() == Some("") {
        m.warn(
            "The regular expression is an empty string, which will match every line in the file. \
             This may have unintended consequences, such as replacing the last line in the file \
             rather than appending. If this is desired, use '^' to match every line in the file \
             and avoid this warning.",
        );
    }
    if search_string.as_deref() == Some("") {
        m.warn(
            "The search string is an empty string, which will match every line in the file. \
             This may have unintended consequences, such as replacing the last line in the file \
             rather than appending.",
        );
    }
    let finder = || -> Result<Option<Finder>, Fail> {
        Ok(match (&regexp, &search_string) {
            (Some(pattern), _) => Some(Finder::Pattern(compile(pattern)?)),
            (None, Some(text)) => Some(Finder::Text(text.clone())),
            (None, None) => None,
        })
    };
    let line = m.get_str("line").map(str::to_string);
    if m.get_str("state") == Some("absent") {
        let wanted = match (finder()?, line) {
            (Some(finder), _) => finder,
            (None, Some(line)) => Finder::Line(line),
            (None, None) => {
                return Err(Fail::new(
                    "one of line, search_string, or regexp is required with state=absent",
                ));
            }
        };
        return absent(m, &path, &wanted);
    }
    let backrefs = m.get_bool("backrefs");
    if backrefs && regexp.is_none() {
        return Err(Fail::new("regexp is required with backrefs=true"));
    }
    let Some(line) = line else {
        return Err(Fail::new("line is required with state=present"));
    };
    let finder = finder()?;
    let place = Place::from_module(m)?;
    present(m, &path, finder.as_ref(), &line, &place)
}

/// What finds the line to replace or remove.
enum Finder {
    Pattern(Pattern),
    Text(String),
    /// `state: absent` with only `line`: the line itself, newline aside.
    Line(String),
}

/// A found line, and what backrefs may expand.
struct Found {
    index: usize,
    /// The line as `regexp` matched it, for `backrefs`.
    matched: Option<String>,
}

impl Finder {
    fn finds(&self, line: &str) -> Result<bool, Fail> {
        Ok(match self {
            Finder::Pattern(p) => p.is_match(line).map_err(pattern_failed)?,
            Finder::Text(text) => line.contains(text.as_str()),
            Finder::Line(wanted) => strip_newline(line) == wanted,
        })
    }

    /// The line `regexp` or `search_string` finds: the last one, or the first.
    fn find(&self, lines: &[String], first: bool) -> Result<Option<Found>, Fail> {
        let mut found = None;
        for (index, line) in lines.iter().enumerate() {
            if self.finds(line)? {
                found = Some(Found {
                    index,
                    matched: matches!(self, Finder::Pattern(_)).then(|| line.clone()),
                });
                if first {
                    break;
                }
            }
        }
        Ok(found)
    }
}

/// Where a new line goes when nothing is found to replace.
enum Place {
    /// After the last (or first) line the pattern matches; at the end when none does.
    After(Pattern),
    /// Before the last (or first) line the pattern matches; at the end when none does.
    Before(Pattern),
    /// At the end (`insertafter: EOF`, the default).
    End,
    /// At the start (`insertbefore: BOF` or `insertafter: BOF`).
    Start,
}

impl Place {
    fn from_module(m: &Module) -> Result<Place, Fail> {
        Ok(
            match (m.get_str("insertafter"), m.get_str("insertbefore")) {
                (Some("BOF"), _) | (None, Some("BOF")) => Place::Start,
                (Some("EOF"), _) | (None, None) => Place::End,
                (Some(after), _) => Place::After(compile(after)?),
                (None, Some(before)) => Place::Before(compile(before)?),
            },
        )
    }

    fn pattern(&self) -> Option<&Pattern> {
        match self {
            Place::After(p) | Place::Before(p) => Some(p),
            Place::End | Place::Start => None,
        }
    }
}

fn compile(pattern: &str) -> Result<Pattern, Fail> {
    Pattern::new(pattern, false, false, Anchor::Search).map_err(pattern_failed)
}

fn pattern_failed(e: PyreError) -> Fail {
    Fail::new(e.to_string())
}

/// The line without its end (`\n`, `\r\n`, or any run of them), as Python's
/// `rstrip(b'\r\n')` leaves it.
fn strip_newline(line: &str) -> &str {
    line.trim_end_matches(['\r', '\n'])
}

fn with_newline(line: &str) -> String {
    format!("{line}\n")
}

/// `state: present`.
fn present(
    m: &mut Module,
    path: &str,
    finder: Option<&Finder>,
    line: &str,
    place: &Place,
) -> Result<Map<String, Value>, Fail> {
    let exists = kind(path)?.is_some();
    let mut lines = if exists {
        read_lines(path)?
    } else {
        if !m.get_bool("create") {
            return Err(Fail::new(format!("Destination {path} does not exist !")).with("rc", 257));
        }
        let dir = dirname(path);
        if !dir.is_empty() && kind(&dir)?.is_none() && !m.check_mode() {
            make_dirs(&dir)?;
        }
        Vec::new()
    };
    let before = lines.concat();
    let first = m.get_bool("firstmatch");

    // A line regexp or search_string finds is replaced, whatever insertafter says.
    let mut found = match finder {
        Some(finder) => finder.find(&lines, first)?,
        None => None,
    };
    let found_by_finder = found.is_some();
    // Else: the line itself, and where insertafter/insertbefore would put it.
    let mut insert_at = None;
    if !found_by_finder {
        for (index, current) in lines.iter().enumerate() {
            if strip_newline(current) == line {
                found = Some(Found {
                    index,
                    matched: None,
                });
            } else if let Some(pattern) = place.pattern()
                && pattern.is_match(current).map_err(pattern_failed)?
            {
                insert_at = Some(match place {
                    Place::After(_) => index + 1,
                    _ => index,
                });
                if first {
                    break;
                }
            }
        }
    }

    let backrefs = m.get_bool("backrefs");
    let mut msg = String::new();
    let mut add_at = None;
    if let Some(found) = found {
        let new_line = match (&found.matched, finder) {
            (Some(matched), Some(Finder::Pattern(pattern))) if backrefs => {
                let groups = pattern
                    .search(matched)
                    .map_err(pattern_failed)?
                    .ok_or_else(|| Fail::new("the matched line no longer matches"))?;
                groups.expand(line).map_err(pattern_failed)?
            }
            _ => line.to_string(),
        };
        let new_line = if new_line.ends_with('\n') {
            new_line
        } else {
            with_newline(&new_line)
        };
        if lines[found.index] != new_line {
            lines[found.index] = new_line;
            msg = "line replaced".into();
        }
    } else if backrefs {
        // Without a match there is nothing to fill the groups with: leave the file.
    } else if matches!(place, Place::Start) {
        add_at = Some(0);
    } else if matches!(place, Place::End) || insert_at.is_none() {
        if lines.last().is_some_and(|l| !l.ends_with(['\n', '\r'])) {
            lines.push("\n".into());
        }
        add_at = Some(lines.len());
    } else if let (Place::After(_), Some(at)) = (place, insert_at) {
        // Not again when the line is already right after the one matched.
        let next = if at == lines.len() { at - 1 } else { at };
        if strip_newline(&lines[next]) != line {
            add_at = Some(at);
        }
    } else {
        add_at = insert_at;
    }
    if let Some(at) = add_at {
        lines.insert(at, with_newline(line));
        msg = "line added".into();
    }
    let changed = !msg.is_empty();

    let content_diff = content_diff(m, path, &before, &lines);
    let mut backup = String::new();
    if changed && !m.check_mode() {
        if m.get_bool("backup") && exists {
            backup = backup_local(path)?;
        }
        write_lines(m, path, &lines)?;
    }
    if m.check_mode() && !exists {
        return Ok(
            json_map!({"changed": changed, "msg": msg, "backup": backup, "diff": content_diff}),
        );
    }
    finish(m, path, changed, msg, backup, content_diff, None)
}

/// `state: absent`: every line the finder finds goes.
fn absent(m: &mut Module, path: &str, finder: &Finder) -> Result<Map<String, Value>, Fail> {
    if kind(path)?.is_none() {
        return Ok(json_map!({"changed": false, "msg": "file not present"}));
    }
    let lines = read_lines(path)?;
    let before = lines.concat();
    let mut kept = Vec::with_capacity(lines.len());
    let mut removed = 0;
    for line in lines {
        if finder.finds(&line)? {
            removed += 1;
        } else {
            kept.push(line);
        }
    }
    let changed = removed > 0;
    let content_diff = content_diff(m, path, &before, &kept);
    let mut backup = String::new();
    if changed && !m.check_mode() {
        if m.get_bool("backup") {
            backup = backup_local(path)?;
        }
        write_lines(m, path, &kept)?;
    }
    let msg = if changed {
        format!("{removed} line(s) removed")
    } else {
        String::new()
    };
    finish(m, path, changed, msg, backup, content_diff, Some(removed))
}

/// The content part of the diff: the text before and after, in diff mode.
fn content_diff(m: &Module, path: &str, before: &str, lines: &[String]) -> Value {
    let (before, after) = if m.diff_mode() {
        (before.to_string(), lines.concat())
    } else {
        (String::new(), String::new())
    };
    json!({
        "before": before,
        "after": after,
        "before_header": format!("{path} (content)"),
        "after_header": format!("{path} (content)"),
    })
}

/// Applies the file attributes and builds the result.
fn finish(
    m: &Module,
    path: &str,
    changed: bool,
    msg: String,
    backup: String,
    content_diff: Value,
    found: Option<usize>,
) -> Result<Map<String, Value>, Fail> {
    let (changed, msg, attr_diff) = m.check_file_attrs(path, changed, &msg)?;
    let mut result = json_map!({
        "changed": changed,
        "msg": msg,
        "backup": backup,
        "diff": [content_diff, attr_diff],
    });
    if let Some(found) = found {
        result.insert("found".into(), json!(found));
    }
    Ok(result)
}

/// The file's lines, each with its newline (the last may have none).
fn read_lines(path: &str) -> Result<Vec<String>, Fail> {
    let text = read_text(&realpath(path), "lineinfile")?;
    Ok(text.split_inclusive('\n').map(str::to_string).collect())
}

/// Writes `lines` to `path`, after `validate`.
fn write_lines(m: &Module, path: &str, lines: &[String]) -> Result<(), Fail> {
    write_validated(path, lines.concat().as_bytes(), m.get_str("validate"))
}

/// What kind of file `path` is ([`existing_kind`]).
fn kind(path: &str) -> Result<Option<FileKind>, Fail> {
    Ok(existing_kind(path)?)
}

fn dirname(path: &str) -> String {
    match path.rfind('/') {
        Some(0) => "/".into(),
        Some(i) => path[..i].to_string(),
        None => String::new(),
    }
}

/// `os.makedirs`: the directory and its missing parents.
fn make_dirs(dir: &str) -> Result<(), Fail> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Fail::new(format!("Error creating {dir} ({})", describe_io_error(&e))))
}
