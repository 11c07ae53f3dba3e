//! The `known_hosts` module: makes sure a host's SSH key is in a known_hosts file, or
//! is not, as Ansible's `known_hosts` does — the same lookups, replacements, results,
//! diff and check mode — but without `ssh-keygen`: host patterns (`*`, `?`, `!`) and
//! hashed names (`|1|salt|hash`, HMAC-SHA1) are matched here, and new hashed names
//! are made here with a random salt, so the module needs no program, only its file.

#[cfg(all(test, unix))]
mod module_tests;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use sandball_guest_sdk::files::{atomic_write, path_info, random_u64};
use sandball_guest_sdk::prelude::*;
use sandball_guest_sdk::{describe_io_error, pyre};
use sha1::{Digest, Sha1};
use std::io::ErrorKind;

sandball_guest_sdk::manifest!("../manifest.json");

fn main() {
    sandball_guest_sdk::run_with_paths(MANIFEST, known_hosts);
}

/// The module body.
fn known_hosts(m: &mut Module) -> Result<Map<String, Value>, Fail> {
    let mut result = m.params().clone();
    let host = m.get_str("name").unwrap_or_default().to_lowercase();
    let path = m.get_str("path").unwrap_or_default().to_string();
    let present = m.get_str("state") != Some("absent");
    let mut key = m
        .get_str("key")
        .filter(|k| !k.is_empty())
        .map(str::to_string);
    if key.is_none() && present {
        return Err(Fail::new("No key specified when adding a host"));
    }
    if let Some(k) = &mut key {
        if m.get_bool("hash_host") {
            *k = hash_host_key(&host, k)?;
        }
        if !k.ends_with('\n') {
            k.push('\n');
        }
        sanity_check(&host, k)?;
    }
    let before = read(&path)?;
    let search = search(&host, key.as_deref(), before.as_deref())?;
    let diff = compute_diff(&path, before.as_deref(), &search, present, key.as_deref());
    let mut changed = false;
    if present || search.found_line.is_some() || key.is_none() {
        if m.check_mode() {
            // Ansible ends here with only these two.
            let changed = search.replace_or_add || present != search.found;
            return Ok(json_map!({"changed": changed, "diff": diff}));
        } else {
            let mut text = before.clone().unwrap_or_default();
            if search.found && key.is_none() && !present {
                // What `ssh-keygen -R` does: every line naming the host goes (but for
                // @cert-authority and @revoked ones), the old file kept as PATH.old
                // when that removed any. Ansible counts it a change either way.
                let kept = remove_host(&host, &text);
                if kept != text {
                    keep_old(&path, &text)?;
                    text = kept;
                }
                changed = true;
            }
            if search.replace_or_add || search.found != present {
                let mut out = String::new();
                for (n, line) in text.split_inclusive('\n').enumerate() {
                    if search.found_line == Some(n + 1) && (search.replace_or_add || !present) {
                        continue;
                    }
                    out.push_str(line);
                }
                if present {
                    out.push_str(key.as_deref().unwrap_or_default());
                }
                write(&path, &out)?;
                changed = true;
            }
        }
    }
    result.insert("changed".into(), json!(changed));
    result.insert("diff".into(), diff);
    // As Ansible's exit_json does for any result with a path: what is there now.
    result.extend(path_info(&path).into_iter().filter(|(k, _)| k != "path"));
    Ok(result)
}

/// The file's text, or `None` when it does not exist.
fn read(path: &str) -> Result<Option<String>, Fail> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Fail::new(format!(
            "Failed to read '{path}': {}",
            describe_io_error(&e)
        ))),
    }
}

/// Replaces `path` with `text` atomically.
fn write(path: &str, text: &str) -> Result<(), Fail> {
    atomic_write(path, text.as_bytes()).map_err(|e| {
        Fail::new(format!(
            "Failed to write to file '{path}': {}",
            describe_io_error(&e)
        ))
    })
}

/// Keeps the file's old text as PATH.old, with the file's mode, as `ssh-keygen -R` does.
fn keep_old(path: &str, text: &str) -> Result<(), Fail> {
    let old = format!("{path}.old");
    write(&old, text)?;
    if let Some(st) = host::stat(path, true)? {
        host::chmod(&old, st.mode & 0o7777)?;
    }
    Ok(())
}

/// HMAC-SHA1 of `data` under `key` (RFC 2104), as OpenSSH hashes host names.
fn hmac_sha1(key: &[u8], data: &[u8]) -> [u8; 20] {
    let mut block = [0u8; 64];
    if key.len() > 64 {
        block[..20].copy_from_slice(&Sha1::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| block.map(|b| b ^ byte);
    let inner = Sha1::new()
        .chain_update(pad(0x36))
        .chain_update(data)
        .finalize();
    Sha1::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

/// The key line with its host field replaced by the host's hashed name, under a
/// fresh random salt.
fn hash_host_key(host: &str, key: &str) -> Result<String, Fail> {
    let mut salt = [0u8; 20];
    for chunk in salt.chunks_mut(8) {
        let random = random_u64().to_le_bytes();
        chunk.copy_from_slice(&random[..chunk.len()]);
    }
    let hashed = hmac_sha1(&salt, host.as_bytes());
    let mut parts: Vec<String> = key.split_whitespace().map(str::to_string).collect();
    let at = usize::from(parts.first().is_some_and(|p| p.starts_with('@')));
    let Some(field) = parts.get_mut(at) else {
        return Err(bad_key(key));
    };
    *field = format!("|1|{}|{}", B64.encode(salt), B64.encode(hashed));
    Ok(parts.join(" "))
}

/// The failure for a key line without host, type and key.
fn bad_key(key: &str) -> Fail {
    Fail::new(format!(
        "key {:?} is not a known_hosts line: it needs a host, a key type and the key",
        key.trim()
    ))
}

/// One line of a known_hosts file, split as Ansible compares them.
#[derive(Clone, Debug, PartialEq)]
struct Entry {
    marker: Option<String>,
    hosts: String,
    kind: String,
    key: String,
}

impl Entry {
    /// The line's fields (`None` for comments, blank lines and lines too short).
    fn parse(line: &str) -> Option<Entry> {
        let words: Vec<&str> = line.split_whitespace().collect();
        let (marker, rest) = match words.first() {
            None => return None,
            Some(w) if w.starts_with('#') => return None,
            Some(w) if w.starts_with('@') => (Some(w.to_string()), &words[1..]),
            Some(_) => (None, &words[..]),
        };
        match rest {
            [hosts, kind, key, ..] => Some(Entry {
                marker,
                hosts: hosts.to_string(),
                kind: kind.to_string(),
                key: key.to_string(),
            }),
            _ => None,
        }
    }

    /// Whether the key is one OpenSSH would read: base64 holding a blob whose first
    /// string is the key type.
    fn valid(&self) -> bool {
        let Ok(blob) = B64.decode(&self.key) else {
            return false;
        };
        let Some(len) = blob
            .get(..4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
        else {
            return false;
        };
        blob.get(4..4 + len as usize) == Some(self.kind.as_bytes())
    }

    /// Whether the host field names `host`: a hashed name whose HMAC matches, or
    /// comma-separated patterns of which one matches and no negated one does.
    fn names(&self, host: &str) -> bool {
        if let Some(hashed) = self.hosts.strip_prefix("|1|") {
            let Some((salt, hash)) = hashed.split_once('|') else {
                return false;
            };
            return match (B64.decode(salt), B64.decode(hash)) {
                (Ok(salt), Ok(hash)) => hmac_sha1(&salt, host.as_bytes()).as_slice() == hash,
                _ => false,
            };
        }
        let mut matched = false;
        for pattern in self.hosts.split(',') {
            let (negated, pattern) = match pattern.strip_prefix('!') {
                Some(p) => (true, p),
                None => (false, pattern),
            };
            if sandball_wire::ssh::pattern_match(&pattern.to_lowercase(), host) {
                if negated {
                    return false;
                }
                matched = true;
            }
        }
        matched
    }
}

/// The lines of `text` naming `host` with a readable key: (line number, entry).
fn lines_for<'a>(host: &'a str, text: &'a str) -> impl Iterator<Item = (usize, Entry)> + 'a {
    text.lines().enumerate().filter_map(move |(n, line)| {
        Entry::parse(line)
            .filter(|e| e.valid() && e.names(host))
            .map(|e| (n + 1, e))
    })
}

/// Refuses a host list, and a key whose host field does not name the host.
fn sanity_check(host: &str, key: &str) -> Result<(), Fail> {
    let listed = pyre::Pattern::new(r"\S+(\s+)?,(\s+)?", false, false, pyre::Anchor::Search)
        .and_then(|p| p.is_match(host))
        .map_err(|e| Fail::new(e.to_string()))?;
    if listed {
        return Err(Fail::new(
            "Comma separated list of names is not supported. Please pass a single name to \
             lookup in the known_hosts file.",
        ));
    }
    if lines_for(host, key).next().is_none() {
        return Err(Fail::new(
            "Host parameter does not match hashed host field in supplied key",
        ));
    }
    Ok(())
}

/// What the file holds for the host, as Ansible decides it.
#[derive(Default)]
struct Search {
    /// A line names the host.
    found: bool,
    /// The key there differs from the one given (or none of its type is there).
    replace_or_add: bool,
    /// The line holding the same key, or another key of the same type.
    found_line: Option<usize>,
}

/// Looks the host up in the file's text and compares what is there with `key`.
fn search(host: &str, key: Option<&str>, text: Option<&str>) -> Result<Search, Fail> {
    let Some(text) = text else {
        return Ok(Search::default());
    };
    let mut matches = lines_for(host, text).peekable();
    if matches.peek().is_none() {
        return Ok(Search::default());
    }
    let Some(key) = key else {
        return Ok(Search {
            found: true,
            ..Search::default()
        });
    };
    let wanted = Entry::parse(key).ok_or_else(|| bad_key(key))?;
    for (line, there) in matches {
        let mut wanted = wanted.clone();
        let special = there
            .marker
            .as_deref()
            .is_some_and(|m| m.starts_with("@cert-authority") || m.starts_with("@revoke"));
        if !special && wanted.hosts.starts_with("|1|") && there.hosts.starts_with("|1|") {
            // An already hashed name is kept.
            wanted.hosts = there.hosts.clone();
        }
        let (replace_or_add, found_line) = if wanted == there {
            (false, Some(line))
        } else if !special && wanted.kind == there.kind {
            (true, Some(line))
        } else {
            continue;
        };
        return Ok(Search {
            found: true,
            replace_or_add,
            found_line,
        });
    }
    Ok(Search {
        found: true,
        replace_or_add: true,
        found_line: None,
    })
}

/// Every line naming the host removed, but @cert-authority and @revoked ones.
fn remove_host(host: &str, text: &str) -> String {
    text.split_inclusive('\n')
        .filter(|line| {
            !Entry::parse(line).is_some_and(|e| e.marker.is_none() && e.valid() && e.names(host))
        })
        .collect()
}

/// The diff Ansible reports: the file before, and after the change.
fn compute_diff(
    path: &str,
    before: Option<&str>,
    search: &Search,
    present: bool,
    key: Option<&str>,
) -> Value {
    let text = before.unwrap_or_default();
    let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
    if let Some(n) = search.found_line
        && (search.replace_or_add || !present)
        && (1..=lines.len()).contains(&n)
    {
        lines.remove(n - 1);
    }
    if present && (search.replace_or_add || search.found_line.is_none()) {
        lines.push(key.unwrap_or_default());
    }
    json!({
        "before_header": if before.is_some() { path } else { "/dev/null" },
        "after_header": path,
        "before": text,
        "after": lines.concat(),
    })
}
