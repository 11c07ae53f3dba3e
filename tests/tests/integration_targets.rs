//! ansible-core's own integration targets, run the way ansible-test runs them, under
//! sandball and under ansible-playbook side by side.
//!
//! The targets come from the sdist of the very ansible-core version in `target/venv`,
//! which `make ansible-targets` downloads from PyPI at test time (they are never kept in
//! this repository); [`TARGETS_2_21`] from 2.21's (`make ansible-targets-2.21`), run
//! against ansible-playbook 2.21 with sandball following 2.21. The layout is ansible-test's: a copy of `targets/` in
//! `test/integration/` beside an `inventory` with `testhost` on the local connection,
//! and ansible-test's environment (`ANSIBLE_INVENTORY=/dev/null`, …); a target with a
//! `runme.sh` is run as that script from its own directory (its `ansible-playbook`,
//! `ansible` and `ansible-inventory` calls reach sandball through links of those
//! names), any other target as a role of a one-play playbook on `testhost`, with
//! `output_dir` and `ANSIBLE_ROLES_PATH` set as ansible-test sets them for a role.
//!
//! A target passes when sandball exits 0 and prints the same recaps as ansible-playbook,
//! which must exit 0 too. A `runme.sh` that keeps the playbooks' output to itself (it
//! checks the output and exits accordingly, as ansible-test judges a target by its exit
//! status) prints no recap under either tool: it passes when both exit 0 and sandball
//! was started. [`TARGETS`] lists the targets sandball passes; the test prints
//! a line per target with both tools' times.
//!
//! ansible-playbook's recaps of the listed targets are recorded in
//! `tests/target-recaps.txt` by `make target-recaps`, with the ansible-core version that
//! printed them. When the venv holds that version, a target whose sandball recaps equal
//! the recorded ones passes without running ansible-playbook again (the reference took
//! four fifths of these tests' time); any other target — a recap that differs, a target
//! not recorded, another version — is run under ansible-playbook as well and compared
//! with that run, as before.

use sandball_e2e::binaries::{Binaries, ansible_python, target_dir, workspace_root};
use sandball_e2e::{Output, Sandbox};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The targets sandball runs as ansible-playbook does (names of
/// `test/integration/targets/`).
const TARGETS: &[&str] = &[
    "add_host",
    "any_errors_fatal",
    "assemble",
    "async_fail",
    "blockinfile",
    "blocks",
    "changed_when",
    "check_mode",
    "collections_plugin_namespace",
    "collections_relative_imports",
    "conditionals",
    "debug",
    "dict_transformations",
    "embedded_module",
    "environment",
    "facts_d",
    "failed_when",
    "filter_mathstuff",
    "filter_urls",
    "filter_urlsplit",
    "getent",
    "group_by",
    "handlers",
    "hash",
    "hosts_field",
    "ignore_errors",
    "import-role-tasks",
    "import_tasks",
    "include_import",
    "include_import_tasks_nested",
    "include_vars",
    "include_vars-ad-hoc",
    "include_when_parent_is_dynamic",
    "include_when_parent_is_static",
    "include_with_templating",
    "includes",
    "inventory_ini",
    "inventory_yaml",
    "jinja2_native_types",
    "jinja_plugins",
    "json_cleanup",
    "keyword_inheritance",
    "lookup-option-name",
    "lookup_csvfile",
    "lookup_dict",
    "lookup_file",
    "lookup_fileglob",
    "lookup_first_found",
    "lookup_indexed_items",
    "lookup_ini",
    "lookup_inventory_hostnames",
    "lookup_items",
    "lookup_lines",
    "lookup_list",
    "lookup_nested",
    "lookup_pipe",
    "lookup_random_choice",
    "lookup_sequence",
    "lookup_subelements",
    "lookup_template",
    "lookup_together",
    "lookup_unvault",
    "lookup_varnames",
    "lookup_vars",
    "loop-until",
    "loop_control",
    "loops",
    "meta_tasks",
    "module_defaults",
    "module_precedence",
    "no_log",
    "old_style_modules_posix",
    "omit",
    "order",
    "parsing",
    "path_lookups",
    "ping",
    "play_iterator",
    "playbook",
    "plugin_loader",
    "plugin_namespace",
    "raw",
    "register",
    "replace",
    "roles",
    "roles_arg_spec",
    "roles_var_inheritance",
    "script",
    "set_fact",
    "set_stats",
    "special_vars",
    "special_vars_hosts",
    "slurp",
    "split",
    "stat",
    "strategy_free",
    "strategy_linear",
    "task-args",
    "task-esoterica",
    "task_ordering",
    "tasks",
    "tempfile",
    "template_jinja2_non_native",
    "templating_lookup_args",
    "templating_settings",
    "test_files",
    "test_mathstuff",
    "test_utils",
    "throttle",
    "undefined",
    "unicode",
    "until",
    "unvault",
    "var_blending",
    "var_inheritance",
    "var_precedence",
    "var_templating",
    "vars_files",
    "wait_for_connection",
    "want_json_modules_posix",
    "yaml_parsing",
];

/// How long one target may take under one tool.
const LIMIT: Duration = Duration::from_secs(600);

/// The ansible-core whose targets run and whose ansible-playbook is the reference: its
/// venv's Python (sandball finds it too, and follows its release) and where its
/// targets were unpacked.
struct Reference {
    python: PathBuf,
    targets: PathBuf,
    /// Its recorded recaps (the text of a `tests/target-recaps*.txt`).
    recorded: &'static str,
}

impl Reference {
    /// `target/venv`'s, with the targets `make ansible-targets` unpacked
    /// (`$ANSIBLE_TARGETS_DIR` overrides).
    fn pinned() -> Reference {
        let dir = std::env::var_os("ANSIBLE_TARGETS_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| target_dir().join("ansible-targets/targets"));
        Reference::at(ansible_python(), dir, "make ansible-targets", RECORDED)
    }

    /// ansible-core 2.21's (`target/venv-2.21`, `$ANSIBLE_221_BIN_DIR`), with the
    /// targets `make ansible-targets-2.21` unpacked.
    fn v2_21() -> Reference {
        let bin = sandball_e2e::compare::ansible_bin("ANSIBLE_221_BIN_DIR", "venv-2.21");
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
    fn version(&self) -> String {
        let out = Command::new(&self.python)
            .args(["-c", "import ansible.release as r; print(r.__version__)"])
            .output()
            .expect("the venv's python runs");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
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
struct Layout {
    root: PathBuf,
    bin: PathBuf,
    ansible: bool,
    /// The reference's Python.
    python: PathBuf,
}

impl Layout {
    /// The layout of the targets `only` (with the roles their `meta/main.yml` depends
    /// on) or, with `None`, of every target.
    fn new(
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
    fn sandball_ran(&self, target: &str) -> bool {
        std::fs::metadata(self.runs_file(target)).is_ok_and(|m| m.len() > 0)
    }

    /// The `aliases` of `target`: ansible-test's settings, one a line, comments cut.
    fn aliases(&self, target: &str) -> Vec<String> {
        std::fs::read_to_string(self.root.join("targets").join(target).join("aliases"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.split('#').next())
            .map(|l| l.trim().to_string())
            .collect()
    }

    /// Whether `target` makes the test user (ansible-core's `setup_test_user`): it
    /// needs that target (`aliases`) or has that role as a dependency (`meta/main.yml`).
    fn makes_users(&self, target: &str) -> bool {
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
    fn command(&self, target: &str) -> Command {
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
                .env(
                    "SANDBALL_CACHE_DIR",
                    workspace_root().join("target/e2e-shim-cache"),
                );
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
fn recaps(out: &Output) -> Vec<String> {
    out.stdout
        .lines()
        .filter(|l| l.contains(" : ok=") && l.contains(" ignored="))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

/// The listed targets are split into this many tests, which the test runner runs
/// beside each other and beside the other tests (first of all: `.config/nextest.toml`).
const SHARDS: usize = 6;

#[test]
fn ansible_core_integration_targets_pass_as_under_ansible_playbook_1_of_6() {
    shard(0);
}

#[test]
fn ansible_core_integration_targets_pass_as_under_ansible_playbook_2_of_6() {
    shard(1);
}

#[test]
fn ansible_core_integration_targets_pass_as_under_ansible_playbook_3_of_6() {
    shard(2);
}

#[test]
fn ansible_core_integration_targets_pass_as_under_ansible_playbook_4_of_6() {
    shard(3);
}

#[test]
fn ansible_core_integration_targets_pass_as_under_ansible_playbook_5_of_6() {
    shard(4);
}

#[test]
fn ansible_core_integration_targets_pass_as_under_ansible_playbook_6_of_6() {
    shard(5);
}

/// The targets of ansible-core 2.21's sdist that exercise what 2.21 changed for playbook
/// authors (`_task`, register projections, the results of `changed_when`,
/// `failed_when`, `break_when`, `ignore_errors` in loops), run under sandball finding
/// 2.21's ansible-core (so following 2.21) and compared with ansible-playbook 2.21's
/// recaps recorded in `tests/target-recaps-2.21.txt` (`make target-recaps-2.21`), or
/// with a run of it where they differ.
const TARGETS_2_21: &[&str] = &[
    "register_projections",
    "changed_when",
    "failed_when",
    "register",
    "break_when",
    "ignore_errors",
];

#[test]
fn ansible_core_2_21_targets_pass_as_under_ansible_playbook_2_21() {
    run_targets(&Reference::v2_21(), TARGETS_2_21, Some(TARGETS_2_21));
}

/// Runs every `SHARDS`th listed target from the `n`th on — or, in the first shard,
/// the targets `ANSIBLE_TARGETS=a,b` names instead (to try one out).
fn shard(n: usize) {
    let chosen = std::env::var("ANSIBLE_TARGETS").ok();
    let targets: Vec<&str> = match &chosen {
        Some(_) if n > 0 => return,
        Some(list) => list.split(',').map(str::trim).collect(),
        None => TARGETS.iter().copied().skip(n).step_by(SHARDS).collect(),
    };
    run_targets(&Reference::pinned(), &targets, None);
}

/// ansible-playbook's recaps of the listed targets (`make target-recaps`): the version
/// of ansible-core that printed them, then a line per recap line, `target<TAB>recap`.
const RECORDED: &str = include_str!("../target-recaps.txt");

/// The same for the targets of [`TARGETS_2_21`], by ansible-core 2.21.
const RECORDED_2_21: &str = include_str!("../target-recaps-2.21.txt");

/// What is recorded for a target that prints no recap (see the module's doc).
const NO_RECAP: &str = "(no recap)";

/// The recorded recaps of each target, when `version` printed them (else none).
fn recorded(
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

/// Runs `targets` under sandball, and under ansible-playbook where no recorded recap
/// says what it prints (see the module's doc), and asserts that sandball passes each.
/// With `$ANSIBLE_TARGETS_RECORD` set to a directory, every target is run under both
/// tools and ansible-playbook's recaps of each it passes are written there (one file a
/// target), for `make target-recaps`. `only`: the targets to lay out (and those they
/// depend on), else all.
fn run_targets(reference: &Reference, targets: &[&str], only: Option<&[&str]>) {
    let sb = Sandbox::new();
    let ours = Layout::new(&sb, "sandball", reference, false, only);
    let theirs = Layout::new(&sb, "ansible", reference, true, only);
    let record = std::env::var_os("ANSIBLE_TARGETS_RECORD").map(PathBuf::from);
    let version = reference.version();
    let recorded = if record.is_some() {
        Default::default()
    } else {
        recorded(&version, reference.recorded)
    };
    let mut failures = Vec::new();
    for target in targets {
        let (mine, reference) = match recorded.get(target) {
            // Run ansible-playbook only when sandball does not print what it printed.
            Some(expected) => {
                let mine = Output::run(ours.command(target), LIMIT);
                if mine.code == 0
                    && recaps(&mine) == *expected
                    && (!expected.is_empty() || ours.sandball_ran(target))
                {
                    (mine, None)
                } else {
                    let reference = Output::run(theirs.command(target), LIMIT);
                    (mine, Some(reference))
                }
            }
            // A target that makes the test user (and deletes it at the end) runs under
            // one tool after the other, since both would make the same user.
            None if ours.makes_users(target) => (
                Output::run(ours.command(target), LIMIT),
                Some(Output::run(theirs.command(target), LIMIT)),
            ),
            None => std::thread::scope(|s| {
                let mine = s.spawn(|| Output::run(ours.command(target), LIMIT));
                let reference = s.spawn(|| Output::run(theirs.command(target), LIMIT));
                (
                    mine.join().expect("sandball's run"),
                    Some(reference.join().expect("ansible's run")),
                )
            }),
        };
        let our_recaps = recaps(&mine);
        let Some(reference) = reference else {
            eprintln!(
                "{target:24} pass  sandball exit 0 in {:5.1} s, recaps as ansible-playbook {version} printed them (recorded)",
                mine.elapsed.as_secs_f64(),
            );
            continue;
        };
        let their_recaps = recaps(&reference);
        if let Some(dir) = record.as_ref().filter(|_| reference.code == 0) {
            let lines: String = if their_recaps.is_empty() {
                format!("{NO_RECAP}\n")
            } else {
                their_recaps.iter().map(|r| format!("{r}\n")).collect()
            };
            std::fs::write(dir.join(target), lines).expect("recorded recap written");
        }
        let same = our_recaps == their_recaps;
        let passed = mine.code == 0
            && reference.code == 0
            && same
            && (!our_recaps.is_empty() || ours.sandball_ran(target));
        eprintln!(
            "{target:24} {:4}  sandball exit {} in {:5.1} s, ansible-playbook exit {} in {:5.1} s{}{}",
            if passed { "pass" } else { "FAIL" },
            mine.code,
            mine.elapsed.as_secs_f64(),
            reference.code,
            reference.elapsed.as_secs_f64(),
            if same { "" } else { ", recaps differ" },
            match recorded.get(target) {
                Some(r) if *r != their_recaps =>
                    "; its recaps are not those in tests/target-recaps.txt (`make target-recaps` records them anew)",
                _ => "",
            },
        );
        if !passed {
            failures.push(format!(
                "{target}:\n--- sandball\n{mine}\n--- ansible-playbook\n{reference}"
            ));
        }
    }
    eprintln!(
        "{} of {} targets pass",
        targets.len() - failures.len(),
        targets.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
