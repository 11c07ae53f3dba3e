//! The `git` module: clones a repository into `dest` and keeps it at `version` (a
//! branch, tag or SHA-1), as Ansible's `git` module does, through the node's git (a
//! granted program; git itself is not sandboxed, the module only reads `dest`).
//! Results (`before`, `after`, `remote_url_changed`, `submodules_changed`, the
//! warnings), check and diff mode and messages follow ansible-core 2.19. Options whose
//! effect cannot be granted (ssh options and keys, `umask`, `archive`,
//! `separate_git_dir`, `verify_commit`) are refused with a message naming them.

#[cfg(all(test, unix))]
mod module_tests;
mod version;

use sandball_guest_sdk::files::realpath;
use sandball_guest_sdk::prelude::*;
use sandball_guest_sdk::program::{C_LOCALE, Ran, run_checked, run_command};
use sandball_pycompat::expand::expand_path;
use std::path::Path;
use version::GitVersion;

sandball_guest_sdk::manifest!("../manifest.json");

fn main() {
    sandball_guest_sdk::run_with_paths(MANIFEST, git);
}

/// The module's body.
fn git(m: &mut Module) -> Result<Map<String, Value>, Fail> {
    refuse_what_cannot_be_granted(m)?;
    let env = host::variable;
    let original_repo = m.get_str("repo").unwrap_or_default().to_string();
    let expanded = expand_path(&original_repo, &env);
    // Depth and the like need a URL for a local path, as the module makes one.
    let repo = if expanded.starts_with('/') {
        format!("file://{expanded}")
    } else {
        original_repo.clone()
    };
    let mut g = Git {
        exe: m.get_str("executable").unwrap_or("git").to_string(),
        original_repo,
        expanded_repo: expanded,
        warnings: Vec::new(),
        version_used: None,
    };
    let task = Task {
        dest: m.get_str("dest").map(absolute),
        repo,
        version: m.get_str("version").unwrap_or("HEAD").to_string(),
        remote: m.get_str("remote").unwrap_or("origin").to_string(),
        refspec: m.get_str("refspec").map(str::to_string),
        reference: m.get_str("reference").map(str::to_string),
        force: m.get_bool("force"),
        depth: m.get_int("depth").filter(|d| *d != 0),
        clone: m.get_bool("clone"),
        update: m.get_bool("update"),
        bare: m.get_bool("bare"),
        recursive: m.get_bool("recursive"),
        single_branch: m.get_bool("single_branch"),
        track_submodules: m.get_bool("track_submodules"),
        check: m.check_mode(),
        diff: m.diff_mode(),
    };
    let outcome = g.main(&task);
    for w in std::mem::take(&mut g.warnings) {
        m.warn(w);
    }
    outcome
}

/// Options that need what a grant cannot give yet, refused by name.
fn refuse_what_cannot_be_granted(m: &Module) -> Result<(), Fail> {
    let ssh = "ssh options cannot be granted to the git program yet (the GIT_SSH* variables are \
               not passed to programs); use ssh's own configuration on the node";
    let refused: [(&str, bool, &str); 8] = [
        ("accept_hostkey", m.get_bool("accept_hostkey"), ssh),
        ("accept_newhostkey", m.get_bool("accept_newhostkey"), ssh),
        (
            "key_file",
            m.get("key_file").is_some_and(|v| !v.is_null()),
            ssh,
        ),
        (
            "ssh_opts",
            m.get("ssh_opts").is_some_and(|v| !v.is_null()),
            ssh,
        ),
        (
            "umask",
            m.get("umask").is_some_and(|v| !v.is_null()),
            "programs run with the node's umask, which a module cannot change",
        ),
        (
            "archive",
            m.get("archive").is_some_and(|v| !v.is_null()),
            "writing an archive outside dest is not supported yet",
        ),
        (
            "separate_git_dir",
            m.get("separate_git_dir").is_some_and(|v| !v.is_null()),
            "a git directory outside dest is not supported yet",
        ),
        (
            "verify_commit",
            m.get_bool("verify_commit"),
            "gpg and its keyring cannot be granted to the git program yet",
        ),
    ];
    match refused.iter().find(|(_, given, _)| *given) {
        Some((name, _, why)) => Err(Fail::not_carried_out(format!(
            "The git module does not support the option '{name}' in sandball: {why}."
        ))),
        None => Ok(()),
    }
}

/// `dest` made absolute (relative paths start at the working directory).
fn absolute(dest: &str) -> String {
    if dest.starts_with('/') {
        return normpath(dest);
    }
    let cwd = std::env::current_dir()
        .map(|d| d.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "/".into());
    normpath(&format!("{cwd}/{dest}"))
}

/// Python's `os.path.normpath` for absolute paths.
fn normpath(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    let joined = parts.join("/");
    if path.starts_with('/') {
        format!("/{joined}")
    } else if joined.is_empty() {
        ".".into()
    } else {
        joined
    }
}

/// A path or URL as the module compares remote addresses: variables and `~` expanded,
/// made absolute, symlinks resolved.
fn unfrack(path: &str) -> String {
    let env = host::variable;
    normpath(&realpath(&expand_path(path, &env)))
}

/// `os.path.join`.
fn join(dir: &str, name: &str) -> String {
    if name.starts_with('/') {
        name.to_string()
    } else {
        format!("{}/{name}", dir.trim_end_matches('/'))
    }
}

/// The task, with defaults applied.
#[derive(Clone)]
struct Task {
    dest: Option<String>,
    repo: String,
    version: String,
    remote: String,
    refspec: Option<String>,
    reference: Option<String>,
    force: bool,
    depth: Option<i64>,
    clone: bool,
    update: bool,
    bare: bool,
    recursive: bool,
    single_branch: bool,
    track_submodules: bool,
    check: bool,
    diff: bool,
}

/// The node's git and what the run learnt of it.
struct Git {
    exe: String,
    /// `repo` as the task gave it.
    original_repo: String,
    /// `repo` with `~` expanded.
    expanded_repo: String,
    warnings: Vec<String>,
    version_used: Option<GitVersion>,
}

/// The result so far.
type Report = Map<String, Value>;

impl Git {
    fn argv(&self, args: &[&str]) -> Vec<String> {
        std::iter::once(self.exe.as_str())
            .chain(args.iter().copied())
            .map(str::to_string)
            .collect()
    }

    /// Runs git in `cwd` when that is a directory (else where the module is).
    fn run(&self, args: &[&str], cwd: Option<&str>) -> Result<Ran, Fail> {
        run_command(&self.argv(args), usable_cwd(cwd), C_LOCALE)
    }

    /// [`Git::run`], failing on a non-zero exit.
    fn run_ok(&self, args: &[&str], cwd: Option<&str>) -> Result<Ran, Fail> {
        run_checked(&self.argv(args), usable_cwd(cwd), C_LOCALE)
    }

    fn main(&mut self, t: &Task) -> Result<Report, Fail> {
        let mut result = Report::new();
        result.insert("changed".into(), json!(false));
        let gitconfig = match &t.dest {
            None if t.clone => {
                return Err(Fail::new(
                    "the destination directory must be specified unless clone=no",
                ));
            }
            None => None,
            Some(dest) => Some(join(&repo_path(dest, t.bare)?, "config")),
        };
        self.version_used = self.git_version()?;
        let depth = match (t.depth, &self.version_used) {
            (Some(_), Some(v)) if *v < GitVersion::parse("1.9.1") => {
                self.warnings.push("git version is too old to fully support the depth argument. Falling back to full checkouts.".into());
                None
            }
            (d, _) => d,
        };
        let t = &Task { depth, ..t.clone() };
        result.insert("before".into(), Value::Null);
        let dest = t.dest.as_deref().unwrap_or_default();
        let mut local_mods = false;
        let mut remote_url_changed = Value::Bool(false);
        let missing = gitconfig.as_deref().is_some_and(|c| !Path::new(c).exists());
        if missing || (t.dest.is_none() && !t.clone) {
            if t.check || !t.clone {
                let head = self.remote_head(t, &t.repo)?;
                result.insert("changed".into(), json!(true));
                result.insert("after".into(), json!(head));
                if t.diff {
                    self.add_diff(t, &mut result, None, &head)?;
                }
                return Ok(result);
            }
            self.clone_repo(t)?;
        } else if !t.update {
            let before = self.rev_parse(dest, "HEAD")?;
            result.insert("before".into(), json!(before));
            result.insert("after".into(), json!(before));
            return Ok(result);
        } else {
            local_mods = self.has_local_mods(dest, t.bare)?;
            let before = self.rev_parse(dest, "HEAD")?;
            result.insert("before".into(), json!(before));
            if local_mods {
                if !t.force {
                    let mut fail = Fail::new(format!(
                        "Local modifications exist in the destination: {dest} (force=no)."
                    ));
                    for (k, v) in &result {
                        fail = fail.with(k.clone(), v.clone());
                    }
                    return Err(fail);
                }
                if !t.check {
                    self.run_ok(&["reset", "--hard", "HEAD"], Some(dest))?;
                    result.insert("changed".into(), json!(true));
                    result.insert(
                        "msg".into(),
                        json!(format!(
                            "Local modifications exist in the destination: {dest}"
                        )),
                    );
                }
            }
            remote_url_changed = if t.check {
                match self.remote_url(dest, &t.remote)? {
                    None => Value::Null,
                    Some(url) if url.is_empty() => json!(""),
                    Some(url) => json!(url != t.repo && unfrack(&url) != unfrack(&t.repo)),
                }
            } else {
                json!(self.set_remote_url(t, dest)?)
            };
            result.insert("remote_url_changed".into(), remote_url_changed.clone());
            if t.check {
                let head = self.remote_head(t, &t.remote)?;
                let changed = if before != head {
                    json!(true)
                } else {
                    remote_url_changed.clone()
                };
                result.insert("changed".into(), changed);
                result.insert("after".into(), json!(head));
                if t.diff {
                    self.add_diff(t, &mut result, Some(&before), &head)?;
                }
                return Ok(result);
            }
            self.fetch(t, &t.version, t.refspec.as_deref(), t.force)?;
            result.insert("after".into(), json!(self.rev_parse(dest, "HEAD")?));
        }

        if !t.bare {
            self.switch_version(t)?;
        }
        let mut submodules_updated = false;
        if t.recursive && !t.bare {
            submodules_updated = self.submodules_fetch(t)?;
            if submodules_updated {
                result.insert("submodules_changed".into(), json!(true));
                self.submodule_update(t)?;
            }
        }
        let after = self.rev_parse(dest, "HEAD")?;
        result.insert("after".into(), json!(after));
        let before = result
            .get("before")
            .and_then(Value::as_str)
            .map(str::to_string);
        if before.as_deref() != Some(after.as_str())
            || local_mods
            || submodules_updated
            || sandball_pycompat::pyops::py_truth(&remote_url_changed)
        {
            result.insert("changed".into(), json!(true));
            if t.diff {
                self.add_diff(t, &mut result, before.as_deref(), &after)?;
            }
        }
        Ok(result)
    }

    /// `git --version`, as a version (none when it cannot be read).
    fn git_version(&self) -> Result<Option<GitVersion>, Fail> {
        let ran = run_command(&self.argv(&["--version"]), None, C_LOCALE).map_err(|e| {
            Fail::new(format!(
                "Failed to find required executable \"{}\": {}",
                self.exe,
                e.msg()
            ))
        })?;
        if ran.rc != 0 {
            return Ok(None);
        }
        let first = ran.stdout.lines().next().unwrap_or_default();
        Ok(first
            .find("git version ")
            .map(|at| GitVersion::parse(&first[at + "git version ".len()..])))
    }

    /// `git rev-parse REF` in `dest` (its output, whatever the exit code, as the module).
    fn rev_parse(&self, dest: &str, reference: &str) -> Result<String, Fail> {
        let ran = self.run(&["rev-parse", reference], Some(dest))?;
        Ok(ran.stdout.trim_end_matches('\n').to_string())
    }

    fn has_local_mods(&self, dest: &str, bare: bool) -> Result<bool, Fail> {
        if bare {
            return Ok(false);
        }
        let ran = self.run(&["status", "--porcelain"], Some(dest))?;
        Ok(ran.stdout.lines().any(|l| !l.starts_with("??")))
    }

    /// The revision `version` names on the remote (`remote` a name, or the address
    /// when cloning); a SHA-1 is taken as it is.
    fn remote_head(&self, t: &Task, remote: &str) -> Result<String, Fail> {
        let dest = t.dest.as_deref();
        let cloning =
            remote == self.original_repo || remote == format!("file://{}", self.expanded_repo);
        let cwd = if cloning { None } else { dest };
        let version = t.version.as_str();
        let mut tag = false;
        let args: Vec<String> = if version == "HEAD" {
            if cloning {
                vec![
                    "ls-remote".into(),
                    remote.into(),
                    "-h".into(),
                    "HEAD".into(),
                ]
            } else {
                let branch = self.head_branch(dest.unwrap_or_default(), &t.remote, t.bare)?;
                vec![
                    "ls-remote".into(),
                    remote.into(),
                    "-h".into(),
                    format!("refs/heads/{branch}"),
                ]
            }
        } else if self.is_remote_branch(dest, remote, version)? {
            vec![
                "ls-remote".into(),
                remote.into(),
                "-h".into(),
                format!("refs/heads/{version}"),
            ]
        } else if self.is_remote_tag(dest, remote, version)? {
            tag = true;
            vec![
                "ls-remote".into(),
                remote.into(),
                "-t".into(),
                format!("refs/tags/{version}*"),
            ]
        } else {
            return Ok(version.to_string());
        };
        let words: Vec<&str> = args.iter().map(String::as_str).collect();
        let ran = self.run_ok(&words, cwd)?;
        if ran.stdout.is_empty() {
            return Err(
                Fail::new(format!("Could not determine remote revision for {version}"))
                    .with("stdout", ran.stdout)
                    .with("stderr", ran.stderr)
                    .with("rc", ran.rc),
            );
        }
        let mut line = ran.stdout.as_str();
        if tag {
            let peeled = format!("{version}^{{}}");
            for candidate in ran.stdout.split('\n') {
                if candidate.ends_with(&peeled) {
                    line = candidate;
                    break;
                } else if candidate.ends_with(version) {
                    line = candidate;
                }
            }
        }
        Ok(line
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_string())
    }

    fn is_remote_tag(&self, dest: Option<&str>, remote: &str, version: &str) -> Result<bool, Fail> {
        let pattern = format!("refs/tags/{version}");
        let ran = self.run_ok(&["ls-remote", remote, "-t", &pattern], dest)?;
        Ok(ran.stdout.contains(version))
    }

    fn is_remote_branch(
        &self,
        dest: Option<&str>,
        remote: &str,
        version: &str,
    ) -> Result<bool, Fail> {
        let pattern = format!("refs/heads/{version}");
        let ran = self.run_ok(&["ls-remote", remote, "-h", &pattern], dest)?;
        Ok(ran.stdout.contains(version))
    }

    /// `git branch -a`, one stripped line each.
    fn branches(&self, dest: &str) -> Result<Vec<String>, Fail> {
        let ran = self.run(&["branch", "--no-color", "-a"], Some(dest))?;
        if ran.rc != 0 {
            return Err(Fail::new(format!(
                "Could not determine branch data - received {}",
                ran.stdout
            ))
            .with("stdout", ran.stdout)
            .with("stderr", ran.stderr));
        }
        Ok(ran
            .stdout
            .split('\n')
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect())
    }

    fn is_local_branch(&self, dest: &str, branch: &str) -> Result<bool, Fail> {
        let branches = self.branches(dest)?;
        let current = format!("* {branch}");
        Ok(branches.iter().any(|b| b == branch || *b == current))
    }

    fn is_not_a_branch(&self, dest: &str) -> Result<bool, Fail> {
        Ok(self.branches(dest)?.iter().any(|b| {
            b.starts_with("* ")
                && (b.contains("no branch")
                    || b.contains("detached from")
                    || b.contains("detached at"))
        }))
    }

    /// The branch HEAD is on, from the repository's `HEAD` file (the remote's when
    /// HEAD is detached); `None` as the module prints it when the file is missing.
    fn head_branch(&self, dest: &str, remote: &str, bare: bool) -> Result<String, Fail> {
        let repo = repo_path(dest, bare)?;
        let headfile = if self.is_not_a_branch(dest)? {
            join(&repo, &format!("refs/remotes/{remote}/HEAD"))
        } else {
            join(&repo, "HEAD")
        };
        if !Path::new(&headfile).exists() {
            return Ok("None".into());
        }
        let text = std::fs::read_to_string(&headfile)
            .map_err(|_| Fail::new(format!("Unable to read {headfile}")))?;
        let first = text.split_inclusive('\n').next().unwrap_or_default();
        let stripped = first.replacen(&format!("refs/remotes/{remote}"), "", 1);
        let last = stripped.split(' ').next_back().unwrap_or_default();
        let name = last.splitn(3, '/').last().unwrap_or_default();
        Ok(name.trim_end_matches('\n').to_string())
    }

    fn remote_url(&self, dest: &str, remote: &str) -> Result<Option<String>, Fail> {
        let ran = self.run(&["ls-remote", "--get-url", remote], Some(dest))?;
        Ok((ran.rc == 0).then(|| ran.stdout.trim_end_matches('\n').to_string()))
    }

    /// Points the remote at `repo` when it points elsewhere; whether it changed.
    fn set_remote_url(&self, t: &Task, dest: &str) -> Result<bool, Fail> {
        let current = self.remote_url(dest, &t.remote)?;
        if let Some(url) = &current
            && (*url == t.repo || unfrack(url) == unfrack(&t.repo))
        {
            return Ok(false);
        }
        let ran = self.run(&["remote", "set-url", &t.remote, &t.repo], Some(dest))?;
        if ran.rc != 0 {
            return Err(Fail::new(format!(
                "Failed to set a new url {} for {}: {} {}",
                t.repo, t.remote, ran.stdout, ran.stderr
            )));
        }
        Ok(current.is_some())
    }

    fn clone_repo(&mut self, t: &Task) -> Result<(), Fail> {
        let dest = t.dest.as_deref().unwrap_or_default();
        let parent = Path::new(dest)
            .parent()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|| "/".into());
        // As the module: a parent that cannot be made is left for git to report.
        let _ = std::fs::create_dir_all(&parent);
        let mut args: Vec<String> = vec!["clone".into()];
        if t.bare {
            args.push("--bare".into());
        } else {
            args.extend(["--origin".into(), t.remote.clone()]);
        }
        let branch_or_tag = self.is_remote_branch(Some(dest), &t.repo, &t.version)?
            || self.is_remote_tag(Some(dest), &t.repo, &t.version)?;
        if let Some(depth) = t.depth {
            if t.version == "HEAD" || t.refspec.is_some() {
                args.extend(["--depth".into(), depth.to_string()]);
            } else if branch_or_tag {
                args.extend(["--depth".into(), depth.to_string()]);
                args.extend(["--branch".into(), t.version.clone()]);
            } else {
                self.warnings.push("Ignoring depth argument. Shallow clones are only available for HEAD, branches, tags or in combination with refspec.".into());
            }
        }
        if let Some(reference) = &t.reference {
            args.extend(["--reference".into(), reference.clone()]);
        }
        if t.single_branch {
            match &self.version_used {
                None => {
                    return Err(Fail::new(format!(
                        "Cannot find git executable at {}",
                        self.exe
                    )));
                }
                Some(v) if *v < GitVersion::parse("1.7.10") => self.warnings.push(format!(
                    "git version '{v}' is too old to use 'single-branch'. Ignoring."
                )),
                Some(_) => {
                    args.push("--single-branch".into());
                    if branch_or_tag {
                        args.extend(["--branch".into(), t.version.clone()]);
                    }
                }
            }
        }
        args.extend([t.repo.clone(), dest.to_string()]);
        let words: Vec<&str> = args.iter().map(String::as_str).collect();
        self.run_ok(&words, Some(&parent))?;
        if t.bare && t.remote != "origin" {
            self.run_ok(&["remote", "add", &t.remote, &t.repo], Some(dest))?;
        }
        if let Some(refspec) = &t.refspec {
            let mut args: Vec<String> = vec!["fetch".into()];
            if let Some(depth) = t.depth {
                args.extend(["--depth".into(), depth.to_string()]);
            }
            args.extend([t.remote.clone(), refspec.clone()]);
            let words: Vec<&str> = args.iter().map(String::as_str).collect();
            self.run_ok(&words, Some(dest))?;
        }
        Ok(())
    }

    /// Fetches what `version` needs (everything, unless `depth` allows less).
    fn fetch(
        &self,
        t: &Task,
        version: &str,
        refspec: Option<&str>,
        force: bool,
    ) -> Result<(), Fail> {
        let dest = t.dest.as_deref().unwrap_or_default();
        self.set_remote_url(t, dest)?;
        let mut commands: Vec<Vec<String>> = Vec::new();
        let mut fetch = vec!["fetch".to_string()];
        let mut refspecs: Vec<String> = Vec::new();
        if let Some(depth) = t.depth {
            let current = self.head_branch(dest, &t.remote, false)?;
            if let Some(r) = refspec {
                refspecs.push(r.to_string());
            } else if version == "HEAD" {
                refspecs.push(current);
            } else if self.is_remote_branch(Some(dest), &t.repo, version)? {
                if current != version {
                    refspecs.push(format!("+refs/heads/{version}:refs/heads/{version}"));
                }
                refspecs.push(format!(
                    "+refs/heads/{version}:refs/remotes/{}/{version}",
                    t.remote
                ));
            } else if self.is_remote_tag(Some(dest), &t.repo, version)? {
                refspecs.push(format!("+refs/tags/{version}:refs/tags/{version}"));
            }
            if !refspecs.is_empty() {
                fetch.extend(["--depth".into(), depth.to_string()]);
            }
        }
        if t.depth.is_none() || refspecs.is_empty() {
            if t.bare {
                refspecs = vec![
                    "+refs/heads/*:refs/heads/*".into(),
                    "+refs/tags/*:refs/tags/*".into(),
                ];
            } else if self
                .version_used
                .as_ref()
                .is_some_and(|v| *v >= GitVersion::parse("1.9"))
            {
                fetch.push("--tags".into());
            } else {
                let mut first = fetch.clone();
                first.push(t.remote.clone());
                commands.push(first);
                refspecs = vec!["+refs/tags/*:refs/tags/*".into()];
            }
            if let Some(r) = refspec.filter(|r| !r.is_empty()) {
                refspecs.push(r.to_string());
            }
        }
        if force {
            fetch.push("--force".into());
        }
        fetch.push(t.remote.clone());
        fetch.extend(refspecs);
        commands.push(fetch);
        for args in commands {
            let words: Vec<&str> = args.iter().map(String::as_str).collect();
            let ran = self.run(&words, Some(dest))?;
            if ran.rc != 0 {
                return Err(Fail::new(format!(
                    "Failed to download remote objects and refs: {} {}",
                    ran.stdout, ran.stderr
                ))
                .with("cmd", json!(self.argv(&words))));
            }
        }
        Ok(())
    }

    /// Checks out `version` (a branch tracking the remote's, or a detached tag/SHA-1).
    fn switch_version(&self, t: &Task) -> Result<(), Fail> {
        let dest = t.dest.as_deref().unwrap_or_default();
        let (remote, version) = (t.remote.as_str(), t.version.as_str());
        let checkout_branch = |branch: &str| -> Result<(), Fail> {
            let ran = self.run(&["checkout", "--force", branch], Some(dest))?;
            if ran.rc != 0 {
                return Err(Fail::new(format!("Failed to checkout branch {branch}"))
                    .with("stdout", ran.stdout)
                    .with("stderr", ran.stderr)
                    .with("rc", ran.rc));
            }
            Ok(())
        };
        let (args, what): (Vec<String>, String) = if version == "HEAD" {
            let branch = self.head_branch(dest, remote, false)?;
            checkout_branch(&branch)?;
            (
                vec![
                    "reset".into(),
                    "--hard".into(),
                    format!("{remote}/{branch}"),
                    "--".into(),
                ],
                format!("Failed to checkout branch {branch}"),
            )
        } else if self.is_remote_branch(Some(dest), remote, version)? {
            if let Some(depth) = t.depth
                && !self.is_local_branch(dest, version)?
            {
                self.set_remote_branch(dest, remote, version, depth)?;
            }
            let args = if !self.is_local_branch(dest, version)? {
                vec![
                    "checkout".into(),
                    "--track".into(),
                    "-b".into(),
                    version.into(),
                    format!("{remote}/{version}"),
                ]
            } else {
                checkout_branch(version)?;
                vec![
                    "reset".into(),
                    "--hard".into(),
                    format!("{remote}/{version}"),
                ]
            };
            (args, format!("Failed to checkout {version}"))
        } else {
            (
                vec!["checkout".into(), "--force".into(), version.into()],
                format!("Failed to checkout {version}"),
            )
        };
        let words: Vec<&str> = args.iter().map(String::as_str).collect();
        let ran = self.run(&words, Some(dest))?;
        if ran.rc != 0 {
            return Err(Fail::new(what)
                .with("stdout", ran.stdout)
                .with("stderr", ran.stderr)
                .with("rc", ran.rc)
                .with("cmd", self.argv(&words).join(" ")));
        }
        Ok(())
    }

    /// Fetches a remote branch a shallow clone does not have, to check it out.
    fn set_remote_branch(
        &self,
        dest: &str,
        remote: &str,
        version: &str,
        depth: i64,
    ) -> Result<(), Fail> {
        let depth = format!("--depth={depth}");
        let local = format!("+refs/heads/{version}:refs/heads/{version}");
        let tracking = format!("+refs/heads/{version}:refs/remotes/{remote}/{version}");
        let ran = self.run(&["fetch", &depth, remote, &local, &tracking], Some(dest))?;
        if ran.rc != 0 {
            return Err(
                Fail::new(format!("Failed to fetch branch from remote: {version}"))
                    .with("stdout", ran.stdout)
                    .with("stderr", ran.stderr)
                    .with("rc", ran.rc),
            );
        }
        Ok(())
    }

    /// Whether the submodules need an update: one not checked out yet, or (after a
    /// fetch) one not at the commit the superproject (or, tracking, `master`) names.
    fn submodules_fetch(&self, t: &Task) -> Result<bool, Fail> {
        let dest = t.dest.as_deref().unwrap_or_default();
        let Ok(gitmodules) = std::fs::read_to_string(join(dest, ".gitmodules")) else {
            return Ok(false);
        };
        let missing = gitmodules.lines().any(|line| {
            line.trim().starts_with("path")
                && line.split_once('=').is_some_and(|(_, path)| {
                    !Path::new(&join(&join(dest, path.trim()), ".git")).exists()
                })
        });
        if missing {
            return Ok(true);
        }
        let begin = self.submodule_versions(dest, "HEAD")?;
        let exe = self.exe.clone();
        self.run_ok(&["submodule", "foreach", &exe, "fetch"], Some(dest))?;
        if t.track_submodules {
            let after = self.submodule_versions(dest, &format!("{}/master", t.remote))?;
            return Ok(begin != after);
        }
        let status = self.run_ok(&["submodule", "status"], Some(dest))?;
        Ok(status.stdout.lines().any(|l| !l.starts_with(' ')))
    }

    /// Each submodule's commit at `version`.
    fn submodule_versions(&self, dest: &str, version: &str) -> Result<Vec<(String, String)>, Fail> {
        let exe = self.exe.clone();
        let ran = self.run(
            &["submodule", "foreach", &exe, "rev-parse", version],
            Some(dest),
        )?;
        if ran.rc != 0 {
            return Err(Fail::new("Unable to determine hashes of submodules")
                .with("stdout", ran.stdout)
                .with("stderr", ran.stderr)
                .with("rc", ran.rc));
        }
        let mut found = Vec::new();
        let mut name: Option<String> = None;
        for line in ran.stdout.lines() {
            if let Some(rest) = line.strip_prefix("Entering '") {
                name = Some(rest.strip_suffix('\'').unwrap_or(rest).to_string());
            } else if line.trim().len() == 40 {
                match name.take() {
                    Some(n) => found.push((n, line.trim().to_string())),
                    None => {
                        return Err(Fail::new(format!(
                            "Unable to parse submodule hash line: {}",
                            line.trim()
                        )));
                    }
                }
            } else {
                return Err(Fail::new(format!(
                    "Unable to parse submodule hash line: {}",
                    line.trim()
                )));
            }
        }
        if let Some(n) = name {
            return Err(Fail::new(format!("Unable to find hash for submodule: {n}")));
        }
        found.sort();
        Ok(found)
    }

    /// `git submodule sync` and `update --init --recursive` (with `--remote` when
    /// tracking and git's usage lists it, as the module reads it).
    fn submodule_update(&self, t: &Task) -> Result<(), Fail> {
        let dest = t.dest.as_deref().unwrap_or_default();
        let help = self.run(&["submodule", "update", "--help"], Some(dest))?;
        let remote_listed = help
            .stderr
            .lines()
            .rfind(|l| l.contains("git submodule [--quiet] update "))
            .is_some_and(|l| {
                l.replace(['[', ']'], "")
                    .replace('|', " ")
                    .split_whitespace()
                    .any(|w| w == "--remote")
            });
        if !Path::new(&join(dest, ".gitmodules")).exists() {
            return Ok(());
        }
        self.run_ok(&["submodule", "sync"], Some(dest))?;
        let mut args = vec!["submodule", "update", "--init", "--recursive"];
        if remote_listed && t.track_submodules {
            args.push("--remote");
        }
        if t.force {
            args.push("--force");
        }
        let ran = self.run(&args, Some(dest))?;
        if ran.rc != 0 {
            return Err(Fail::new(format!(
                "Failed to init/update submodules: {}{}",
                ran.stdout, ran.stderr
            )));
        }
        Ok(())
    }

    /// The `diff` of a change: a new checkout, or `git diff BEFORE AFTER` (after
    /// fetching AFTER, as the module does).
    fn add_diff(
        &self,
        t: &Task,
        result: &mut Report,
        before: Option<&str>,
        after: &str,
    ) -> Result<(), Fail> {
        let prepared = match before {
            None => format!(">> Newly checked out {after}"),
            Some(before) if before != after => {
                self.fetch(t, after, Some(""), false)?;
                let dest = t.dest.as_deref().unwrap_or_default();
                let ran = self.run(&["diff", before, after], Some(dest))?;
                match (ran.rc, ran.stdout.is_empty(), ran.stderr.is_empty()) {
                    (0, false, _) => ran.stdout,
                    (0, true, _) => {
                        format!(">> No visual differences between {before} and {after}")
                    }
                    (_, _, false) => format!(
                        ">> Failed to get proper diff between {before} and {after}:\n>> {}",
                        ran.stderr
                    ),
                    _ => format!(">> Failed to get proper diff between {before} and {after}"),
                }
            }
            Some(_) => return Ok(()),
        };
        result.insert("diff".into(), json!({"prepared": prepared}));
        Ok(())
    }
}

/// `cwd` when it is a directory; else none, as `run_command` ignores an invalid one.
fn usable_cwd(cwd: Option<&str>) -> Option<&str> {
    cwd.filter(|d| Path::new(d).is_dir())
}

/// Where the repository's git directory is: `dest/.git`, `dest` when bare, or what a
/// `.git` file points to.
fn repo_path(dest: &str, bare: bool) -> Result<String, Fail> {
    let path = if bare {
        dest.to_string()
    } else {
        join(dest, ".git")
    };
    if !Path::new(&path).is_file() {
        return Ok(path);
    }
    let invalid = |details: String| {
        Fail::new(
            "Current repo does not have a valid reference to a separate Git dir or it refers to the invalid path",
        )
        .with("details", details)
    };
    let text = std::fs::read_to_string(&path).map_err(|e| invalid(e.to_string()))?;
    let Some((prefix, gitdir)) = text.trim_end().split_once("gitdir: ") else {
        return Err(invalid(
            "not enough values to unpack (expected 2, got 1)".into(),
        ));
    };
    if !prefix.is_empty() {
        return Err(invalid(
            ".git file has invalid git dir reference format".into(),
        ));
    }
    let repo = join(dest, gitdir);
    if !Path::new(&repo).is_dir() {
        return Err(invalid(format!("{repo} is not a directory")));
    }
    Ok(repo)
}
