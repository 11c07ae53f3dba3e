//! The `find` module: the files, directories or links below `paths` whose names,
//! contents, age, size and mode match, each with the `stat`-like fields ansible-core's
//! find gives (and a checksum when asked), in the order its `os.walk` finds them;
//! `matched`, `examined`, `skipped_paths` and `msg` as it counts and words them. It
//! needs read access to each of `paths` as a tree, and nothing else.

mod filters;
mod walk;

#[cfg(test)]
mod module_tests;

use filters::{
    Contents, ModeFilter, Names, age_matches, parse_age, parse_size, repr, size_matches,
};
use sandball_guest_sdk::files::{HashAlgorithm, digest_file, join, normpath, stat_fields};
use sandball_guest_sdk::host::{FileKind, FileStat, HostError};
use sandball_guest_sdk::prelude::*;
use std::collections::HashMap;
use walk::{Dir, ListError};

sandball_guest_sdk::manifest!("../manifest.json");

/// What ends the search of one path early.
enum Stop {
    /// An error ansible-core's find reports in `skipped_paths` for the path, with a
    /// warning.
    Skip(String),
    /// The task fails (a host call was denied).
    Fail(Fail),
}

impl From<HostError> for Stop {
    fn from(e: HostError) -> Self {
        Stop::Fail(e.into())
    }
}

/// Which entries are wanted.
#[derive(Clone, Copy, PartialEq)]
enum Wanted {
    Any,
    Directory,
    File,
    Link,
}

/// The arguments, read once.
struct Criteria {
    names: Names,
    contents: Option<Contents>,
    wanted: Wanted,
    age: Option<i64>,
    age_stamp: String,
    size: Option<i64>,
    mode: ModeFilter,
    recurse: bool,
    hidden: bool,
    follow: bool,
    checksum: Option<HashAlgorithm>,
    depth: Option<i64>,
    limit: Option<usize>,
}

impl Criteria {
    fn read(m: &Module) -> Result<Criteria, Fail> {
        let mode = ModeFilter::new(m.get("mode"), m.get_bool("exact_mode"))?;
        let age = parse_age(m.get_str("age"))?;
        let size = parse_size(m.get_str("size"))?;
        let limit = match m.get_int("limit") {
            Some(n) if n <= 0 => {
                return Err(Fail::new(format!(
                    "limit cannot be {n} (use None for unlimited)"
                )));
            }
            n => n.map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
        };
        let wanted = match m.get_str("file_type") {
            Some("any") => Wanted::Any,
            Some("directory") => Wanted::Directory,
            Some("link") => Wanted::Link,
            _ => Wanted::File,
        };
        let checksum = if m.get_bool("get_checksum") {
            Some(
                m.get_str("checksum_algorithm")
                    .unwrap_or("sha1")
                    .parse()
                    .map_err(Fail::new)?,
            )
        } else {
            None
        };
        Ok(Criteria {
            names: Names::new(
                &m.get_str_list("patterns"),
                &m.get_str_list("excludes"),
                m.get_bool("use_regex"),
            ),
            contents: Contents::new(
                m.get_str("contains"),
                m.get_bool("read_whole_file"),
                m.get_str("encoding"),
            )?,
            wanted,
            age,
            age_stamp: m.get_str("age_stamp").unwrap_or("mtime").to_string(),
            size,
            mode,
            recurse: m.get_bool("recurse"),
            hidden: m.get_bool("hidden"),
            follow: m.get_bool("follow"),
            checksum,
            depth: m.get_int("depth").filter(|d| *d != 0),
            limit,
        })
    }
}

/// The search across every path: what it found and met so far.
struct Finder {
    criteria: Criteria,
    now: f64,
    files: Vec<Value>,
    skipped: Map<String, Value>,
    examined: usize,
    limit_reached: bool,
    warnings: Vec<String>,
    names: HashMap<(bool, u32), String>,
}

impl Finder {
    fn new(criteria: Criteria) -> Finder {
        Finder {
            criteria,
            now: sandball_guest_sdk::civil::since_epoch().as_secs_f64(),
            files: Vec::new(),
            skipped: Map::new(),
            examined: 0,
            limit_reached: false,
            warnings: Vec::new(),
            names: HashMap::new(),
        }
    }

    fn at_limit(&self) -> bool {
        self.criteria.limit == Some(self.files.len())
    }

    /// Walks one of `paths`, top-down, as ansible-core's find walks it.
    fn search(&mut self, top: &str) -> Result<(), Stop> {
        // Read where the grant opened it: normalised as the controller normalised
        // it (WASI resolves no `..` across granted directories).
        let real = normpath(top);
        if !std::fs::metadata(&real).is_ok_and(|m| m.is_dir()) {
            return Err(Stop::Skip(format!("'{top}' is not a directory")));
        }
        let mut stack = vec![Dir {
            root: top.to_string(),
            real,
            links: 0,
        }];
        while let Some(dir) = stack.pop() {
            let listing = match walk::list(&dir, self.criteria.follow) {
                Ok(listing) => listing,
                Err(ListError::Os(errno, text)) if [1, 2, 13].contains(&errno) => {
                    self.skipped.insert(dir.root.clone(), Value::from(text));
                    continue;
                }
                Err(ListError::Os(_, text) | ListError::Other(text)) => {
                    return Err(Stop::Skip(text));
                }
                Err(ListError::Denied(e)) => return Err(e.into()),
            };
            self.examined += listing.files.len() + listing.dirs.len();
            let mut prune = false;
            for entry in listing.files.iter().chain(&listing.dirs) {
                if self.consider(top, &dir, &entry.name, &mut prune)? {
                    break;
                }
            }
            if !self.criteria.recurse || self.at_limit() {
                break;
            }
            if !prune {
                for sub in listing.dirs.iter().rev() {
                    if self.criteria.follow || !sub.link {
                        stack.push(walk::below(&dir, sub));
                    }
                }
            }
        }
        Ok(())
    }

    /// Looks at one entry; true when the limit is reached (the directory's other
    /// entries are not looked at).
    fn consider(
        &mut self,
        top: &str,
        dir: &Dir,
        name: &str,
        prune: &mut bool,
    ) -> Result<bool, Stop> {
        let path = normpath(&join(&dir.root, name));
        if let Some(depth) = self.criteria.depth {
            let base = format!("{}/", top.trim_end_matches('/'));
            let level = path.matches('/').count() as i64 - base.matches('/').count() as i64 + 1;
            if level > depth {
                *prune = true;
                return Ok(false);
            }
        }
        let basename = path.rsplit('/').next().unwrap_or(&path);
        if basename.starts_with('.') && !self.criteria.hidden {
            return Ok(false);
        }
        // Gone since the listing, or not to be looked at: skipped with a warning.
        let seen = match host::stat(&path, false) {
            Ok(Some(st)) => Ok(st),
            Ok(None) => Err(format!(
                "[Errno 2] No such file or directory: {}",
                repr(&path)
            )),
            Err(e) if e.denied => return Err(e.into()),
            Err(e) => Err(e.message),
        };
        let st = match seen {
            Ok(st) => st,
            Err(text) => {
                self.warnings.push(format!(
                    "Skipped entry {} due to access issue.",
                    repr(&path)
                ));
                self.skipped.insert(path, Value::from(text));
                return Ok(false);
            }
        };
        let real = join(&dir.real, name);
        if self.matches(name, &path, &real, &st).map_err(Stop::Skip)? {
            let mut found = json_map!({"path": path});
            // The owner's names come after the times, in ansible-core's order.
            for (key, value) in stat_fields(&st) {
                let times_done = key == "ctime";
                found.insert(key, value);
                if times_done {
                    let group = self.name_of(false, st.gid);
                    let user = self.name_of(true, st.uid);
                    found.insert("gr_name".into(), Value::from(group));
                    found.insert("pw_name".into(), Value::from(user));
                }
            }
            if let Some(algorithm) = self.criteria.checksum
                && st.kind == FileKind::File
            {
                let sum = digest_file(&real, algorithm)
                    .map_err(|e| Stop::Skip(sandball_guest_sdk::describe_io_error(&e)))?;
                found.insert("checksum".into(), Value::from(sum));
            }
            let sized = st.kind != FileKind::File
                || self.criteria.wanted != Wanted::Any
                || size_matches(self.criteria.size, st.size);
            if sized {
                self.files.push(Value::Object(found));
            }
        }
        if self.at_limit() {
            self.limit_reached = true;
            return Ok(true);
        }
        Ok(false)
    }

    /// Whether the entry passes every criterion, in ansible-core's order (a bad
    /// pattern or mode is an error only when an entry reaches it).
    fn matches(&self, name: &str, path: &str, real: &str, st: &FileStat) -> Result<bool, String> {
        let c = &self.criteria;
        let kind_matches = match c.wanted {
            Wanted::Any => true,
            Wanted::Directory => st.kind == FileKind::Directory,
            Wanted::File => st.kind == FileKind::File,
            Wanted::Link => st.kind == FileKind::Symlink,
        };
        if !kind_matches || !c.names.matches(name)? {
            return Ok(false);
        }
        let stamp = match c.age_stamp.as_str() {
            "atime" => st.atime,
            "ctime" => st.ctime,
            _ => st.mtime,
        };
        if !age_matches(c.age, self.now - stamp) {
            return Ok(false);
        }
        if c.wanted == Wanted::File {
            if !size_matches(c.size, st.size) {
                return Ok(false);
            }
            if let Some(contents) = &c.contents
                && !contents.matches(real, path)?
            {
                return Ok(false);
            }
        }
        c.mode.matches(st.mode)
    }

    /// A user's (or group's) name, or empty when it has none.
    fn name_of(&mut self, user: bool, id: u32) -> String {
        self.names
            .entry((user, id))
            .or_insert_with(|| {
                if user {
                    host::user_name(id)
                } else {
                    host::group_name(id)
                }
                .unwrap_or_default()
            })
            .clone()
    }
}

/// The module body.
fn find(m: &mut Module) -> Result<Map<String, Value>, Fail> {
    let mut finder = Finder::new(Criteria::read(m)?);
    let mut path_warnings = false;
    for top in m.get_str_list("paths") {
        match finder.search(&top) {
            Ok(()) => {}
            Err(Stop::Skip(text)) => {
                finder.warnings.push(format!(
                    "Skipped '{top}' path due to this access issue: {text}\n"
                ));
                finder.skipped.insert(top, Value::from(text));
                path_warnings = true;
            }
            Err(Stop::Fail(fail)) => return Err(fail),
        }
    }
    let msg = if path_warnings || !finder.warnings.is_empty() {
        "Not all paths examined, check warnings for details"
    } else if finder.limit_reached {
        "Limit of matches reached"
    } else {
        "All paths examined"
    };
    for w in std::mem::take(&mut finder.warnings) {
        m.warn(w);
    }
    let matched = finder.files.len();
    Ok(json_map!({
        "files": finder.files,
        "changed": false,
        "msg": msg,
        "matched": matched,
        "examined": finder.examined,
        "skipped_paths": finder.skipped,
    }))
}

fn main() {
    sandball_guest_sdk::run_with_paths(MANIFEST, find)
}
