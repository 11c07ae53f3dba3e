//! ansible-core's own integration targets, run the way ansible-test runs them, under
//! sandball and under ansible-playbook side by side (the layout, the commands and what
//! passing means: [`sandball_e2e::targets`]).
//!
//! [`TARGETS`] lists the targets sandball passes; the test prints a line per target
//! with both tools' times. [`TARGETS_2_21`] come from 2.21's sdist (`make
//! ansible-targets-2.21`), run against ansible-playbook 2.21 with sandball following
//! 2.21. `make wider-targets` runs every self-contained POSIX target of the sdist
//! (`src/bin/wider-targets.rs`).
//!
//! ansible-playbook's recaps of the listed targets are recorded in
//! `tests/target-recaps.txt` by `make target-recaps`, with the ansible-core version that
//! printed them. When the venv holds that version, a target whose sandball recaps equal
//! the recorded ones passes without running ansible-playbook again (the reference took
//! four fifths of these tests' time); any other target — a recap that differs, a target
//! not recorded, another version — is run under ansible-playbook as well and compared
//! with that run, as before.

use sandball_e2e::targets::{Layout, NO_RECAP, Reference, compare, recorded};
use sandball_e2e::{Output, Sandbox};
use std::path::PathBuf;
use std::time::Duration;

/// The targets sandball runs as ansible-playbook does (names of
/// `test/integration/targets/`).
const TARGETS: &[&str] = &[
    "add_host",
    "adhoc",
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
    "inventory_advanced_host_list",
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
/// `failed_when`, `break_when`, `ignore_errors` in loops, `include_vars`' list options,
/// a loop label that cannot be templated, blocks), run under sandball finding
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
    "include_vars",
    "loops",
    "blocks",
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
        let ran = compare(&ours, &theirs, target, recorded.get(target), |cmd| {
            Output::run(cmd, LIMIT)
        });
        let (mine, our_recaps) = (&ran.mine, ran.our_recaps());
        let Some(reference) = &ran.reference else {
            eprintln!(
                "{target:24} pass  sandball exit 0 in {:5.1} s, recaps as ansible-playbook {version} printed them (recorded)",
                mine.elapsed.as_secs_f64(),
            );
            continue;
        };
        let their_recaps = ran.their_recaps();
        if let Some(dir) = record.as_ref().filter(|_| reference.code == 0) {
            let lines: String = if their_recaps.is_empty() {
                format!("{NO_RECAP}\n")
            } else {
                their_recaps.iter().map(|r| format!("{r}\n")).collect()
            };
            std::fs::write(dir.join(target), lines).expect("recorded recap written");
        }
        let same = our_recaps == their_recaps;
        let passed = ran.passed();
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
