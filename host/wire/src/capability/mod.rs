//! The capability vocabulary: what a module may touch on the node.
//!
//! A manifest *requests* capabilities in terms of the module's arguments
//! ([`CapabilityRequest`], e.g. read-write on `$path`); the controller *resolves* the
//! requests against one task's arguments into a concrete [`Grant`], and the shim builds
//! the module's WASI context from that grant and nothing else.
//!
//! The kinds, as written in manifests, policy files and the `capabilities:` keyword:
//!
//! - `fs`: a path, the operations on it (`ops: [read, write, create, remove]`, or the
//!   shorthand `access: read | read-write`), and whether it is the entry itself or a
//!   whole tree (`scope: entry | tree`, or `recursive: true`);
//! - `exec`: a program (path or name looked up in `PATH`), optionally with a pattern
//!   its arguments must match (`args: ["-l", "*"]`; `**` matches any remaining ones);
//! - `net`: TCP connections to a `host:port` pattern (host `*`, an IP address, a CIDR
//!   block or a name; port `*`, a number or a range `N-M`);
//! - `dns`: name lookups;
//! - `env`: one environment variable of the node, by name.
//!
//! Clocks and random numbers are always available; resource [`Limits`] (memory, wall
//! time, output) bound every run. Strings may refer to module arguments: `$name`,
//! `$name[N]` (one word) and `$name[N:]` (the words from N on); braced references join
//! with literal text (`${host}:${port}`).

mod net;
mod resolve;

pub use net::{NetHost, NetPattern, NetPatternError, url_peer};
pub use resolve::{ResolveError, expand};

use sandball_pycompat::boolean;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

/// How much of a filesystem location a module may use, as the shim enforces it: WASI
/// preopens are either read-only or read-write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Access {
    /// Read files and list directories.
    Read,
    /// Read, write, create, rename and remove.
    ReadWrite,
}

/// One filesystem operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FsOp {
    /// Read files, list directories, look at metadata.
    Read,
    /// Change existing files and their metadata.
    Write,
    /// Create entries (files, directories, links).
    Create,
    /// Remove or rename entries.
    Remove,
}

/// A set of filesystem operations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FsOps {
    /// [`FsOp::Read`].
    pub read: bool,
    /// [`FsOp::Write`].
    pub write: bool,
    /// [`FsOp::Create`].
    pub create: bool,
    /// [`FsOp::Remove`].
    pub remove: bool,
}

impl FsOps {
    /// Read only.
    pub const READ: FsOps = FsOps {
        read: true,
        write: false,
        create: false,
        remove: false,
    };
    /// Everything.
    pub const ALL: FsOps = FsOps {
        read: true,
        write: true,
        create: true,
        remove: true,
    };

    /// The set holding these operations.
    pub fn of(ops: &[FsOp]) -> FsOps {
        let mut s = FsOps::default();
        for op in ops {
            match op {
                FsOp::Read => s.read = true,
                FsOp::Write => s.write = true,
                FsOp::Create => s.create = true,
                FsOp::Remove => s.remove = true,
            }
        }
        s
    }

    /// The operations, in a fixed order.
    pub fn list(self) -> Vec<FsOp> {
        [
            (self.read, FsOp::Read),
            (self.write, FsOp::Write),
            (self.create, FsOp::Create),
            (self.remove, FsOp::Remove),
        ]
        .into_iter()
        .filter_map(|(on, op)| on.then_some(op))
        .collect()
    }

    /// The access the shim gives for these operations: anything beyond reading needs
    /// a read-write preopen (WASI does not tell writing, creating and removing apart).
    pub fn access(self) -> Access {
        if self.write || self.create || self.remove {
            Access::ReadWrite
        } else {
            Access::Read
        }
    }

    /// Whether every operation of `other` is in this set.
    pub fn covers(self, other: FsOps) -> bool {
        (self.read || !other.read)
            && (self.write || !other.write)
            && (self.create || !other.create)
            && (self.remove || !other.remove)
    }

    /// The operations in both sets.
    pub fn intersect(self, other: FsOps) -> FsOps {
        FsOps {
            read: self.read && other.read,
            write: self.write && other.write,
            create: self.create && other.create,
            remove: self.remove && other.remove,
        }
    }

    /// The operations in either set.
    pub fn union(self, other: FsOps) -> FsOps {
        FsOps {
            read: self.read || other.read,
            write: self.write || other.write,
            create: self.create || other.create,
            remove: self.remove || other.remove,
        }
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.list().is_empty()
    }
}

impl From<Access> for FsOps {
    fn from(a: Access) -> Self {
        match a {
            Access::Read => FsOps::READ,
            Access::ReadWrite => FsOps::ALL,
        }
    }
}

/// Which part of the filesystem a path names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FsScope {
    /// The entry itself: the directory that holds it (its parent, never more) is
    /// opened, so the entry can be created, replaced or removed (and, if it is a
    /// directory, everything below it). When that directory does not exist, a read
    /// grant, or a read-write one that does not say [`FsGrant::create_parents`], opens
    /// an empty read-only stand-in (the module finds nothing and makes nothing); with
    /// it, the shim creates the missing directories.
    #[default]
    Entry,
    /// The path is a directory; it and everything below it (`recursive: true`). A
    /// read-write tree must exist; a read-only one that is not an existing directory
    /// (missing, or a file) opens nothing: the module finds the path missing.
    Tree,
    /// The path itself and nothing below it, read-only: its metadata, and a program's
    /// working directory (`chdir`). Nothing is opened to the module's files, so a
    /// symlink on the way is followed (nothing can be reached through it).
    Itself,
}

impl FsScope {
    /// How much of the path a grant of this scope reaches, for comparing scopes.
    fn reach(self) -> u8 {
        match self {
            FsScope::Itself => 0,
            FsScope::Entry => 1,
            FsScope::Tree => 2,
        }
    }
}

/// Filesystem access to one path: in a request the path may be an argument reference
/// (`$path`); in a grant it is a path on the node (`~` is resolved by the shim against
/// the home directory of the user it runs as, other relative paths against its working
/// directory, as a module's would be).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "FsWritten", into = "FsWritten")]
pub struct FsGrant {
    /// The path.
    pub path: String,
    /// The operations allowed on it.
    pub ops: FsOps,
    /// Entry or tree.
    pub scope: FsScope,
    /// For a read-write entry whose parent directory is missing: the shim creates the
    /// missing directories below the nearest existing one (like `mkdir -p`) and opens
    /// the parent. Without it, an empty read-only directory stands in for the parent.
    pub create_parents: bool,
    /// In a request: the argument condition under which `create_parents` applies,
    /// written after a `$` (see [`ParentsIf`]): `create_parents: $create` (a boolean
    /// argument is true), `$dest/` (an argument ends with `/`), `$state=directory` (an
    /// argument has that value); `None` in a grant.
    pub create_parents_if: Option<String>,
    /// In a request: the node place ([`NODE_TMPDIR`]) granted instead when `path`'s
    /// argument is absent or null (written `fallback: "@tmpdir"`); `None` in a grant.
    pub fallback: Option<String>,
}

impl FsGrant {
    /// The access the shim enforces for this grant.
    pub fn access(&self) -> Access {
        self.ops.access()
    }

    /// The directory the shim opens for this grant, as written (lexically): the
    /// path itself for a tree, its parent for an entry.
    pub fn opened_dir(&self) -> String {
        match self.scope {
            FsScope::Tree | FsScope::Itself => self.path.clone(),
            FsScope::Entry => match self.path.rsplit_once('/') {
                Some(("", _)) => "/".to_string(),
                Some((dir, _)) => dir.to_string(),
                None if self.path == "~" => "~/..".to_string(),
                None => ".".to_string(),
            },
        }
    }

    /// Whether this grant's path reaches everything `inner`'s does: the same path
    /// (or a glob matching it) with a scope at least as wide, or a tree above it.
    pub fn path_covers(&self, inner: &FsGrant) -> bool {
        let same = glob(&self.path, &inner.path);
        (same && self.scope.reach() >= inner.scope.reach())
            || (self.scope == FsScope::Tree && is_below(&inner.path, &self.path))
    }
}

/// The node's temporary directory, as a grant's path: what Python's
/// `tempfile.gettempdir()` would pick on the node (`$TMPDIR`, `$TEMP` or `$TMP`, else
/// `/tmp`, `/var/tmp` or `/usr/tmp`, the first that is a directory the shim's user may
/// write in), which only the shim can know. A manifest names it as an fs request's
/// `fallback`: granted when the request's argument is absent.
pub const NODE_TMPDIR: &str = "@tmpdir";

/// Whether a grant's path is (or lies below) a place the shim resolves on the node
/// ([`NODE_TMPDIR`]).
pub fn is_node_place(path: &str) -> bool {
    path.strip_prefix(NODE_TMPDIR)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// Whether `path` is strictly below directory `dir` (both normalised, as text).
pub fn is_below(path: &str, dir: &str) -> bool {
    let dir = dir.trim_end_matches('/');
    path.strip_prefix(dir)
        .is_some_and(|rest| rest.starts_with('/') && rest.len() > 1)
}

/// Normalises a path as written in a grant, without touching any filesystem: `.`
/// components and repeated or trailing slashes go, `..` removes the component before
/// it (at `/` it stays at `/`). A `..` that would climb above `~` or above the start
/// of a relative path is kept, and [`climbs`] tells about it.
pub fn normalize_path(path: &str) -> String {
    let (prefix, rest) = if let Some(rest) = path.strip_prefix('/') {
        ("/", rest)
    } else if path == "~" {
        ("~", "")
    } else if let Some(rest) = path.strip_prefix("~/") {
        ("~/", rest)
    } else {
        ("", path)
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in rest.split('/') {
        match part {
            "" | "." => {}
            ".." => match parts.last() {
                Some(&last) if last != ".." => {
                    parts.pop();
                }
                _ if prefix == "/" => {}
                _ => parts.push(".."),
            },
            other => parts.push(other),
        }
    }
    match (prefix, parts.is_empty()) {
        ("/", _) => format!("/{}", parts.join("/")),
        ("~" | "~/", true) => "~".to_string(),
        ("~" | "~/", false) => format!("~/{}", parts.join("/")),
        (_, true) => ".".to_string(),
        _ => parts.join("/"),
    }
}

/// Whether a normalised path still climbs above its start (`~/..`, `../x`).
pub fn climbs(normalized: &str) -> bool {
    normalized.split('/').any(|p| p == "..")
}

/// `kind: fs` as written: `access` or `ops`, `scope` or `recursive`.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FsWritten {
    path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    access: Option<Access>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ops: Option<Vec<FsOp>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    scope: Option<FsScope>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    recursive: Option<bool>,
    #[serde(default, skip_serializing_if = "CreateParents::is_never")]
    create_parents: CreateParents,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    fallback: Option<String>,
}

/// `create_parents` as written: always, never, or when a boolean argument is true.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
enum CreateParents {
    Always(bool),
    #[serde(skip)]
    #[default]
    Never,
    If(String),
}

impl CreateParents {
    fn is_never(&self) -> bool {
        matches!(self, CreateParents::Never | CreateParents::Always(false))
    }
}

/// When a request's `create_parents` applies, as the task's arguments say (the
/// text of [`FsGrant::create_parents_if`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParentsIf<'a> {
    /// `name`: the argument is true (`create: yes`).
    True(&'a str),
    /// `name/`: the argument is a path ending in `/` (a directory to be made).
    EndsWithSlash(&'a str),
    /// `name=value`: the argument is that string (`state=directory`).
    Equals(&'a str, &'a str),
}

impl<'a> ParentsIf<'a> {
    /// The condition written after the `$`; `None` when it names no argument.
    pub fn parse(written: &'a str) -> Option<Self> {
        let condition = match written.split_once('=') {
            Some((name, value)) => ParentsIf::Equals(name, value),
            None => match written.strip_suffix('/') {
                Some(name) => ParentsIf::EndsWithSlash(name),
                None => ParentsIf::True(written),
            },
        };
        let name = match condition {
            ParentsIf::True(n) | ParentsIf::EndsWithSlash(n) | ParentsIf::Equals(n, _) => n,
        };
        let is_name =
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        is_name.then_some(condition)
    }

    /// Whether the task's arguments meet it.
    pub fn holds(&self, args: &Value) -> bool {
        match *self {
            ParentsIf::True(name) => args
                .get(name)
                .is_some_and(|v| boolean::strict(v).unwrap_or(false)),
            ParentsIf::EndsWithSlash(name) => args
                .get(name)
                .and_then(Value::as_str)
                .is_some_and(|p| p.ends_with('/')),
            ParentsIf::Equals(name, value) => args.get(name).and_then(Value::as_str) == Some(value),
        }
    }
}

impl fmt::Display for ParentsIf<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParentsIf::True(name) => write!(f, "{name} is true"),
            ParentsIf::EndsWithSlash(name) => write!(f, "{name} ends with /"),
            ParentsIf::Equals(name, value) => write!(f, "{name} is {value}"),
        }
    }
}

impl TryFrom<FsWritten> for FsGrant {
    type Error = String;
    fn try_from(w: FsWritten) -> Result<Self, String> {
        let ops = match (w.access, w.ops) {
            (Some(_), Some(_)) => {
                return Err(format!("fs {}: give `access` or `ops`, not both", w.path));
            }
            (Some(a), None) => FsOps::from(a),
            (None, Some(ops)) if !ops.is_empty() => FsOps::of(&ops),
            _ => {
                return Err(format!(
                    "fs {}: say what may be done: `access: read | read-write` or `ops: [read, write, create, remove]`",
                    w.path
                ));
            }
        };
        let scope = match (w.scope, w.recursive) {
            (Some(s), None) => s,
            (None, Some(true)) => FsScope::Tree,
            (None, Some(false) | None) => FsScope::Entry,
            (Some(s), Some(r)) if (s == FsScope::Tree) == r => s,
            (Some(_), Some(_)) => {
                return Err(format!("fs {}: `scope` and `recursive` disagree", w.path));
            }
        };
        let (create_parents, create_parents_if) = match w.create_parents {
            CreateParents::Always(yes) => (yes, None),
            CreateParents::Never => (false, None),
            CreateParents::If(reference) => {
                match reference
                    .strip_prefix('$')
                    .filter(|c| ParentsIf::parse(c).is_some())
                {
                    Some(condition) => (true, Some(condition.to_string())),
                    None => {
                        return Err(format!(
                            "fs {}: `create_parents` is true, false or a condition on an argument ($name: it is true, $name/: it ends with /, $name=value: it is that value), not {reference:?}",
                            w.path
                        ));
                    }
                }
            }
        };
        if scope == FsScope::Itself && ops != FsOps::READ {
            return Err(format!(
                "fs {}: `scope: itself` is read-only (the path's metadata, a working directory)",
                w.path
            ));
        }
        if create_parents && (scope != FsScope::Entry || ops.access() == Access::Read) {
            return Err(format!(
                "fs {}: `create_parents` is for read-write entries (scope: entry) only",
                w.path
            ));
        }
        if let Some(place) = &w.fallback
            && (place != NODE_TMPDIR || !w.path.starts_with('$'))
        {
            return Err(format!(
                "fs {}: `fallback` is {NODE_TMPDIR} (the node's temporary directory), for a path that is an argument ($name), not {place:?}",
                w.path
            ));
        }
        Ok(FsGrant {
            path: w.path,
            ops,
            scope,
            create_parents,
            create_parents_if,
            fallback: w.fallback,
        })
    }
}

impl From<FsGrant> for FsWritten {
    fn from(g: FsGrant) -> Self {
        // The shorthand when it says it all, the list otherwise.
        let (access, ops) = if g.ops == FsOps::READ {
            (Some(Access::Read), None)
        } else if g.ops == FsOps::ALL {
            (Some(Access::ReadWrite), None)
        } else {
            (None, Some(g.ops.list()))
        };
        FsWritten {
            path: g.path,
            access,
            ops,
            // `entry` is the default; said only when it is a tree.
            scope: (g.scope != FsScope::Entry).then_some(g.scope),
            recursive: None,
            create_parents: match (g.create_parents, g.create_parents_if) {
                (false, _) => CreateParents::Never,
                (true, None) => CreateParents::Always(true),
                (true, Some(name)) => CreateParents::If(format!("${name}")),
            },
            fallback: g.fallback,
        }
    }
}

/// Running a program through the sandball host interface. In a request, `program`
/// and the argument patterns may refer to module arguments.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "ExecWritten")]
pub struct ExecGrant {
    /// Program path or name (names are looked up in the node's `PATH`).
    pub program: String,
    /// Patterns the arguments after the program must match, one per argument (`*`
    /// and `?` within one argument; an element `**` matches any remaining arguments).
    /// `None`: any arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Vec<String>>,
}

/// An exec grant is written as a map, or as just the program (any arguments).
#[derive(Deserialize)]
#[serde(untagged)]
enum ExecWritten {
    Program(String),
    Full {
        program: String,
        #[serde(default)]
        args: Option<Vec<String>>,
    },
}

impl From<ExecWritten> for ExecGrant {
    fn from(w: ExecWritten) -> Self {
        match w {
            ExecWritten::Program(program) => ExecGrant {
                program,
                args: None,
            },
            ExecWritten::Full { program, args } => ExecGrant { program, args },
        }
    }
}

impl ExecGrant {
    /// Whether `args` (the arguments after the program) match this grant's patterns.
    pub fn allows_args(&self, args: &[String]) -> bool {
        match &self.args {
            None => true,
            Some(patterns) => args_match(patterns, args),
        }
    }
}

fn args_match(patterns: &[String], args: &[String]) -> bool {
    match patterns.split_first() {
        None => args.is_empty(),
        Some((p, rest)) if p == "**" => {
            (0..=args.len()).any(|skip| args_match(rest, &args[skip..]))
        }
        Some((p, rest)) => match args.split_first() {
            Some((a, more)) => glob(p, a) && args_match(rest, more),
            None => false,
        },
    }
}

/// Matches `text` against a shell-style pattern: `*` any run of characters, `?` one.
pub fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // Classic two-pointer match with backtracking to the last `*`.
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// A capability as a manifest, a policy file or the `capabilities:` keyword writes
/// it. Strings may refer to module arguments (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum CapabilityRequest {
    /// Filesystem access to a path.
    Fs(FsGrant),
    /// Running a program on the node through the sandball host interface.
    Exec(ExecGrant),
    /// Reading one environment variable of the node.
    Env {
        /// Variable name.
        name: String,
    },
    /// Opening TCP connections to `host:port`, written as the address or as a URL
    /// (`url: $url`: the URL's host and port, or its scheme's default port).
    Net {
        /// `host:port` pattern or argument reference (empty when `url` is given).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        address: String,
        /// A URL or an argument reference to one; it grants the URL's `host:port`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        url: Option<String>,
    },
    /// Looking up host names.
    Dns,
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
    /// Programs that may be run.
    #[serde(default)]
    pub exec: Vec<ExecGrant>,
    /// Environment variables passed through from the node.
    #[serde(default)]
    pub env: Vec<String>,
    /// `host:port` patterns TCP connections may go to (see [`NetPattern`]).
    #[serde(default)]
    pub net: Vec<String>,
    /// Whether host names may be looked up.
    #[serde(default)]
    pub dns: bool,
    /// Resource limits.
    #[serde(default)]
    pub limits: Limits,
    /// Filesystem locations the policy denies: the shim refuses a run whose opened
    /// directories, once resolved on the node, lie inside one of these or hold one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<FsGrant>,
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Access::Read => "read",
            Access::ReadWrite => "read-write",
        })
    }
}

impl fmt::Display for FsOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FsOp::Read => "read",
            FsOp::Write => "write",
            FsOp::Create => "create",
            FsOp::Remove => "remove",
        })
    }
}

impl fmt::Display for FsOps {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == FsOps::ALL || *self == FsOps::READ {
            return write!(f, "{}", self.access());
        }
        let names: Vec<String> = self.list().iter().map(ToString::to_string).collect();
        f.write_str(&names.join("+"))
    }
}

/// A grant's path as the audit shows it: a node place says what it is.
fn shown_path(path: &str) -> String {
    match path.strip_prefix(NODE_TMPDIR) {
        Some(rest) if is_node_place(path) => format!(
            "{NODE_TMPDIR}{rest} (the node's temporary directory: $TMPDIR, $TEMP or $TMP, else /tmp, /var/tmp or /usr/tmp, resolved by the shim)"
        ),
        _ => path.to_string(),
    }
}

impl fmt::Display for FsGrant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.fmt_scope(f)?;
        match &self.fallback {
            Some(place) => write!(f, "; without that argument, on {}", shown_path(place)),
            None => Ok(()),
        }
    }
}

impl FsGrant {
    fn fmt_scope(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.scope {
            FsScope::Entry => {
                write!(
                    f,
                    "fs {} on {} (opens its directory {}",
                    self.ops,
                    shown_path(&self.path),
                    self.opened_dir()
                )?;
                match (self.create_parents, &self.create_parents_if) {
                    (true, None) => f.write_str(
                        ", creating the missing directories below the nearest existing one)",
                    ),
                    (true, Some(condition)) => write!(
                        f,
                        "; where it does not exist, creates the missing directories below the nearest existing one when {}, else an empty read-only stand-in)",
                        ParentsIf::parse(condition)
                            .map_or_else(|| condition.clone(), |c| c.to_string())
                    ),
                    (false, _) => {
                        f.write_str(", or an empty read-only stand-in where it does not exist)")
                    }
                }
            }
            FsScope::Tree => write!(
                f,
                "fs {} on {} (whole tree)",
                self.ops,
                shown_path(&self.path)
            ),
            FsScope::Itself => write!(
                f,
                "fs {} on {} itself (its metadata, a working directory; nothing below it)",
                self.ops,
                shown_path(&self.path)
            ),
        }
    }
}

impl fmt::Display for ExecGrant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.args {
            None => write!(f, "exec {}", self.program),
            Some(a) => write!(f, "exec {} with arguments [{}]", self.program, a.join(", ")),
        }
    }
}

impl fmt::Display for CapabilityRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CapabilityRequest::Fs(g) => write!(f, "{g}"),
            CapabilityRequest::Exec(e) => write!(f, "{e}"),
            CapabilityRequest::Env { name } => write!(f, "env {name}"),
            CapabilityRequest::Net { address, url: None } => write!(f, "net {address}"),
            CapabilityRequest::Net { url: Some(url), .. } => write!(f, "net url {url}"),
            CapabilityRequest::Dns => f.write_str("dns"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn url_requests_grant_the_urls_host_and_port() {
        assert_eq!(
            url_peer("http://127.0.0.1:8080/x?y").as_deref(),
            Some("127.0.0.1:8080")
        );
        assert_eq!(
            url_peer("https://Example.org/").as_deref(),
            Some("example.org:443")
        );
        assert_eq!(url_peer("http://u:p@h.test").as_deref(), Some("h.test:80"));
        assert_eq!(url_peer("ftp://[::1]/f").as_deref(), Some("[::1]:21"));
        assert_eq!(
            url_peer("https://[::1]:8443").as_deref(),
            Some("[::1]:8443")
        );
        assert_eq!(url_peer("sha256:https://h/sums").as_deref(), Some("h:443"));
        assert_eq!(url_peer("sha256:0123abcd"), None);
        for bad in [
            "no-scheme",
            "http://",
            "gopher://h/",
            "http://h:port/",
            "http://h:99999/",
        ] {
            assert_eq!(url_peer(bad), None, "{bad}");
        }
        let req: CapabilityRequest =
            serde_json::from_value(json!({"kind": "net", "url": "$url"})).unwrap();
        assert!(req.refers_to_arguments());
        assert_eq!(req.to_string(), "net url $url");
        let mut g = Grant::default();
        g.add_requests(&[req], &json!({"url": "http://localhost:8000/a"}))
            .unwrap();
        assert_eq!(g.net, vec!["localhost:8000"]);
        let mut none = Grant::default();
        none.add_requests(
            &[serde_json::from_value(json!({"kind": "net", "url": "$url"})).unwrap()],
            &json!({"url": "not a url"}),
        )
        .unwrap();
        assert!(none.net.is_empty());
        for address in ["localhost:8000", "[::1]:443", "example.org:80"] {
            assert!(NetPattern::parse(address).is_ok(), "{address}");
        }
    }

    #[test]
    fn expands_literals_arguments_lists_and_first_words() {
        let args = json!({"path": "/tmp/x", "argv": ["/bin/echo", "hi", "there"], "cmd": "'/usr/bin/my prog' -x", "n": null});
        assert_eq!(expand("/proc", &args).unwrap(), vec!["/proc"]);
        assert_eq!(expand("$path", &args).unwrap(), vec!["/tmp/x"]);
        assert_eq!(expand("$argv[0]", &args).unwrap(), vec!["/bin/echo"]);
        assert_eq!(expand("$argv[1:]", &args).unwrap(), vec!["hi", "there"]);
        assert_eq!(expand("$cmd[0]", &args).unwrap(), vec!["/usr/bin/my prog"]);
        assert_eq!(expand("$cmd[1:]", &args).unwrap(), vec!["-x"]);
        assert!(expand("$missing", &args).unwrap().is_empty());
        assert!(expand("$n[0]", &args).unwrap().is_empty());
        assert_eq!(
            expand("$argv[x]", &args),
            Err(ResolveError::BadReference("$argv[x]".into()))
        );
        assert!(expand("$argv[1", &args).is_err());
    }

    fn fs(path: &str, ops: FsOps) -> CapabilityRequest {
        CapabilityRequest::Fs(FsGrant {
            path: path.into(),
            ops,
            scope: FsScope::Entry,
            create_parents: false,
            create_parents_if: None,
            fallback: None,
        })
    }

    #[test]
    fn grants_are_built_from_requests_without_duplicates() {
        let reqs = vec![
            fs("$path", FsOps::ALL),
            fs("$path", FsOps::ALL),
            CapabilityRequest::Exec(ExecGrant {
                program: "$argv[0]".into(),
                args: Some(vec!["$argv[1:]".into()]),
            }),
            CapabilityRequest::Dns,
        ];
        let mut g = Grant::default();
        g.add_requests(&reqs, &json!({"path": "/tmp/x", "argv": ["ls", "-l", "/"]}))
            .unwrap();
        assert_eq!(g.fs.len(), 1);
        assert_eq!(
            g.exec,
            vec![ExecGrant {
                program: "ls".into(),
                args: Some(vec!["-l".into(), "/".into()])
            }]
        );
        assert!(g.env.is_empty() && g.net.is_empty() && g.dns);
        assert_eq!(g.to_requests().len(), 3);
    }

    #[test]
    fn requests_read_from_manifest_json_in_both_spellings() {
        let r: CapabilityRequest =
            serde_json::from_value(json!({"kind": "fs", "path": "$src", "access": "read"}))
                .unwrap();
        assert_eq!(r, fs("$src", FsOps::READ));
        let r: CapabilityRequest = serde_json::from_value(
            json!({"kind": "fs", "path": "/srv", "ops": ["read", "create"], "recursive": true}),
        )
        .unwrap();
        let CapabilityRequest::Fs(g) = &r else {
            panic!("{r:?}")
        };
        assert_eq!(g.scope, FsScope::Tree);
        assert_eq!(g.ops.list(), vec![FsOp::Read, FsOp::Create]);
        assert_eq!(g.access(), Access::ReadWrite);
        assert_eq!(r.to_string(), "fs read+create on /srv (whole tree)");
        // Written back, then read again: the same.
        let back: CapabilityRequest =
            serde_json::from_value(serde_json::to_value(&r).unwrap()).unwrap();
        assert_eq!(back, r);
        for bad in [
            json!({"kind": "fs", "path": "/x"}),
            json!({"kind": "fs", "path": "/x", "access": "read", "ops": ["read"]}),
            json!({"kind": "fs", "path": "/x", "access": "read", "scope": "entry", "recursive": true}),
            json!({"kind": "fs", "path": "/x", "access": "write"}),
        ] {
            assert!(
                serde_json::from_value::<CapabilityRequest>(bad.clone()).is_err(),
                "{bad}"
            );
        }
        let e: Grant =
            serde_json::from_value(json!({"exec": ["ls", {"program": "cat", "args": ["*"]}]}))
                .unwrap();
        assert_eq!(e.exec[0].args, None);
        assert_eq!(e.exec[1].args, Some(vec!["*".to_string()]));
    }

    #[test]
    fn braced_references_join_arguments_with_literal_text() {
        let args = json!({"host": "127.0.0.1", "port": 8080, "hosts": ["a", "b"], "none": null});
        assert_eq!(
            expand("${host}:${port}", &args).unwrap(),
            vec!["127.0.0.1:8080"]
        );
        assert_eq!(
            expand("${hosts}:${port}", &args).unwrap(),
            vec!["a:8080", "b:8080"]
        );
        assert_eq!(expand("[${host}]", &args).unwrap(), vec!["[127.0.0.1]"]);
        assert!(expand("${host}:${missing}", &args).unwrap().is_empty());
        assert!(expand("${none}:${port}", &args).unwrap().is_empty());
        assert!(expand("${host}:${port", &args).is_err());
        assert!(expand("${}:1", &args).is_err());
        assert!(expand("${host}:$port", &args).is_err());
        let mut g = Grant::default();
        let net = CapabilityRequest::Net {
            address: "${host}:${port}".into(),
            url: None,
        };
        assert!(net.refers_to_arguments());
        g.add_requests(std::slice::from_ref(&net), &args).unwrap();
        assert_eq!(g.net, vec!["127.0.0.1:8080"]);
        // A path joined to a directory: relative below it, absolute alone.
        let joined = |v: &str| expand("/etc/cron.d/${f}", &json!({"f": v})).unwrap();
        assert_eq!(joined("jobs"), vec!["/etc/cron.d/jobs"]);
        assert_eq!(joined("/srv/jobs"), vec!["/srv/jobs"]);
        // Program arguments with a braced reference to a missing argument: no grant.
        let exec: CapabilityRequest = serde_json::from_value(
            json!({"kind": "exec", "program": "crontab", "args": ["-u", "${user}", "-l"]}),
        )
        .unwrap();
        let mut g = Grant::default();
        g.add_requests(std::slice::from_ref(&exec), &json!({}))
            .unwrap();
        assert!(g.exec.is_empty());
        g.add_requests(std::slice::from_ref(&exec), &json!({"user": "www"}))
            .unwrap();
        assert_eq!(
            g.exec[0].args,
            Some(vec!["-u".into(), "www".into(), "-l".into()])
        );
    }

    #[test]
    fn references_may_go_on_below_the_argument() {
        let args = json!({"dir": "/etc/facts.d/", "none": null});
        assert_eq!(
            expand("$dir/*.fact", &args).unwrap(),
            vec!["/etc/facts.d/*.fact".to_string()]
        );
        assert!(expand("$none/x", &args).unwrap().is_empty());
        assert!(expand("$/x", &args).is_err());
    }

    #[test]
    fn an_absent_argument_falls_back_to_the_node_temporary_directory() {
        let req: CapabilityRequest = serde_json::from_value(json!(
            {"kind": "fs", "path": "$path", "fallback": "@tmpdir", "ops": ["read", "create"], "scope": "tree"}
        ))
        .unwrap();
        let mut g = Grant::default();
        g.add_requests(std::slice::from_ref(&req), &json!({"path": "/srv/x/"}))
            .unwrap();
        assert_eq!(g.fs[0].path, "/srv/x");
        let mut g = Grant::default();
        g.add_requests(std::slice::from_ref(&req), &json!({"path": null}))
            .unwrap();
        assert_eq!(
            (g.fs[0].path.as_str(), g.fs[0].fallback.as_ref()),
            (NODE_TMPDIR, None)
        );
        assert!(is_node_place(&g.fs[0].path) && !is_node_place("@tmpdirx"));
        assert!(
            g.fs[0]
                .to_string()
                .starts_with("fs read+create on @tmpdir (the node's temporary directory: $TMPDIR")
        );
        assert!(
            req.to_string()
                .contains("; without that argument, on @tmpdir"),
            "{req}"
        );
        // Written back as read.
        let back = serde_json::to_value(&req).unwrap();
        assert_eq!(back["fallback"], json!("@tmpdir"));
        for bad in [
            json!({"kind": "fs", "path": "$path", "fallback": "/tmp", "access": "read"}),
            json!({"kind": "fs", "path": "/srv", "fallback": "@tmpdir", "access": "read"}),
        ] {
            let err = serde_json::from_value::<CapabilityRequest>(bad).unwrap_err();
            assert!(err.to_string().contains("`fallback` is @tmpdir"), "{err}");
        }
    }

    #[test]
    fn create_parents_may_follow_a_boolean_argument() {
        let written = json!({"kind": "fs", "path": "$path", "access": "read-write", "create_parents": "$create"});
        let r: CapabilityRequest = serde_json::from_value(written.clone()).unwrap();
        assert_eq!(serde_json::to_value(&r).unwrap(), written);
        let grant_for = |args: Value| {
            let mut g = Grant::default();
            g.add_requests(std::slice::from_ref(&r), &args).unwrap();
            (g.fs[0].create_parents, g.fs[0].create_parents_if.clone())
        };
        assert_eq!(
            grant_for(json!({"path": "/a/b", "create": "yes"})),
            (true, None)
        );
        assert_eq!(
            grant_for(json!({"path": "/a/b", "create": false})),
            (false, None)
        );
        assert_eq!(grant_for(json!({"path": "/a/b"})), (false, None));
        let plain: CapabilityRequest = serde_json::from_value(
            json!({"kind": "fs", "path": "$p", "access": "read-write", "create_parents": true}),
        )
        .unwrap();
        let mut g = Grant::default();
        g.add_requests(&[plain], &json!({"p": "/x/y"})).unwrap();
        assert!(g.fs[0].create_parents);
        for bad in ["create", "$", "$/", "$=x", "$a b"] {
            let bad =
                json!({"kind": "fs", "path": "/x", "access": "read-write", "create_parents": bad});
            assert!(serde_json::from_value::<CapabilityRequest>(bad).is_err());
        }
    }

    #[test]
    fn a_path_granted_for_itself_is_read_only_and_covered_by_wider_scopes() {
        let written = json!({"kind": "fs", "path": "$chdir", "access": "read", "scope": "itself"});
        let r: CapabilityRequest = serde_json::from_value(written.clone()).unwrap();
        assert_eq!(serde_json::to_value(&r).unwrap(), written);
        let bad = json!({"kind": "fs", "path": "/x", "access": "read-write", "scope": "itself"});
        let err = serde_json::from_value::<CapabilityRequest>(bad).unwrap_err();
        assert!(
            err.to_string().contains("`scope: itself` is read-only"),
            "{err}"
        );
        let g = |path: &str, scope| FsGrant {
            path: path.into(),
            ops: FsOps::READ,
            scope,
            create_parents: false,
            create_parents_if: None,
            fallback: None,
        };
        let itself = g("/srv/app", FsScope::Itself);
        assert!(g("/srv/app", FsScope::Entry).path_covers(&itself));
        assert!(g("/srv", FsScope::Tree).path_covers(&itself));
        assert!(!itself.path_covers(&g("/srv/app", FsScope::Entry)));
        assert!(!g("/srv", FsScope::Entry).path_covers(&itself));
    }

    #[test]
    fn create_parents_may_follow_a_trailing_slash_or_a_value() {
        let parents = |condition: &str, args: Value| {
            let written = json!({"kind": "fs", "path": "$dest", "access": "read-write", "create_parents": condition});
            let r: CapabilityRequest = serde_json::from_value(written.clone()).unwrap();
            assert_eq!(serde_json::to_value(&r).unwrap(), written);
            let mut g = Grant::default();
            g.add_requests(std::slice::from_ref(&r), &args).unwrap();
            g.fs[0].create_parents
        };
        assert!(parents("$dest/", json!({"dest": "/a/b/"})));
        assert!(!parents("$dest/", json!({"dest": "/a/b"})));
        assert!(parents(
            "$state=directory",
            json!({"dest": "/a", "state": "directory"})
        ));
        assert!(!parents(
            "$state=directory",
            json!({"dest": "/a", "state": "touch"})
        ));
        assert!(!parents("$state=directory", json!({"dest": "/a"})));
        let r: CapabilityRequest = serde_json::from_value(
            json!({"kind": "fs", "path": "$dest", "access": "read-write", "create_parents": "$dest/"}),
        )
        .unwrap();
        let CapabilityRequest::Fs(fs) = r else {
            panic!("not fs")
        };
        assert!(fs.to_string().contains("when dest ends with /"), "{fs}");
    }

    #[test]
    fn argument_patterns_match_word_by_word() {
        let g = ExecGrant {
            program: "systemctl".into(),
            args: Some(vec!["status".into(), "*.service".into(), "**".into()]),
        };
        let words = |s: &str| -> Vec<String> { s.split_whitespace().map(String::from).collect() };
        assert!(g.allows_args(&words("status nginx.service")));
        assert!(g.allows_args(&words("status nginx.service --no-pager -l")));
        assert!(!g.allows_args(&words("stop nginx.service")));
        assert!(!g.allows_args(&words("status")));
        let exact = ExecGrant {
            program: "ls".into(),
            args: Some(vec![]),
        };
        assert!(exact.allows_args(&[]));
        assert!(!exact.allows_args(&words("-l")));
        assert!(glob("a*c?", "abbbcd"));
        assert!(!glob("a*c", "abd"));
        assert!(glob("*", ""));
    }
}
