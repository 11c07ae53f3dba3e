//! Shim deployment: which `sandball-shim` a node gets, and putting it there.
//!
//! The controller has one shim per node system and architecture ([`Shims`]), static
//! Linux executables: in an install, `<prefix>/lib/sandball/shims/<arch>-linux/sandball-shim`
//! beside `<prefix>/bin/sandball`; in a build tree, `target/<triple>/<profile>/sandball-shim`
//! for the musl targets `make build` builds ([`SHIM_TARGETS`]). `$SANDBALL_SHIM` names
//! one file that replaces them all. A shim's architecture is read from its ELF header.
//!
//! A session is first started without any probe, by a command that picks the shim for
//! the node's `uname -sm` among the controller's and runs it if the node holds it (see
//! `open_session` in [`super::ssh`]). When it does not, the node's `uname -sm` (said by
//! that command, or asked by one probe) chooses the shim, which is streamed to a
//! temporary file in `<cache>/shim/<sha256>/` — compressed and decompressed there by
//! the node's `xz -dc`, else its `gzip -dc` (what it has is said in the same breath as
//! its `uname -sm`), as it is otherwise — its sha256 checked on the node, and put in place
//! (never over a shim there that runs: see `upload_command`), so a node never runs a
//! half-written or foreign shim and later runs reuse it.
//! Under become, all of this happens as the become user, in that user's own cache. Inventory hosts that are aliases of one node (same user, address and
//! port) share one deployment per run. A node whose system or architecture has no shim
//! is [`NoShim`] (its legacy modules run without one); a full disk or a `noexec`
//! mount is an error that names the cause.

use super::compress::{Format, XZ_SHIM, compressed};
use super::{ConnectError, Connection, ConnectionError};
use crate::plugins::r#become::{self, Become};
use crate::plugins::shell::quote_path;
use sandball_pycompat::shell::quote;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex};
use tokio::sync::OnceCell;

/// The Rust targets `make build` builds a static shim for, one per node architecture
/// (the Makefile's `SHIM_TARGETS`): where a build tree holds its shims.
pub const SHIM_TARGETS: &[&str] = &["x86_64-unknown-linux-musl", "aarch64-unknown-linux-musl"];

/// The node's cache when `sandball_cache_dir` is not set.
pub const DEFAULT_CACHE: &str = "~/.sandball";

/// The shim's file name, in an install, a build tree and a node's cache alike.
const SHIM_FILE: &str = crate::layout::SHIM_NAME;

/// One shim this controller can deploy.
pub struct Shim {
    /// Where it is on the controller.
    pub path: PathBuf,
    /// The system it runs on, as `uname -s` says it.
    pub os: String,
    /// The architecture it runs on, as `uname -m` says it (normalised).
    pub arch: String,
    /// Its content and sha256, read once per run.
    binary: OnceCell<Result<Arc<ShimBinary>, String>>,
}

/// A shim's content, read and hashed.
pub struct ShimBinary {
    /// Its content.
    pub bytes: Vec<u8>,
    /// Its sha256 (hex).
    pub sha256: String,
}

impl Shim {
    fn new(path: PathBuf) -> Shim {
        let (os, arch) = binary_target(&header(&path));
        Shim {
            path,
            os,
            arch,
            binary: OnceCell::new(),
        }
    }

    /// `Linux x86_64`.
    fn node(&self) -> String {
        format!("{} {}", self.os, self.arch)
    }

    /// Its content and sha256, read and hashed once per run (off the async threads:
    /// hashing tens of megabytes takes a while).
    pub async fn binary(&self) -> Result<Arc<ShimBinary>, ConnectionError> {
        self.binary
            .get_or_init(|| async {
                let path = self.path.clone();
                let read = tokio::task::spawn_blocking(move || {
                    let bytes = std::fs::read(&path).map_err(|e| {
                        format!(
                            "cannot read the sandball-shim to deploy ({}): {e}",
                            path.display()
                        )
                    })?;
                    let sha256 = hex::encode(Sha256::digest(&bytes));
                    Ok(Arc::new(ShimBinary { bytes, sha256 }))
                });
                read.await
                    .map_err(|e| format!("reading the sandball-shim to deploy failed: {e}"))?
            })
            .await
            .clone()
            .map_err(ConnectionError::Remote)
    }
}

/// The shims this controller has, one per node system and architecture.
pub struct Shims {
    shims: Vec<Shim>,
}

static SHIMS: LazyLock<Shims> = LazyLock::new(|| {
    let shims = Shims::locate(
        std::env::current_exe().ok().as_deref(),
        std::env::var_os("SANDBALL_SHIM").map(PathBuf::from),
    );
    tracing::debug!(shims = %shims.describe(), "the shims this controller deploys");
    shims
});

impl Shims {
    /// The shims of this run, found once (see the module's documentation).
    pub fn get() -> &'static Shims {
        &SHIMS
    }

    /// The shims for a controller whose executable is `exe`: `chosen` alone when it is
    /// given (`$SANDBALL_SHIM`); else those of an install beside it, else those of the
    /// build tree it is in; and when none of those runs on the controller's own
    /// machine, the `sandball-shim` beside `exe` (a plain `cargo build`'s) for it.
    pub fn locate(exe: Option<&Path>, chosen: Option<PathBuf>) -> Shims {
        if let Some(path) = chosen {
            return Shims {
                shims: vec![Shim::new(path)],
            };
        }
        let Some(bin) = exe.and_then(Path::parent) else {
            return Shims { shims: vec![] };
        };
        let up = bin.parent().unwrap_or(bin);
        let installed = crate::layout::lib_dir_of(up).join("shims");
        let mut paths: Vec<PathBuf> = match std::fs::read_dir(&installed) {
            Ok(dirs) => {
                let mut found: Vec<PathBuf> = dirs
                    .filter_map(Result::ok)
                    .filter(|d| d.file_name().to_string_lossy().ends_with("-linux"))
                    .map(|d| d.path().join(SHIM_FILE))
                    .collect();
                found.sort();
                found
            }
            // A build tree: `target/<profile>/sandball` and `target/<triple>/<profile>/`.
            Err(_) => match bin.file_name() {
                Some(profile) => SHIM_TARGETS
                    .iter()
                    .map(|t| up.join(t).join(profile).join(SHIM_FILE))
                    .collect(),
                None => vec![],
            },
        };
        paths.retain(|p| p.is_file());
        let mut shims: Vec<Shim> = paths.into_iter().map(Shim::new).collect();
        let own = controller_node();
        let beside = bin.join(SHIM_FILE);
        if !shims.iter().any(|s| s.node() == own) && beside.is_file() {
            shims.push(Shim::new(beside));
        }
        // One per node: the first found wins.
        let mut seen = vec![];
        shims.retain(|s| {
            let node = s.node();
            let first = !seen.contains(&node);
            seen.push(node);
            first
        });
        Shims { shims }
    }

    /// The shim for a node whose `uname -sm` is `uname`, if there is one.
    pub fn for_node(&self, uname: &str) -> Option<&Shim> {
        let (os, arch) = uname.trim().split_once(' ').unwrap_or((uname.trim(), ""));
        let arch = normal_arch(arch);
        self.shims.iter().find(|s| s.os == os && s.arch == arch)
    }

    /// The shim for the controller's own machine (the `local` connection's node).
    pub fn for_controller(&self) -> Result<&Shim, NoShim> {
        let node = controller_node();
        self.for_node(&node)
            .ok_or_else(|| self.none_for("the controller's own machine", &node))
    }

    /// The error for `host`, whose `uname -sm` is `uname`, having no shim.
    pub fn none_for(&self, host: &str, uname: &str) -> NoShim {
        NoShim {
            host: host.to_string(),
            node: uname.trim().to_string(),
            available: self.describe(),
        }
    }

    /// What shims there are, for messages: `Linux x86_64 (path), …`.
    pub fn describe(&self) -> String {
        if self.shims.is_empty() {
            return "none (`make build` builds them)".into();
        }
        self.shims
            .iter()
            .map(|s| format!("{} ({})", s.node(), s.path.display()))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// A shell command that sets `s` to where the node's shim is in `cache` (by its
    /// `uname -sm`; empty when this controller has none for it).
    async fn select(&self, cache: &str) -> Result<String, ConnectionError> {
        let mut arms = String::new();
        for shim in &self.shims {
            let bin = shim.binary().await?;
            let names: Vec<String> = UNAME_M
                .iter()
                .filter(|(_, arch)| *arch == shim.arch)
                .map(|(m, _)| *m)
                .chain(std::iter::once(shim.arch.as_str()))
                .map(|m| quote(&format!("{} {m}", shim.os)))
                .collect();
            arms.push_str(&format!(
                "{}) s={};; ",
                names.join("|"),
                quote_path(&shim_path(cache, &bin.sha256))
            ));
        }
        Ok(format!("case \"$(uname -sm)\" in {arms}*) s=;; esac"))
    }
}

/// A node of a system or architecture this controller has no shim for: its component
/// modules cannot run there; its legacy modules run the classic way, without a shim.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{host} is {node}, and this controller has no sandball-shim for it (it has: {available})")]
pub struct NoShim {
    /// The host, as the connection names it.
    pub host: String,
    /// Its `uname -sm`.
    pub node: String,
    /// The shims there are ([`Shims::describe`]).
    pub available: String,
}

/// The controller's own machine as `uname -sm` (normalised) says it.
fn controller_node() -> String {
    let os = match std::env::consts::OS {
        "linux" => "Linux",
        "macos" => "Darwin",
        "freebsd" => "FreeBSD",
        other => other,
    };
    format!("{os} {}", normal_arch(std::env::consts::ARCH))
}

/// The first bytes of a file (its ELF header), or none when it cannot be read.
fn header(path: &Path) -> Vec<u8> {
    let mut head = Vec::with_capacity(64);
    if let Ok(f) = std::fs::File::open(path) {
        let _ = f.take(64).read_to_end(&mut head);
    }
    head
}

/// Starts reading and hashing the shims in the background, so that they are ready by
/// the time the first connection is up.
pub fn prefetch() {
    if let Ok(rt) = tokio::runtime::Handle::try_current() {
        for shim in &Shims::get().shims {
            if !shim.binary.initialized() {
                rt.spawn(async {
                    let _ = shim.binary().await;
                });
            }
        }
    }
}

/// Where the shim of `sha256` lives in the cache `cache` on the node.
pub fn shim_path(cache: &str, sha256: &str) -> String {
    format!("{}/shim/{sha256}/{SHIM_FILE}", cache.trim_end_matches('/'))
}

/// The OS and architecture an executable is for: from its ELF header, else this
/// controller's own (a script standing in for the shim runs where the controller does).
fn binary_target(bytes: &[u8]) -> (String, String) {
    if bytes.len() > 20 && bytes.starts_with(b"\x7fELF") {
        let machine = if bytes[5] == 1 {
            u16::from_le_bytes([bytes[18], bytes[19]])
        } else {
            u16::from_be_bytes([bytes[18], bytes[19]])
        };
        let arch = match machine {
            0x3E => "x86_64",
            0xB7 => "aarch64",
            0x28 => "arm",
            0x03 => "x86",
            0xF3 => "riscv64",
            0x15 => "ppc64",
            0x16 => "s390x",
            other => return ("Linux".into(), format!("ELF machine {other:#x}")),
        };
        return ("Linux".into(), arch.into());
    }
    let own = controller_node();
    let (os, arch) = own.split_once(' ').unwrap_or((&own, ""));
    (os.into(), arch.into())
}

/// `uname -m` words and the architecture each names, where they differ.
const UNAME_M: &[(&str, &str)] = &[
    ("amd64", "x86_64"),
    ("arm64", "aarch64"),
    ("i386", "x86"),
    ("i486", "x86"),
    ("i586", "x86"),
    ("i686", "x86"),
    ("ppc64le", "ppc64"),
    ("powerpc64", "ppc64"),
];

/// `uname -m` names, folded so that the same machine compares equal.
fn normal_arch(m: &str) -> String {
    if let Some((_, arch)) = UNAME_M.iter().find(|(word, _)| *word == m) {
        return (*arch).into();
    }
    if m.starts_with("armv") {
        return "arm".into();
    }
    m.into()
}

/// The `uname -sm` of the nodes seen this run, by node (`user@address:port`): a node
/// with no shim is known as such without asking it again.
static NODES: LazyLock<Mutex<HashMap<String, String>>> = LazyLock::new(Mutex::default);

/// The shim for the node `target` when it is known to have none (the answer for each
/// later session that would start one there).
pub fn known_shimless(target: &str) -> Option<NoShim> {
    let nodes = NODES.lock().unwrap_or_else(|e| e.into_inner());
    let uname = nodes.get(target)?;
    let shims = Shims::get();
    shims
        .for_node(uname)
        .is_none()
        .then(|| shims.none_for(target, uname))
}

/// A command that starts the node's shim from `cache` with `serve`, or, when the node
/// does not hold it, exits with [`super::session::NOT_DEPLOYED`] saying its `uname -sm`
/// and what it can decompress the shim with ([`super::session::DECODER_LINE`]).
pub async fn start_command(cache: &str) -> Result<String, ConnectionError> {
    let select = Shims::get().select(cache).await?;
    Ok(format!(
        "{select}; [ -n \"$s\" ] && [ -x \"$s\" ] || {{ echo 'sandball-shim is not deployed here' >&2; echo \"{}$(uname -sm)\" >&2; d=$({DECODER}); [ -z \"$d\" ] || echo \"{}$d\" >&2; exit {}; }}; exec \"$s\" serve --cache-dir {}",
        super::session::NODE_LINE,
        super::session::DECODER_LINE,
        super::session::NOT_DEPLOYED,
        quote_path(cache),
    ))
}

/// A shell command that prints what the node can decompress the shim with: `xz`
/// (which packs it smallest), else `gzip`, else nothing.
const DECODER: &str = "if command -v xz >/dev/null 2>&1; then echo xz; elif command -v gzip >/dev/null 2>&1; then echo gzip; fi";

/// The format of the shim's upload to a node whose [`DECODER`] printed `name`.
pub fn decoder_named(name: &str) -> Option<Format> {
    match name.trim() {
        "xz" => Some(XZ_SHIM),
        "gzip" => Some(Format::Gzip),
        _ => None,
    }
}

/// What a node said of itself when it did not hold its shim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeSaid {
    /// Its `uname -sm`.
    pub uname: String,
    /// How the shim is compressed for it (`None`: it has neither `xz` nor `gzip`).
    pub decoder: Option<Format>,
}

/// Makes sure the node holds its shim under `cache` (as the become user, in that
/// user's own cache, when there is one) and returns its path there. `host` names the
/// node in errors; `node` is what it said of itself when the caller knows it
/// (otherwise it is asked, with whether the shim is there already).
pub async fn ensure_shim(
    conn: &dyn Connection,
    become_: Option<&Become>,
    host: &str,
    cache: &str,
    node: Option<NodeSaid>,
) -> Result<String, ConnectError> {
    let shims = Shims::get();
    let NodeSaid { uname, decoder } = match node {
        Some(n) => n,
        None => {
            let probe = format!(
                "{}; uname -sm; if [ -n \"$s\" ] && \"$s\" version >/dev/null 2>&1; then echo present; else echo absent; fi; {DECODER}",
                shims.select(cache).await?
            );
            let out = r#become::exec_command(conn, become_, &probe, None)
                .await?
                .success(&format!("cannot probe {host}"))?;
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            let mut lines = text.lines();
            let uname = lines.next().unwrap_or_default().trim().to_string();
            if lines.next() == Some("present")
                && let Some(shim) = shims.for_node(&uname)
            {
                let path = shim_path(cache, &shim.binary().await?.sha256);
                tracing::debug!(host, path, "shim already on the node");
                return Ok(path);
            }
            let decoder = lines.next().and_then(decoder_named);
            NodeSaid { uname, decoder }
        }
    };
    let uname = uname.trim().to_string();
    NODES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(host.to_string(), uname.clone());
    let shim = shims
        .for_node(&uname)
        .ok_or_else(|| shims.none_for(host, &uname))?;
    let binary = shim.binary().await?;
    let path = shim_path(cache, &binary.sha256);
    let dir = path.trim_end_matches(&format!("/{SHIM_FILE}")).to_string();
    let packed = match decoder {
        Some(format) => compressed(format, &binary.sha256, &binary.bytes)
            .await
            .map(|packed| (format, packed)),
        None => {
            tracing::debug!(
                host,
                "the node has neither xz nor gzip: the shim is sent uncompressed"
            );
            None
        }
    };
    let (receive, payload) = match &packed {
        Some((format, packed)) => (format.decoder(), packed.as_slice()),
        None => ("cat", binary.bytes.as_slice()),
    };
    tracing::debug!(
        host,
        path,
        shim = %shim.path.display(),
        user = become_.map(|b| b.user.as_str()),
        shim_bytes = binary.bytes.len(),
        sent_bytes = payload.len(),
        decoder = receive,
        "uploading the shim"
    );
    let upload = upload_command(cache, &dir, &binary.sha256, receive);
    let out = r#become::exec_command(conn, become_, &upload, Some(payload)).await?;
    if out.rc == NOEXEC {
        return Err(ConnectionError::Remote(format!(
            "sandball-shim was uploaded to {path} on {host} but cannot run there (a filesystem mounted noexec? set sandball_cache_dir to a directory where programs may run)"
        ))
        .into());
    }
    out.success(&format!("cannot upload sandball-shim to {dir} on {host}"))?;
    Ok(path)
}

/// The command that receives a shim whose sha256 is `sha` on its standard input (through
/// `receive`: `cat`, or `xz -dc` or `gzip -dc` for a compressed one) into a temporary file in `dir`
/// (of the node's cache `cache`), checks it, makes it executable, puts it in place and
/// runs it once: a copy that cannot run there exits with [`NOEXEC`]. A shim already in
/// place that runs is kept (its path is its content's address, so it is the same shim),
/// never replaced: another host's upload to the same cache (an alias of the node, or
/// another run) may have started it, and a shim whose executable is replaced under it
/// cannot start its session (it finds its own file deleted). The temporary file is
/// linked into place (atomically, only where there is none), or renamed on a file system
/// without links.
fn upload_command(cache: &str, dir: &str, sha: &str, receive: &str) -> String {
    format!(
        "set -e; umask 022; d={dir}; mkdir -p \"$d\"; chmod 755 {cache} {cache}/shim \"$d\" 2>/dev/null || :; \
         t=$(mktemp \"$d/.upload.XXXXXX\"); trap 'rm -f \"$t\"' EXIT; {receive} > \"$t\"; \
         s=$( (sha256sum \"$t\" 2>/dev/null || shasum -a 256 \"$t\") | cut -d' ' -f1); \
         if [ \"$s\" != {sha} ]; then echo \"the uploaded file's sha256 is $s, not {sha}\" >&2; exit 3; fi; \
         chmod 755 \"$t\"; f=\"$d/{SHIM_FILE}\"; \
         ln \"$t\" \"$f\" 2>/dev/null || \"$f\" version >/dev/null 2>&1 || mv -f \"$t\" \"$f\"; \
         \"$f\" version >/dev/null 2>&1 || exit {NOEXEC}",
        dir = quote_path(dir),
        cache = quote_path(cache.trim_end_matches('/')),
    )
}

/// The deployments of this run, done or under way, by node (`user@address:port`),
/// become user and cache: inventory hosts that are aliases of one node share one
/// upload, the others waiting for it instead of sending the same shim again.
type Deployments = HashMap<String, Arc<OnceCell<String>>>;
static DEPLOYED: LazyLock<Mutex<Deployments>> = LazyLock::new(Mutex::default);

/// Runs `deploy` (an [`ensure_shim`]) once per node, become user and cache: a host
/// whose node another host already deployed to (or is deploying to) gets that path
/// without uploading again. A deployment that fails is not remembered, so the next
/// host tries again.
pub async fn once_per_node<F, Fut>(
    node: &str,
    become_user: Option<&str>,
    cache: &str,
    deploy: F,
) -> Result<String, ConnectError>
where
    F: FnOnce() -> Fut,
    Fut: Future<Output = Result<String, ConnectError>>,
{
    let key = format!("{node}\0{}\0{cache}", become_user.unwrap_or_default());
    let cell = DEPLOYED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(key)
        .or_default()
        .clone();
    cell.get_or_try_init(deploy).await.cloned()
}

/// The exit status of the upload command when the uploaded shim does not run.
const NOEXEC: i32 = 4;

#[cfg(test)]
mod tests {
    use super::*;

    /// The first bytes of an ELF executable for `machine` (`e_machine`).
    fn elf(machine: u8) -> Vec<u8> {
        let mut elf = b"\x7fELF\x02\x01\x01".to_vec();
        elf.resize(64, 0);
        elf[18] = machine;
        elf
    }

    /// `e_machine` of the controller's own architecture.
    fn own_machine() -> u8 {
        match std::env::consts::ARCH {
            "aarch64" => 0xB7,
            _ => 0x3E,
        }
    }

    /// Writes `content` at `root/rel`, making its directories.
    fn put(root: &Path, rel: &str, content: &[u8]) -> PathBuf {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, content).unwrap();
        path
    }

    /// Each shim found, as `(node, path)`.
    fn found(shims: &Shims) -> Vec<(String, PathBuf)> {
        shims
            .shims
            .iter()
            .map(|s| (s.node(), s.path.clone()))
            .collect()
    }

    #[test]
    fn elf_headers_name_their_machine() {
        assert_eq!(
            binary_target(&elf(0xB7)),
            ("Linux".into(), "aarch64".into())
        );
        assert_eq!(binary_target(&elf(0x3E)).1, "x86_64");
        assert_eq!(binary_target(&elf(0x99)).1, "ELF machine 0x99");
        assert_eq!(normal_arch("arm64"), "aarch64");
        assert_eq!(normal_arch("amd64"), "x86_64");
        assert_eq!(normal_arch("armv7l"), "arm");
        assert_eq!(normal_arch("riscv64"), "riscv64");
    }

    #[test]
    fn a_build_tree_gives_the_static_shim_of_each_architecture() {
        let t = tempfile::tempdir().unwrap();
        let exe = put(t.path(), "debug/sandball", b"");
        // The host build beside the controller is not deployed when a static shim
        // runs on the controller's machine.
        put(t.path(), "debug/sandball-shim", &elf(own_machine()));
        let x86 = put(
            t.path(),
            "x86_64-unknown-linux-musl/debug/sandball-shim",
            &elf(0x3E),
        );
        let arm = put(
            t.path(),
            "aarch64-unknown-linux-musl/debug/sandball-shim",
            &elf(0xB7),
        );
        // Another profile's shims are not this controller's.
        put(
            t.path(),
            "x86_64-unknown-linux-musl/release/sandball-shim",
            &elf(0x3E),
        );
        let shims = Shims::locate(Some(&exe), None);
        assert_eq!(
            found(&shims),
            vec![
                ("Linux x86_64".to_string(), x86.clone()),
                ("Linux aarch64".to_string(), arm.clone())
            ]
        );
        assert_eq!(shims.for_node("Linux x86_64\n").unwrap().path, x86);
        assert_eq!(shims.for_node("Linux amd64").unwrap().path, x86);
        assert_eq!(shims.for_node("Linux arm64").unwrap().path, arm);
        assert!(shims.for_node("Linux riscv64").is_none());
        assert!(shims.for_node("Darwin arm64").is_none());
        assert!(shims.for_node("").is_none());
    }

    #[test]
    fn an_install_gives_its_own_shims_alone() {
        let t = tempfile::tempdir().unwrap();
        let exe = put(t.path(), "bin/sandball", b"");
        let arm = put(
            t.path(),
            "lib/sandball/shims/aarch64-linux/sandball-shim",
            &elf(0xB7),
        );
        let x86 = put(
            t.path(),
            "lib/sandball/shims/x86_64-linux/sandball-shim",
            &elf(0x3E),
        );
        // Not a shim directory of the layout.
        put(
            t.path(),
            "lib/sandball/shims/README/sandball-shim",
            &elf(0x3E),
        );
        put(
            t.path(),
            "x86_64-unknown-linux-musl/bin/sandball-shim",
            &elf(0x3E),
        );
        let shims = Shims::locate(Some(&exe), None);
        assert_eq!(
            found(&shims),
            vec![
                ("Linux aarch64".to_string(), arm),
                ("Linux x86_64".to_string(), x86)
            ]
        );
    }

    #[test]
    fn the_controller_s_own_build_serves_its_machine_when_there_is_no_static_one() {
        let t = tempfile::tempdir().unwrap();
        let exe = put(t.path(), "debug/sandball", b"");
        let own = put(t.path(), "debug/sandball-shim", &elf(own_machine()));
        let shims = Shims::locate(Some(&exe), None);
        assert_eq!(shims.for_controller().unwrap().path, own);
        assert_eq!(shims.shims.len(), 1);
        // Nothing at all: every node is without a shim, and says what to do.
        let empty = tempfile::tempdir().unwrap();
        let exe = put(empty.path(), "debug/sandball", b"");
        let none = Shims::locate(Some(&exe), None)
            .for_controller()
            .err()
            .unwrap();
        assert!(none.to_string().contains("`make build`"), "{none}");
        assert!(Shims::locate(None, None).shims.is_empty());
    }

    #[test]
    fn sandball_shim_replaces_them_all_and_a_node_without_one_is_named() {
        let t = tempfile::tempdir().unwrap();
        let exe = put(t.path(), "debug/sandball", b"");
        put(
            t.path(),
            "x86_64-unknown-linux-musl/debug/sandball-shim",
            &elf(0x3E),
        );
        let chosen = put(t.path(), "elsewhere/shim", &elf(0xB7));
        let shims = Shims::locate(Some(&exe), Some(chosen.clone()));
        assert_eq!(found(&shims), vec![("Linux aarch64".to_string(), chosen)]);
        assert!(shims.for_node("Linux x86_64").is_none());
        let msg = shims.none_for("web1", "Linux x86_64\n").to_string();
        assert_eq!(
            msg,
            format!(
                "web1 is Linux x86_64, and this controller has no sandball-shim for it (it has: Linux aarch64 ({}))",
                t.path().join("elsewhere/shim").display()
            )
        );
        // A script standing in for the shim runs where the controller runs.
        let script = put(t.path(), "wrapper", b"#!/bin/sh\n");
        let shims = Shims::locate(Some(&exe), Some(script));
        assert!(shims.for_controller().is_ok());
    }

    #[tokio::test]
    async fn the_start_command_picks_the_shim_by_the_node_s_uname() {
        let t = tempfile::tempdir().unwrap();
        let exe = put(t.path(), "debug/sandball", b"");
        put(
            t.path(),
            "x86_64-unknown-linux-musl/debug/sandball-shim",
            &elf(0x3E),
        );
        put(
            t.path(),
            "aarch64-unknown-linux-musl/debug/sandball-shim",
            &elf(0xB7),
        );
        let shims = Shims::locate(Some(&exe), None);
        let select = shims.select("~/.sb cache").await.unwrap();
        let sha = |n: usize| hex::encode(Sha256::digest(elf([0x3E, 0xB7][n])));
        // A fake `uname` says what the node is.
        let bin = t.path().join("fake-bin");
        let home = t.path().join("home");
        for (uname, want) in [
            ("Linux x86_64", Some(0)),
            ("Linux amd64", Some(0)),
            ("Linux aarch64", Some(1)),
            ("Linux arm64", Some(1)),
            ("Linux riscv64", None),
            ("Darwin arm64", None),
        ] {
            put(
                &bin,
                "uname",
                format!("#!/bin/sh\necho '{uname}'\n").as_bytes(),
            );
            std::fs::set_permissions(
                bin.join("uname"),
                std::os::unix::fs::PermissionsExt::from_mode(0o755),
            )
            .unwrap();
            let out = std::process::Command::new("/bin/sh")
                .arg("-c")
                .arg(format!("{select}; printf %s \"$s\""))
                .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
                .env("HOME", &home)
                .output()
                .unwrap();
            let want = want
                .map(|n| format!("{}/.sb cache/shim/{}/sandball-shim", home.display(), sha(n)))
                .unwrap_or_default();
            assert_eq!(String::from_utf8_lossy(&out.stdout), want, "{uname}");
        }
    }

    /// Runs the upload of `payload` (sha256 `sha`) into `cache` with `/bin/sh`, locally:
    /// its exit status and what it left in the shim's directory.
    fn upload(cache: &Path, sha: &str, payload: &[u8]) -> (i32, Vec<String>) {
        use std::io::Write;
        let cache = cache.display().to_string();
        let dir = shim_path(&cache, sha)
            .trim_end_matches(&format!("/{SHIM_FILE}"))
            .to_string();
        let mut child = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(upload_command(&cache, &dir, sha, "cat"))
            .stdin(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(payload).unwrap();
        let rc = child.wait().unwrap().code().unwrap();
        let mut left: Vec<String> = std::fs::read_dir(&dir)
            .map(|d| {
                d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        left.sort();
        (rc, left)
    }

    #[test]
    fn an_upload_keeps_a_shim_in_place_that_runs_and_replaces_one_that_does_not() {
        use std::os::unix::fs::MetadataExt;
        let t = tempfile::tempdir().unwrap();
        let cache = t.path().join("cache");
        // A stand-in for the shim: `version` succeeds.
        let shim = b"#!/bin/sh\n[ \"$1\" = version ]\n";
        let sha = hex::encode(Sha256::digest(shim));
        let path = PathBuf::from(shim_path(&cache.display().to_string(), &sha));
        let one = vec![SHIM_FILE.to_string()];
        assert_eq!(upload(&cache, &sha, shim), (0, one.clone()));
        assert_eq!(std::fs::read(&path).unwrap(), shim);
        let inode = std::fs::metadata(&path).unwrap().ino();
        // Another host's upload of the same shim (an alias of the node): the file a
        // shim may have been started from stays, not replaced by an equal copy.
        assert_eq!(upload(&cache, &sha, shim), (0, one.clone()));
        assert_eq!(std::fs::metadata(&path).unwrap().ino(), inode);
        // A file there that does not run is replaced.
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, "not a shim").unwrap();
        assert_eq!(upload(&cache, &sha, shim), (0, one.clone()));
        assert_eq!(std::fs::read(&path).unwrap(), shim);
        // Bytes that are not the shim named are refused and leave nothing.
        let other = hex::encode(Sha256::digest(b"other"));
        assert_eq!(upload(&cache, &other, shim), (3, vec![]));
    }
}
