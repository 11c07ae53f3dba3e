//! What apt knows of a package, asked of `apt-cache policy` (the versions it can
//! install and its candidate, with the task's default release preferred) and
//! `dpkg-query` (what is installed): the package states ansible-core's module reads
//! from python3-apt's cache.

use crate::{APT_ENV, package_split, version};
use sandball_guest_sdk::Fail;
use sandball_guest_sdk::program::{Ran, run_command};
use sandball_pycompat::fnmatch::fnmatch;

const APT_CACHE: &str = "/usr/bin/apt-cache";
const DPKG_QUERY: &str = "/usr/bin/dpkg-query";

/// What may be installed: a version, or (a virtual package) whatever apt picks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Installable {
    Version(String),
    Any,
}

/// A package's state as the module weighs it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Status {
    /// Installed, whatever the version.
    pub installed: bool,
    /// Installed in a version the task accepts.
    pub version_installed: bool,
    /// What installing would bring, when that differs from what is installed.
    pub installable: Option<Installable>,
    /// Its files are on the node (installed, or removed with its configuration left).
    pub has_files: bool,
}

/// `apt-cache policy NAME`, read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Shown {
    /// `Candidate:`, unless `(none)`.
    pub candidate: Option<String>,
    /// The version table's versions.
    pub versions: Vec<String>,
}

/// Reads `apt-cache policy` output for one package; `None` when apt has no version
/// of it (unknown, or purely virtual).
pub fn parse_policy(text: &str) -> Option<Shown> {
    let mut shown = Shown::default();
    let mut in_table = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some(c) = trimmed.strip_prefix("Candidate:") {
            let c = c.trim();
            shown.candidate = (c != "(none)").then(|| c.to_string());
        } else if trimmed == "Version table:" {
            in_table = true;
        } else if in_table {
            // Versions sit at 5 spaces (or `***` for the installed one); their
            // sources are indented further.
            let version_line = line.starts_with(" *** ")
                || (line.starts_with("     ") && !line.starts_with("      "));
            if version_line {
                let words: Vec<&str> = trimmed
                    .trim_start_matches("*** ")
                    .split_whitespace()
                    .collect();
                if let Some(v) = words.first() {
                    shown.versions.push(v.to_string());
                }
            }
        }
    }
    (!shown.versions.is_empty()).then_some(shown)
}

/// Asks apt and dpkg about packages for one task.
pub struct Policy {
    default_release: Option<String>,
}

impl Policy {
    pub fn new(default_release: Option<String>) -> Policy {
        Policy { default_release }
    }

    fn apt_cache(&self, words: &[&str]) -> Result<Ran, Fail> {
        let mut argv = vec![APT_CACHE.to_string()];
        if let Some(release) = &self.default_release {
            argv.push("-o".into());
            argv.push(format!("APT::Default-Release={release}"));
        }
        argv.extend(words.iter().map(|w| w.to_string()));
        run_command(&argv, None, APT_ENV)
    }

    /// `apt-cache policy NAME`, read.
    fn shown(&self, name: &str) -> Result<Option<Shown>, Fail> {
        let ran = self.apt_cache(&["policy", name])?;
        Ok(parse_policy(&ran.stdout))
    }

    /// The packages that provide a virtual one (`apt-cache showpkg`'s reverse
    /// provides), each once.
    fn providers(&self, name: &str) -> Result<Vec<String>, Fail> {
        let ran = self.apt_cache(&["showpkg", name])?;
        let mut found: Vec<String> = Vec::new();
        let mut in_section = false;
        for line in ran.stdout.lines() {
            if line.starts_with("Reverse Provides:") {
                in_section = true;
                continue;
            }
            if in_section && let Some(provider) = line.split_whitespace().next() {
                if line.ends_with(':') && !line.contains(' ') {
                    break;
                }
                if !found.iter().any(|f| f == provider) {
                    found.push(provider.to_string());
                }
            }
        }
        Ok(found)
    }

    /// dpkg's state of `name` (`installed`, `config-files`, …) and its version;
    /// `None` when dpkg does not know it.
    fn dpkg_state(&self, name: &str) -> Result<Option<(String, String)>, Fail> {
        let argv = [
            DPKG_QUERY.to_string(),
            "-W".into(),
            "-f".into(),
            "${db:Status-Status} ${Version}\\n".into(),
            name.to_string(),
        ];
        let ran = run_command(&argv, None, APT_ENV)?;
        if ran.rc != 0 {
            return Ok(None);
        }
        Ok(ran.stdout.lines().next().and_then(|l| {
            let (state, version) = l.split_once(' ')?;
            Some((state.to_string(), version.to_string()))
        }))
    }

    /// The version of `name` installed, if any.
    pub fn installed_version(&self, name: &str) -> Result<Option<String>, Fail> {
        Ok(self
            .dpkg_state(name)?
            .filter(|(state, _)| state == "installed")
            .map(|(_, version)| version))
    }

    /// Package names for the specs, glob patterns (`*?[]!` in the name) replaced by
    /// the packages apt knows that match (native ones only, unless the pattern names
    /// an architecture).
    pub fn expand_patterns(&self, specs: &[String]) -> Result<Vec<String>, Fail> {
        let mut names: Option<Vec<String>> = None;
        let mut out = Vec::new();
        for spec in specs {
            let (pattern, _, _) = package_split(spec);
            if !pattern.contains(['*', '?', '[', ']', '!']) {
                out.push(spec.clone());
                continue;
            }
            if names.is_none() {
                let ran = self.apt_cache(&["pkgnames"])?;
                names = Some(ran.stdout.lines().map(str::to_string).collect());
            }
            let known = names.as_deref().unwrap_or_default();
            let matches: Vec<&String> = known
                .iter()
                .filter(|n| (pattern.contains(':') || !n.contains(':')) && fnmatch(&pattern, n))
                .collect();
            if matches.is_empty() {
                return Err(Fail::new(format!(
                    "No package(s) matching '{pattern}' available"
                )));
            }
            out.extend(matches.into_iter().cloned());
        }
        Ok(out)
    }

    /// The state of `name` against `cmp` `version`; `install` when it is to be
    /// installed (an unknown name then fails, a virtual one is resolved).
    pub fn status(
        &self,
        name: &str,
        cmp: Option<&str>,
        version: Option<&str>,
        install: bool,
    ) -> Result<Status, Fail> {
        let Some(shown) = self.shown(name)? else {
            if !install {
                return Ok(Status::default());
            }
            let providers = self.providers(name)?;
            if providers.is_empty() {
                return Err(Fail::new(format!(
                    "No package matching '{name}' is available"
                )));
            }
            if let [only] = providers.as_slice() {
                let st = self.status(only, cmp, version, true)?;
                if st.installed {
                    return Ok(st);
                }
            }
            return Ok(Status {
                installable: Some(Installable::Any),
                ..Status::default()
            });
        };
        let best = match (cmp, version) {
            // A version pattern wins over every pin: the highest version it matches.
            (Some("="), Some(pattern)) => shown
                .versions
                .iter()
                .filter(|v| fnmatch(pattern, v))
                .max_by(|a, b| version::compare(a, b))
                .cloned(),
            _ => shown.candidate.clone(),
        };
        let dpkg = self.dpkg_state(name)?;
        let has_files = dpkg
            .as_ref()
            .is_some_and(|(state, _)| state != "not-installed");
        let installed = dpkg.as_ref().filter(|(state, _)| state == "installed");
        let mut st = Status {
            installed: installed.is_some(),
            has_files,
            ..Status::default()
        };
        match installed {
            Some((_, current)) => {
                let differs = best.as_ref().filter(|b| *b != current);
                match (cmp, version) {
                    (Some("="), Some(pattern)) => {
                        st.version_installed = fnmatch(pattern, current);
                        st.installable = differs
                            .filter(|b| fnmatch(pattern, b))
                            .map(|b| Installable::Version(b.clone()));
                    }
                    (Some(">="), Some(wanted)) => {
                        st.version_installed = version::compare(current, wanted).is_ge();
                        st.installable = differs
                            .filter(|b| version::compare(b, wanted).is_ge())
                            .map(|b| Installable::Version(b.clone()));
                    }
                    _ => {
                        st.version_installed = true;
                        st.installable = differs.map(|b| Installable::Version(b.clone()));
                    }
                }
            }
            None => st.installable = best.map(Installable::Version),
        }
        Ok(st)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_output_gives_the_candidate_and_every_version() {
        let text = "hello:\n  Installed: 2.10-2\n  Candidate: 2.10-3\n  Version table:\n     2.10-3 500\n        500 http://deb.debian.org/debian bookworm/main amd64 Packages\n *** 2.10-2 100\n        100 /var/lib/dpkg/status\n";
        let shown = parse_policy(text).unwrap();
        assert_eq!(shown.candidate.as_deref(), Some("2.10-3"));
        assert_eq!(shown.versions, ["2.10-3", "2.10-2"]);
        let virtual_only =
            "mail-transport-agent:\n  Installed: (none)\n  Candidate: (none)\n  Version table:\n";
        assert_eq!(parse_policy(virtual_only), None);
        assert_eq!(parse_policy(""), None);
    }
}
