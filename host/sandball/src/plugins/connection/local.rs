//! The `local` connection: the node is the controller's own machine. The shim runs as
//! a child process whose stdin/stdout carry the session.

use super::session::{Session, SessionError};
use std::path::PathBuf;
use std::process::Stdio;
use tokio::process::Command;

/// Where the shim binary is: `$SANDBALL_SHIM`, else `sandball-shim` beside the
/// `sandball` executable.
pub fn shim_path() -> PathBuf {
    if let Some(p) = std::env::var_os("SANDBALL_SHIM") {
        return PathBuf::from(p);
    }
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|d| d.join("sandball-shim")))
        .unwrap_or_else(|| PathBuf::from("sandball-shim"))
}

/// Starts `sandball-shim serve` locally and opens a session with it.
pub async fn open(cache_dir: Option<&str>) -> Result<Session, SessionError> {
    let program = shim_path();
    let mut cmd = Command::new(&program);
    cmd.arg("serve");
    if let Some(dir) = cache_dir {
        cmd.arg("--cache-dir").arg(dir);
    }
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true);
    let mut child = cmd.spawn().map_err(|source| SessionError::Spawn {
        program: program.display().to_string(),
        source,
    })?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(SessionError::Broken {
            detail: "the shim's pipes were not set up".into(),
        });
    };
    // The child is killed when the session (which owns it) drops.
    Session::open(Box::new(stdout), Box::new(stdin), Box::new(child)).await
}
