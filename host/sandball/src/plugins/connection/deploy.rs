//! Shim deployment: putting `sandball-shim` on a node reached over a connection.
//!
//! A session is first started without any probe, by a command that runs the shim only
//! if the node holds it (see `open_session` in [`super::ssh`]). When it does not, one
//! probe (`uname -sm` and whether the node holds this shim) checks the node, and the
//! controller's own shim binary (beside `sandball`, installed, or `$SANDBALL_SHIM`) is streamed to
//! a temporary file in `<cache>/shim/<sha256>/`, its sha256 is checked on the node, and
//! it is renamed into place, so a node never runs a half-written or foreign shim and
//! later runs reuse it. Under become, all of this happens as the become user, in that
//! user's own cache. Inventory hosts that are aliases of one node (same user, address
//! and port) share one deployment per run. A node of another OS or architecture, a
//! full disk or a `noexec` mount is an error that names the cause.

use super::{Connection, ConnectionError};
use crate::plugins::r#become::{self, Become};
use crate::plugins::shell::quote_path;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, LazyLock, Mutex};
use tokio::sync::OnceCell;

/// Where the shim binary is on the controller: `$SANDBALL_SHIM`, else `sandball-shim`
/// beside the `sandball` executable (a build tree), else the installed one for the
/// controller's own architecture (`<prefix>/lib/sandball/shims/<arch>-linux/`).
pub fn shim_binary_path() -> PathBuf {
    if let Some(p) = std::env::var_os("SANDBALL_SHIM") {
        return PathBuf::from(p);
    }
    let beside = crate::layout::exe_dir()
        .map(|d| d.join(crate::layout::SHIM_NAME))
        .unwrap_or_else(|| PathBuf::from(crate::layout::SHIM_NAME));
    if beside.is_file() {
        return beside;
    }
    crate::layout::installed_shim(&normal_arch(std::env::consts::ARCH))
        .filter(|p| p.is_file())
        .unwrap_or(beside)
}

/// The node's cache when `sandball_cache_dir` is not set.
pub const DEFAULT_CACHE: &str = "~/.sandball";

/// The shim binary this controller deploys.
pub struct ShimBinary {
    /// Where it was read from.
    pub path: String,
    /// Its content.
    pub bytes: Vec<u8>,
    /// Its sha256 (hex).
    pub sha256: String,
    /// The OS it runs on, as `uname -s` says it.
    pub os: String,
    /// The architecture it runs on, as `uname -m` says it (normalised).
    pub arch: String,
}

static SHIM: OnceCell<Result<Arc<ShimBinary>, String>> = OnceCell::const_new();

/// The controller's shim binary, read and hashed once per run (off the async threads:
/// hashing tens of megabytes takes a while).
pub async fn shim_binary() -> Result<Arc<ShimBinary>, ConnectionError> {
    SHIM.get_or_init(|| async {
        let path = shim_binary_path();
        let read = tokio::task::spawn_blocking(move || {
            let bytes = std::fs::read(&path).map_err(|e| {
                format!(
                    "cannot read the sandball-shim to deploy ({}): {e}",
                    path.display()
                )
            })?;
            let sha256 = hex::encode(Sha256::digest(&bytes));
            let (os, arch) = binary_target(&bytes);
            Ok(Arc::new(ShimBinary {
                path: path.display().to_string(),
                bytes,
                sha256,
                os,
                arch,
            }))
        });
        read.await
            .map_err(|e| format!("reading the sandball-shim to deploy failed: {e}"))?
    })
    .await
    .clone()
    .map_err(ConnectionError::Remote)
}

/// Starts reading and hashing the shim binary in the background, so that it is ready
/// by the time the first connection is up.
pub fn prefetch() {
    if SHIM.initialized() {
        return;
    }
    if let Ok(rt) = tokio::runtime::Handle::try_current() {
        rt.spawn(async {
            let _ = shim_binary().await;
        });
    }
}

/// Where the shim of `sha256` lives in the cache `cache` on the node.
pub fn shim_path(cache: &str, sha256: &str) -> String {
    format!(
        "{}/shim/{sha256}/sandball-shim",
        cache.trim_end_matches('/')
    )
}

/// The OS and architecture an executable is for: from its ELF header, else this
/// controller's own.
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
    let os = match std::env::consts::OS {
        "linux" => "Linux",
        "macos" => "Darwin",
        "freebsd" => "FreeBSD",
        other => other,
    };
    (os.into(), normal_arch(std::env::consts::ARCH))
}

/// `uname -m` names, folded so that the same machine compares equal.
fn normal_arch(m: &str) -> String {
    match m {
        "amd64" | "x86_64" => "x86_64".into(),
        "arm64" | "aarch64" => "aarch64".into(),
        "i386" | "i486" | "i586" | "i686" | "x86" => "x86".into(),
        m if m.starts_with("armv") || m == "arm" => "arm".into(),
        "ppc64le" | "ppc64" | "powerpc64" => "ppc64".into(),
        other => other.into(),
    }
}

/// Makes sure the node holds this controller's shim under `cache` (as the become user,
/// in that user's own cache, when there is one) and returns its path there. `host`
/// names the node in errors; `node` is its `uname -sm` when the caller knows it
/// (otherwise it is asked, with whether the shim is there already).
pub async fn ensure_shim(
    conn: &dyn Connection,
    become_: Option<&Become>,
    host: &str,
    cache: &str,
    node: Option<&str>,
) -> Result<String, ConnectionError> {
    let shim = shim_binary().await?;
    let path = shim_path(cache, &shim.sha256);
    let dir = path.trim_end_matches("/sandball-shim").to_string();
    let uname = match node {
        Some(n) => n.trim().to_string(),
        None => {
            let probe = format!(
                "uname -sm; if {} version >/dev/null 2>&1; then echo present; else echo absent; fi",
                quote_path(&path)
            );
            let out = r#become::exec_command(conn, become_, &probe, None)
                .await?
                .success(&format!("cannot probe {host}"))?;
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            let mut lines = text.lines();
            let uname = lines.next().unwrap_or_default().trim().to_string();
            if lines.next() == Some("present") {
                check_target(&shim, host, &uname)?;
                tracing::debug!(host, path, "shim already on the node");
                return Ok(path);
            }
            uname
        }
    };
    check_target(&shim, host, &uname)?;
    tracing::debug!(
        host,
        path,
        user = become_.map(|b| b.user.as_str()),
        "uploading the shim"
    );
    // Received, checked, made executable, renamed into place and run once, in one
    // command: a copy that cannot run there exits with NOEXEC.
    let upload = format!(
        "set -e; umask 022; d={dir}; mkdir -p \"$d\"; chmod 755 {cache} {cache}/shim \"$d\" 2>/dev/null || :; \
         t=$(mktemp \"$d/.upload.XXXXXX\"); trap 'rm -f \"$t\"' EXIT; cat > \"$t\"; \
         s=$( (sha256sum \"$t\" 2>/dev/null || shasum -a 256 \"$t\") | cut -d' ' -f1); \
         if [ \"$s\" != {sha} ]; then echo \"the uploaded file's sha256 is $s, not {sha}\" >&2; exit 3; fi; \
         chmod 755 \"$t\"; mv -f \"$t\" \"$d/sandball-shim\"; \
         \"$d/sandball-shim\" version >/dev/null 2>&1 || exit {NOEXEC}",
        dir = quote_path(&dir),
        cache = quote_path(cache.trim_end_matches('/')),
        sha = shim.sha256,
    );
    let out = r#become::exec_command(conn, become_, &upload, Some(&shim.bytes)).await?;
    if out.rc == NOEXEC {
        return Err(ConnectionError::Remote(format!(
            "sandball-shim was uploaded to {path} on {host} but cannot run there (a filesystem mounted noexec? set sandball_cache_dir to a directory where programs may run)"
        )));
    }
    out.success(&format!("cannot upload sandball-shim to {dir} on {host}"))?;
    Ok(path)
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
) -> Result<String, ConnectionError>
where
    F: FnOnce() -> Fut,
    Fut: Future<Output = Result<String, ConnectionError>>,
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

/// Refuses a node of another system or architecture than the shim's (`uname` is its
/// `uname -sm`).
fn check_target(shim: &ShimBinary, host: &str, uname: &str) -> Result<(), ConnectionError> {
    let (os, arch) = uname.split_once(' ').unwrap_or((uname, ""));
    if os != shim.os || normal_arch(arch) != shim.arch {
        return Err(ConnectionError::Remote(format!(
            "{host} is {os} {arch}, but the sandball-shim this controller deploys ({}) is for {} {}: build sandball-shim for {os} {arch} and point SANDBALL_SHIM at it",
            shim.path, shim.os, shim.arch
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elf_headers_name_their_machine() {
        let mut elf = b"\x7fELF\x02\x01\x01".to_vec();
        elf.resize(24, 0);
        elf[18] = 0xB7;
        assert_eq!(binary_target(&elf), ("Linux".into(), "aarch64".into()));
        elf[18] = 0x3E;
        assert_eq!(binary_target(&elf).1, "x86_64");
        assert_eq!(normal_arch("arm64"), "aarch64");
        assert_eq!(normal_arch("armv7l"), "arm");
    }
}
