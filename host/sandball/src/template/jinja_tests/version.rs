//! `version` (alias `version_compare`): compares version strings as Ansible does, by
//! default as `LooseVersion` (numbers and words), or `strict` / `semver` versions.

use std::cmp::Ordering;

use minijinja::value::Kwargs;
use minijinja::{Environment, Error, ErrorKind, State, Value};

use crate::template::python::text_arg;

pub(super) fn register(env: &mut Environment<'static>) {
    env.add_test("version", version);
    env.add_test("version_compare", version);
}

fn error(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::InvalidOperation, message.into())
}

/// `version(other, operator='eq', strict=False, version_type='loose')`.
fn version(
    state: &State,
    value: &Value,
    other: &Value,
    operator: Option<String>,
    kwargs: Kwargs,
) -> Result<bool, Error> {
    let value = text_arg(state, value)?;
    let other = text_arg(state, other)?;
    let operator = match operator {
        Some(op) => op,
        None => kwargs
            .get::<Option<String>>("operator")?
            .unwrap_or_else(|| "eq".into()),
    };
    let strict = kwargs.get::<Option<bool>>("strict")?;
    let version_type = kwargs.get::<Option<String>>("version_type")?;
    kwargs.assert_all_used()?;
    if strict.is_some() && version_type.is_some() {
        return Err(error(
            "version: strict and version_type are mutually exclusive",
        ));
    }
    if value.is_empty() {
        return Err(error("version: the version to compare cannot be empty"));
    }
    if other.is_empty() {
        return Err(error(
            "version: the version to compare against cannot be empty",
        ));
    }
    let ordering = match (strict, version_type.as_deref()) {
        (Some(true), _) | (_, Some("strict")) => {
            strict_version(&value)?.cmp(&strict_version(&other)?)
        }
        (_, Some("semver" | "semantic")) => compare_semver(&semver(&value)?, &semver(&other)?),
        (_, None | Some("loose")) => compare_loose(&loose(&value), &loose(&other), &operator)?,
        (_, Some(other)) => {
            return Err(error(format!(
                "version: unsupported version_type {other:?} (supported: loose, strict, semver, semantic)"
            )));
        }
    };
    Ok(match operator.as_str() {
        "==" | "=" | "eq" => ordering == Ordering::Equal,
        "!=" | "<>" | "ne" => ordering != Ordering::Equal,
        "<" | "lt" => ordering == Ordering::Less,
        "<=" | "le" => ordering != Ordering::Greater,
        ">" | "gt" => ordering == Ordering::Greater,
        ">=" | "ge" => ordering != Ordering::Less,
        other => {
            return Err(error(format!(
                "version: invalid operator {other:?} (one of ==, =, eq, <, lt, <=, le, >, gt, >=, ge, !=, <>, ne)"
            )));
        }
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
/// word, and ordering one against the other is an error.
fn compare_loose(a: &[Piece], b: &[Piece], operator: &str) -> Result<Ordering, Error> {
    for (x, y) in a.iter().zip(b) {
        let ordering = match (x, y) {
            (Piece::Number(x), Piece::Number(y)) => x.cmp(y),
            (Piece::Text(x), Piece::Text(y)) => x.cmp(y),
            _ if matches!(operator, "==" | "=" | "eq" | "!=" | "<>" | "ne") => Ordering::Less,
            _ => {
                return Err(error(
                    "version comparison failed: cannot order a number against text in loose versions",
                ));
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
    let invalid = || error(format!("invalid version number {version:?}"));
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
    let invalid = || error(format!("invalid semantic version {version:?}"));
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
        assert!(error("'1.0' is version('a.0', '<')").contains("cannot order"));
        assert!(error("'1' is version('2', 'bigger')").contains("invalid operator"));
        assert!(error("'' is version('2')").contains("cannot be empty"));
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
        assert!(check("'1.0a1' is version('1.0', '<', strict=true)"));
        assert!(check(
            "'1.0a2' is version('1.0b1', '<', version_type='strict')"
        ));
        assert!(
            error("'1.0.0.0' is version('1.0', strict=true)").contains("invalid version number")
        );
        assert!(
            error("'1' is version('1', strict=true, version_type='loose')")
                .contains("mutually exclusive")
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
            error("'1' is version('1', version_type='pep440')")
                .contains("unsupported version_type")
        );
    }
}
