//! The PLAY RECAP: `host : ok=N changed=N unreachable=N failed=N skipped=N rescued=N
//! ignored=N`, one line per host, as ansible-playbook and sandball print it.

use std::collections::BTreeMap;

/// The counters of one host.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostRecap {
    /// Tasks that ran (changed included).
    pub ok: u32,
    /// Tasks that changed something.
    pub changed: u32,
    /// Unreachable events.
    pub unreachable: u32,
    /// Failed tasks.
    pub failed: u32,
    /// Skipped tasks.
    pub skipped: u32,
    /// Rescued failures.
    pub rescued: u32,
    /// Ignored failures.
    pub ignored: u32,
}

/// Reads the recap lines after the last `PLAY RECAP` banner of a run's stdout (colour
/// codes are ignored). Lines that do not parse are left out.
pub fn parse_recap(stdout: &str) -> BTreeMap<String, HostRecap> {
    let plain = strip_ansi(stdout);
    let Some(start) = plain.rfind("PLAY RECAP") else {
        return BTreeMap::new();
    };
    plain[start..]
        .lines()
        .skip(1)
        .filter_map(parse_line)
        .collect()
}

fn parse_line(line: &str) -> Option<(String, HostRecap)> {
    let (host, counters) = line.split_once(" : ")?;
    let mut r = HostRecap::default();
    let mut seen = 0;
    for field in counters.split_whitespace() {
        let (name, value) = field.split_once('=')?;
        let value: u32 = value.parse().ok()?;
        let slot = match name {
            "ok" => &mut r.ok,
            "changed" => &mut r.changed,
            "unreachable" => &mut r.unreachable,
            "failed" => &mut r.failed,
            "skipped" => &mut r.skipped,
            "rescued" => &mut r.rescued,
            "ignored" => &mut r.ignored,
            _ => return None,
        };
        *slot = value;
        seen += 1;
    }
    (seen == 7).then(|| (host.trim().to_string(), r))
}

/// Removes ANSI colour sequences (`ESC [ ... m`).
fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_ansible_recap_lines() {
        let out = "\nPLAY RECAP *********\n\
            localhost                  : ok=9    changed=4    unreachable=0    failed=0    skipped=1    rescued=0    ignored=0   \n\
            beta : ok=1 changed=0 unreachable=0 failed=2 skipped=0 rescued=0 ignored=1\n\n";
        let r = parse_recap(out);
        assert_eq!(r.len(), 2);
        assert_eq!(
            r["localhost"],
            HostRecap {
                ok: 9,
                changed: 4,
                skipped: 1,
                ..HostRecap::default()
            }
        );
        assert_eq!((r["beta"].failed, r["beta"].ignored), (2, 1));
    }

    #[test]
    fn ignores_colour_and_text_before_the_recap() {
        let out = "ok: [h] : ok=5\nPLAY RECAP ***\n\x1b[0;33mh\x1b[0m : ok=1 changed=\x1b[0;33m1\x1b[0m unreachable=0 failed=0 skipped=0 rescued=0 ignored=0\n";
        let r = parse_recap(out);
        assert_eq!(r.len(), 1);
        assert_eq!(r["h"].changed, 1);
    }

    #[test]
    fn no_recap_means_no_hosts() {
        assert!(parse_recap("ERROR! bad\n").is_empty());
    }
}
