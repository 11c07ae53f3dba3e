//! The classic flow of a legacy module that is not piped: a private temporary
//! directory (umask 77) under `remote_tmp` (a system one for an unprivileged become
//! user), the module and its args file put there, made executable (or handed over to
//! the become user as Ansible hands them over), the run, and the directory removed —
//! in as few round trips as the connection allows.

use crate::assemble::finder::LegacyModule;
use crate::assemble::legacy::Assembled;
use crate::executor::context::WORLD_READABLE_VAR;
use crate::plugins::r#become::{self, Become};
use crate::plugins::connection::{Connection, ConnectionError, ExecOutput};
use crate::plugins::shell::quote_path;
use sandball_pycompat::shell::quote;

/// Where files for an unprivileged become user go (Ansible's `system_tmpdirs`).
const SYSTEM_TMPDIRS: &[&str] = &["/var/tmp", "/tmp"];

/// Makes a private temporary directory under `base` (umask 77) and returns its path.
pub(super) async fn make_tmp(conn: &dyn Connection, base: &str) -> Result<String, String> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros())
        .unwrap_or_default();
    let name = format!(
        "ansible-tmp-{stamp}-{}-{}",
        std::process::id(),
        rand_suffix()
    );
    let dir = format!("{}/{name}", base.trim_end_matches('/'));
    let cmd = format!(
        "( umask 77 && mkdir -p {base} && mkdir {dir} && cd {dir} && echo \"SANDBALL_TMP=$(pwd)\" )",
        base = quote_path(base),
        dir = quote_path(&dir)
    );
    let out = conn
        .exec_command(&cmd, None)
        .await
        .map_err(|e| format!("cannot create a temporary directory in {base}: {e}"))?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("SANDBALL_TMP="))
        .map(str::to_string)
        .ok_or_else(|| {
            format!(
                "Failed to create temporary directory in {base} (rc {}): {}. Set remote_tmp (ansible_remote_tmp) to a path that exists and is writable.",
                out.rc,
                String::from_utf8_lossy(&out.stderr).trim()
            )
        })
}

/// A few random characters for temporary names, from the OS's hash seed.
fn rand_suffix() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    format!("{:012x}", h.finish() & 0xffff_ffff_ffff)
}

/// The system temporary directory for an unprivileged become user: `remote_tmp` when it
/// is inside one, else the first.
pub(super) fn system_tmp(remote_tmp: &str) -> &str {
    if SYSTEM_TMPDIRS
        .iter()
        .any(|d| remote_tmp == *d || remote_tmp.starts_with(&format!("{d}/")))
    {
        remote_tmp
    } else {
        SYSTEM_TMPDIRS[0]
    }
}

/// How one classic run goes.
pub(super) struct Classic<'a> {
    pub become_: Option<&'a Become>,
    /// Whether the become needs the password.
    pub needs_password: Option<bool>,
    /// The become user the files are handed over to, when it is unprivileged.
    pub unprivileged: Option<&'a str>,
    /// Whether world-readable files are allowed when nothing safer works.
    pub world_readable: bool,
    pub tmp: &'a str,
    pub env: &'a str,
    pub keep: bool,
}

/// The classic flow: put the module (and its args file), make it executable, run it
/// (as the become user when there is one) and remove the directory, in as few round
/// trips as the connection allows.
pub(super) async fn run(
    conn: &dyn Connection,
    module: &LegacyModule,
    a: &Assembled,
    c: &Classic<'_>,
    warnings: &mut Vec<String>,
) -> Result<ExecOutput, String> {
    let tmp = c.tmp;
    let file = format!("{tmp}/AnsiballZ_{}{}", module.name, a.suffix);
    conn.put_data(&a.payload, &file)
        .await
        .map_err(|e| e.to_string())?;
    let mut paths = vec![tmp.to_string(), file.clone()];
    let mut run = c.env.to_string();
    if let Some(interp) = &a.interpreter {
        run.push_str(interp);
        run.push(' ');
    }
    run.push_str(&quote(&file));
    if let Some(args) = &a.args_file {
        let args_path = format!("{tmp}/args");
        conn.put_data(args, &args_path)
            .await
            .map_err(|e| e.to_string())?;
        run.push(' ');
        run.push_str(&quote(&args_path));
        paths.push(args_path);
    }
    match c.unprivileged {
        Some(user) => {
            if let Some(w) = grant_access(conn, user, &paths, c.world_readable).await? {
                warnings.push(w);
            }
        }
        None => run = format!("chmod u+x {} {} && {run}", quote(tmp), quote(&file)),
    }
    // The become user removes the directory in the same command when it can (it is
    // the connection user or an admin); else the connection user does it afterwards.
    let remove = format!("rm -f -r {} > /dev/null 2>&1", quote(tmp));
    if !c.keep && c.unprivileged.is_none() {
        run = format!("{run}; rc=$?; {remove}; exit $rc");
    }
    let out = r#become::exec_command_known(conn, c.become_, c.needs_password, &run, None).await;
    if !c.keep && c.unprivileged.is_some() {
        let cleanup = conn.exec_command(&remove, None).await;
        if let Err(e) = cleanup.and_then(|o| o.success("rm")) {
            warnings.push(format!("cannot remove the temporary directory {tmp}: {e}"));
        }
    }
    out.map_err(|e: ConnectionError| e.to_string())
}

/// Gives the unprivileged become user `user` read and execute access to `paths` (the
/// temporary directory and its files), as the connection user and in Ansible's order:
/// a POSIX ACL (`setfacl`), else ownership (`chown`, which needs root), else — only
/// when `world_readable` allows it, with a warning — world-readable files. Anything
/// else is an error that says what was tried and what to do.
async fn grant_access(
    conn: &dyn Connection,
    user: &str,
    paths: &[String],
    world_readable: bool,
) -> Result<Option<String>, String> {
    let list: Vec<String> = paths.iter().map(|p| quote(p)).collect();
    let list = list.join(" ");
    // The user name is a plain word (checked when become was resolved).
    let mut cmd = format!(
        "if setfacl -m u:{user}:r-x {list}; then echo SANDBALL_ACCESS=acl; \
         elif chmod u+x {list} && chown {user} {list}; then echo SANDBALL_ACCESS=chown; "
    );
    if world_readable {
        cmd.push_str(&format!(
            "elif chmod a+rx {list}; then echo SANDBALL_ACCESS=world; "
        ));
    }
    cmd.push_str("else exit 1; fi");
    let out = conn
        .exec_command(&cmd, None)
        .await
        .map_err(|e| e.to_string())?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    match stdout
        .lines()
        .find_map(|l| l.strip_prefix("SANDBALL_ACCESS="))
    {
        Some("world") => Ok(Some(format!(
            "Using world-readable permissions for the temporary files of a module run as the unprivileged become user {user}: anyone on the node can read them (and the module's arguments) while it runs."
        ))),
        Some(_) if out.rc == 0 => Ok(None),
        _ => Err(format!(
            "Failed to set permissions on the temporary files for the unprivileged become user {user}: {} (rc={}). The connection user needs setfacl (the acl package) or root to chown them; or become root, connect as {user}, or — less safe, anyone on the node could read the module's arguments — set {WORLD_READABLE_VAR}=true",
            String::from_utf8_lossy(&out.stderr).trim(),
            out.rc
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::connection::local::Local;

    #[tokio::test]
    async fn files_are_handed_over_safely_or_not_at_all() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("AnsiballZ_x.py");
        std::fs::write(&file, "x").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let paths = vec![file.display().to_string()];
        let conn = Local;
        // No ACL, no chown to a user that does not exist: an error saying what to do,
        // and the file stays private.
        let e = grant_access(&conn, "sandball-no-such-user", &paths, false)
            .await
            .unwrap_err();
        assert!(
            e.contains("sandball-no-such-user") && e.contains(WORLD_READABLE_VAR),
            "{e}"
        );
        let mode = || std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(), 0o700);
        // Allowed: world-readable, with a warning.
        let w = grant_access(&conn, "sandball-no-such-user", &paths, true)
            .await
            .unwrap();
        assert!(w.is_some_and(|w| w.contains("world-readable")));
        assert_eq!(mode(), 0o755);
    }

    #[test]
    fn unprivileged_users_get_a_system_temporary_directory() {
        assert_eq!(system_tmp("~/.ansible/tmp"), "/var/tmp");
        assert_eq!(system_tmp("/tmp/mine"), "/tmp/mine");
        assert_eq!(system_tmp("/tmpfoo"), "/var/tmp");
    }
}
