//! The capability vocabulary: what a module may touch on the node.
//!
//! A manifest *requests* capabilities in terms of the module's arguments
//! ([`CapabilityRequest`], e.g. read-write on `$path`); the controller *resolves* the
//! requests against one task's arguments into a concrete [`Grant`], and the shim builds
//! the module's WASI context from that grant and nothing else.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

/// How much of a filesystem location a module may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Access {
    /// Read files and list directories.
    Read,
    /// Read, write, create, rename and remove.
    ReadWrite,
}

/// Which part of the filesystem a path names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FsScope {
    /// The entry itself: the directory that holds it is opened, so the entry can be
    /// created, replaced or removed (and, if it is a directory, everything below it).
    /// When that directory does not exist yet, its nearest existing ancestor is opened.
    #[default]
    Entry,
    /// The path is a directory; it and everything below it.
    Tree,
}

/// A capability as a manifest requests it. Strings may refer to module arguments:
/// `$name` is the argument's value (each element when it is a list), `$name[0]` its
/// first element (a string argument is split like a shell command line first).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum CapabilityRequest {
    /// Filesystem access to a path.
    Fs {
        /// Absolute path or argument reference.
        path: String,
        /// Read or read-write.
        access: Access,
        /// Entry (the default) or whole tree.
        #[serde(default)]
        scope: FsScope,
    },
    /// Running a program on the node through the sandball host interface.
    Exec {
        /// Program name or path, or an argument reference such as `$argv[0]`.
        program: String,
    },
    /// Reading one environment variable of the node.
    Env {
        /// Variable name.
        name: String,
    },
    /// Opening network connections to `host:port`.
    Net {
        /// `host:port` pattern or argument reference.
        address: String,
    },
}

/// One concrete filesystem grant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FsGrant {
    /// Path on the node; relative paths and `~` are resolved by the shim against the
    /// home directory of the user it runs as.
    pub path: String,
    /// Read or read-write.
    pub access: Access,
    /// Entry or tree.
    pub scope: FsScope,
}

/// Resource limits for one module run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// Most linear memory the module may hold, in bytes.
    pub memory_bytes: u64,
    /// Longest wall-clock time the module may run, in milliseconds.
    pub wall_time_ms: u64,
    /// Most bytes the module may write to stdout (and, separately, stderr).
    pub output_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory_bytes: 512 << 20,
            wall_time_ms: 30 * 60 * 1000,
            output_bytes: 64 << 20,
        }
    }
}

/// Everything one module run may use. Built up from nothing: an empty grant allows
/// only clocks and random numbers.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    /// Filesystem locations.
    #[serde(default)]
    pub fs: Vec<FsGrant>,
    /// Programs that may be run (names are looked up in the node's `PATH`).
    #[serde(default)]
    pub exec: Vec<String>,
    /// Environment variables passed through from the node.
    #[serde(default)]
    pub env: Vec<String>,
    /// `host:port` patterns that may be connected to.
    #[serde(default)]
    pub net: Vec<String>,
    /// Resource limits.
    #[serde(default)]
    pub limits: Limits,
}

/// Error resolving a request's argument reference.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ResolveError {
    /// The reference is not `$name` or `$name[N]`.
    #[error("bad argument reference {0:?} (expected $name or $name[N])")]
    BadReference(String),
    /// A string argument could not be split like a command line.
    #[error("argument {name} cannot be split into words (unbalanced quotes)")]
    Unsplittable {
        /// The argument name.
        name: String,
    },
}

/// Expands one request string against module arguments. A literal yields itself;
/// a reference to a missing or null argument yields nothing.
pub fn expand(reference: &str, args: &Value) -> Result<Vec<String>, ResolveError> {
    let Some(rest) = reference.strip_prefix('$') else {
        return Ok(vec![reference.to_string()]);
    };
    let (name, index) = match rest.split_once('[') {
        None => (rest, None),
        Some((name, idx)) => {
            let n = idx
                .strip_suffix(']')
                .and_then(|i| i.parse::<usize>().ok())
                .ok_or_else(|| ResolveError::BadReference(reference.to_string()))?;
            (name, Some(n))
        }
    };
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(ResolveError::BadReference(reference.to_string()));
    }
    let words: Vec<String> = match args.get(name) {
        None | Some(Value::Null) => return Ok(vec![]),
        Some(Value::Array(items)) => items.iter().map(scalar_text).collect(),
        Some(Value::String(s)) if index.is_some() => {
            shlex::split(s).ok_or_else(|| ResolveError::Unsplittable {
                name: name.to_string(),
            })?
        }
        Some(v) => vec![scalar_text(v)],
    };
    Ok(match index {
        None => words,
        Some(i) => words.into_iter().nth(i).into_iter().collect(),
    })
}

fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

impl Grant {
    /// Resolves manifest requests against one task's arguments and adds the result to
    /// this grant, without duplicates.
    pub fn add_requests(
        &mut self,
        requests: &[CapabilityRequest],
        args: &Value,
    ) -> Result<(), ResolveError> {
        for req in requests {
            match req {
                CapabilityRequest::Fs {
                    path,
                    access,
                    scope,
                } => {
                    for p in expand(path, args)? {
                        if p.is_empty() {
                            continue;
                        }
                        let g = FsGrant {
                            path: p,
                            access: *access,
                            scope: *scope,
                        };
                        if !self.fs.contains(&g) {
                            self.fs.push(g);
                        }
                    }
                }
                CapabilityRequest::Exec { program } => {
                    push_unique(&mut self.exec, expand(program, args)?)
                }
                CapabilityRequest::Env { name } => push_unique(&mut self.env, expand(name, args)?),
                CapabilityRequest::Net { address } => {
                    push_unique(&mut self.net, expand(address, args)?)
                }
            }
        }
        Ok(())
    }
}

fn push_unique(list: &mut Vec<String>, items: Vec<String>) {
    for i in items {
        if !i.is_empty() && !list.contains(&i) {
            list.push(i);
        }
    }
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Access::Read => "read",
            Access::ReadWrite => "read-write",
        })
    }
}

impl fmt::Display for FsGrant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.scope {
            FsScope::Entry => write!(f, "fs {} on {} (its directory)", self.access, self.path),
            FsScope::Tree => write!(f, "fs {} on {} (whole tree)", self.access, self.path),
        }
    }
}

impl fmt::Display for CapabilityRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CapabilityRequest::Fs {
                path,
                access,
                scope,
            } => write!(
                f,
                "{}",
                FsGrant {
                    path: path.clone(),
                    access: *access,
                    scope: *scope
                }
            ),
            CapabilityRequest::Exec { program } => write!(f, "exec {program}"),
            CapabilityRequest::Env { name } => write!(f, "env {name}"),
            CapabilityRequest::Net { address } => write!(f, "net {address}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn expands_literals_arguments_lists_and_first_words() {
        let args = json!({"path": "/tmp/x", "argv": ["/bin/echo", "hi"], "cmd": "'/usr/bin/my prog' -x", "n": null});
        assert_eq!(expand("/proc", &args).unwrap(), vec!["/proc"]);
        assert_eq!(expand("$path", &args).unwrap(), vec!["/tmp/x"]);
        assert_eq!(expand("$argv[0]", &args).unwrap(), vec!["/bin/echo"]);
        assert_eq!(expand("$cmd[0]", &args).unwrap(), vec!["/usr/bin/my prog"]);
        assert!(expand("$missing", &args).unwrap().is_empty());
        assert!(expand("$n[0]", &args).unwrap().is_empty());
        assert_eq!(
            expand("$argv[x]", &args),
            Err(ResolveError::BadReference("$argv[x]".into()))
        );
    }

    #[test]
    fn grants_are_built_from_requests_without_duplicates() {
        let reqs = vec![
            CapabilityRequest::Fs {
                path: "$path".into(),
                access: Access::ReadWrite,
                scope: FsScope::Entry,
            },
            CapabilityRequest::Fs {
                path: "$path".into(),
                access: Access::ReadWrite,
                scope: FsScope::Entry,
            },
            CapabilityRequest::Exec {
                program: "$argv[0]".into(),
            },
        ];
        let mut g = Grant::default();
        g.add_requests(&reqs, &json!({"path": "/tmp/x", "argv": ["ls"]}))
            .unwrap();
        assert_eq!(g.fs.len(), 1);
        assert_eq!(g.exec, vec!["ls"]);
        assert!(g.env.is_empty() && g.net.is_empty());
    }

    #[test]
    fn requests_read_from_manifest_json() {
        let r: CapabilityRequest =
            serde_json::from_value(json!({"kind": "fs", "path": "$src", "access": "read"}))
                .unwrap();
        assert_eq!(
            r,
            CapabilityRequest::Fs {
                path: "$src".into(),
                access: Access::Read,
                scope: FsScope::Entry
            }
        );
    }
}
