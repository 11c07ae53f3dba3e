//! Whether a legacy (non-component) module may run. Legacy modules — Python,
//! PowerShell, WANT_JSON, binary, old-style — run as programs with the full rights
//! of the remote user: nothing can be sandboxed, so policy only says whether they run.

use super::file::{Legacy, Policy, Subject};

/// What policy says about running one legacy module on one host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LegacyDecision {
    /// Run it.
    Allow,
    /// Run it, and show this warning.
    Warn(String),
    /// Do not run it: the task fails with this message.
    Deny(String),
}

/// The decision for legacy module `module` on `host`: the last rule naming the
/// module and host that sets `legacy` wins, else the policy's `legacy` (default
/// `warn`).
pub fn legacy_decision(policy: &Policy, module: &str, host: &str) -> LegacyDecision {
    let subject = Subject {
        module,
        sha256: None,
        builtin: false,
        host: Some(host),
    };
    let (setting, location) = match policy
        .rules_for(&subject)
        .filter(|r| r.legacy.is_some())
        .last()
    {
        Some(rule) => (rule.legacy.unwrap_or_default(), policy.rule_location(rule)),
        None => (
            policy.legacy,
            match &policy.source {
                Some(_) => format!("{} [policy] legacy", policy.source_name()),
                None => "the default policy".to_string(),
            },
        ),
    };
    match setting {
        Legacy::Allow => LegacyDecision::Allow,
        Legacy::Warn => LegacyDecision::Warn(format!(
            "module {module} is a legacy (non-component) module: it runs on {host} with all the rights of the remote user, not sandboxed (legacy = \"warn\" from {location}; set legacy = \"allow\" to silence this, or \"deny\" to refuse it)"
        )),
        Legacy::Deny => LegacyDecision::Deny(format!(
            "module {module} is a legacy (non-component) module, which cannot be sandboxed, and the policy refuses those on {host} (legacy = \"deny\" from {location}); to let it run, add to {}: [[policy.rule]] modules = [\"{module}\"] legacy = \"allow\"",
            policy.source_name()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn default_warns_and_rules_decide_per_module_and_host() {
        let d = legacy_decision(&Policy::default(), "setup", "web1");
        assert!(
            matches!(&d, LegacyDecision::Warn(m) if m.contains("not sandboxed") && m.contains("the default policy")),
            "{d:?}"
        );
        let p = Policy::parse(
            "[policy]\nlegacy = \"deny\"\n[[policy.rule]]\nmodules = [\"setup\"]\nlegacy = \"allow\"\n",
            Path::new("sandball.toml"),
        )
        .unwrap();
        assert_eq!(legacy_decision(&p, "setup", "web1"), LegacyDecision::Allow);
        match legacy_decision(&p, "apt", "web1") {
            LegacyDecision::Deny(m) => {
                assert!(m.contains("sandball.toml [policy] legacy"), "{m}");
                assert!(m.contains("modules = [\"apt\"] legacy = \"allow\""), "{m}");
            }
            other => panic!("{other:?}"),
        }
    }
}
