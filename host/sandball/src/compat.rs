//! The ansible-core release whose playbook semantics a run follows, where releases
//! differ (2.21's `register` projections and `_task`, results without `invocation`…):
//! `SANDBALL_ANSIBLE_CORE_VERSION` (ansible.cfg `[sandball] ansible_core_version`),
//! else the ansible-core the run finds for its legacy modules
//! ([`crate::assemble::finder::installed_core_version`]), else the newest sandball
//! follows. A release older than the oldest sandball follows (2.16) gets the oldest's
//! semantics, a newer one the newest's. Picked once per process.

use std::sync::OnceLock;

/// The oldest and newest minor releases of ansible-core 2 sandball follows.
pub const OLDEST: u32 = 19;
/// See [`OLDEST`].
pub const NEWEST: u32 = 21;

/// The variable (and ansible.cfg key, in `[sandball]`) that names the release.
pub const SETTING: &str = crate::config::ANSIBLE_CORE_VERSION;

/// An ansible-core release sandball follows, by its minor number (2.`minor`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Core {
    minor: u32,
}

impl Core {
    /// The release 2.`minor`, within those sandball follows.
    pub fn new(minor: u32) -> Core {
        Core {
            minor: minor.clamp(OLDEST, NEWEST),
        }
    }

    /// Whether this is 2.`minor` or later.
    pub fn at_least(self, minor: u32) -> bool {
        self.minor >= minor
    }

    /// The release as `ansible_version` and `--version` give it (`2.21.0`).
    pub fn version(self) -> &'static str {
        match self.minor {
            19 => "2.19.0",
            20 => "2.20.0",
            _ => "2.21.0",
        }
    }

    /// The minor number.
    pub fn minor(self) -> u32 {
        self.minor
    }
}

/// The release a run follows and why.
#[derive(Clone, Debug)]
pub struct Picked {
    /// The release.
    pub core: Core,
    /// How it was picked, for `-v` and `--version`.
    pub how: String,
}

static PICKED: OnceLock<Picked> = OnceLock::new();

/// The release this run follows (picked on first use: see the module's doc).
pub fn core() -> Core {
    picked().core
}

/// The release this run follows, and how it was picked.
pub fn picked() -> &'static Picked {
    PICKED.get_or_init(|| pick().unwrap_or_else(|_| newest("")))
}

/// Picks the release from the setting or the ansible-core found, once; an error for a
/// setting that names no ansible-core 2 release (`2.21`, `2.21.5`).
pub fn init() -> Result<&'static Picked, String> {
    if let Some(p) = PICKED.get() {
        return Ok(p);
    }
    let picked = pick()?;
    Ok(PICKED.get_or_init(|| picked))
}

fn newest(why: &str) -> Picked {
    Picked {
        core: Core::new(NEWEST),
        how: format!("the newest sandball follows{why}"),
    }
}

fn pick() -> Result<Picked, String> {
    if let Some(text) = crate::config::settings().get(SETTING) {
        let minor = parse(text).ok_or_else(|| {
            format!(
                "{SETTING} must name an ansible-core release such as 2.19 or 2.21, not '{text}'"
            )
        })?;
        return Ok(Picked {
            core: Core::new(minor),
            how: format!("{SETTING}={text}"),
        });
    }
    Ok(match crate::assemble::finder::installed_core_version() {
        Some((2, minor, full)) => Picked {
            core: Core::new(minor),
            how: format!("the ansible-core found, {full}"),
        },
        Some((_, _, full)) => newest(&format!(" (the ansible-core found, {full}, is no 2.x)")),
        None => newest(" (no ansible-core found)"),
    })
}

/// The minor number of `2.X` or `2.X.Y`.
fn parse(text: &str) -> Option<u32> {
    let mut parts = text.trim().split('.');
    if parts.next()? != "2" {
        return None;
    }
    let minor = parts.next()?.parse().ok()?;
    match parts.next() {
        None => Some(minor),
        Some(patch) if parts.next().is_none() && patch.parse::<u32>().is_ok() => Some(minor),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_are_read_and_held_within_those_followed() {
        assert_eq!(parse("2.21"), Some(21));
        assert_eq!(parse("2.19.14"), Some(19));
        assert_eq!(parse("3.0"), None);
        assert_eq!(parse("2.x"), None);
        assert_eq!(parse("2.19.1.2"), None);
        assert_eq!(Core::new(16), Core::new(19));
        assert_eq!(Core::new(25).version(), "2.21.0");
        assert!(Core::new(20).at_least(20) && !Core::new(20).at_least(21));
    }
}
