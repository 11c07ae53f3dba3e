//! `version` (alias `version_compare`): compares version strings as Ansible does, by
//! default as `LooseVersion` (numbers and words), or `strict` / `semver` versions.

use std::cmp::Ordering;

use minijinja::value::{Kwargs, Rest, ValueOrKwargs};
use minijinja::{Error, ErrorKind, State, Value};

use crate::template::python::text_arg;
use crate::template::undefined::Plugins;

pub(super) fn register(env: &mut Plugins<'_>) {
    env.add_test("version", version);
    env.add_test("version_compare", version);
}

fn error(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::InvalidOperation, message.into())
}

/// The operators `version` takes, by their names and symbols, as Ansible lists them.
const OPERATORS: [(&str, &str); 14] = [
    ("==", "eq"),
    ("=", "eq"),
    ("eq", "eq"),
    ("<", "lt"),
    ("lt", "lt"),
    ("<=", "le"),
    ("le", "le"),
    (">", "gt"),
    ("gt", "gt"),
    (">=", "ge"),
    ("ge", "ge"),
    ("!=", "ne"),
    ("<>", "ne"),
    ("ne", "ne"),
];

/// The version types, as Ansible lists them.
const VERSION_TYPES: [&str; 5] = ["loose", "strict", "semver", "semantic", "pep440"];

/// `'a', 'b'…`: choices as Python shows a list of them.
fn choices(names: impl IntoIterator<Item = &'static str>) -> String {
    names
        .into_iter()
        .map(|name| format!("'{name}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `version(other, operator='eq', strict=None, version_type=None)`, checked in
/// ansible-core's order and with its messages.
fn version(
    state: &State,
    value: &Value,
    other: &Value,
    args: Rest<ValueOrKwargs>,
) -> Result<bool, Error> {
    let value = text_arg(state, value)?;
    let other = text_arg(state, other)?;
    let raw: Vec<Value> = args.iter().map(|a| Value::from(a.clone())).collect();
    let (operator, strict, kwargs): (Option<String>, Option<Value>, Kwargs) =
        minijinja::value::from_args(&raw)?;
    let operator = match operator {
        Some(op) => op,
        None => kwargs
            .get::<Option<String>>("operator")?
            .unwrap_or_else(|| "eq".into()),
    };
    let strict = match strict {
        Some(strict) => Some(strict),
        None => kwargs.get::<Option<Value>>("strict")?,
    };
    let version_type = kwargs.get::<Option<String>>("version_type")?;
    kwargs.assert_all_used()?;
    if strict.as_ref().is_some_and(|s| !s.is_none()) && version_type.is_some() {
        return Err(error("Cannot specify both 'strict' and 'version_type'"));
    }
    if value.is_empty() {
        return Err(error("Input version value cannot be empty"));
    }
    if other.is_empty() {
        return Err(error(
            "Version parameter to compare against cannot be empty",
        ));
    }
    let kind = if strict.is_some_and(|s| s.is_true()) {
        "strict"
    } else {
        match version_type.as_deref() {
            None | Some("") => "loose",
            Some(kind) => VERSION_TYPES
                .into_iter()
                .find(|k| *k == kind)
                .ok_or_else(|| {
                    error(format!(
                        "Invalid version type ({kind}). Must be one of {}",
                        choices(VERSION_TYPES)
                    ))
                })?,
        }
    };
    let operator = OPERATORS
        .iter()
        .find(|(name, _)| *name == operator)
        .map(|(_, op)| *op)
        .ok_or_else(|| {
            error(format!(
                "Invalid operator type ({operator}). Must be one of {}",
                choices(OPERATORS.map(|(name, _)| name))
            ))
        })?;
    let failed = |e: Error| {
        error(format!(
            "Version comparison failed: {}",
            e.detail().unwrap_or_default()
        ))
    };
    let ordering = match kind {
        "strict" => strict_version(&value)
            .and_then(|a| Ok(a.cmp(&strict_version(&other)?)))
            .map_err(failed)?,
        "semver" | "semantic" => semver(&value)
            .and_then(|a| Ok(compare_semver(&a, &semver(&other)?)))
            .map_err(failed)?,
        "pep440" => pep440(&value)
            .and_then(|a| Ok(a.cmp(&pep440(&other)?)))
            .map_err(failed)?,
        _ => compare_loose(&loose(&value), &loose(&other), operator).map_err(failed)?,
    };
    Ok(match operator {
        "eq" => ordering == Ordering::Equal,
        "ne" => ordering != Ordering::Equal,
        "lt" => ordering == Ordering::Less,
        "le" => ordering != Ordering::Greater,
        "gt" => ordering == Ordering::Greater,
        _ => ordering != Ordering::Less,
    })
}

/// A piece of a loose version: a number or a run of other characters.
#[derive(Debug, PartialEq)]
enum Piece {
    Number(u128),
    Text(String),
}

/// `LooseVersion` parsing: runs of digits are numbers, runs of lowercase letters and runs
/// of anything else but dots are text; dots separate.
fn loose(version: &str) -> Vec<Piece> {
    #[derive(PartialEq, Clone, Copy)]
    enum Class {
        Digit,
        Lower,
        Dot,
        Other,
    }
    let class = |c: char| match c {
        '0'..='9' => Class::Digit,
        'a'..='z' => Class::Lower,
        '.' => Class::Dot,
        _ => Class::Other,
    };
    let mut pieces = Vec::new();
    let chars: Vec<char> = version.chars().collect();
    let mut start = 0;
    while start < chars.len() {
        let kind = class(chars[start]);
        let mut end = start + 1;
        while end < chars.len() && class(chars[end]) == kind && kind != Class::Dot {
            end += 1;
        }
        let text: String = chars[start..end].iter().collect();
        match kind {
            Class::Dot => {}
            Class::Digit => pieces.push(match text.parse::<u128>() {
                Ok(n) => Piece::Number(n),
                Err(_) => Piece::Text(text),
            }),
            Class::Lower | Class::Other => pieces.push(Piece::Text(text)),
        }
        start = end;
    }
    pieces
}

/// Compares loose versions as Python compares their lists: a number never equals a
/// word, and ordering one against the other is Python's error.
fn compare_loose(a: &[Piece], b: &[Piece], operator: &str) -> Result<Ordering, Error> {
    for (x, y) in a.iter().zip(b) {
        let ordering = match (x, y) {
            (Piece::Number(x), Piece::Number(y)) => x.cmp(y),
            (Piece::Text(x), Piece::Text(y)) => x.cmp(y),
            _ if matches!(operator, "eq" | "ne") => Ordering::Less,
            _ => {
                let symbol = match operator {
                    "lt" => "<",
                    "le" => "<=",
                    "gt" => ">",
                    _ => ">=",
                };
                let kind = |piece: &Piece| match piece {
                    Piece::Number(_) => "int",
                    Piece::Text(_) => "str",
                };
                return Err(error(format!(
                    "'{symbol}' not supported between instances of '{}' and '{}'",
                    kind(x),
                    kind(y)
                )));
            }
        };
        if ordering != Ordering::Equal {
            return Ok(ordering);
        }
    }
    Ok(a.len().cmp(&b.len()))
}

/// A `StrictVersion`: major, minor, patch, then (is a release, pre-release letter,
/// pre-release number), so that a pre-release sorts before its release.
type Strict = (u64, u64, u64, (u8, u8, u64));

/// `StrictVersion` parsing: `N.N[.N][{a|b}N]`.
fn strict_version(version: &str) -> Result<Strict, Error> {
    let invalid = || error(format!("invalid version number '{version}'"));
    let (numbers, pre) = match version.find(['a', 'b']) {
        Some(at) => (&version[..at], Some(&version[at..])),
        None => (version, None),
    };
    let parts: Vec<u64> = numbers
        .split('.')
        .map(|p| {
            (!p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
                .then(|| p.parse().ok())
                .flatten()
                .ok_or_else(invalid)
        })
        .collect::<Result<_, _>>()?;
    let (major, minor, patch) = match parts[..] {
        [major, minor] => (major, minor, 0),
        [major, minor, patch] => (major, minor, patch),
        _ => return Err(invalid()),
    };
    let pre = match pre {
        None => (1, 0, 0),
        Some(pre) => {
            let (letter, number) = pre.split_at(1);
            if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
                return Err(invalid());
            }
            (
                0,
                letter.as_bytes()[0],
                number.parse().map_err(|_| invalid())?,
            )
        }
    };
    Ok((major, minor, patch, pre))
}

/// A semantic version: major, minor, patch and pre-release identifiers.
type SemVer = (u64, u64, u64, Vec<String>);

fn semver(version: &str) -> Result<SemVer, Error> {
    let invalid = || error(format!("invalid semantic version '{version}'"));
    let without_build = version.split_once('+').map_or(version, |(v, _)| v);
    let (core, pre) = match without_build.split_once('-') {
        Some((core, pre)) => (core, pre.split('.').map(str::to_string).collect()),
        None => (without_build, Vec::new()),
    };
    let numbers: Vec<u64> = core
        .split('.')
        .map(|p| {
            let canonical = p == "0" || (!p.starts_with('0') && !p.is_empty());
            (canonical && p.bytes().all(|b| b.is_ascii_digit()))
                .then(|| p.parse().ok())
                .flatten()
                .ok_or_else(invalid)
        })
        .collect::<Result<_, _>>()?;
    let [major, minor, patch] = numbers[..] else {
        return Err(invalid());
    };
    if pre.iter().any(|id: &String| id.is_empty()) {
        return Err(invalid());
    }
    Ok((major, minor, patch, pre))
}

/// Semantic version precedence: a pre-release sorts before its release; identifiers
/// compare numerically when numeric, and numeric ones sort before the others.
fn compare_semver(a: &SemVer, b: &SemVer) -> Ordering {
    (a.0, a.1, a.2)
        .cmp(&(b.0, b.1, b.2))
        .then_with(|| match (a.3.is_empty(), b.3.is_empty()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => {
                for (x, y) in a.3.iter().zip(&b.3) {
                    let ordering = match (x.parse::<u64>(), y.parse::<u64>()) {
                        (Ok(x), Ok(y)) => x.cmp(&y),
                        (Ok(_), Err(_)) => Ordering::Less,
                        (Err(_), Ok(_)) => Ordering::Greater,
                        (Err(_), Err(_)) => x.cmp(y),
                    };
                    if ordering != Ordering::Equal {
                        return ordering;
                    }
                }
                a.3.len().cmp(&b.3.len())
            }
        })
}

/// A PEP 440 version's sort key, as the `packaging` library orders versions: epoch,
/// release (trailing zeros dropped), pre-release (a development release of a final
/// version first, a final version after its pre-releases), post-release, development
/// release (last when absent) and local label (numbers after words).
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Pep440 {
    epoch: u64,
    release: Vec<u64>,
    pre: (u8, u64),
    post: Option<u64>,
    dev: (u8, u64),
    local: Vec<(u8, u64, String)>,
}

/// Parses a PEP 440 version, with the spellings `packaging` normalises (`alpha`, `c`,
/// `-1` for a post-release, `_`/`-` separators, a leading `v`).
fn pep440(version: &str) -> Result<Pep440, Error> {
    static PATTERN: std::sync::LazyLock<Option<regex::Regex>> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"(?ix)^\s*v?
            (?:(?P<epoch>[0-9]+)!)?
            (?P<release>[0-9]+(?:\.[0-9]+)*)
            (?:[-_.]?(?P<pre_l>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?P<pre_n>[0-9]+)?)?
            (?P<post>-(?P<post_n1>[0-9]+)|[-_.]?(?:post|rev|r)[-_.]?(?P<post_n2>[0-9]+)?)?
            (?P<dev>[-_.]?dev[-_.]?(?P<dev_n>[0-9]+)?)?
            (?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?
            \s*$",
        )
        .ok()
    });
    let invalid = || error(format!("Invalid version: '{version}'"));
    let captures = PATTERN
        .as_ref()
        .and_then(|pattern| pattern.captures(version))
        .ok_or_else(invalid)?;
    let number = |name: &str| -> Result<Option<u64>, Error> {
        captures
            .name(name)
            .map(|m| m.as_str().parse().map_err(|_| invalid()))
            .transpose()
    };
    let mut release = captures["release"]
        .split('.')
        .map(|part| part.parse().map_err(|_| invalid()))
        .collect::<Result<Vec<u64>, _>>()?;
    while release.len() > 1 && release.last() == Some(&0) {
        release.pop();
    }
    let post = match captures.name("post") {
        Some(_) => Some(number("post_n1")?.or(number("post_n2")?).unwrap_or(0)),
        None => None,
    };
    let dev = match captures.name("dev") {
        Some(_) => Some(number("dev_n")?.unwrap_or(0)),
        None => None,
    };
    let pre = match captures.name("pre_l") {
        Some(letter) => {
            let rank = match letter.as_str().to_ascii_lowercase().as_str() {
                "a" | "alpha" => 1,
                "b" | "beta" => 2,
                _ => 3,
            };
            (rank, number("pre_n")?.unwrap_or(0))
        }
        // A development release of a final version sorts before its pre-releases.
        None if post.is_none() && dev.is_some() => (0, 0),
        None => (4, 0),
    };
    let local = captures.name("local").map_or_else(Vec::new, |local| {
        local
            .as_str()
            .split(['-', '_', '.'])
            .map(|part| match part.parse::<u64>() {
                Ok(n) => (1, n, String::new()),
                Err(_) => (0, 0, part.to_ascii_lowercase()),
            })
            .collect()
    });
    Ok(Pep440 {
        epoch: number("epoch")?.unwrap_or(0),
        release,
        pre,
        post,
        dev: dev.map_or((1, 0), |n| (0, n)),
        local,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::filters::testing::{error, eval};
    use serde_json::json;

    fn check(expr: &str) -> bool {
        eval(expr) == json!(true)
    }

    #[test]
    fn loose_versions() {
        assert!(check("'1.2.3' is version('1.2.3')"));
        assert!(check("'1.2.3' is version('1.2.3', '==')"));
        assert!(check("'1.10' is version('1.9', '>')"));
        assert!(check("'1.10' is version('1.9', 'gt')"));
        assert!(check("'2.0' is version('2.0.1', '<')"));
        assert!(check("'2.0' is version('2', '>')"));
        assert!(check("'12.04' is version('12.04', '>=')"));
        assert!(check("'7.9' is version_compare('8.0', 'lt')"));
        assert!(check("'1.0' is version('1.0', '<=')"));
        assert!(check("'1.0' is version('1.1', '!=')"));
        assert!(check("'1.0a' is version('1.0b', '<')"));
        assert!(check("'1.0' is version('1.0a', '<')"));
        assert!(!check("'1.0' is version('1.x', '==')"));
        assert!(error("'1.0' is version('a.0', '<')").contains(
            "Version comparison failed: '<' not supported between instances of 'int' and 'str'"
        ));
        assert!(
            error("'1' is version('2', 'bigger')")
                .contains("Invalid operator type (bigger). Must be one of '==', '=', 'eq'")
        );
        assert!(error("'' is version('2')").contains("Input version value cannot be empty"));
        assert!(
            error("'1' is version('')")
                .contains("Version parameter to compare against cannot be empty")
        );
        assert_eq!(
            loose("1.2-rc1"),
            [
                Piece::Number(1),
                Piece::Number(2),
                Piece::Text("-".into()),
                Piece::Text("rc".into()),
                Piece::Number(1)
            ]
        );
    }

    #[test]
    fn strict_versions() {
        assert!(check("'1.0' is version('1.0.0', '==', strict=true)"));
        assert!(check("'1.0' is version_compare('1.0.0', '==', true)"));
        assert!(check("'1.0a1' is version('1.0', '<', strict=true)"));
        assert!(check(
            "'1.0a2' is version('1.0b1', '<', version_type='strict')"
        ));
        assert!(
            error("'1.0.0.0' is version('1.0', strict=true)").contains("invalid version number")
        );
        assert!(
            error("'1' is version('1', strict=true, version_type='loose')")
                .contains("Cannot specify both 'strict' and 'version_type'")
        );
    }

    #[test]
    fn pep440_versions() {
        let pep440 = |op: &str, a: &str, b: &str| {
            check(&format!(
                "'{a}' is version('{b}', '{op}', version_type='pep440')"
            ))
        };
        assert!(pep440("<", "2.14.0rc1", "2.14.0"));
        assert!(pep440("<", "1.0.dev1", "1.0a1"));
        assert!(pep440("<", "1.0a1", "1.0b1"));
        assert!(pep440("<", "1.0", "1.0.post1"));
        assert!(pep440("<", "1.0.post1.dev1", "1.0.post1"));
        assert!(pep440("==", "1.0", "1.0.0"));
        assert!(pep440("==", "1.0-1", "1.0.post1"));
        assert!(pep440("==", "v1.0ALPHA2", "1.0a2"));
        assert!(pep440("<", "1.0", "1.0+local.1"));
        assert!(pep440("<", "1.0+abc", "1.0+1"));
        assert!(pep440(">", "1!0.1", "2.0"));
        assert!(
            error("'nope' is version('1', version_type='pep440')")
                .contains("Version comparison failed: Invalid version: 'nope'")
        );
    }

    #[test]
    fn semantic_versions() {
        let semver = |op: &str, a: &str, b: &str| {
            check(&format!(
                "'{a}' is version('{b}', '{op}', version_type='semver')"
            ))
        };
        assert!(semver("<", "1.0.0-alpha", "1.0.0"));
        assert!(semver("<", "1.0.0-alpha", "1.0.0-alpha.1"));
        assert!(semver("<", "1.0.0-alpha.1", "1.0.0-alpha.beta"));
        assert!(semver("<", "1.0.0-beta.2", "1.0.0-beta.11"));
        assert!(semver("<", "1.0.0-rc.1", "1.0.0"));
        assert!(semver("==", "1.0.0+build1", "1.0.0+build2"));
        assert!(semver(">", "2.0.0", "1.99.99"));
        assert!(
            error("'1.0' is version('1.0.0', version_type='semver')")
                .contains("invalid semantic version")
        );
        assert!(
            error("'01.0.0' is version('1.0.0', version_type='semantic')")
                .contains("invalid semantic version")
        );
        assert!(
            error("'1' is version('1', version_type='boom')")
                .contains("Invalid version type (boom). Must be one of 'loose', 'strict'")
        );
    }
}
