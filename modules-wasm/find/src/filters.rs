//! The criteria of `find`, read from the arguments and applied to one entry as
//! ansible-core's find applies them: names (globs or Python regexes, then
//! excludes), age, size, contents and mode. A bad regex or mode is only an error when
//! an entry reaches it (ansible-core compiles them there), so each is kept with its
//! error until used.

use sandball_guest_sdk::files::{Encoding, symbolic_mode};
use sandball_guest_sdk::host;
use sandball_guest_sdk::prelude::*;
use sandball_guest_sdk::pyre::{Anchor, Pattern};
use sandball_pycompat::fnmatch::fnmatch;
use sandball_pycompat::pyfmt::py_repr;

/// A pattern for base names: a glob, or a regex matched at the name's start.
enum Name {
    Glob(String),
    Regex(Result<Pattern, String>),
}

impl Name {
    fn new(text: &str, regex: bool) -> Name {
        if regex {
            Name::Regex(Pattern::new(text, false, false, Anchor::Match).map_err(|e| e.to_string()))
        } else {
            Name::Glob(text.to_string())
        }
    }

    fn matches(&self, name: &str) -> Result<bool, String> {
        match self {
            Name::Glob(glob) => Ok(fnmatch(glob, name)),
            Name::Regex(pattern) => {
                let pattern = pattern.as_ref().map_err(Clone::clone)?;
                pattern.is_match(name).map_err(|e| e.to_string())
            }
        }
    }
}

/// `patterns` and `excludes`.
pub struct Names {
    patterns: Vec<Name>,
    excludes: Vec<Name>,
}

impl Names {
    /// The patterns (`*` or `.*` when none) and excludes, as globs or regexes.
    pub fn new(patterns: &[String], excludes: &[String], regex: bool) -> Names {
        let default = [if regex { ".*" } else { "*" }.to_string()];
        let patterns = if patterns.is_empty() {
            &default[..]
        } else {
            patterns
        };
        Names {
            patterns: patterns.iter().map(|p| Name::new(p, regex)).collect(),
            excludes: excludes.iter().map(|p| Name::new(p, regex)).collect(),
        }
    }

    /// Whether `name` matches a pattern and no exclude (excludes are looked at only
    /// once a pattern matched).
    pub fn matches(&self, name: &str) -> Result<bool, String> {
        for p in &self.patterns {
            if p.matches(name)? {
                for e in &self.excludes {
                    if e.matches(name)? {
                        return Ok(false);
                    }
                }
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// A number with an optional unit, as `age` and `size` take it (`-?\d+` then one of
/// `units`, case-insensitive); `None` when it is not one.
fn with_unit(text: &str, units: &[(char, i64)]) -> Option<i64> {
    let lower = text.to_lowercase();
    let (number, factor) = match lower.chars().last() {
        Some(c) if c.is_ascii_alphabetic() => {
            let (_, factor) = units.iter().find(|(u, _)| *u == c)?;
            (&lower[..lower.len() - 1], *factor)
        }
        _ => (&lower[..], 1),
    };
    let digits = number.strip_prefix('-').unwrap_or(number);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    number.parse::<i64>().ok()?.checked_mul(factor)
}

/// `age` in seconds (negative: at most that old).
pub fn parse_age(text: Option<&str>) -> Result<Option<i64>, Fail> {
    let units = [
        ('s', 1),
        ('m', 60),
        ('h', 3600),
        ('d', 86400),
        ('w', 604800),
    ];
    text.map(|t| {
        with_unit(t, &units).ok_or_else(|| Fail::new("failed to process age").with("age", t))
    })
    .transpose()
}

/// `size` in bytes (negative: at most that size).
pub fn parse_size(text: Option<&str>) -> Result<Option<i64>, Fail> {
    let units = [
        ('b', 1),
        ('k', 1 << 10),
        ('m', 1 << 20),
        ('g', 1 << 30),
        ('t', 1 << 40),
    ];
    text.map(|t| {
        with_unit(t, &units).ok_or_else(|| Fail::new("failed to process size").with("size", t))
    })
    .transpose()
}

/// Whether an entry `elapsed` seconds old passes `age`.
pub fn age_matches(age: Option<i64>, elapsed: f64) -> bool {
    match age {
        None => true,
        Some(a) if a >= 0 => elapsed >= a as f64,
        Some(a) => elapsed <= a.unsigned_abs() as f64,
    }
}

/// Whether a file of `size` bytes passes `size`.
pub fn size_matches(wanted: Option<i64>, size: u64) -> bool {
    match wanted {
        None => true,
        Some(w) if w >= 0 => size >= w.unsigned_abs(),
        Some(w) => size <= w.unsigned_abs(),
    }
}

/// `mode` and `exact_mode`.
pub struct ModeFilter {
    /// The permission bits asked for, or the error reading them; `None`: any mode.
    wanted: Option<Result<u32, String>>,
    exact: bool,
}

/// Python's `int(text, 8)`: optional sign and `0o`, digits with single underscores
/// between them, surrounding whitespace.
fn python_octal(text: &str) -> Option<i64> {
    let t = text.trim();
    let (negative, t) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let t = t
        .strip_prefix("0o")
        .or_else(|| t.strip_prefix("0O"))
        .unwrap_or(t);
    if t.is_empty() || t.starts_with('_') || t.ends_with('_') || t.contains("__") {
        return None;
    }
    let digits: String = t.chars().filter(|c| *c != '_').collect();
    if !digits.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
        return None;
    }
    let n = i64::from_str_radix(&digits, 8).ok()?;
    Some(if negative { -n } else { n })
}

impl ModeFilter {
    /// Reads `mode`: it must be text (ansible-core refuses other types); empty or
    /// unset matches every mode.
    pub fn new(mode: Option<&Value>, exact: bool) -> Result<ModeFilter, Fail> {
        let text = match mode {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.as_str()).filter(|s| !s.is_empty()),
            Some(v) if !sandball_pycompat::pyops::py_truth(v) => None,
            Some(v) => {
                return Err(Fail::new(format!(
                    "argument 'mode' is not a string and conversion is not allowed, value is of type {}",
                    sandball_pycompat::pyfmt::short_type_name(v)
                )));
            }
        };
        let wanted = text.map(|t| match python_octal(t) {
            Some(n) => Ok((n & 0o7777) as u32),
            None => symbolic_mode(0, false, t, host::umask),
        });
        Ok(ModeFilter { wanted, exact })
    }

    /// Whether permission bits `mode` pass.
    pub fn matches(&self, mode: u32) -> Result<bool, String> {
        let Some(wanted) = &self.wanted else {
            return Ok(true);
        };
        let wanted = wanted.as_ref().map_err(Clone::clone)?;
        let mode = mode & 0o7777;
        Ok(if self.exact {
            mode == *wanted
        } else {
            mode & wanted != 0
        })
    }
}

/// Python's text files read lines in chunks of this many bytes: the lines before the
/// chunk holding an undecodable byte are searched before the error.
const CHUNK: usize = 8192;

/// `contains`, `read_whole_file` and `encoding`.
pub struct Contents {
    pattern: Result<Pattern, String>,
    whole: bool,
    encoding: Encoding,
    /// How the error message names the encoding (as given, or Python's words for
    /// the default).
    encoding_name: String,
}

impl Contents {
    /// `None` without `contains`. An encoding sandball cannot read is refused here.
    pub fn new(
        contains: Option<&str>,
        whole: bool,
        encoding: Option<&str>,
    ) -> Result<Option<Contents>, Fail> {
        let Some(contains) = contains else {
            return Ok(None);
        };
        let anchor = if whole { Anchor::Search } else { Anchor::Match };
        let pattern = Pattern::new(contains, false, false, anchor).map_err(|e| e.to_string());
        let (encoding, encoding_name) = match encoding {
            Some(name) => (Encoding::named(name, "find")?, name.to_string()),
            None => (
                Encoding::Utf8,
                r#"None (default determined by the Python built-in function "open")"#.to_string(),
            ),
        };
        Ok(Some(Contents {
            pattern,
            whole,
            encoding,
            encoding_name,
        }))
    }

    /// Whether the file at `real` (shown as `path`) matches. A file that cannot be
    /// read does not; one that cannot be decoded is an error, once the lines before
    /// it have been searched.
    pub fn matches(&self, real: &str, path: &str) -> Result<bool, String> {
        let pattern = self.pattern.as_ref().map_err(Clone::clone)?;
        let Ok(bytes) = std::fs::read(real) else {
            return Ok(false);
        };
        let valid = self.encoding.valid_up_to(&bytes);
        let searched = if valid == bytes.len() {
            valid
        } else if self.whole {
            0
        } else {
            valid - valid % CHUNK
        };
        let text = self
            .encoding
            .decode(&bytes[..searched], path)
            .map_err(|e| e.msg().to_string())?;
        // Universal newlines, as Python's text files read them.
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        let found = if self.whole {
            pattern.is_match(&text)
        } else {
            let complete = searched == bytes.len();
            let mut found = Ok(false);
            for line in text.split_inclusive('\n') {
                if !complete && !line.ends_with('\n') {
                    break;
                }
                found = pattern.is_match(line);
                if found.as_ref().map_or(true, |f| *f) {
                    break;
                }
            }
            found
        };
        let found = found.map_err(|e| e.to_string())?;
        if found || searched == bytes.len() {
            return Ok(found);
        }
        Err(format!(
            "Failed to read the file {path} due to an encoding error. current encoding: {}",
            self.encoding_name
        ))
    }
}

/// `path` as Python's `%r` shows it.
pub fn repr(path: &str) -> String {
    py_repr(&Value::from(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_signs_and_refusals() {
        assert_eq!(parse_age(Some("2d")).unwrap(), Some(172800));
        assert_eq!(parse_age(Some("-1W")).unwrap(), Some(-604800));
        assert_eq!(parse_age(Some("30")).unwrap(), Some(30));
        let bad = parse_age(Some("2x")).unwrap_err();
        assert_eq!(
            (bad.msg(), &bad.fields()["age"]),
            ("failed to process age", &json!("2x"))
        );
        assert_eq!(parse_size(Some("1k")).unwrap(), Some(1024));
        assert_eq!(parse_size(Some("-2m")).unwrap(), Some(-2 << 20));
        assert!(parse_size(Some("k")).is_err() && parse_size(Some("1.5k")).is_err());
        assert!(age_matches(Some(10), 10.0) && !age_matches(Some(10), 9.9));
        assert!(age_matches(Some(-10), 10.0) && !age_matches(Some(-10), 10.1));
        assert!(size_matches(Some(-3), 3) && !size_matches(Some(4), 3));
    }

    #[test]
    fn modes_octal_symbolic_and_loose() {
        let exact = ModeFilter::new(Some(&json!("0644")), true).unwrap();
        assert!(exact.matches(0o644).unwrap() && !exact.matches(0o640).unwrap());
        let loose = ModeFilter::new(Some(&json!("0o011")), false).unwrap();
        assert!(loose.matches(0o750).unwrap() && !loose.matches(0o700).unwrap());
        let symbolic = ModeFilter::new(Some(&json!("u=rw,g=r,o=r")), true).unwrap();
        assert!(symbolic.matches(0o644).unwrap());
        let bad = ModeFilter::new(Some(&json!("u=q")), true).unwrap();
        assert_eq!(
            bad.matches(0o644).unwrap_err(),
            "bad symbolic permission for mode: u=q"
        );
        let refused = ModeFilter::new(Some(&json!(420)), true).err().unwrap();
        assert_eq!(
            refused.msg(),
            "argument 'mode' is not a string and conversion is not allowed, value is of type int"
        );
        assert!(
            ModeFilter::new(Some(&json!("")), true)
                .unwrap()
                .matches(0)
                .unwrap()
        );
        assert_eq!(python_octal(" 6_44 "), Some(0o644));
        assert_eq!(python_octal("-1"), Some(-1));
        assert_eq!(python_octal("8"), None);
    }

    #[test]
    fn names_match_patterns_then_excludes() {
        let names = Names::new(&["*.log".into(), "a*".into()], &["b*".into()], false);
        assert!(names.matches("x.log").unwrap());
        assert!(!names.matches("b.log").unwrap());
        assert!(!names.matches("x.txt").unwrap());
        let regex = Names::new(&[r"\d+".into()], &[], true);
        assert!(regex.matches("12x").unwrap() && !regex.matches("x12").unwrap());
        let all = Names::new(&[], &["*.tmp".into()], false);
        assert!(all.matches(".hidden").unwrap() && !all.matches("x.tmp").unwrap());
        let broken = Names::new(&["(".into()], &[], true);
        assert!(broken.matches("x").is_err());
    }

    #[test]
    fn contents_by_line_whole_and_encoding_errors() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        let f = f.to_str().unwrap();
        std::fs::write(f, b"one\r\ntwo words\nthree").unwrap();
        let by_line = |p: &str| Contents::new(Some(p), false, None).unwrap().unwrap();
        assert!(by_line("two").matches(f, f).unwrap());
        assert!(!by_line("words").matches(f, f).unwrap());
        assert!(by_line("one$").matches(f, f).unwrap());
        let whole = Contents::new(Some("words\nthr"), true, None)
            .unwrap()
            .unwrap();
        assert!(whole.matches(f, f).unwrap());
        assert!(!by_line("x").matches(&format!("{f}.missing"), f).unwrap());
        std::fs::write(f, b"abc\n\xff\n").unwrap();
        assert_eq!(
            by_line("abc").matches(f, "/p").unwrap_err(),
            r#"Failed to read the file /p due to an encoding error. current encoding: None (default determined by the Python built-in function "open")"#
        );
        let latin = Contents::new(Some("\u{ff}"), false, Some("latin-1"))
            .unwrap()
            .unwrap();
        assert!(latin.matches(f, f).unwrap());
        assert!(Contents::new(Some("x"), false, Some("cp1252")).is_err());
        assert_eq!(repr("/a'b"), r#""/a'b""#);
    }
}
