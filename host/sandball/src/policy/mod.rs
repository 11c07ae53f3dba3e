//! Capability policy: what a module run is granted.
//!
//! Deny by default. A built-in component gets what its manifest requests, resolved
//! against the task's arguments (e.g. `file path=/tmp/x` → read-write on `/tmp/x`'s
//! directory), plus what the task's `capabilities:` keyword adds explicitly; nothing
//! else. Everything a grant holds is built here, visibly, in one place.

use sandball_wire::capability::{CapabilityRequest, Grant, Limits, ResolveError};
use sandball_wire::manifest::Manifest;
use serde_json::Value;

/// Errors building a grant.
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
    /// The task's `capabilities:` keyword is malformed.
    #[error(
        "invalid `capabilities:` on the task: {0} (expected a list like [{{kind: exec, program: /bin/ls}}, {{kind: fs, path: /srv, access: read, scope: tree}}])"
    )]
    Keyword(String),
}

/// Parses a task's `capabilities:` keyword (already templated).
pub fn task_requests(value: &Value) -> Result<Vec<CapabilityRequest>, PolicyError> {
    serde_json::from_value(value.clone()).map_err(|e| PolicyError::Keyword(e.to_string()))
}

/// The grant for one run of a module with these (templated) arguments.
pub fn grant_for(
    manifest: &Manifest,
    args: &Value,
    task_requests: &[CapabilityRequest],
    limits: Limits,
) -> Result<Grant, PolicyError> {
    let mut grant = Grant {
        limits,
        ..Grant::default()
    };
    let resolve = |source| PolicyError::Resolve {
        module: manifest.name.clone(),
        source,
    };
    let args = canonical_args(manifest, args);
    grant
        .add_requests(&manifest.capabilities, &args)
        .map_err(resolve)?;
    grant.add_requests(task_requests, &args).map_err(resolve)?;
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
        if let Some(v) = alias_value {
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
            *slot = text
                .trim()
                .parse()
                .map_err(|_| PolicyError::Limit(format!("{var}={text} is not a whole number")))?;
        }
    }
    Ok(limits)
}

/// How a denied capability can be granted, for error messages. `capability` is the
/// shim's description: `exec PROGRAM [ARGS…]`, `env NAME`, `net ADDRESS`, or
/// `fs ACCESS PATH` (ACCESS `read` or `read-write`).
pub fn how_to_grant(capability: &str) -> String {
    let words: Vec<&str> = capability.split_whitespace().collect();
    let target = words.last().copied().unwrap_or_default();
    let entry = match words.first().copied() {
        Some("exec") if words.len() > 2 => format!(
            "{{kind: exec, program: {}, args: [{}]}}",
            words[1],
            words[2..].join(", ")
        ),
        Some("exec") => format!("{{kind: exec, program: {target}}}"),
        Some("env") => format!("{{kind: env, name: {target}}}"),
        Some("net") => format!("{{kind: net, address: {target}}}"),
        _ => {
            let access = if words.contains(&"read") && !words.contains(&"read-write") {
                "read"
            } else {
                "read-write"
            };
            format!("{{kind: fs, path: {target}, access: {access}}}")
        }
    };
    format!("add `capabilities: [{entry}]` to the task")
}

#[cfg(test)]
mod tests {
    use super::*;
    use sandball_wire::capability::{Access, FsScope};
    use serde_json::json;

    fn manifest() -> Manifest {
        serde_json::from_value(json!({
            "name": "file",
            "capabilities": [{"kind": "fs", "path": "$path", "access": "read-write"}]
        }))
        .unwrap()
    }

    #[test]
    fn manifest_requests_are_scoped_to_arguments_and_nothing_else() {
        let g = grant_for(
            &manifest(),
            &json!({"path": "/tmp/x"}),
            &[],
            Limits::default(),
        )
        .unwrap();
        assert_eq!(g.fs.len(), 1);
        assert_eq!(g.fs[0].path, "/tmp/x");
        assert_eq!(g.fs[0].access(), Access::ReadWrite);
        assert_eq!(g.fs[0].scope, FsScope::Entry);
        assert!(g.exec.is_empty() && g.env.is_empty() && g.net.is_empty());
    }

    #[test]
    fn aliases_resolve_to_the_names_manifests_refer_to() {
        let m: Manifest = serde_json::from_value(json!({
            "name": "file",
            "argument_spec": {"path": {"type": "path", "aliases": ["dest", "name"]}},
            "capabilities": [{"kind": "fs", "path": "$path", "access": "read-write"}]
        }))
        .unwrap();
        let g = grant_for(&m, &json!({"dest": "/srv/x"}), &[], Limits::default()).unwrap();
        assert_eq!(g.fs[0].path, "/srv/x");
    }

    #[test]
    fn the_task_keyword_adds_explicit_grants() {
        let extra = task_requests(&json!([{"kind": "exec", "program": "/bin/ls"}])).unwrap();
        let g = grant_for(
            &manifest(),
            &json!({"path": "/tmp/x"}),
            &extra,
            Limits::default(),
        )
        .unwrap();
        assert_eq!(g.exec[0].program, "/bin/ls");
        assert!(task_requests(&json!({"exec": "x"})).is_err());
    }

    #[test]
    fn denial_hints_name_the_keyword_and_the_least_access() {
        assert_eq!(
            how_to_grant("exec /bin/sh"),
            "add `capabilities: [{kind: exec, program: /bin/sh}]` to the task"
        );
        assert_eq!(
            how_to_grant("fs read /etc/hostname"),
            "add `capabilities: [{kind: fs, path: /etc/hostname, access: read}]` to the task"
        );
        assert_eq!(
            how_to_grant("fs read-write /srv/x"),
            "add `capabilities: [{kind: fs, path: /srv/x, access: read-write}]` to the task"
        );
    }
}
