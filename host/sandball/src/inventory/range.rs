//! Host ranges in inventory host keys (`web[01:10]`, `db-[a:f]`, `x[1:10:2]`) and the
//! host-pattern expansion source plugins share: address and port, then ranges.

use super::address::parse_address;

/// Why a host range could not be expanded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RangeError {
    /// A range ansible-core refuses in its own words (no end, unequal widths, begin
    /// after end, not `begin:end(:step)`): the `advanced_host_list` plugin keeps such a
    /// name as written.
    #[error("{0}")]
    Refused(String),
    /// A range that cannot be read at all (a bound that is not a number, a bracket
    /// left open).
    #[error("{0}")]
    Unreadable(String),
}

const ASCII_LETTERS: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/// Splits a host key into the host names it stands for and the port they share.
/// A key that is not a recognisable address is taken as the name itself.
pub fn expand_hostpattern(pattern: &str) -> Result<(Vec<String>, Option<u64>), RangeError> {
    let (name, port) = parse_address(pattern, true).unwrap_or_else(|_| (pattern.to_string(), None));
    if name.contains('[') {
        Ok((expand_hostname_range(&name)?, port))
    } else {
        Ok((vec![name], port))
    }
}

/// Expands the first `[begin:end(:step)]` of `line` and, recursively, any others.
/// Numeric bounds with a leading zero keep their width; letters range over a-z then A-Z.
pub fn expand_hostname_range(line: &str) -> Result<Vec<String>, RangeError> {
    let marked = line.replacen('[', "|", 1).replacen(']', "|", 1);
    let parts: Vec<&str> = marked.split('|').collect();
    let [head, range, tail] = parts[..] else {
        return Err(RangeError::Unreadable(format!(
            "invalid host range in '{line}': expected one [begin:end] per bracket pair"
        )));
    };
    let bounds: Vec<&str> = range.split(':').collect();
    if bounds.len() != 2 && bounds.len() != 3 {
        return Err(RangeError::Refused(
            "host range must be begin:end or begin:end:step".into(),
        ));
    }
    let begin = if bounds[0].is_empty() { "0" } else { bounds[0] };
    let end = bounds[1];
    if end.is_empty() {
        return Err(RangeError::Refused(
            "host range must specify end value".into(),
        ));
    }
    let step_text = bounds.get(2).copied().unwrap_or("1");
    let step: i64 = parse_python_int(step_text).ok_or_else(|| {
        RangeError::Unreadable(format!("invalid step in host range: '{step_text}'"))
    })?;
    let width = if begin.starts_with('0') && begin.len() > 1 {
        if begin.len() != end.len() {
            return Err(RangeError::Refused(
                "host range must specify equal-length begin and end formats".into(),
            ));
        }
        Some(begin.len())
    } else {
        None
    };
    let items: Vec<String> = match (ASCII_LETTERS.find(begin), ASCII_LETTERS.find(end)) {
        (Some(b), Some(e)) if step != 0 => {
            if b > e {
                return Err(RangeError::Refused(
                    "host range must have begin <= end".into(),
                ));
            }
            letter_sequence(&ASCII_LETTERS[b..=e], step)
        }
        _ => {
            let parse = |s: &str| {
                parse_python_int(s).ok_or_else(|| {
                    RangeError::Unreadable(format!("invalid host range bound: '{s}'"))
                })
            };
            let (b, e) = (parse(begin)?, parse(end)?);
            if step == 0 {
                return Err(RangeError::Unreadable(
                    "host range step must not be zero".into(),
                ));
            }
            number_sequence(b, e, step)
                .map(|n| match width {
                    Some(w) => format!("{n:0w$}"),
                    None => n.to_string(),
                })
                .collect()
        }
    };
    let mut hosts = Vec::new();
    for item in items {
        let name = format!("{head}{item}{tail}");
        if name.contains('[') {
            hosts.extend(expand_hostname_range(&name)?);
        } else {
            hosts.push(name);
        }
    }
    Ok(hosts)
}

/// Every `step`-th letter of `letters` (a negative step yields nothing, as a Python slice
/// from the front with a negative step would start past the end).
fn letter_sequence(letters: &str, step: i64) -> Vec<String> {
    if step < 0 {
        return Vec::new();
    }
    let step = usize::try_from(step).unwrap_or(usize::MAX);
    letters.chars().step_by(step).map(String::from).collect()
}

/// Python's `range(begin, end + 1, step)` (`step` is not zero).
fn number_sequence(begin: i64, end: i64, step: i64) -> impl Iterator<Item = i64> {
    let stop = end.saturating_add(1);
    let mut next = Some(begin);
    std::iter::from_fn(move || {
        let current = next.filter(|n| if step > 0 { *n < stop } else { *n > stop })?;
        next = current.checked_add(step);
        Some(current)
    })
}

/// Python's `int(text)` for range bounds: optional sign, digits, single underscores.
fn parse_python_int(text: &str) -> Option<i64> {
    let t = text.trim();
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    let valid = !digits.is_empty()
        && !digits.starts_with('_')
        && !digits.ends_with('_')
        && !digits.contains("__")
        && digits.chars().all(|c| c.is_ascii_digit() || c == '_');
    if valid {
        t.replace('_', "").parse().ok()
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(p: &str) -> Vec<String> {
        expand_hostname_range(p).unwrap()
    }

    #[test]
    fn numeric_ranges_keep_zero_padding() {
        assert_eq!(expand("web[01:03]"), ["web01", "web02", "web03"]);
        assert_eq!(expand("web[1:3].lan"), ["web1.lan", "web2.lan", "web3.lan"]);
        assert_eq!(expand("x[1:10:4]"), ["x1", "x5", "x9"]);
        assert_eq!(expand("x[:2]"), ["x0", "x1", "x2"]);
        assert_eq!(expand("x[3:1]"), Vec::<String>::new());
        assert_eq!(expand("x[5:1:-1]"), ["x5", "x4", "x3"]);
    }

    #[test]
    fn letter_ranges() {
        assert_eq!(expand("db-[a:c]"), ["db-a", "db-b", "db-c"]);
        assert_eq!(expand("db-[y:B]"), ["db-y", "db-z", "db-A", "db-B"]);
        assert_eq!(expand("db-[a:e:2]"), ["db-a", "db-c", "db-e"]);
    }

    #[test]
    fn several_ranges_multiply() {
        assert_eq!(expand("r[1:2]-[a:b]"), ["r1-a", "r1-b", "r2-a", "r2-b"]);
    }

    #[test]
    fn bad_ranges_are_errors() {
        assert!(
            expand_hostname_range("x[1:]")
                .unwrap_err()
                .to_string()
                .contains("end value")
        );
        assert!(
            expand_hostname_range("x[01:100]")
                .unwrap_err()
                .to_string()
                .contains("equal-length")
        );
        assert!(
            expand_hostname_range("x[1]")
                .unwrap_err()
                .to_string()
                .contains("begin:end")
        );
        assert!(
            expand_hostname_range("x[c:a]")
                .unwrap_err()
                .to_string()
                .contains("begin <= end")
        );
        assert!(expand_hostname_range("x[1:a]").is_err());
        assert!(expand_hostname_range("x[1:3").is_err());
        assert!(expand_hostname_range("x[1:3:0]").is_err());
    }

    #[test]
    fn host_patterns_split_port_then_expand() {
        assert_eq!(
            expand_hostpattern("web[1:2]:2222").unwrap(),
            (vec!["web1".to_string(), "web2".to_string()], Some(2222))
        );
        assert_eq!(
            expand_hostpattern("[::1]:22").unwrap(),
            (vec!["::1".to_string()], Some(22))
        );
        assert_eq!(
            expand_hostpattern("odd name").unwrap(),
            (vec!["odd name".to_string()], None)
        );
    }
}
