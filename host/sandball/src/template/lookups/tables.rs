//! The lookups that read a value out of a file of settings or rows: `ini` (an INI or
//! Java properties file read as Python's `configparser` reads it: case-folded keys
//! unless `case_sensitive`, `%(name)s` interpolation unless `interpolation=false`,
//! `allow_no_value`, `re`) and `csvfile` (a column of the row whose key column holds
//! the term, the file read as Python's `csv` reads it). Both take their options as
//! keywords or, the old way, inline in the term (`key section=s file=f`; quotes in the
//! key are part of it, quotes around an option's value are not).

use super::files::find_warned;
use super::{LookupContext, LookupError};
use crate::playbook::search_path::NotFound;
use crate::playbook::splitter::unquote;
use serde_json::Value as Json;
use std::collections::BTreeMap;

/// A term's inline options: the key (the words before the first `option=`) and the
/// options, checked against `valid`. Quotes group words (`file="a b.csv"`).
fn inline(term: &str, valid: &[&str]) -> Result<(String, Vec<(String, String)>), String> {
    let mut key: Vec<String> = Vec::new();
    let mut options: Vec<(String, String)> = Vec::new();
    for word in words(term) {
        let option = word.split_once('=').filter(|(k, _)| {
            !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        match option {
            Some((k, v)) if valid.contains(&k) => {
                options.push((k.to_string(), unquote(v).to_string()));
            }
            Some((k, _)) => return Err(format!("'{k}' is not a valid option")),
            _ => match options.last_mut() {
                Some((_, v)) => {
                    v.push(' ');
                    v.push_str(&word);
                }
                None => key.push(word),
            },
        }
    }
    Ok((key.join(" "), options))
}

/// Words split at white space outside quotes (`"` or `'`), the quotes kept.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match quote {
            Some(q) if c == q => {
                quote = None;
                word.push(c);
            }
            Some(_) => word.push(c),
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                word.push(c);
            }
            None if c == ' ' || c == '\n' || c == '\r' => {
                if !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
            }
            None => word.push(c),
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// The options of a lookup: the keywords, with a term's inline ones over them.
fn merged(
    options: &serde_json::Map<String, Json>,
    inline: Vec<(String, String)>,
) -> serde_json::Map<String, Json> {
    let mut all = options.clone();
    all.extend(inline.into_iter().map(|(k, v)| (k, Json::String(v))));
    all
}

fn option_text(options: &serde_json::Map<String, Json>, key: &str, default: &str) -> String {
    match options.get(key) {
        None | Some(Json::Null) => default.to_string(),
        Some(Json::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

fn option_flag(options: &serde_json::Map<String, Json>, key: &str) -> Result<bool, String> {
    sandball_pycompat::boolean::truthy(options.get(key), false).map_err(|e| format!("{key}: {e}"))
}

/// A file's text in `encoding` (UTF-8, or Latin-1 and its relatives byte for char).
fn read(path: &std::path::Path, encoding: &str) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    match encoding
        .to_ascii_lowercase()
        .replace(['-', '_'], "")
        .as_str()
    {
        "utf8" | "utf8sig" => String::from_utf8(bytes)
            .map(|s| s.trim_start_matches('\u{feff}').to_string())
            .map_err(|e| format!("{}: not UTF-8: {e}", path.display())),
        "latin1" | "iso88591" | "iso885915" | "l1" | "cp819" => {
            Ok(bytes.iter().map(|&b| char::from(b)).collect())
        }
        other => Err(format!("unknown encoding: {other}")),
    }
}

/// The `ini` lookup's options.
const INI_OPTIONS: &[&str] = &[
    "file",
    "section",
    "re",
    "type",
    "default",
    "encoding",
    "case_sensitive",
    "allow_no_value",
    "allow_none",
    "interpolation",
];

/// `ini`: see [`ini_values`]; the file is found along the search path.
pub(super) fn ini(
    terms: &[Json],
    options: &serde_json::Map<String, Json>,
    ctx: &dyn LookupContext,
) -> Result<Vec<Json>, LookupError> {
    Ok(ini_values(terms, options, &|f| {
        find_warned(ctx, "files", f)
    })?)
}

/// `ini`: each term's value in the file's section (a list of values with `re`), the
/// `default` for a missing key.
fn ini_values(
    terms: &[Json],
    options: &serde_json::Map<String, Json>,
    find: &dyn Fn(&str) -> Result<std::path::PathBuf, NotFound>,
) -> Result<Vec<Json>, String> {
    let mut out = Vec::new();
    for term in terms {
        let (key, extra) = inline(&super::text(term), INI_OPTIONS)?;
        if key.is_empty() {
            return Err(
                "No key to look up was provided as first term within string inline options".into(),
            );
        }
        let o = merged(options, extra);
        let properties = option_text(&o, "type", "ini") == "properties";
        let file = option_text(
            &o,
            "file",
            if properties {
                "ansible.properties"
            } else {
                "ansible.ini"
            },
        );
        let path = find(&file).map_err(|e| e.to_string())?;
        let mut text = read(&path, &option_text(&o, "encoding", "utf-8"))?;
        let section = if properties {
            text.insert_str(0, "[java_properties]\n");
            "java_properties".to_string()
        } else {
            option_text(&o, "section", "global")
        };
        let case_sensitive = option_flag(&o, "case_sensitive")?;
        let no_value = option_flag(&o, "allow_no_value")? || option_flag(&o, "allow_none")?;
        let parsed = Ini::parse(&text, case_sensitive, no_value).map_err(|e| {
            let path = path.display();
            match e.strip_prefix("Duplicate option ") {
                Some(rest) => {
                    format!("Duplicate option in '{path}': While reading from '{path}' {rest}")
                }
                None => format!("{e} in '{path}'"),
            }
        })?;
        let interpolate = match o.get("interpolation") {
            None => true,
            v => sandball_pycompat::boolean::truthy(v, true)?,
        };
        let key = if case_sensitive {
            key
        } else {
            key.to_lowercase()
        };
        let items = parsed
            .items(&section)
            .ok_or_else(|| format!("No section '{section}' in {file}"))?;
        let value = |raw: &Option<String>| -> Result<Json, String> {
            match raw {
                None => Ok(Json::Null),
                Some(v) if interpolate => parsed.interpolate(&section, v, 0).map(Json::String),
                Some(v) => Ok(Json::String(v.clone())),
            }
        };
        if option_flag(&o, "re")? {
            use sandball_guest_sdk::pyre::{Anchor, Pattern};
            let re = Pattern::new(&key, false, false, Anchor::Match).map_err(|e| e.to_string())?;
            for (k, v) in &items {
                if re.is_match(k).map_err(|e| e.to_string())? {
                    out.push(value(v)?);
                }
            }
            continue;
        }
        match items.iter().find(|(k, _)| *k == key) {
            Some((_, v)) => {
                let v = value(v)?;
                if !v.is_null() {
                    out.push(v);
                }
            }
            None => match o.get("default") {
                Some(Json::Array(list)) => out.extend(list.iter().cloned()),
                Some(d) => out.push(d.clone()),
                None => out.push(Json::String(String::new())),
            },
        }
    }
    Ok(out)
}

/// A section's options in order (`None`: an option without a value).
type Options = Vec<(String, Option<String>)>;

/// An INI text as Python's `configparser` reads it (strict: no repeated section or
/// option).
#[derive(Debug)]
struct Ini {
    /// `DEFAULT`'s options, seen in every section.
    defaults: Options,
    /// The sections in order, their options in order.
    sections: Vec<(String, Options)>,
}

impl Ini {
    fn parse(text: &str, case_sensitive: bool, no_value: bool) -> Result<Ini, String> {
        let mut ini = Ini {
            defaults: Vec::new(),
            sections: Vec::new(),
        };
        // Where options go: None before any section, Some(None) for DEFAULT.
        let mut current: Option<Option<usize>> = None;
        // The indent of the option a continuation line adds to.
        let mut last_indent: Option<usize> = None;
        for (n, raw) in text.lines().enumerate() {
            let line = raw.trim_end_matches('\r');
            let stripped = line.trim();
            if stripped.is_empty() || stripped.starts_with('#') || stripped.starts_with(';') {
                if stripped.is_empty() {
                    last_indent = None;
                }
                continue;
            }
            let indent = line.len() - line.trim_start().len();
            if let (Some(level), Some(target)) = (last_indent, current)
                && indent > level
            {
                let options = match target {
                    None => &mut ini.defaults,
                    Some(i) => &mut ini.sections[i].1,
                };
                if let Some((_, Some(v))) = options.last_mut() {
                    v.push('\n');
                    v.push_str(stripped);
                    continue;
                }
            }
            if let Some(name) = stripped.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
                if name == "DEFAULT" {
                    current = Some(None);
                } else if ini.sections.iter().any(|(s, _)| s == name) {
                    return Err(format!(
                        "Duplicate section [line {:>2}]: section '{name}' already exists",
                        n + 1
                    ));
                } else {
                    ini.sections.push((name.to_string(), Vec::new()));
                    current = Some(Some(ini.sections.len() - 1));
                }
                last_indent = None;
                continue;
            }
            let Some(target) = current else {
                return Err(format!(
                    "File contains no section headers [line {:>2}]: {line:?}",
                    n + 1
                ));
            };
            let (key, value) = match stripped.find(['=', ':']) {
                Some(i) => (
                    stripped[..i].trim(),
                    Some(stripped[i + 1..].trim().to_string()),
                ),
                None if no_value => (stripped, None),
                None => {
                    return Err(format!(
                        "Source contains parsing errors [line {:>2}]: {line:?}",
                        n + 1
                    ));
                }
            };
            let key = if case_sensitive {
                key.to_string()
            } else {
                key.to_lowercase()
            };
            let options = match target {
                None => &mut ini.defaults,
                Some(i) => &mut ini.sections[i].1,
            };
            if options.iter().any(|(k, _)| *k == key) {
                return Err(format!(
                    "Duplicate option [line {:>2}]: option '{key}' already exists",
                    n + 1
                ));
            }
            options.push((key, value));
            last_indent = Some(indent);
        }
        Ok(ini)
    }

    /// A section's options, its own first, then the defaults it does not override.
    fn items(&self, section: &str) -> Option<Options> {
        let (_, own) = self.sections.iter().find(|(s, _)| s == section)?;
        let mut all = own.clone();
        for (k, v) in &self.defaults {
            if !all.iter().any(|(o, _)| o == k) {
                all.push((k.clone(), v.clone()));
            }
        }
        Some(all)
    }

    /// `%(name)s` replaced by the option of the section (or the defaults), `%%` by `%`.
    fn interpolate(&self, section: &str, value: &str, depth: usize) -> Result<String, String> {
        if depth > 10 {
            return Err(format!(
                "Recursion limit exceeded in value substitution: {value:?}"
            ));
        }
        let items: BTreeMap<String, Option<String>> = self
            .items(section)
            .unwrap_or_default()
            .into_iter()
            .collect();
        sandball_guest_sdk::configparser::interpolate(
            value,
            |name| {
                let found = items.get(name).ok_or_else(|| {
                    format!("Bad value substitution: option '{name}' in section '{section}'")
                })?;
                self.interpolate(section, found.as_deref().unwrap_or(""), depth + 1)
            },
            |rest| format!("'%' must be followed by '%' or '(', found: {rest:?}"),
        )
    }
}

/// The `csvfile` lookup's options.
const CSV_OPTIONS: &[&str] = &["file", "col", "keycol", "delimiter", "default", "encoding"];

/// `csvfile`: see [`csv_values`]; the file is found along the search path.
pub(super) fn csvfile(
    terms: &[Json],
    options: &serde_json::Map<String, Json>,
    ctx: &dyn LookupContext,
) -> Result<Vec<Json>, LookupError> {
    Ok(csv_values(terms, options, &|f| {
        find_warned(ctx, "files", f)
    })?)
}

/// `csvfile`: for each term, column `col` of the first row whose column `keycol` is
/// the term; `default` when none is.
fn csv_values(
    terms: &[Json],
    options: &serde_json::Map<String, Json>,
    find: &dyn Fn(&str) -> Result<std::path::PathBuf, NotFound>,
) -> Result<Vec<Json>, String> {
    for key in options.keys() {
        if !CSV_OPTIONS.contains(&key.as_str()) {
            return Err(format!("'{key}' is not a valid option"));
        }
    }
    if terms.is_empty() {
        return Err("Search key is required but was not found".into());
    }
    let mut out = Vec::new();
    for term in terms {
        let (key, extra) = inline(&super::text(term), CSV_OPTIONS)?;
        if key.is_empty() {
            return Err("Search key is required but was not found".into());
        }
        let o = merged(options, extra);
        let number = |name: &str, default: usize| -> Result<usize, String> {
            let invalid = |v: &dyn std::fmt::Display| {
                format!(
                    "Config '{name}' for 'csvfile' lookup plugin has an invalid value: Invalid value provided for 'int': '{v}'"
                )
            };
            match o.get(name) {
                None | Some(Json::Null) => Ok(default),
                Some(Json::Number(n)) => n
                    .as_u64()
                    .and_then(|n| usize::try_from(n).ok())
                    .ok_or_else(|| invalid(n)),
                Some(v) => {
                    let text = super::text(v);
                    text.trim().parse().map_err(|_| invalid(&text))
                }
            }
        };
        let (col, keycol) = (number("col", 1)?, number("keycol", 0)?);
        let delimiter = match option_text(&o, "delimiter", "TAB").as_str() {
            "TAB" | "t" | "\\t" => '\t',
            d => {
                let mut chars = d.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => c,
                    _ => {
                        return Err(format!(
                            "\"delimiter\" must be a 1-character string, got {d:?}"
                        ));
                    }
                }
            }
        };
        let file = option_text(&o, "file", "ansible.csv");
        let path = find(&file)
            .map_err(|_| format!("csvfile: [Errno 2] No such file or directory: '{file}'"))?;
        let text = read(&path, &option_text(&o, "encoding", "utf-8"))?;
        let found = csv_rows(&text, delimiter)
            .into_iter()
            .find(|row| row.get(keycol) == Some(&key));
        match found {
            Some(row) => {
                out.push(Json::String(row.get(col).cloned().ok_or_else(|| {
                    format!("csvfile: list index out of range (column {col})")
                })?))
            }
            None => match o.get("default") {
                Some(Json::Array(list)) => out.extend(list.iter().cloned()),
                Some(Json::Null) | None => {}
                Some(d) => out.push(d.clone()),
            },
        }
    }
    Ok(out)
}

/// The rows of a CSV text as Python's `csv` module reads them (`"` quotes, `""` a quote
/// inside them, a quoted field may hold the delimiter and line ends).
fn csv_rows(text: &str, delimiter: char) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut row: Vec<String> = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => quoted = false,
                c => field.push(c),
            }
            continue;
        }
        match c {
            '"' if field.is_empty() => quoted = true,
            c if c == delimiter => row.push(std::mem::take(&mut field)),
            '\r' => {}
            '\n' => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            c => field.push(c),
        }
    }
    if !field.is_empty() || !row.is_empty() {
        row.push(field);
        rows.push(row);
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_options_as_ansible_splits_them() {
        let (key, opts) = inline(
            "German von Lastname file=\"a b.csv\" delimiter=, col=1",
            CSV_OPTIONS,
        )
        .unwrap();
        assert_eq!(key, "German von Lastname");
        assert_eq!(
            opts,
            [("file", "a b.csv"), ("delimiter", ","), ("col", "1")]
                .map(|(a, b)| (a.to_string(), b.to_string()))
        );
        assert_eq!(
            inline("foo file=x thisarg=1", CSV_OPTIONS).unwrap_err(),
            "'thisarg' is not a valid option"
        );
        assert_eq!(inline("file=x", CSV_OPTIONS).unwrap().0, "");
        assert_eq!(
            inline("\"The Rock\" Johnson file=a", CSV_OPTIONS)
                .unwrap()
                .0,
            "\"The Rock\" Johnson"
        );
        assert_eq!(
            inline("invalid=option", INI_OPTIONS).unwrap_err(),
            "'invalid' is not a valid option"
        );
    }

    #[test]
    fn ini_reads_as_configparser() {
        let text = "[DEFAULT]\nbase = /b\n[s]\nKey = v\nlong = a\n  b\nref: %(base)s/x %%\nflag\n";
        assert!(Ini::parse(text, false, false).is_err());
        let ini = Ini::parse(text, false, true).unwrap();
        let items = ini.items("s").unwrap();
        let get = |k: &str| items.iter().find(|(o, _)| o == k).unwrap().1.clone();
        assert_eq!(get("key").as_deref(), Some("v"));
        assert_eq!(get("long").as_deref(), Some("a\nb"));
        assert_eq!(get("flag"), None);
        assert_eq!(
            ini.interpolate("s", &get("ref").unwrap(), 0).unwrap(),
            "/b/x %"
        );
        assert!(ini.items("nope").is_none());
        let dup = Ini::parse("[s]\nname = a\nNAME = b\n", false, false).unwrap_err();
        assert!(dup.contains("Duplicate option"), "{dup}");
        assert!(Ini::parse("[s]\nname = a\nNAME = b\n", true, false).is_ok());
    }

    #[test]
    fn csv_rows_as_python_reads_them() {
        assert_eq!(
            csv_rows("a,\"b,c\",\"d \"\"e\"\"\"\r\nx,y\n", ','),
            vec![vec!["a", "b,c", "d \"e\""], vec!["x", "y"]]
        );
    }
}
