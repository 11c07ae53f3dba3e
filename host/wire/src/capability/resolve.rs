//! Requests resolved against one task's arguments: `$name`, `$name[N]`, `$name[N:]`
//! and braced references expanded into words, and the words added to a [`Grant`].

use super::{CapabilityRequest, ExecGrant, FsGrant, Grant, ParentsIf, normalize_path, url_peer};
use sandball_pycompat::shlex;
use serde_json::Value;

/// Error resolving a request's argument reference.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ResolveError {
    /// The reference is not `$name`, `$name[N]` or `$name[N:]`.
    #[error("bad argument reference {0:?} (expected $name, $name[N] or $name[N:])")]
    BadReference(String),
    /// A string argument could not be split like a command line.
    #[error("argument {name} cannot be split into words (unbalanced quotes)")]
    Unsplittable {
        /// The argument name.
        name: String,
    },
}

/// Which words of an argument a reference takes.
enum Index {
    All,
    One(usize),
    From(usize),
}

/// Expands one request string against module arguments. A literal yields itself;
/// a reference to a missing or null argument yields nothing. A reference may go on
/// with a path below it (`$fact_path/*.fact`): each word then gets it.
pub fn expand(reference: &str, args: &Value) -> Result<Vec<String>, ResolveError> {
    if reference.contains("${") {
        return expand_joined(reference, args);
    }
    let Some(rest) = reference.strip_prefix('$') else {
        return Ok(vec![reference.to_string()]);
    };
    if let Some((name, below)) = rest.split_once('/')
        && !name.contains('[')
    {
        return Ok(expand(&format!("${name}"), args)?
            .into_iter()
            .map(|word| format!("{}/{below}", word.trim_end_matches('/')))
            .collect());
    }
    let bad = || ResolveError::BadReference(reference.to_string());
    let (name, index) = match rest.split_once('[') {
        None => (rest, Index::All),
        Some((name, idx)) => {
            let idx = idx.strip_suffix(']').ok_or_else(bad)?;
            let index = match idx.strip_suffix(':') {
                Some(from) => Index::From(from.parse().map_err(|_| bad())?),
                None => Index::One(idx.parse().map_err(|_| bad())?),
            };
            (name, index)
        }
    };
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(bad());
    }
    let words: Vec<String> = match args.get(name) {
        None | Some(Value::Null) => return Ok(vec![]),
        Some(Value::Array(items)) => items.iter().map(scalar_text).collect(),
        Some(Value::String(s)) if !matches!(index, Index::All) => {
            shlex::split(s).map_err(|_| ResolveError::Unsplittable {
                name: name.to_string(),
            })?
        }
        Some(v) => vec![scalar_text(v)],
    };
    Ok(match index {
        Index::All => words,
        Index::One(i) => words.into_iter().nth(i).into_iter().collect(),
        Index::From(i) => words.into_iter().skip(i).collect(),
    })
}

/// Expands a string joining braced references with literal text between them
/// (`${host}:${port}`): each `${ref}` stands for what `$ref` expands to, and the string
/// yields one text per combination of their words; nothing when any reference yields
/// nothing (a missing or null argument). After a `/`, an absolute word replaces what
/// comes before it, as a path joined to a directory does (`/etc/cron.d/${file}`).
fn expand_joined(template: &str, args: &Value) -> Result<Vec<String>, ResolveError> {
    let bad = || ResolveError::BadReference(template.to_string());
    let mut out = vec![String::new()];
    let mut rest = template;
    while let Some(start) = rest.find("${") {
        let (literal, after) = rest.split_at(start);
        let end = after.find('}').ok_or_else(bad)?;
        let inner = &after[2..end];
        if inner.is_empty() || inner.contains('/') || inner.contains('$') {
            return Err(bad());
        }
        let words = expand(&format!("${inner}"), args)?;
        if words.is_empty() {
            return Ok(vec![]);
        }
        out = out
            .iter()
            .flat_map(|head| {
                words.iter().map(move |w| {
                    // A path joined to a directory: an absolute one stands alone.
                    if literal.ends_with('/') && w.starts_with('/') {
                        w.clone()
                    } else {
                        format!("{head}{literal}{w}")
                    }
                })
            })
            .collect();
        rest = &after[end + 1..];
    }
    if rest.contains('$') {
        return Err(bad());
    }
    Ok(out
        .into_iter()
        .map(|head| format!("{head}{rest}"))
        .collect())
}

fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

impl CapabilityRequest {
    /// Whether the request refers to module arguments (its grant depends on them).
    pub fn refers_to_arguments(&self) -> bool {
        let refers = |s: &str| s.starts_with('$') || s.contains("${");
        match self {
            CapabilityRequest::Fs(f) => refers(&f.path),
            CapabilityRequest::Exec(e) => {
                refers(&e.program) || e.args.iter().flatten().any(|a| refers(a))
            }
            CapabilityRequest::Env { name } => refers(name),
            CapabilityRequest::Net { address, url } => {
                refers(address) || url.as_deref().is_some_and(refers)
            }
            CapabilityRequest::Dns => false,
        }
    }
}

impl Grant {
    /// Resolves requests against one task's arguments and adds the result to this
    /// grant, without duplicates.
    pub fn add_requests(
        &mut self,
        requests: &[CapabilityRequest],
        args: &Value,
    ) -> Result<(), ResolveError> {
        for req in requests {
            match req {
                CapabilityRequest::Fs(fs) => {
                    let mut paths = expand(&fs.path, args)?;
                    paths.retain(|p| !p.is_empty());
                    if paths.is_empty()
                        && let Some(place) = &fs.fallback
                    {
                        paths.push(place.clone());
                    }
                    for p in paths {
                        let g = FsGrant {
                            path: normalize_path(&p),
                            ops: fs.ops,
                            scope: fs.scope,
                            create_parents: fs.create_parents
                                && fs.create_parents_if.as_deref().is_none_or(|c| {
                                    ParentsIf::parse(c).is_some_and(|c| c.holds(args))
                                }),
                            create_parents_if: None,
                            fallback: None,
                        };
                        if !self.fs.contains(&g) {
                            self.fs.push(g);
                        }
                    }
                }
                CapabilityRequest::Exec(e) => {
                    let args_pattern = match &e.args {
                        None => None,
                        Some(patterns) => {
                            let mut out = Vec::new();
                            let mut missing = false;
                            for p in patterns {
                                let words = expand(p, args)?;
                                // A braced reference to a missing argument: no grant.
                                missing |= words.is_empty() && p.contains("${");
                                out.extend(words);
                            }
                            if missing {
                                continue;
                            }
                            Some(out)
                        }
                    };
                    for program in expand(&e.program, args)? {
                        let g = ExecGrant {
                            program,
                            args: args_pattern.clone(),
                        };
                        if !g.program.is_empty() && !self.exec.contains(&g) {
                            self.exec.push(g);
                        }
                    }
                }
                CapabilityRequest::Env { name } => push_unique(&mut self.env, expand(name, args)?),
                CapabilityRequest::Net { address, url } => {
                    push_unique(&mut self.net, expand(address, args)?);
                    if let Some(url) = url {
                        let peers = expand(url, args)?
                            .iter()
                            .filter_map(|u| url_peer(u))
                            .collect();
                        push_unique(&mut self.net, peers);
                    }
                }
                CapabilityRequest::Dns => self.dns = true,
            }
        }
        Ok(())
    }

    /// Makes each relative path that climbs above its start once normalised
    /// (`../../shared/x`) absolute from `workdir`, the node's working directory where
    /// the module resolves it, normalised lexically as the shim normalises grants
    /// (`/home/ann` and `../../shared/x` give `/shared/x`), so that rules can be
    /// matched against the place it leads to. Returns each path made absolute with the
    /// relative one it was. `~/..` paths stay as they are (they depend on the home of
    /// the user the module runs as).
    pub fn anchor_climbing(&mut self, workdir: &str) -> Vec<(String, String)> {
        let mut anchored = Vec::new();
        for fs in &mut self.fs {
            if super::climbs(&fs.path) && !fs.path.starts_with('~') {
                let absolute =
                    normalize_path(&format!("{}/{}", workdir.trim_end_matches('/'), fs.path));
                anchored.push((absolute.clone(), std::mem::replace(&mut fs.path, absolute)));
            }
        }
        anchored
    }

    /// Whether the grant allows nothing but clocks and random numbers.
    pub fn is_empty(&self) -> bool {
        self.fs.is_empty()
            && self.exec.is_empty()
            && self.env.is_empty()
            && self.net.is_empty()
            && !self.dns
    }

    /// The grant as a list of requests (each concrete), in kind order.
    pub fn to_requests(&self) -> Vec<CapabilityRequest> {
        let mut out: Vec<CapabilityRequest> =
            self.fs.iter().cloned().map(CapabilityRequest::Fs).collect();
        out.extend(self.exec.iter().cloned().map(CapabilityRequest::Exec));
        out.extend(
            self.env
                .iter()
                .map(|name| CapabilityRequest::Env { name: name.clone() }),
        );
        out.extend(self.net.iter().map(|address| CapabilityRequest::Net {
            address: address.clone(),
            url: None,
        }));
        if self.dns {
            out.push(CapabilityRequest::Dns);
        }
        out
    }
}

fn push_unique(list: &mut Vec<String>, items: Vec<String>) {
    for i in items {
        if !i.is_empty() && !list.contains(&i) {
            list.push(i);
        }
    }
}
