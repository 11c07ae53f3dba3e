//! Capability policy: what a module run is granted.
//!
//! Deny by default. In order, one place:
//!
//! 1. a built-in component gets what its manifest requests, resolved against the
//!    task's arguments (`file path=/tmp/x` → read-write on `/tmp/x`); a third-party
//!    component gets it only when a policy rule says `manifest = true`;
//! 2. the policy rules that apply to the module and host add their `grant`;
//! 3. the `capabilities:` keyword of the play, its blocks and the task, in that order,
//!    narrows (`only:`) or widens (`add:`, or a plain list) the grant, widening only
//!    as far as a rule's `allow` (or `grant`) goes — or anywhere when no policy file
//!    is in force;
//! 4. the rules' `deny` entries are taken out last;
//! 5. the rules' `limits` override the run's limits.
//!
//! - [`file`]: the policy file (rules, legacy setting, line numbers);
//! - [`cover`]: comparing, narrowing and subtracting capabilities;
//! - [`legacy`]: whether a legacy (non-component) module may run;
//! - [`imports`]: what a component imports and where that disagrees with its manifest;
//! - [`audit_log`]: the JSON-lines record of every module run.

pub mod audit_log;
pub mod cover;
pub mod file;
pub mod imports;
pub mod launchers;
pub mod legacy;

pub use file::{Legacy, Policy, Rule, Subject};
pub use legacy::{LegacyDecision, legacy_decision};

use sandball_wire::capability::{CapabilityRequest, Grant, Limits, ResolveError, climbs};
use sandball_wire::manifest::Manifest;
use serde_json::Value;

/// Errors building a grant or reading the policy.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// A manifest or task request referred to arguments in a way that cannot resolve.
    #[error("cannot resolve the capabilities of module {module}: {source}")]
    Resolve {
        /// Module name.
        module: String,
        /// The resolution error.
        source: ResolveError,
    },
    /// A limit setting is not a number.
    #[error("invalid limit: {0}")]
    Limit(String),
    /// The `capabilities:` keyword is malformed.
    #[error(
        "invalid `capabilities:`: {0} (expected a list like [{{kind: exec, program: /bin/ls}}, {{kind: fs, path: /srv, access: read, scope: tree}}], or a mapping with `add:` and/or `only:` lists)"
    )]
    Keyword(String),
    /// The keyword asks for more than the policy allows.
    #[error(
        "module {module} may not be granted {capability} by `capabilities:`: the policy ({file}) does not allow it; to allow it, add to {file}: [[policy.rule]] modules = [\"{module}\"] allow = [{entry}]"
    )]
    NotAllowed {
        /// Module name.
        module: String,
        /// The capability asked for.
        capability: String,
        /// The policy file.
        file: String,
        /// The capability as a TOML entry.
        entry: String,
    },
    /// A deny rule names something inside a wider grant.
    #[error(
        "module {module} cannot run: {location} denies {denied}, which lies inside its grant of {granted}, and a sandbox cannot open a directory with a hole in it; narrow the grant (`capabilities: {{only: [...]}}` or the policy's grant)"
    )]
    Carve {
        /// Module name.
        module: String,
        /// Where the deny entry is.
        location: String,
        /// The denied capability.
        denied: String,
        /// The grant it lies in.
        granted: String,
    },
    /// A granted path climbs above its start with `..`, so what it names depends on
    /// the node's home or working directory and no rule can be matched against it: a
    /// `~/..` path, or a relative one where the working directory is not known (an
    /// audit before the run). The executor anchors relative ones at the node's working
    /// directory ([`grant_for`]'s `workdir`).
    #[error(
        "module {module} cannot be granted {path}: the path climbs above {start} with `..` once normalised; write it as an absolute path"
    )]
    Climbs {
        /// Module name.
        module: String,
        /// The normalised path.
        path: String,
        /// Where it starts, in words.
        start: &'static str,
    },
    /// The policy file cannot be read or is malformed.
    #[error("policy file {file}: {message}")]
    File {
        /// File (and line).
        file: String,
        /// What is wrong.
        message: String,
    },
}

/// One `capabilities:` keyword (of a play, a block or a task), parsed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Adjustment {
    /// Capabilities to add (within what the policy allows).
    pub add: Vec<CapabilityRequest>,
    /// When given, the grant is narrowed to these.
    pub only: Option<Vec<CapabilityRequest>>,
}

/// Parses a `capabilities:` keyword (already templated): a list adds; a mapping may
/// say `add:` and `only:`.
pub fn keyword(value: &Value) -> Result<Adjustment, PolicyError> {
    let list = |v: &Value| -> Result<Vec<CapabilityRequest>, PolicyError> {
        serde_json::from_value(v.clone()).map_err(|e| PolicyError::Keyword(e.to_string()))
    };
    match value {
        Value::Array(_) => Ok(Adjustment {
            add: list(value)?,
            only: None,
        }),
        Value::Object(m) => {
            if let Some(k) = m.keys().find(|k| *k != "add" && *k != "only") {
                return Err(PolicyError::Keyword(format!("unknown key `{k}`")));
            }
            Ok(Adjustment {
                add: m.get("add").map(list).transpose()?.unwrap_or_default(),
                only: m.get("only").map(list).transpose()?,
            })
        }
        other => Err(PolicyError::Keyword(format!("got {other}"))),
    }
}

/// The grant for one run of a module with these (templated) arguments, under
/// `policy`, after the `capabilities:` keywords in `adjustments` (outermost first).
/// `workdir`, when known, is the node's working directory, where the module resolves
/// relative paths: those that climb above it (`../../shared/x`) are matched against
/// the rules as the absolute paths they name there ([`Grant::anchor_climbing`]), then
/// granted as written, for the shim to resolve at that same directory (which it then
/// tells the module, as for any relative path); without it they are refused
/// ([`PolicyError::Climbs`]).
pub fn grant_for(
    policy: &Policy,
    subject: &Subject<'_>,
    manifest: &Manifest,
    args: &Value,
    adjustments: &[Adjustment],
    limits: Limits,
    workdir: Option<&str>,
) -> Result<Grant, PolicyError> {
    let module = subject.module;
    let resolve = |source| PolicyError::Resolve {
        module: module.to_string(),
        source,
    };
    let args = canonical_args(manifest, args);
    // The climbing paths made absolute for the rules, and what they were.
    let anchored = std::cell::RefCell::new(Vec::new());
    let concrete = |reqs: &[CapabilityRequest]| -> Result<Vec<CapabilityRequest>, PolicyError> {
        let mut g = Grant::default();
        g.add_requests(reqs, &args).map_err(resolve)?;
        if let Some(dir) = workdir {
            anchored.borrow_mut().extend(g.anchor_climbing(dir));
        }
        Ok(g.to_requests())
    };
    let rules: Vec<&Rule> = policy.rules_for(subject).collect();
    let mut grant = Grant {
        limits: rules
            .iter()
            .filter_map(|r| r.limits)
            .fold(limits, |l, o| o.apply(l)),
        ..Grant::default()
    };
    if subject.builtin || rules.iter().any(|r| r.manifest) {
        grant
            .add_requests(&manifest.capabilities, &args)
            .map_err(resolve)?;
    }
    for r in &rules {
        grant.add_requests(&r.grant, &args).map_err(resolve)?;
    }
    if let Some(dir) = workdir {
        anchored.borrow_mut().extend(grant.anchor_climbing(dir));
    }
    for adj in adjustments {
        if let Some(only) = &adj.only {
            grant = cover::narrow(&grant, &concrete(only)?);
        }
        for cap in concrete(&adj.add)? {
            let allowed = policy.keyword_is_open()
                || rules.iter().any(|r| {
                    concrete(&r.allow)
                        .into_iter()
                        .chain(concrete(&r.grant))
                        .flatten()
                        .any(|c| cover::covers(&c, &cap))
                });
            if !allowed {
                return Err(PolicyError::NotAllowed {
                    module: module.to_string(),
                    capability: cap.to_string(),
                    file: policy.source_name(),
                    entry: toml_entry(&cap),
                });
            }
            grant
                .add_requests(std::slice::from_ref(&cap), &Value::Null)
                .map_err(resolve)?;
        }
    }
    let mut denied_fs = Vec::new();
    for r in &rules {
        let deny = concrete(&r.deny)?;
        grant = cover::subtract(&grant, &deny).map_err(|c| PolicyError::Carve {
            module: module.to_string(),
            location: policy.rule_location(r),
            denied: c.denied.to_string(),
            granted: c.granted.to_string(),
        })?;
        for d in deny {
            if let CapabilityRequest::Fs(f) = d
                && !denied_fs.contains(&f)
            {
                denied_fs.push(f);
            }
        }
    }
    if let Some(f) = grant.fs.iter().find(|f| climbs(&f.path)) {
        return Err(PolicyError::Climbs {
            module: module.to_string(),
            path: f.path.clone(),
            start: if f.path.starts_with('~') {
                "the home directory"
            } else {
                "the node's working directory, which is known only when the task runs,"
            },
        });
    }
    // Granted as written: the shim resolves them where the module does.
    for f in &mut grant.fs {
        if let Some((_, written)) = anchored.borrow().iter().find(|(a, _)| *a == f.path) {
            f.path = written.clone();
        }
    }
    // The node resolves symlinks the controller cannot see: it checks every opened
    // directory against the denied paths again.
    grant.deny = denied_fs;
    Ok(grant)
}

/// The arguments under their canonical names: `$path` in a manifest must see a value
/// given as `dest:` or `name:` when those are aliases of `path`.
fn canonical_args(manifest: &Manifest, args: &Value) -> Value {
    let Value::Object(given) = args else {
        return args.clone();
    };
    let mut out = given.clone();
    for (name, spec) in &manifest.argument_spec {
        if out.contains_key(name) {
            continue;
        }
        let alias_value = spec
            .aliases
            .iter()
            .chain(spec.deprecated_aliases.iter().map(|d| &d.name))
            .find_map(|a| given.get(a));
        // What the module will use: the value given under an alias, else the
        // argument's default.
        if let Some(v) = alias_value.or(spec.default.as_ref()) {
            out.insert(name.clone(), v.clone());
        }
    }
    Value::Object(out)
}

/// Default limits, from `SANDBALL_WALL_TIME_MS`, `SANDBALL_MEMORY_BYTES` and
/// `SANDBALL_OUTPUT_BYTES` where set.
pub fn limits_from_env() -> Result<Limits, PolicyError> {
    let mut limits = Limits::default();
    for (var, slot) in [
        ("SANDBALL_WALL_TIME_MS", &mut limits.wall_time_ms),
        ("SANDBALL_MEMORY_BYTES", &mut limits.memory_bytes),
        ("SANDBALL_OUTPUT_BYTES", &mut limits.output_bytes),
    ] {
        if let Ok(text) = std::env::var(var) {
            *slot = parse_limit(var, &text)?;
        }
    }
    Ok(limits)
}

/// A limit given as text (`var` names where it came from): a whole number from 0 to
/// 2^64-1, surrounding blanks allowed. Every such number is a valid limit: the shim's
/// arithmetic on limits saturates.
pub fn parse_limit(var: &str, text: &str) -> Result<u64, PolicyError> {
    text.trim().parse().map_err(|_| {
        PolicyError::Limit(format!(
            "{var}={text:?} is not a whole number from 0 to {}",
            u64::MAX
        ))
    })
}

/// The capability a shim denial names: `exec PROGRAM [ARGS…]`, `env NAME`,
/// `net ADDRESS`, or `fs ACCESS PATH` (ACCESS `read` or `read-write`).
pub fn denied_capability(capability: &str) -> CapabilityRequest {
    use sandball_wire::capability::{Access, ExecGrant, FsGrant, FsScope};
    let words: Vec<&str> = capability.split_whitespace().collect();
    let target = words.last().copied().unwrap_or_default().to_string();
    match words.first().copied() {
        Some("exec") => CapabilityRequest::Exec(ExecGrant {
            program: words.get(1).copied().unwrap_or_default().to_string(),
            args: (words.len() > 2).then(|| words[2..].iter().map(|w| w.to_string()).collect()),
        }),
        Some("env") => CapabilityRequest::Env { name: target },
        Some("net") => CapabilityRequest::Net {
            address: target,
            url: None,
        },
        _ => {
            let access = if words.contains(&"read") && !words.contains(&"read-write") {
                Access::Read
            } else {
                Access::ReadWrite
            };
            CapabilityRequest::Fs(FsGrant {
                path: target,
                ops: access.into(),
                scope: FsScope::Entry,
                create_parents: false,
                create_parents_if: None,
                fallback: None,
            })
        }
    }
}

/// How a denied capability can be granted to `module`, for error messages: the
/// `capabilities:` entry, and the policy line it needs (or the deny line that
/// refuses it).
pub fn how_to_grant(policy: &Policy, subject: &Subject<'_>, capability: &str) -> String {
    let cap = denied_capability(capability);
    if let Some(rule) = policy.rules_for(subject).find(|r| {
        r.deny
            .iter()
            .any(|d| cover::covers(d, &cap) || cover::covers(&cap, d))
    }) {
        return format!(
            "remove the deny entry at {} (the policy refuses it)",
            policy.rule_location(rule)
        );
    }
    let task = format!("add `capabilities: [{}]` to the task", yaml_entry(&cap));
    let rule = format!(
        "[[policy.rule]] modules = [\"{}\"] grant = [{}]",
        subject.module,
        toml_entry(&cap)
    );
    if policy.keyword_is_open() {
        format!("{task}, or to {} {rule}", policy.source_name())
    } else {
        format!(
            "add to {} {rule} (or `allow` instead of `grant`, and {task})",
            policy.source_name()
        )
    }
}

/// Fields of a capability as written (JSON object).
fn fields(cap: &CapabilityRequest) -> Vec<(String, Value)> {
    match serde_json::to_value(cap) {
        Ok(Value::Object(m)) => m.into_iter().collect(),
        _ => Vec::new(),
    }
}

/// A capability as a YAML flow mapping: `{kind: fs, path: /x, access: read}`.
pub fn yaml_entry(cap: &CapabilityRequest) -> String {
    fn plain(s: &str) -> bool {
        !s.is_empty()
            && !s.starts_with(['*', '?', ':'])
            && s != "-"
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "/._-~$+=:*?".contains(c))
            && !s.contains(": ")
    }
    fn scalar(v: &Value) -> String {
        match v {
            Value::String(s) if plain(s) => s.clone(),
            Value::String(s) => format!("'{}'", s.replace('\'', "''")),
            Value::Array(items) => format!(
                "[{}]",
                items.iter().map(scalar).collect::<Vec<_>>().join(", ")
            ),
            other => other.to_string(),
        }
    }
    let parts: Vec<String> = fields(cap)
        .iter()
        .map(|(k, v)| format!("{k}: {}", scalar(v)))
        .collect();
    format!("{{{}}}", parts.join(", "))
}

/// A capability as a TOML inline table: `{kind = "fs", path = "/x", access = "read"}`.
pub fn toml_entry(cap: &CapabilityRequest) -> String {
    let parts: Vec<String> = fields(cap)
        .iter()
        .map(|(k, v)| format!("{k} = {v}"))
        .collect();
    format!("{{{}}}", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sandball_wire::capability::{Access, FsScope};
    use serde_json::json;
    use std::path::Path;

    fn manifest() -> Manifest {
        serde_json::from_value(json!({
            "name": "file",
            "capabilities": [{"kind": "fs", "path": "$path", "access": "read-write"}]
        }))
        .unwrap()
    }

    fn subject(builtin: bool) -> Subject<'static> {
        Subject {
            module: "file",
            sha256: None,
            builtin,
            host: Some("web1"),
        }
    }

    fn grant(
        policy: &Policy,
        builtin: bool,
        args: Value,
        adjustments: &[Adjustment],
    ) -> Result<Grant, PolicyError> {
        grant_for(
            policy,
            &subject(builtin),
            &manifest(),
            &args,
            adjustments,
            Limits::default(),
            None,
        )
    }

    fn policy(text: &str) -> Policy {
        Policy::parse(text, Path::new("sandball.toml")).unwrap()
    }

    #[test]
    fn built_ins_get_their_manifest_scoped_to_arguments_and_nothing_else() {
        let g = grant(&Policy::default(), true, json!({"path": "/tmp/x"}), &[]).unwrap();
        assert_eq!(g.fs.len(), 1);
        assert_eq!(g.fs[0].path, "/tmp/x");
        assert_eq!(g.fs[0].access(), Access::ReadWrite);
        assert_eq!(g.fs[0].scope, FsScope::Entry);
        assert!(g.exec.is_empty() && g.env.is_empty() && g.net.is_empty() && !g.dns);
    }

    #[test]
    fn third_party_components_get_nothing_unless_a_rule_says_so() {
        let args = json!({"path": "/tmp/x"});
        assert!(
            grant(&Policy::default(), false, args.clone(), &[])
                .unwrap()
                .is_empty()
        );
        let p = policy("[[policy.rule]]\nmodules = [\"file\"]\nmanifest = true\n");
        assert_eq!(grant(&p, false, args.clone(), &[]).unwrap().fs.len(), 1);
        let p = policy("[[policy.rule]]\nmodules = [\"other\"]\nmanifest = true\n");
        assert!(grant(&p, false, args, &[]).unwrap().is_empty());
    }

    #[test]
    fn aliases_resolve_to_the_names_manifests_refer_to() {
        let m: Manifest = serde_json::from_value(json!({
            "name": "file",
            "argument_spec": {"path": {"type": "path", "aliases": ["dest", "name"]}},
            "capabilities": [{"kind": "fs", "path": "$path", "access": "read-write"}]
        }))
        .unwrap();
        let g = grant_for(
            &Policy::default(),
            &subject(true),
            &m,
            &json!({"dest": "/srv/x"}),
            &[],
            Limits::default(),
            None,
        )
        .unwrap();
        assert_eq!(g.fs[0].path, "/srv/x");
    }

    #[test]
    fn a_default_is_granted_as_the_module_will_use_it() {
        let m: Manifest = serde_json::from_value(json!({
            "name": "shell",
            "argument_spec": {"executable": {"type": "str", "default": "/bin/sh"}},
            "capabilities": [{"kind": "exec", "program": "$executable"}]
        }))
        .unwrap();
        let program = |args: Value| {
            grant_for(
                &Policy::default(),
                &subject(true),
                &m,
                &args,
                &[],
                Limits::default(),
                None,
            )
            .unwrap()
            .exec
            .iter()
            .map(|e| e.program.clone())
            .collect::<Vec<_>>()
        };
        assert_eq!(program(json!({})), ["/bin/sh"]);
        assert_eq!(program(json!({"executable": "/bin/bash"})), ["/bin/bash"]);
    }

    #[test]
    fn the_keyword_widens_freely_without_a_policy_file_and_within_allow_with_one() {
        let add = keyword(&json!([{"kind": "exec", "program": "/bin/ls"}])).unwrap();
        let args = json!({"path": "/tmp/x"});
        let g = grant(
            &Policy::default(),
            true,
            args.clone(),
            std::slice::from_ref(&add),
        )
        .unwrap();
        assert_eq!(g.exec[0].program, "/bin/ls");
        let strict = policy("[policy]\n");
        let e = grant(&strict, true, args.clone(), std::slice::from_ref(&add)).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("exec /bin/ls") && msg.contains("sandball.toml"),
            "{msg}"
        );
        assert!(
            msg.contains(r#"allow = [{kind = "exec", program = "/bin/ls"}]"#),
            "{msg}"
        );
        let allowing =
            policy("[[policy.rule]]\nallow = [{kind = \"exec\", program = \"/bin/*\"}]\n");
        let g = grant(&allowing, true, args, &[add]).unwrap();
        assert_eq!(g.exec.len(), 1);
        assert!(keyword(&json!({"exec": "x"})).is_err());
        assert!(keyword(&json!("x")).is_err());
    }

    #[test]
    fn only_narrows_and_deny_takes_out_last() {
        let args = json!({"path": "/tmp/x"});
        let only = keyword(&json!({"only": [{"kind": "fs", "path": "/tmp/x", "access": "read"}]}))
            .unwrap();
        let g = grant(&Policy::default(), true, args.clone(), &[only]).unwrap();
        assert_eq!(g.fs[0].access(), Access::Read);
        let none = keyword(&json!({"only": []})).unwrap();
        assert!(
            grant(&Policy::default(), true, args.clone(), &[none])
                .unwrap()
                .is_empty()
        );
        let p = policy(
            "[[policy.rule]]\nhosts = \"web1\"\ndeny = [{kind = \"fs\", path = \"/tmp\", ops = [\"remove\"], recursive = true}]\n",
        );
        let g = grant(&p, true, args, &[]).unwrap();
        assert!(!g.fs[0].ops.remove && g.fs[0].ops.write);
        let p = policy(
            "[[policy.rule]]\ndeny = [{kind = \"fs\", path = \"/tmp/x/secret\", access = \"read\"}]\n",
        );
        let mut tree = manifest();
        tree.capabilities = vec![
            serde_json::from_value(
                json!({"kind": "fs", "path": "$path", "access": "read", "scope": "tree"}),
            )
            .unwrap(),
        ];
        let e = grant_for(
            &p,
            &subject(true),
            &tree,
            &json!({"path": "/tmp/x"}),
            &[],
            Limits::default(),
            None,
        )
        .unwrap_err();
        assert!(e.to_string().contains("sandball.toml:1"), "{e}");
    }

    #[test]
    fn paths_climbing_above_the_working_directory_are_granted_where_they_lead() {
        let args = json!({"path": "../../shared/x"});
        let at = |p: &Policy, workdir| {
            grant_for(
                p,
                &subject(true),
                &manifest(),
                &args,
                &[],
                Limits::default(),
                workdir,
            )
        };
        let open = Policy::default();
        let e = at(&open, None).unwrap_err();
        assert!(
            e.to_string().contains("known only when the task runs"),
            "{e}"
        );
        // Granted as written, once the rules have seen where it leads.
        let g = at(&open, Some("/home/ann")).unwrap();
        assert_eq!(g.fs[0].path, "../../shared/x");
        // Rules see the path the module opens.
        let denying = policy(
            "[[policy.rule]]\ndeny = [{kind = \"fs\", path = \"/shared/x\", access = \"read-write\"}]\n",
        );
        let denied = at(&denying, Some("/home/ann"));
        assert!(
            denied.map_or(true, |g| g.fs.iter().all(|f| f.path != "/shared/x")),
            "a deny rule on /shared/x leaves no grant there"
        );
        // `~/..` depends on the user the module runs as: still refused.
        let home = json!({"path": "~/../x"});
        let e = grant_for(
            &open,
            &subject(true),
            &manifest(),
            &home,
            &[],
            Limits::default(),
            Some("/home/ann"),
        )
        .unwrap_err();
        assert!(e.to_string().contains("the home directory"), "{e}");
    }

    #[test]
    fn rule_limits_apply() {
        let p = policy("[[policy.rule]]\nlimits = {wall_time_ms = 1000}\n");
        let g = grant(&p, true, json!({}), &[]).unwrap();
        assert_eq!(g.limits.wall_time_ms, 1000);
        assert_eq!(g.limits.memory_bytes, Limits::default().memory_bytes);
    }

    #[test]
    fn denial_hints_name_the_keyword_the_policy_line_and_the_least_access() {
        let open = Policy::default();
        let s = subject(true);
        let hint = how_to_grant(&open, &s, "exec /bin/sh");
        assert!(
            hint.starts_with("add `capabilities: [{kind: exec, program: /bin/sh}]` to the task"),
            "{hint}"
        );
        assert!(
            hint.contains(r#"[[policy.rule]] modules = ["file"] grant = [{kind = "exec", program = "/bin/sh"}]"#),
            "{hint}"
        );
        assert!(
            how_to_grant(&open, &s, "fs read /etc/hostname")
                .contains("{kind: fs, path: /etc/hostname, access: read}")
        );
        assert!(
            how_to_grant(&open, &s, "fs read-write /srv/x")
                .contains("{kind: fs, path: /srv/x, access: read-write}")
        );
        assert!(
            how_to_grant(&open, &s, "exec ls -l /")
                .contains("{kind: exec, program: ls, args: [-l, /]}")
        );
        assert!(
            how_to_grant(&open, &s, "net 127.0.0.1:22")
                .contains("{kind: net, address: 127.0.0.1:22}")
        );
        let p = policy(
            "[policy]\n\n[[policy.rule]]\ndeny = [{kind = \"exec\", program = \"/bin/*\"}]\n",
        );
        let hint = how_to_grant(&p, &s, "exec /bin/sh");
        assert!(hint.contains("sandball.toml:3"), "{hint}");
    }

    #[test]
    fn limits_parse_every_whole_number_and_refuse_the_rest() {
        // A small deterministic generator (splitmix64): numbers near the edges and
        // strings of digits, signs, blanks and junk.
        let mut state = 0x1d_u64;
        let mut next = move || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        for _ in 0..20_000 {
            let n = match next() % 4 {
                0 => u64::MAX - next() % 4,
                1 => next() % 1000,
                2 => 1u64 << (next() % 64),
                _ => next(),
            };
            assert_eq!(
                parse_limit("SANDBALL_OUTPUT_BYTES", &format!(" {n}\n")).unwrap(),
                n
            );
            let alphabet = b"0123456789 -+_.xe\t\xc3\xa9";
            let len = (next() % 24) as usize;
            let bytes: Vec<u8> = (0..len)
                .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                .collect();
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let trimmed = text.trim();
            let is_number = !trimmed.is_empty()
                && trimmed
                    .trim_start_matches('+')
                    .bytes()
                    .all(|b| b.is_ascii_digit())
                && trimmed.matches('+').count() <= 1
                && trimmed.len() > usize::from(trimmed.starts_with('+'))
                && trimmed
                    .trim_start_matches('+')
                    .parse::<u128>()
                    .is_ok_and(|v| v <= u128::from(u64::MAX));
            match parse_limit("SANDBALL_WALL_TIME_MS", &text) {
                Ok(v) => {
                    assert!(is_number, "{text:?} was taken as {v}");
                    assert_eq!(
                        u128::from(v),
                        trimmed.trim_start_matches('+').parse::<u128>().unwrap()
                    );
                }
                Err(e) => {
                    assert!(!is_number, "{text:?} was refused");
                    let msg = e.to_string();
                    assert!(
                        msg.contains("SANDBALL_WALL_TIME_MS=")
                            && msg.contains("not a whole number"),
                        "{msg}"
                    );
                }
            }
        }
        // One past the top is refused, not wrapped.
        assert!(parse_limit("X", "18446744073709551616").is_err());
        assert!(parse_limit("X", "-1").is_err());
    }
}
