//! ansible-core's own integration targets, laid out and run as ansible-test runs them,
//! under sandball and under ansible-playbook side by side: what
//! `tests/tests/integration_targets.rs` (the targets `make test` runs) and the
//! `wider-targets` command (every self-contained POSIX target, `make wider-targets`)
//! share.
//!
//! The targets come from the sdist of the very ansible-core version in `target/venv`,
//! which `make ansible-targets` downloads from PyPI (they are never kept in this
//! repository); 2.21's from its own (`make ansible-targets-2.21`). The layout is
//! ansible-test's: a copy of `targets/` in `test/integration/` beside an `inventory`
//! with `testhost` on the local connection, and ansible-test's environment
//! (`ANSIBLE_INVENTORY=/dev/null`, …); a target with a `runme.sh` is run as that script
//! from its own directory (its `ansible-playbook`, `ansible` and `ansible-inventory`
//! calls reach sandball through links of those names), any other target as a role of a
//! one-play playbook on `testhost`, with `output_dir` and `ANSIBLE_ROLES_PATH` set as
//! ansible-test sets them for a role.
//!
//! A target passes when sandball exits 0 and prints the same recaps as ansible-playbook,
//! which must exit 0 too. A `runme.sh` that keeps the playbooks' output to itself (it
//! checks the output and exits accordingly, as ansible-test judges a target by its exit
//! status) prints no recap under either tool: it passes when both exit 0 and sandball
//! was started. ansible-playbook's recaps of the targets `make test` runs are recorded
//! in `tests/target-recaps.txt` (`make target-recaps`): where sandball prints those,
//! ansible-playbook is not run again ([`compare`]).

use crate::binaries::{Binaries, ansible_python, target_dir};
use crate::{Output, Sandbox};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The ansible-core whose targets run and whose ansible-playbook is the reference: its
/// venv's Python (sandball finds it too, and follows its release) and where its
/// targets were unpacked.
pub struct Reference {
    /// Its venv's Python.
    pub python: PathBuf,
    /// Where its targets were unpacked.
    pub targets: PathBuf,
    /// Its recorded recaps (the text of a `tests/target-recaps*.txt`).
    pub recorded: &'static str,
}

impl Reference {
    /// `target/venv`'s, with the targets `make ansible-targets` unpacked
    /// (`$ANSIBLE_TARGETS_DIR` overrides).
    pub fn pinned() -> Reference {
        let dir = std::env::var_os("ANSIBLE_TARGETS_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| target_dir().join("ansible-targets/targets"));
        Reference::at(ansible_python(), dir, "make ansible-targets", RECORDED)
    }

    /// ansible-core 2.21's (`target/venv-2.21`, `$ANSIBLE_221_BIN_DIR`), with the
    /// targets `make ansible-targets-2.21` unpacked.
    pub fn v2_21() -> Reference {
        let bin = crate::compare::ansible_bin("ANSIBLE_221_BIN_DIR", "venv-2.21");
        Reference::at(
            bin.join("python"),
            target_dir().join("ansible-targets-2.21/targets"),
            "make ansible-targets-2.21",
            RECORDED_2_21,
        )
    }

    fn at(python: PathBuf, targets: PathBuf, make: &str, recorded: &'static str) -> Reference {
        assert!(
            targets.join("ping").is_dir(),
            "ansible-core's integration targets are not at {}: run `{make}`",
            targets.display()
        );
        Reference {
            python,
            targets,
            recorded,
        }
    }

    /// The version of its ansible-core.
    pub fn version(&self) -> String {
        let out = Command::new(&self.python)
            .args(["-c", "import ansible.release as r; print(r.__version__)"])
            .output()
            .expect("the venv's python runs");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}

/// The `aliases` of the target in `dir`: ansible-test's settings, one a line, comments
/// and blank lines cut; `None` without that file (a helper role, not a target).
pub fn aliases(dir: &Path) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(dir.join("aliases")).ok()?;
    Some(
        text.lines()
            .filter_map(|l| l.split('#').next())
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect(),
    )
}

/// Targets that the rules of [`not_self_contained`] would keep but that change the
/// machine itself, with what they change.
const MACHINE_CHANGING: &[(&str, &str)] = &[
    ("iptables", "changes the firewall's rules"),
    ("noexec", "mounts a file system"),
];

/// Why the target `name`, of these `aliases` (`None`: no `aliases` file), is not a
/// self-contained POSIX target — one ansible-test runs on a POSIX host with nothing
/// but the local connection and the machine itself, leaving the machine as it was —
/// or `None` when it is one.
pub fn not_self_contained(name: &str, aliases: Option<&[String]>) -> Option<&'static str> {
    let Some(aliases) = aliases else {
        return Some("a helper of other targets (no aliases)");
    };
    let has = |alias: &str| aliases.iter().any(|a| a == alias);
    let has_prefix = |prefix: &str| aliases.iter().any(|a| a.starts_with(prefix));
    if has("hidden") {
        return Some("hidden: a helper of other targets");
    }
    if has("disabled") || has_prefix("disabled/") || has("unsupported") {
        return Some("disabled or unsupported");
    }
    if !(has("posix") || has_prefix("shippable/posix/") || has_prefix("shippable/generic/")) {
        return Some("not a POSIX target (Windows, network devices)");
    }
    if has_prefix("cloud/") || has_prefix("network/") || has("needs/httptester") {
        return Some("needs a network service (cloud, httptester)");
    }
    if has_prefix("shippable/galaxy/") {
        return Some("needs a Galaxy server");
    }
    if has("needs/ssh") || has("non_local") {
        return Some("needs SSH or another connection than local");
    }
    if has("destructive") || has("needs/privileged") {
        return Some("destructive: changes the machine (packages, services, users, mounts)");
    }
    if name.starts_with("ansible-test") {
        return Some("tests ansible-test itself");
    }
    MACHINE_CHANGING
        .iter()
        .find(|(target, _)| *target == name)
        .map(|(_, what)| *what)
}

/// The roles a target's `meta/main.yml` lists under `dependencies` (`- name` or
/// `- role: name`).
fn dependencies(target: &Path) -> Vec<String> {
    let meta = std::fs::read_to_string(target.join("meta/main.yml")).unwrap_or_default();
    meta.lines()
        .skip_while(|l| !l.starts_with("dependencies:"))
        .skip(1)
        .take_while(|l| l.starts_with(' ') || l.starts_with('-') || l.trim().is_empty())
        .filter_map(|l| l.trim().strip_prefix("- "))
        .map(|entry| entry.trim_start_matches("role:").trim().to_string())
        .filter(|name| !name.is_empty() && !name.contains(['{', ' ']))
        .collect()
}

/// One tool's copy of the ansible-test layout: `targets/`, `inventory`, a bin directory
/// on PATH, and the environment ansible-test gives every target.
pub struct Layout {
    root: PathBuf,
    bin: PathBuf,
    ansible: bool,
    /// The reference's Python.
    python: PathBuf,
}

impl Layout {
    /// The layout of the targets `only` (with the roles their `meta/main.yml` depends
    /// on) or, with `None`, of every target.
    pub fn new(
        sb: &Sandbox,
        name: &str,
        reference: &Reference,
        ansible: bool,
        only: Option<&[&str]>,
    ) -> Layout {
        let source = &reference.targets;
        // The ansible-test layout: `test/integration` under the content root.
        let root = sb.dir(&format!("{name}/test/integration"));
        let copy = |from: &Path, to: &Path| {
            let copied = Command::new("cp")
                .arg("-a")
                .arg(from)
                .arg(to)
                .status()
                .expect("cp runs");
            assert!(copied.success(), "cannot copy {}", from.display());
        };
        match only {
            None => copy(source, &root.join("targets")),
            Some(targets) => {
                std::fs::create_dir_all(root.join("targets")).expect("targets dir");
                let mut wanted: Vec<String> = targets.iter().map(|t| t.to_string()).collect();
                let mut i = 0;
                while let Some(target) = wanted.get(i).cloned() {
                    for dependency in dependencies(&source.join(&target)) {
                        if !wanted.contains(&dependency) {
                            wanted.push(dependency);
                        }
                    }
                    copy(&source.join(&target), &root.join("targets").join(&target));
                    i += 1;
                }
            }
        }
        let python = reference.python.clone();
        std::fs::write(
            root.join("inventory"),
            format!(
                "[testgroup]\ntesthost ansible_connection=local ansible_pipelining=yes ansible_python_interpreter={}\n",
                python.display()
            ),
        )
        .expect("inventory written");
        std::fs::write(root.join("ansible.cfg"), "[defaults]\n").expect("ansible.cfg written");
        let bin = root.join("bin");
        std::fs::create_dir_all(&bin).expect("bin dir");
        let venv_bin = python.parent().expect("venv bin").to_path_buf();
        for (command, subcommand) in [
            ("ansible-playbook", "playbook"),
            ("ansible", "run"),
            ("ansible-inventory", "inventory"),
        ] {
            if ansible {
                std::os::unix::fs::symlink(venv_bin.join(command), bin.join(command))
                    .expect("link");
            } else {
                // Each start is noted in $SANDBALL_E2E_RUNS: a target that prints no
                // recap passes only if sandball ran.
                executable(
                    &bin.join(command),
                    &format!(
                        "#!/bin/sh\n[ -z \"$SANDBALL_E2E_RUNS\" ] || echo {command} >> \"$SANDBALL_E2E_RUNS\"\nexec '{}' {subcommand} \"$@\"\n",
                        Binaries::get().sandball.display()
                    ),
                );
            }
        }
        // `python` as the scripts call it: the venv's, started by its path in the venv
        // (through a link elsewhere, Python would not find the venv and its packages).
        executable(
            &bin.join("python"),
            &format!("#!/bin/sh\nexec '{}' \"$@\"\n", python.display()),
        );
        Layout {
            root,
            bin,
            ansible,
            python,
        }
    }

    /// Where sandball's starts during `target` are noted.
    fn runs_file(&self, target: &str) -> PathBuf {
        self.root.join("output").join(target).join(".sandball-runs")
    }

    /// Whether sandball was started while `target` ran.
    pub fn sandball_ran(&self, target: &str) -> bool {
        std::fs::metadata(self.runs_file(target)).is_ok_and(|m| m.len() > 0)
    }

    /// The `aliases` of `target` (none without that file).
    pub fn aliases(&self, target: &str) -> Vec<String> {
        aliases(&self.root.join("targets").join(target)).unwrap_or_default()
    }

    /// Whether `target` makes the test user (ansible-core's `setup_test_user`): it
    /// needs that target (`aliases`) or has that role as a dependency (`meta/main.yml`).
    pub fn makes_users(&self, target: &str) -> bool {
        const SETUP: &str = "setup_test_user";
        self.aliases(target)
            .iter()
            .any(|a| a.strip_prefix("needs/target/") == Some(SETUP))
            || std::fs::read_to_string(self.root.join("targets").join(target).join("meta/main.yml"))
                .is_ok_and(|meta| {
                    meta.lines().any(|l| {
                        let entry = l.trim().trim_start_matches("- ").trim_start();
                        entry.trim_start_matches("role:").trim() == SETUP
                    })
                })
    }

    /// The command for `target`: its `runme.sh`, or a playbook with it as a role.
    pub fn command(&self, target: &str) -> Command {
        let dir = self.root.join("targets").join(target);
        let output_dir = self.root.join("output").join(target);
        std::fs::create_dir_all(&output_dir).expect("output dir");
        let aliases = self.aliases(target);
        let aliases: Vec<&str> = aliases.iter().map(String::as_str).collect();
        let mut cmd = if dir.join("runme.sh").is_file() {
            let mut cmd = Command::new("./runme.sh");
            cmd.current_dir(&dir).env("ANSIBLE_PLAYBOOK_DIR", &dir);
            cmd
        } else {
            let play = self.root.join(format!("{target}-play.yml"));
            std::fs::write(
                &play,
                format!(
                    "- hosts: testhost\n  gather_facts: {}\n  vars:\n    output_dir: {}\n  roles:\n    - {target}\n",
                    !aliases.contains(&"gather_facts/no/") && !aliases.contains(&"gather_facts/no"),
                    output_dir.display()
                ),
            )
            .expect("playbook written");
            let mut cmd = Command::new(self.bin.join("ansible-playbook"));
            // ansible-test gives a role target the targets as its roles path; a
            // `runme.sh` sets its own.
            cmd.arg(&play)
                .arg("-i")
                .arg(self.root.join("inventory"))
                .current_dir(&self.root)
                .env("ANSIBLE_PLAYBOOK_DIR", &self.root)
                .env("ANSIBLE_ROLES_PATH", self.root.join("targets"));
            cmd
        };
        // The links first; ansible-core's own scripts last, as on a controller where
        // ansible-core is installed (sandball runs within it finds its Python there:
        // the module environment carries PATH, not SANDBALL_ANSIBLE_PYTHON).
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut paths = vec![self.bin.clone()];
        paths.extend(std::env::split_paths(&path));
        if let Some(venv_bin) = self.python.parent() {
            paths.push(venv_bin.to_path_buf());
        }
        cmd.env("PATH", std::env::join_paths(paths).expect("PATH"))
            .env("ANSIBLE_CONFIG", self.root.join("ansible.cfg"))
            .env("OUTPUT_DIR", &output_dir)
            .env("INVENTORY_PATH", self.root.join("inventory"))
            // As ansible-test runs them: no inventory but the one a target names.
            .env("ANSIBLE_INVENTORY", "/dev/null")
            .env("ANSIBLE_FORCE_HANDLERS", "true")
            .env("ANSIBLE_HOST_PATTERN_MISMATCH", "error")
            .env("ANSIBLE_DEPRECATION_WARNINGS", "false")
            .env("ANSIBLE_HOST_KEY_CHECKING", "false")
            .env("ANSIBLE_RETRY_FILES_ENABLED", "false")
            .env("ANSIBLE_FORCE_COLOR", "false")
            .env("ANSIBLE_NOCOLOR", "1")
            .env("NO_COLOR", "1")
            .env("ANSIBLE_HOME", self.root.join("ansible-home"))
            .env("ANSIBLE_LOCAL_TEMP", self.root.join("ansible-local"));
        // `env/set/NAME/VALUE` aliases: variables the target wants set.
        for alias in &aliases {
            if let Some((name, value)) = alias
                .strip_prefix("env/set/")
                .and_then(|nv| nv.split_once('/'))
            {
                cmd.env(name, value);
            }
        }
        if !self.ansible {
            let bins = Binaries::get();
            cmd.env("SANDBALL_E2E_RUNS", self.runs_file(target))
                .env("SANDBALL_SHIM", &bins.shim)
                .env("SANDBALL_ANSIBLE_PYTHON", &self.python)
                .env("SANDBALL_CACHE_DIR", crate::binaries::shared_shim_cache());
        }
        cmd
    }
}

/// Writes a script.
fn executable(path: &Path, text: &str) {
    std::fs::write(path, text).expect("script written");
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("script made executable");
}

/// Every recap line of a run, in order (a script runs several playbooks).
pub fn recaps(out: &Output) -> Vec<String> {
    out.stdout
        .lines()
        .filter(|l| l.contains(" : ok=") && l.contains(" ignored="))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

/// ansible-playbook's recaps of the targets `make test` runs (`make target-recaps`):
/// the version of ansible-core that printed them, then a line per recap line,
/// `target<TAB>recap`.
pub const RECORDED: &str = include_str!("../target-recaps.txt");

/// The same for the 2.21 targets, by ansible-core 2.21 (`make target-recaps-2.21`).
pub const RECORDED_2_21: &str = include_str!("../target-recaps-2.21.txt");

/// What is recorded for a target that prints no recap (see the module's doc).
pub const NO_RECAP: &str = "(no recap)";

/// The recorded recaps of each target, when `version` printed them (else none).
pub fn recorded(
    version: &str,
    recorded: &'static str,
) -> std::collections::BTreeMap<&'static str, Vec<String>> {
    let mut lines = recorded
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty());
    let mut by_target = std::collections::BTreeMap::new();
    if lines.next().and_then(|l| l.strip_prefix("ansible-core ")) != Some(version) {
        return by_target;
    }
    for line in lines {
        if let Some((target, recap)) = line.split_once('\t') {
            let recaps = by_target.entry(target).or_insert_with(Vec::new);
            if recap != NO_RECAP {
                recaps.push(recap.to_string());
            }
        }
    }
    by_target
}

/// One target run under both tools (ansible-playbook's run left out where sandball
/// printed its recorded recaps).
pub struct Comparison {
    /// sandball's run.
    pub mine: Output,
    /// ansible-playbook's run; `None` when sandball printed the recorded recaps.
    pub reference: Option<Output>,
    /// Whether sandball was started during its run.
    pub sandball_ran: bool,
}

impl Comparison {
    /// sandball's recap lines.
    pub fn our_recaps(&self) -> Vec<String> {
        recaps(&self.mine)
    }

    /// ansible-playbook's recap lines (none when it was not run).
    pub fn their_recaps(&self) -> Vec<String> {
        self.reference.as_ref().map(recaps).unwrap_or_default()
    }

    /// Whether both recaps are the same (the recorded ones when ansible-playbook was
    /// not run).
    pub fn same_recaps(&self) -> bool {
        self.reference.is_none() || self.our_recaps() == self.their_recaps()
    }

    /// Whether the target passes under ansible-playbook: it exits 0 (or was not run,
    /// sandball printing its recorded recaps).
    pub fn reference_passed(&self) -> bool {
        self.reference.as_ref().is_none_or(|r| r.code == 0)
    }

    /// Whether the target passes under both tools (see the module's doc).
    pub fn passed(&self) -> bool {
        self.mine.code == 0
            && self.reference_passed()
            && self.same_recaps()
            && (!self.our_recaps().is_empty() || self.sandball_ran)
    }
}

/// Runs `target` in `ours` (sandball's layout) and, unless sandball printed `expected`
/// (its recorded recaps), in `theirs` (ansible-playbook's), each command through
/// `run`. The two run side by side, but one after the other for a target that makes
/// the test user (both would make the same user).
pub fn compare(
    ours: &Layout,
    theirs: &Layout,
    target: &str,
    expected: Option<&Vec<String>>,
    run: impl Fn(Command) -> Output + Sync,
) -> Comparison {
    let (mine, reference) = match expected {
        Some(expected) => {
            let mine = run(ours.command(target));
            if mine.code == 0
                && recaps(&mine) == *expected
                && (!expected.is_empty() || ours.sandball_ran(target))
            {
                (mine, None)
            } else {
                (mine, Some(run(theirs.command(target))))
            }
        }
        None if ours.makes_users(target) => {
            (run(ours.command(target)), Some(run(theirs.command(target))))
        }
        None => std::thread::scope(|s| {
            let mine = s.spawn(|| run(ours.command(target)));
            let reference = s.spawn(|| run(theirs.command(target)));
            (
                mine.join().expect("sandball's run"),
                Some(reference.join().expect("ansible's run")),
            )
        }),
    };
    Comparison {
        sandball_ran: ours.sandball_ran(target),
        mine,
        reference,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(name: &str, aliases: &[&str]) -> Option<&'static str> {
        let aliases: Vec<String> = aliases.iter().map(|a| a.to_string()).collect();
        not_self_contained(name, Some(&aliases))
    }

    #[test]
    fn posix_and_generic_targets_are_self_contained() {
        assert_eq!(rule("ping", &["shippable/posix/group1"]), None);
        assert_eq!(rule("x", &["shippable/generic/group1", "needs/root"]), None);
        // A target for both kinds of host is a POSIX target too.
        assert_eq!(
            rule("x", &["posix", "windows", "shippable/windows/group1"]),
            None
        );
    }

    #[test]
    fn targets_needing_more_than_the_machine_are_not() {
        for (name, aliases) in [
            ("x", &["shippable/windows/group1", "windows"][..]),
            ("x", &["shippable/posix/group1", "hidden"]),
            ("x", &["shippable/posix/group1", "disabled"]),
            ("x", &["shippable/posix/group1", "cloud/aws"]),
            ("x", &["shippable/posix/group1", "needs/ssh"]),
            ("x", &["shippable/posix/group1", "destructive"]),
            ("ansible-test-sanity", &["shippable/posix/group1"]),
            ("iptables", &["shippable/posix/group2"]),
        ] {
            assert!(rule(name, aliases).is_some(), "{name} {aliases:?}");
        }
        assert!(not_self_contained("setup_x", None).is_some());
    }

    #[test]
    fn aliases_are_read_without_comments_or_blank_lines() {
        let dir = tempfile::tempdir().expect("temp dir");
        assert_eq!(aliases(dir.path()), None);
        std::fs::write(dir.path().join("aliases"), "a # why\n\n  b\n# c\n").expect("write");
        assert_eq!(
            aliases(dir.path()),
            Some(vec!["a".to_string(), "b".to_string()])
        );
    }
}
