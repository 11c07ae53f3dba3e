//! The policy file: the `[policy]` table of `sandball.toml` (in the current
//! directory), or of the file given with `--policy FILE`.
//!
//! ```toml
//! [policy]
//! legacy = "warn"                 # allow | deny | warn: may legacy modules run at all
//!
//! [[policy.rule]]
//! modules = ["my_module"]         # names (globs) or "sha256:HEX"; default: every module
//! hosts = "webservers:&prod"      # an inventory pattern; default: every host
//! manifest = true                 # grant what the manifest requests (third-party modules)
//! grant = [{kind = "fs", path = "/srv/app", access = "read", scope = "tree"}]
//! allow = [{kind = "exec", program = "/usr/bin/*"}]   # how far `capabilities:` may widen
//! deny  = [{kind = "exec", program = "/bin/sh"}]      # never, whatever else says
//! legacy = "deny"                 # this rule's modules and hosts only
//! limits = {wall_time_ms = 60000, memory_bytes = 268435456, output_bytes = 1048576}
//! ```
//!
//! Without a file, the built-in default applies: built-in modules get what their
//! manifests request, others nothing, legacy modules run with a warning, and the
//! `capabilities:` keyword may grant anything (the playbook's author runs it).

use super::PolicyError;
use crate::inventory::Inventory;
use sandball_wire::capability::{CapabilityRequest, Limits, glob};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Whether legacy (non-component) modules may run. They cannot be sandboxed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Legacy {
    /// They run.
    Allow,
    /// They are refused: the task fails.
    Deny,
    /// They run, with a warning that they are not sandboxed.
    #[default]
    Warn,
}

/// Limits a rule sets (the others keep their value).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsOverride {
    /// [`Limits::memory_bytes`].
    pub memory_bytes: Option<u64>,
    /// [`Limits::wall_time_ms`].
    pub wall_time_ms: Option<u64>,
    /// [`Limits::output_bytes`].
    pub output_bytes: Option<u64>,
}

impl LimitsOverride {
    /// `limits` with this override applied.
    pub fn apply(&self, mut limits: Limits) -> Limits {
        if let Some(v) = self.memory_bytes {
            limits.memory_bytes = v;
        }
        if let Some(v) = self.wall_time_ms {
            limits.wall_time_ms = v;
        }
        if let Some(v) = self.output_bytes {
            limits.output_bytes = v;
        }
        limits
    }
}

/// One `[[policy.rule]]`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// Line of the policy file the rule starts on.
    #[serde(skip)]
    pub line: usize,
    /// Module names (shell globs) or `sha256:HEX`; empty: every module.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub modules: Vec<String>,
    /// Inventory pattern of the hosts the rule applies to; none: every host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts: Option<String>,
    /// Grant what the module's manifest requests (built-ins always get it).
    #[serde(default)]
    pub manifest: bool,
    /// Capabilities granted (they may refer to module arguments).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub grant: Vec<CapabilityRequest>,
    /// Capabilities the `capabilities:` keyword may add.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<CapabilityRequest>,
    /// Capabilities never granted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<CapabilityRequest>,
    /// Whether legacy modules may run, for this rule's modules and hosts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub legacy: Option<Legacy>,
    /// Limits for this rule's modules and hosts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<LimitsOverride>,
    /// The hosts `hosts` selects in the run's inventory, once bound.
    #[serde(skip)]
    host_set: Option<HashSet<String>>,
}

/// What a rule is asked about: a module (by name and sha256, when known) on a host
/// (when known).
#[derive(Clone, Copy, Debug)]
pub struct Subject<'a> {
    /// Module name (short form).
    pub module: &'a str,
    /// Content address, for components.
    pub sha256: Option<&'a str>,
    /// Whether the module is a built-in component.
    pub builtin: bool,
    /// The host, when known (`sandball audit module` has none).
    pub host: Option<&'a str>,
}

impl Rule {
    /// Whether the rule applies to `s`. A rule limited to some hosts does not apply
    /// when the host is not known.
    pub fn applies_to(&self, s: &Subject<'_>) -> bool {
        let module = self.names(s.module, s.sha256);
        let host = match (&self.hosts, s.host) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(pattern), Some(h)) => match &self.host_set {
                Some(set) => set.contains(h),
                None => pattern == h,
            },
        };
        module && host
    }

    /// Whether the rule's `modules` take in the module `module` (its name) of content
    /// `sha256`, on whatever host: a rule without `modules` takes in every module.
    pub fn names(&self, module: &str, sha256: Option<&str>) -> bool {
        self.modules.is_empty()
            || self
                .modules
                .iter()
                .any(|m| match m.strip_prefix("sha256:") {
                    Some(hex) => sha256.is_some_and(|sha| sha.eq_ignore_ascii_case(hex)),
                    None => glob(m, module),
                })
    }
}

/// The policy in force.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Policy {
    /// The file it was read from; `None` for the built-in default.
    pub source: Option<PathBuf>,
    /// Whether legacy modules may run (rules may say otherwise for some).
    pub legacy: Legacy,
    /// The rules, in file order.
    pub rules: Vec<Rule>,
}

/// The file: other tables of `sandball.toml` are not the policy's business.
#[derive(Deserialize)]
struct FileWritten {
    policy: Option<PolicyWritten>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyWritten {
    #[serde(default)]
    legacy: Legacy,
    #[serde(default)]
    rule: Vec<toml::Spanned<Rule>>,
}

/// The name of the configuration file read from the current directory.
pub const CONFIG_FILE: &str = "sandball.toml";

impl Policy {
    /// The policy of a run: `--policy FILE` when given, else the `[policy]` of
    /// `./sandball.toml` when there is one, else the built-in default.
    pub fn discover(explicit: Option<&Path>) -> Result<Policy, PolicyError> {
        match explicit {
            Some(path) => Policy::load(path),
            None => {
                let path = Path::new(CONFIG_FILE);
                if path.is_file() {
                    Policy::load(path)
                } else {
                    Ok(Policy::default())
                }
            }
        }
    }

    /// Reads a policy file.
    pub fn load(path: &Path) -> Result<Policy, PolicyError> {
        let text = std::fs::read_to_string(path).map_err(|e| PolicyError::File {
            file: path.display().to_string(),
            message: e.to_string(),
        })?;
        Policy::parse(&text, path)
    }

    /// Parses policy file text read from `path`.
    pub fn parse(text: &str, path: &Path) -> Result<Policy, PolicyError> {
        let written: FileWritten = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|s| format!(":{}", line_of(text, s.start)))
                .unwrap_or_default();
            PolicyError::File {
                file: format!("{}{line}", path.display()),
                message: e.message().trim().to_string(),
            }
        })?;
        let Some(p) = written.policy else {
            return Ok(Policy {
                source: Some(path.to_path_buf()),
                ..Policy::default()
            });
        };
        let rules = p
            .rule
            .into_iter()
            .map(|spanned| {
                let line = line_of(text, spanned.span().start);
                let mut rule = spanned.into_inner();
                rule.line = line;
                rule
            })
            .collect();
        Ok(Policy {
            source: Some(path.to_path_buf()),
            legacy: p.legacy,
            rules,
        })
    }

    /// Resolves the rules' host patterns against the run's inventory.
    pub fn bind(&mut self, inventory: &Inventory) -> Result<(), PolicyError> {
        let source = self.source_name();
        for rule in &mut self.rules {
            if let Some(pattern) = &rule.hosts {
                let selected = inventory.select(pattern).map_err(|e| PolicyError::File {
                    file: format!("{source}:{}", rule.line),
                    message: format!("hosts = {pattern:?}: {e}"),
                })?;
                rule.host_set = Some(selected.hosts.into_iter().collect());
            }
        }
        Ok(())
    }

    /// Whether the `capabilities:` keyword may grant anything (only the built-in
    /// default, without a policy file, lets it).
    pub fn keyword_is_open(&self) -> bool {
        self.source.is_none()
    }

    /// The rules that apply to `s`.
    pub fn rules_for<'p>(&'p self, s: &Subject<'_>) -> impl Iterator<Item = &'p Rule> {
        let s = *s;
        self.rules.iter().filter(move |r| r.applies_to(&s))
    }

    /// The policy file's name for messages.
    pub fn source_name(&self) -> String {
        match &self.source {
            Some(p) => p.display().to_string(),
            None => CONFIG_FILE.to_string(),
        }
    }

    /// Where a rule is, for messages: `sandball.toml:12`.
    pub fn rule_location(&self, rule: &Rule) -> String {
        format!("{}:{}", self.source_name(), rule.line)
    }
}

/// The 1-based line holding byte `offset` of `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"
[policy]
legacy = "deny"

[[policy.rule]]
modules = ["my_*"]
manifest = true
grant = [{kind = "fs", path = "/srv", access = "read", scope = "tree"}]

[[policy.rule]]
modules = ["sha256:ABCD"]
hosts = "web"
deny = [{kind = "exec", program = "/bin/sh"}]
limits = {wall_time_ms = 5000}
"#;

    fn subject<'a>(module: &'a str, host: Option<&'a str>) -> Subject<'a> {
        Subject {
            module,
            sha256: Some("abcd"),
            builtin: false,
            host,
        }
    }

    #[test]
    fn rules_are_read_with_their_lines() {
        let p = Policy::parse(FILE, Path::new("sandball.toml")).unwrap();
        assert_eq!(p.legacy, Legacy::Deny);
        assert_eq!(p.rules.len(), 2);
        assert_eq!(p.rules[0].line, 5);
        assert_eq!(p.rules[1].line, 10);
        assert!(p.rules[0].manifest);
        assert_eq!(p.rule_location(&p.rules[1]), "sandball.toml:10");
        assert_eq!(
            p.rules[1]
                .limits
                .unwrap()
                .apply(Limits::default())
                .wall_time_ms,
            5000
        );
        assert!(!p.keyword_is_open());
        assert!(Policy::default().keyword_is_open());
    }

    #[test]
    fn rules_match_modules_by_glob_or_sha256_and_hosts_by_pattern() {
        let p = Policy::parse(FILE, Path::new("sandball.toml")).unwrap();
        let names = |s: Subject<'_>| -> Vec<usize> { p.rules_for(&s).map(|r| r.line).collect() };
        assert_eq!(names(subject("my_mod", None)), vec![5]);
        // The second rule needs a host; `web` is its pattern (not bound: literal).
        assert_eq!(names(subject("other", Some("web"))), vec![10]);
        assert_eq!(names(subject("other", Some("db"))), Vec::<usize>::new());
    }

    #[test]
    fn mistakes_are_reported_with_file_and_line() {
        let bad = "[policy]\nlegacy = \"warn\"\n\n[[policy.rule]]\ngrnat = []\n";
        let e = Policy::parse(bad, Path::new("p.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("p.toml:5"), "{e}");
        assert!(e.contains("grnat"), "{e}");
        let bad = "[policy]\nlegacy = \"maybe\"\n";
        let e = Policy::parse(bad, Path::new("p.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("p.toml:2"), "{e}");
        let bad = "[[policy.rule]]\ngrant = [{kind = \"fs\", path = \"/x\"}]\n";
        let e = Policy::parse(bad, Path::new("p.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("access"), "{e}");
        // A file without [policy] is the empty policy: nothing beyond the defaults,
        // and the keyword may widen nothing.
        let p = Policy::parse("[other]\nx = 1\n", Path::new("p.toml")).unwrap();
        assert!(p.rules.is_empty() && !p.keyword_is_open());
    }
}
