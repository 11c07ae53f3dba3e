//! Host patterns as Ansible evaluates them: `all`/`*`, names, groups, globs, `~regex`,
//! unions (`a:b`, `a,b`), intersections (`a:&b`), exclusions (`a:!b`), subscripts
//! (`g[0]`, `g[1:3]`, `g[-1]`), and `@file` in limits. Results keep inventory order
//! without repeats; a pattern matching nothing is a warning, not an error.

use super::address::parse_address;
use super::data::{InventoryData, is_localhost_name};
use super::error::InventoryError;
use regex::Regex;
use sandball_pycompat::fnmatch::fnmatch;
use std::collections::HashSet;
use std::sync::{LazyLock, OnceLock};

/// A matched host: an inventory host, or the implicit localhost.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Matched {
    /// The inventory host at this index.
    Host(usize),
    /// The implicit localhost.
    Implicit,
}

static WITH_SUBSCRIPT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(.+)\[(?:(-?[0-9]+)|([0-9]+)([:-])([0-9]*))\]$").expect("static regex")
});

static COLON_PARTS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?:[^\s:\[\]]|\[[^\]]*\])+").expect("static regex"));

/// Splits a pattern into single patterns: on commas when there are any; else, unless the
/// whole is an address (an IPv6 address, `host:port`, a `[x:y]` range), on colons outside
/// brackets.
pub fn split_host_pattern(pattern: &str) -> Vec<String> {
    let parts: Vec<String> = if pattern.contains(',') {
        pattern.split(',').map(str::to_string).collect()
    } else if parse_address(pattern, true).is_ok() {
        vec![pattern.to_string()]
    } else {
        COLON_PARTS
            .find_iter(pattern)
            .map(|m| m.as_str().to_string())
            .collect()
    };
    parts
        .into_iter()
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect()
}

/// Evaluates patterns against an inventory.
pub struct Matcher<'a> {
    /// The inventory.
    pub data: &'a InventoryData,
    /// Each group's hosts, descendants included, in Ansible's order.
    pub group_hosts: &'a [Vec<usize>],
    /// The name the implicit localhost took when first matched.
    pub implicit: &'a OnceLock<String>,
    /// The groups `group_by` put the implicit localhost in, with their ancestors.
    pub implicit_groups: &'a indexmap::IndexSet<usize>,
}

impl Matcher<'_> {
    /// The hosts `patterns` select: plain patterns first (a union), then `&` intersections,
    /// then `!` exclusions; only exclusions or intersections start from `all`.
    pub fn evaluate(
        &self,
        patterns: &[String],
        warnings: &mut Vec<String>,
    ) -> Result<Vec<Matched>, InventoryError> {
        let mut ordered: Vec<&str> = Vec::new();
        let mut intersections = Vec::new();
        let mut exclusions = Vec::new();
        for p in patterns.iter().filter(|p| !p.is_empty()) {
            match p.chars().next() {
                Some('!') => exclusions.push(p.as_str()),
                Some('&') => intersections.push(p.as_str()),
                _ => ordered.push(p.as_str()),
            }
        }
        if ordered.is_empty() {
            ordered.push("all");
        }
        ordered.extend(intersections);
        ordered.extend(exclusions);
        let mut hosts: Vec<Matched> = Vec::new();
        for p in ordered {
            if let Some(h) = self.data.host_index(p) {
                hosts.push(Matched::Host(h));
                continue;
            }
            let that = self.match_one(p, warnings)?;
            if p.starts_with('!') {
                let that: HashSet<Matched> = that.into_iter().collect();
                hosts.retain(|h| !that.contains(h));
            } else if p.starts_with('&') {
                let that: HashSet<Matched> = that.into_iter().collect();
                hosts.retain(|h| that.contains(h));
            } else {
                let existing: HashSet<Matched> = hosts.iter().copied().collect();
                hosts.extend(that.into_iter().filter(|h| !existing.contains(h)));
            }
        }
        let mut seen = HashSet::new();
        hosts.retain(|h| seen.insert(*h));
        Ok(hosts)
    }

    /// One pattern without its `&`/`!`: its matches, sliced by a subscript if it has one.
    fn match_one(
        &self,
        pattern: &str,
        warnings: &mut Vec<String>,
    ) -> Result<Vec<Matched>, InventoryError> {
        let pattern = pattern.strip_prefix(['&', '!']).unwrap_or(pattern);
        let (expr, subscript) = split_subscript(pattern, warnings)?;
        let hosts = self.enumerate(&expr, warnings)?;
        let Some((start, end)) = subscript else {
            return Ok(hosts);
        };
        if hosts.is_empty() {
            return Ok(hosts);
        }
        let len = hosts.len() as i64;
        match end.filter(|e| *e != 0) {
            Some(end) => {
                let end = if end == -1 { len - 1 } else { end };
                let (from, to) = (
                    start.clamp(0, len) as usize,
                    (end + 1).clamp(0, len) as usize,
                );
                Ok(if from < to {
                    hosts[from..to].to_vec()
                } else {
                    Vec::new()
                })
            }
            None => {
                let index = if start < 0 { start + len } else { start };
                if (0..len).contains(&index) {
                    Ok(vec![hosts[index as usize]])
                } else {
                    Err(InventoryError::SubscriptOutOfRange(pattern.to_string()))
                }
            }
        }
    }

    /// Every host of the groups `pattern` matches, then (when no group matched or it is a
    /// glob or regex) every host it matches by name; the implicit localhost when nothing did.
    fn enumerate(
        &self,
        pattern: &str,
        warnings: &mut Vec<String>,
    ) -> Result<Vec<Matched>, InventoryError> {
        let names = NameMatcher::new(pattern)?;
        let groups: Vec<usize> = match &names {
            NameMatcher::Exact(name) => self.data.group_index(name).into_iter().collect(),
            _ => (0..self.data.group_count())
                .filter(|g| names.matches(self.data.group_at(*g).name()))
                .collect(),
        };
        let mut results: Vec<Matched> = Vec::new();
        for g in &groups {
            results.extend(self.group_hosts[*g].iter().map(|h| Matched::Host(*h)));
            if self.implicit_groups.contains(g) && !results.contains(&Matched::Implicit) {
                results.push(Matched::Implicit);
            }
        }
        let special = pattern.starts_with('~') || pattern.contains(['.', '?', '*', '[']);
        if groups.is_empty() || special {
            match &names {
                NameMatcher::Exact(name) => {
                    results.extend(self.data.host_index(name).map(Matched::Host))
                }
                _ => results.extend(
                    (0..self.data.host_count())
                        .filter(|h| names.matches(self.data.host_at(*h).name()))
                        .map(Matched::Host),
                ),
            }
        }
        if results.is_empty() && is_localhost_name(pattern) {
            results.push(match self.data.localhost() {
                Some(h) => Matched::Host(h),
                None => {
                    self.implicit.get_or_init(|| pattern.to_string());
                    Matched::Implicit
                }
            });
        }
        if results.is_empty() && groups.is_empty() && pattern != "all" {
            warnings.push(format!(
                "Could not match supplied host pattern, ignoring: {pattern}"
            ));
        }
        Ok(results)
    }
}

/// How a pattern matches names: literally, by a glob, or by a regular expression (`~regex`).
enum NameMatcher {
    Exact(String),
    Glob(String),
    Regex(Regex),
}

impl NameMatcher {
    fn new(pattern: &str) -> Result<Self, InventoryError> {
        let invalid = || InventoryError::InvalidPattern(pattern.to_string());
        if let Some(re) = pattern.strip_prefix('~') {
            return Regex::new(&format!("^(?:{re})"))
                .map(NameMatcher::Regex)
                .map_err(|_| invalid());
        }
        if !pattern.contains(['*', '?', '[']) {
            return Ok(NameMatcher::Exact(pattern.to_string()));
        }
        Ok(NameMatcher::Glob(pattern.to_string()))
    }

    /// Whether `name` matches.
    fn matches(&self, name: &str) -> bool {
        match self {
            NameMatcher::Exact(exact) => exact == name,
            NameMatcher::Glob(glob) => fnmatch(glob, name),
            NameMatcher::Regex(re) => re.is_match(name),
        }
    }
}

/// A subscript: `(index, None)` or `(start, Some(end))` with -1 for an open end.
type Subscript = (i64, Option<i64>);

/// Splits `g[1:3]` into `g` and its subscript (regexes have none).
fn split_subscript(
    pattern: &str,
    warnings: &mut Vec<String>,
) -> Result<(String, Option<Subscript>), InventoryError> {
    if pattern.starts_with('~') {
        return Ok((pattern.to_string(), None));
    }
    let Some(m) = WITH_SUBSCRIPT.captures(pattern) else {
        return Ok((pattern.to_string(), None));
    };
    let number = |s: &str| {
        s.parse::<i64>()
            .map_err(|_| InventoryError::SubscriptOutOfRange(pattern.to_string()))
    };
    let subscript = if let Some(index) = m.get(2) {
        (number(index.as_str())?, None)
    } else {
        if m.get(4).is_some_and(|sep| sep.as_str() == "-") {
            warnings.push(
                "Use [x:y] inclusive subscripts instead of [x-y] which has been removed".into(),
            );
        }
        let end = match m.get(5).map(|e| e.as_str()).filter(|e| !e.is_empty()) {
            Some(e) => number(e)?,
            None => -1,
        };
        (number(&m[3])?, Some(end))
    };
    Ok((m[1].to_string(), Some(subscript)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitting() {
        assert_eq!(
            split_host_pattern("a,b[1], c[2:3] , d"),
            ["a", "b[1]", "c[2:3]", "d"]
        );
        assert_eq!(
            split_host_pattern("web:&staging:!db"),
            ["web", "&staging", "!db"]
        );
        assert_eq!(split_host_pattern("web*:db"), ["web*", "db"]);
        assert_eq!(split_host_pattern("g[1:3]"), ["g[1:3]"]);
        assert_eq!(split_host_pattern("g[0]:h"), ["g[0]", "h"]);
        assert_eq!(split_host_pattern("fe80::1"), ["fe80::1"]);
        assert_eq!(split_host_pattern("2001:db8::1"), ["2001:db8::1"]);
        assert_eq!(split_host_pattern("host:22"), ["host:22"]);
        assert_eq!(split_host_pattern("a:b,c"), ["a:b", "c"]);
        assert_eq!(split_host_pattern(" , "), Vec::<String>::new());
    }

    #[test]
    fn subscripts() {
        let mut w = Vec::new();
        assert_eq!(
            split_subscript("g[0]", &mut w).unwrap(),
            ("g".into(), Some((0, None)))
        );
        assert_eq!(
            split_subscript("g[-1]", &mut w).unwrap(),
            ("g".into(), Some((-1, None)))
        );
        assert_eq!(
            split_subscript("g[1:3]", &mut w).unwrap(),
            ("g".into(), Some((1, Some(3))))
        );
        assert_eq!(
            split_subscript("g[1:]", &mut w).unwrap(),
            ("g".into(), Some((1, Some(-1))))
        );
        assert_eq!(
            split_subscript("~g[1]", &mut w).unwrap(),
            ("~g[1]".into(), None)
        );
        assert!(w.is_empty());
        assert_eq!(
            split_subscript("g[1-2]", &mut w).unwrap(),
            ("g".into(), Some((1, Some(2))))
        );
        assert_eq!(w.len(), 1);
        assert_eq!(
            split_subscript("web[a-c]", &mut w).unwrap(),
            ("web[a-c]".into(), None)
        );
    }
}
