//! Static and dynamic inclusion, compared with ansible-playbook: `import_tasks` and
//! `import_role` (`tasks_from`) read before the run with the importer's keywords
//! reaching every task; `include_tasks` per host (templated names), in a loop (its
//! `included:` lines showing `loop_control.label`), with `apply`, and imports inside an included file; `include_role` with its handlers;
//! includes a host's `when` leaves out shown skipped; a missing included file (or one
//! it imports) fails the host that includes it, whatever `ignore_errors` says, with
//! ansible-core's `include` and `reason`; an imported file that holds no list of tasks
//! is refused before the run; a role as a handler is refused before the run.

use sandball_e2e::{Output, Sandbox};

fn project(sb: &Sandbox) {
    sb.write(
        "tasks/extra.yml",
        "- name: extra one\n  debug: {msg: \"extra {{ x | default('none') }}\"}\n- import_tasks: nested.yml\n",
    );
    sb.write(
        "tasks/nested.yml",
        "- name: nested\n  debug: {msg: nested}\n",
    );
    sb.write(
        "tasks/per_host.yml",
        "- name: per host file\n  debug: {msg: \"per host {{ inventory_hostname }} {{ item | default('-') }} {{ extra }}\"}\n",
    );
    sb.write(
        "tasks/beta.yml",
        "- name: beta file\n  debug: {msg: \"beta {{ extra }}\"}\n",
    );
    sb.write(
        "roles/web/tasks/main.yml",
        "- name: web main\n  debug: {msg: main}\n  changed_when: true\n  notify: reload web\n",
    );
    sb.write(
        "roles/web/tasks/alt.yml",
        "- name: alt web tasks\n  debug: {msg: \"alt {{ http_port }}\"}\n",
    );
    sb.write("roles/web/defaults/main.yml", "http_port: 80\n");
    sb.write(
        "roles/web/handlers/main.yml",
        "- name: reload web\n  debug: {msg: reloading}\n",
    );
    sb.write(
        "site.yml",
        r#"
- hosts: all
  gather_facts: false
  tasks:
    - import_tasks: tasks/extra.yml
      vars: {x: 1}
      tags: [imp]
    - name: imported role
      import_role: {name: web, tasks_from: alt}
    - import_tasks: tasks/extra.yml
      when: false
    - name: include per host
      include_tasks: {file: "tasks/{{ 'beta' if inventory_hostname == 'beta' else 'per_host' }}.yml"}
      vars: {extra: e1}
    - name: include in loop
      include_tasks: tasks/per_host.yml
      loop: [x, y]
      vars: {extra: e2}
    - name: include in a labelled loop
      include_tasks: tasks/per_host.yml
      loop: [{name: p, secret: s1}, {name: q, secret: s2}]
      loop_control: {loop_var: entry, label: "{{ entry.name }}"}
      vars: {extra: e4}
    - name: include with apply
      include_tasks:
        file: tasks/extra.yml
        apply: {tags: [applied]}
      tags: [applied]
    - name: include a role
      include_role: {name: web}
      vars: {http_port: 99}
    - name: include for beta only
      include_tasks: tasks/beta.yml
      when: inventory_hostname == 'beta'
      vars: {extra: e3}
    - name: include a role for nobody
      include_role: {name: web}
      when: false
    - name: after
      debug: {msg: after}
    - name: private
      debug: {msg: "{{ http_port | default('private') }}"}
    - name: include publicly
      include_role: {name: web, tasks_from: alt, public: true}
    - name: public
      debug: {msg: "{{ http_port }}"}
"#,
    );
}

#[test]
fn imports_and_includes_run_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta"]);
    project(&sb);
    let pb = sb.path().join("site.yml");
    let work = sb.dir("work");
    for args in [
        &["-f", "1"][..],
        &["-f", "1", "-t", "applied"],
        &["-f", "1", "-t", "imp"],
        &["--list-tasks"],
    ] {
        let ours = sb.play(&pb, &work, args).run();
        ours.assert_no_panic().assert_code(0);
        if let Some(theirs) = sb.ansible_play(&pb, &work, args) {
            let theirs = theirs.run();
            assert_eq!(ours.stdout, theirs.stdout, "{args:?}\n{theirs}\n{ours}");
        }
    }
}

#[test]
fn a_missing_include_fails_the_host_that_includes_it() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta"]);
    sb.write("tasks/alpha.yml", "- debug: {msg: found}\n");
    let work = sb.dir("work");
    // A file the included one imports, missing, fails the hosts that include it too;
    // so does one a role's tasks import.
    sb.write("tasks/nested.yml", "- import_tasks: gone.yml\n");
    sb.write("roles/r/tasks/main.yml", "- import_tasks: gone_too.yml\n");
    let pb = sb.write(
        "nested.yml",
        "- hosts: alpha\n  gather_facts: false\n  tasks:\n    - include_tasks: tasks/nested.yml\n- hosts: beta\n  gather_facts: false\n  tasks:\n    - include_role: {name: r}\n",
    );
    let nested: Output = sb.play(&pb, &work, &[]).run();
    nested.assert_no_panic().assert_code(2);
    // What failed and why: the include and the reason, naming the file as if beside
    // the playbook.
    let failures = |o: &Output| -> Vec<String> {
        o.stdout
            .lines()
            .chain(o.stderr.lines())
            .filter(|l| l.starts_with("fatal: ") || l.contains("Could not find or access"))
            .map(str::to_string)
            .collect()
    };
    let dir = std::fs::canonicalize(sb.path()).expect("sandbox");
    assert!(
        nested.stdout.contains(&format!(
            "\"include\": \"tasks/nested.yml\", \"reason\": \"Could not find or access '{}/gone.yml' on the Ansible Controller",
            dir.display()
        )),
        "{nested}"
    );
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        nested.assert_same_recap_as(&theirs);
        assert_eq!(failures(&nested), failures(&theirs), "{theirs}\n{nested}");
    }
    let pb = sb.write(
        "play.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - include_tasks: \"tasks/{{ inventory_hostname }}.yml\"\n    - name: after\n      debug: {msg: after}\n",
    );
    let ours: Output = sb.play(&pb, &work, &[]).run();
    ours.assert_no_panic().assert_code(2);
    ours.assert_stdout_has("\"include\": \"tasks/beta.yml\"");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        ours.assert_same_recap_as(&theirs);
        assert_eq!(failures(&ours), failures(&theirs), "{theirs}\n{ours}");
    }
    let import = sb.write(
        "import.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - debug: {msg: first}\n    - import_tasks: tasks/nope.yml\n",
    );
    let out = sb.play(&import, &work, &[]).run();
    out.assert_no_panic();
    assert_ne!(out.code, 0, "{out}");
    out.assert_stderr_has("Could not find or access 'tasks/nope.yml'");
    out.assert_stderr_has("import.yml");
    assert!(
        !out.stdout.contains("TASK ["),
        "an import error is found before the run:\n{out}"
    );
    // A file of tasks that holds no list: found before the run when imported, worded
    // as ansible-core words it, with the place in the file.
    sb.write("tasks/one.yml", "debug: {msg: not a list}\n");
    let mapping = sb.write(
        "mapping.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - debug: {msg: first}\n    - import_tasks: tasks/one.yml\n",
    );
    let out = sb.play(&mapping, &work, &[]).run();
    out.assert_no_panic()
        .assert_code(4)
        .assert_stderr_has("included task files must contain a list of tasks")
        .assert_stderr_has("one.yml:1:1");
    assert!(!out.stdout.contains("TASK ["), "{out}");
    if let Some(theirs) = sb.ansible_play(&mapping, &work, &[]) {
        let theirs = theirs.run();
        theirs.assert_code(4);
        assert!(
            theirs
                .stderr
                .contains("included task files must contain a list of tasks"),
            "{theirs}"
        );
    }
}

#[test]
fn a_role_as_a_handler_is_refused_before_the_run_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    sb.write("roles/r/tasks/main.yml", "- debug: {msg: from role}\n");
    let work = sb.dir("work");
    for action in ["import_role", "include_role"] {
        let pb = sb.write(
            &format!("{action}.yml"),
            &format!(
                "- hosts: all\n  gather_facts: false\n  tasks:\n    - name: first\n      command: 'true'\n      notify: h\n  handlers:\n    - name: h\n      {action}: {{name: r}}\n"
            ),
        );
        let ours = sb.play(&pb, &work, &[]).run();
        ours.assert_no_panic();
        ours.assert_stderr_has(&format!("Using '{action}' as a handler is not supported."));
        ours.assert_stderr_has(&format!("{action}.yml:8"));
        assert!(
            !ours.stdout.contains("TASK ["),
            "refused before the run:\n{ours}"
        );
        if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
            let theirs = theirs.run();
            assert!(
                theirs
                    .stderr
                    .contains(&format!("Using '{action}' as a handler is not supported.")),
                "{theirs}"
            );
            assert_eq!(ours.code, theirs.code, "{ours}\n{theirs}");
        }
    }
}

#[test]
fn import_playbook_brings_plays_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    sb.write(
        "sub/other.yml",
        "- name: imported play\n  hosts: all\n  gather_facts: false\n  vars: {own: o}\n  tasks:\n    - name: in imported\n      debug: {msg: \"{{ own }} {{ passed | default('none') }}\"}\n- import_playbook: deeper.yml\n",
    );
    sb.write(
        "sub/deeper.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - name: deeper\n      debug: {msg: deep}\n",
    );
    let pb = sb.write(
        "site.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - name: first\n      debug: {msg: first}\n- import_playbook: sub/other.yml\n  vars: {passed: p, own: from-import}\n  tags: [imported]\n- import_playbook: sub/deeper.yml\n  when: false\n",
    );
    let work = sb.dir("work");
    for args in [&[][..], &["--list-tags"], &["-t", "imported"]] {
        let ours = sb.play(&pb, &work, args).run();
        ours.assert_no_panic().assert_code(0);
        if let Some(theirs) = sb.ansible_play(&pb, &work, args) {
            let theirs = theirs.run();
            assert_eq!(ours.stdout, theirs.stdout, "{args:?}\n{theirs}\n{ours}");
        }
    }
    let missing = sb.write("missing.yml", "- import_playbook: nope.yml\n");
    let out = sb.play(&missing, &work, &[]).run();
    out.assert_no_panic();
    assert_ne!(out.code, 0, "{out}");
    out.assert_stderr_has("Could not find or access");
    out.assert_stderr_has("missing.yml");
}

#[test]
fn templated_import_playbook_names_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    sb.write(
        "p1.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - name: shown\n      debug: {msg: \"in {{ which }}\"}\n",
    );
    let pb = sb.write(
        "site.yml",
        "- import_playbook: \"{{ 'p1.yml' }}\"\n  vars: {which: first}\n- import_playbook: \"{{ name }}.yml\"\n  vars: {which: entry}\n",
    );
    let work = sb.dir("work");
    let args = ["-e", "name=p1"];
    let ours = sb.play(&pb, &work, &args).run();
    ours.assert_no_panic().assert_code(0);
    ours.assert_stdout_has("\"msg\": \"in entry\"");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &args) {
        let theirs = theirs.run();
        ours.assert_same_recap_as(&theirs);
        assert_eq!(theirs.task_results("shown"), ours.task_results("shown"));
    }
}

#[test]
fn imports_named_by_play_and_entry_vars_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    sb.write(
        "roles/r1/tasks/main.yml",
        "- name: in the role\n  debug: {msg: \"r1 {{ who }}\"}\n",
    );
    sb.write(
        "t1.yml",
        "- name: in the file\n  debug: {msg: tasks file}\n",
    );
    sb.write(
        "inner.yml",
        "- hosts: all\n  gather_facts: false\n  vars: {tf: t1}\n  tasks:\n    - import_role: {name: \"{{ rname }}\"}\n    - import_tasks: \"{{ tf }}.yml\"\n",
    );
    let pb = sb.write(
        "site.yml",
        "- import_playbook: inner.yml\n  vars: {who: entry, rname: r1}\n",
    );
    let work = sb.dir("work");
    let ours = sb.play(&pb, &work, &[]).run();
    ours.assert_no_panic().assert_code(0);
    ours.assert_stdout_has("\"msg\": \"r1 entry\"");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        ours.assert_same_recap_as(&theirs);
        for task in ["r1 : in the role", "in the file"] {
            assert_eq!(theirs.task_results(task), ours.task_results(task), "{task}");
        }
    }
}

#[test]
fn modules_in_an_included_role_or_an_imported_playbook_library_are_found() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let module =
        |msg: &str| format!("#!/bin/sh\necho '{{\"changed\": false, \"msg\": \"{msg}\"}}'\n");
    let role_module = sb.write("roles/tooling/library/role_hello", &module("from the role"));
    let sub_module = sb.write("sub/library/sub_hello", &module("from the sub playbook"));
    {
        use std::os::unix::fs::PermissionsExt;
        for m in [&role_module, &sub_module] {
            std::fs::set_permissions(m, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
    sb.write(
        "roles/tooling/tasks/main.yml",
        "- name: role module\n  role_hello:\n",
    );
    sb.write(
        "sub/sub.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - name: sub module\n      sub_hello:\n",
    );
    let pb = sb.write(
        "play.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - include_role: {name: tooling}\n- import_playbook: sub/sub.yml\n",
    );
    let work = sb.dir("work");
    let out = sb.play(&pb, &work, &["-v"]).run();
    out.assert_no_panic().assert_code(0);
    out.assert_stdout_has("\"msg\": \"from the role\"")
        .assert_stdout_has("\"msg\": \"from the sub playbook\"");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &["-v"]) {
        out.assert_same_recap_as(&theirs.run());
    }
}

#[test]
fn include_role_files_are_templated_with_the_includes_vars() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    sb.write("roles/r/tasks/main.yml", "- debug: {msg: main}\n");
    sb.write(
        "roles/r/tasks/canary.yml",
        "- set_fact: {from_canary: r1c3}\n",
    );
    sb.write("roles/r/vars/extra.yml", "from_vars: here\n");
    let pb = sb.write(
        "play.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - include_role:\n        name: r\n        tasks_from: \"{{ which }}.yml\"\n        vars_from: \"{{ vars_file }}\"\n        public: true\n      vars: {which: canary, vars_file: extra.yml}\n    - assert:\n        that: [from_canary == 'r1c3', from_vars == 'here']\n",
    );
    let work = sb.dir("work");
    let out = sb.play(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(0);
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        out.assert_same_recap_as(&theirs.run());
    }
}

/// Behaviours ansible-core's own targets check (include_import, handlers, roles,
/// conditionals), compared with ansible-playbook line for line: a loop with duplicate
/// items includes once per item; an item Python finds false (`0`, `""`) is left out
/// of the `included:` line; a role imported by an included role gives the play its
/// handlers; `run_once` on an include makes it for the first host alone, while its
/// `set_fact` under `apply: {run_once: true}` reaches every host; a role included by
/// another role's task sees that role's parameters; a trusted variable naming an
/// expression is evaluated as a condition, and `that: "{{ list }}"` checks each item.
#[test]
fn include_details_from_ansible_core_targets_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta"]);
    sb.write(
        "tasks/item.yml",
        "- name: item\n  debug: {msg: \"item={{ item }}\"}\n",
    );
    sb.write("tasks/lola.yml", "- set_fact: {lola: wiseman}\n");
    sb.write(
        "roles/outer/tasks/main.yml",
        "- name: outer sees\n  debug: {msg: \"{{ info }}\"}\n- import_role: {name: inner}\n- include_role: {name: deep}\n",
    );
    sb.write(
        "roles/inner/tasks/main.yml",
        "- name: notify inner\n  debug: {msg: inner}\n  changed_when: true\n  notify: inner handler\n",
    );
    sb.write(
        "roles/inner/handlers/main.yml",
        "- name: inner handler\n  debug: {msg: handled}\n- name: \"handler with {{ nowhere }}\"\n  debug: {msg: never}\n",
    );
    sb.write(
        "roles/deep/tasks/main.yml",
        "- name: deep sees\n  debug: {msg: \"{{ info | default('nothing') }}\"}\n",
    );
    let pb = sb.write(
        "site.yml",
        r#"
- hosts: all
  gather_facts: false
  vars:
    check: "1 == 0"
    checks: ["1 == 1", "2 == 2"]
    lola: untouched
  tasks:
    - include_tasks: tasks/item.yml
      loop: [foo, foo, foo]
    - include_tasks: tasks/item.yml
      loop: [0, 1, ""]
    - include_role: {name: outer}
      vars: {info: from the include}
    - include_tasks: tasks/lola.yml
      run_once: true
    - name: lola after run_once include
      debug: {msg: "{{ lola }}"}
    - include_tasks: {file: tasks/lola.yml, apply: {run_once: true}}
    - name: lola after applied run_once
      debug: {msg: "{{ lola }}"}
    - name: a trusted expression
      debug: {msg: skipped}
      when: "{{ check }}"
    - name: checks from a list
      assert: {that: "{{ checks }}"}
- hosts: all
  gather_facts: false
  roles:
    - {role: outer, info: role parameter}
"#,
    );
    let work = sb.dir("work");
    let ours = sb.play(&pb, &work, &["-f", "1"]).run();
    ours.assert_no_panic().assert_code(0);
    assert_eq!(
        ours.stdout.matches("\"msg\": \"item=foo\"").count(),
        6,
        "{ours}"
    );
    ours.assert_stderr_has("Handler 'handler with {{ nowhere }}' is unusable");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &["-f", "1"]) {
        let theirs = theirs.run();
        assert_eq!(ours.stdout, theirs.stdout, "{theirs}\n{ours}");
    }
}

#[test]
fn inclusions_that_cannot_be_made_under_rescue_stay_failed_as_in_ansible() {
    // Each loop item whose file (or role) is missing counts a failure that `rescue`
    // does not turn into a rescue; a failing condition on the include is rescued.
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta"]);
    sb.write("tasks/real.yml", "- name: real\n  debug: {msg: real}\n");
    let pb = sb.write(
        "play.yml",
        r#"
- name: inclusions under rescue
  hosts: all
  gather_facts: false
  tasks:
    - block:
        - include_role: {name: "{{ item }}"}
          loop: [nope_a, nope_b]
      rescue:
        - {name: rescue roles, debug: {msg: rescued}}
    - block:
        - include_tasks: "tasks/{{ item }}.yml"
          loop: [missing, gone]
      rescue:
        - {name: rescue tasks, debug: {msg: rescued}}
    - block:
        - include_tasks: tasks/real.yml
          when: undefined_thing.attr
      rescue:
        - {name: rescue condition, debug: {msg: rescued}}
"#,
    );
    let work = sb.dir("work");
    let ours = sb.play(&pb, &work, &["-f", "1"]).run();
    ours.assert_no_panic().assert_code(0);
    if let Some(theirs) = sb.ansible_play(&pb, &work, &["-f", "1"]) {
        let theirs = theirs.run();
        ours.assert_same_recap_as(&theirs);
    }
}

#[test]
fn ignore_errors_does_not_forgive_an_inclusion_that_cannot_be_made_as_in_ansible() {
    // A template error in the include's arguments is a task failure `ignore_errors`
    // forgives; a missing file or role fails the host all the same.
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta"]);
    let pb = sb.write(
        "play.yml",
        r#"
- hosts: all
  gather_facts: false
  tasks:
    - include_tasks: "{{ undefined_thing }}.yml"
      ignore_errors: true
    - include_tasks: tasks/missing.yml
      ignore_errors: true
      when: inventory_hostname == 'alpha'
    - include_role: {name: no_such_role}
      ignore_errors: true
      when: inventory_hostname == 'beta'
    - name: after
      debug: {msg: after}
"#,
    );
    let work = sb.dir("work");
    let ours = sb.play(&pb, &work, &[]).run();
    ours.assert_no_panic().assert_code(2);
    assert!(!ours.stdout.contains("TASK [after]"), "{ours}");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        assert_eq!(theirs.code, ours.code, "{theirs}");
        ours.assert_same_recap_as(&theirs);
    }
}

#[test]
fn an_included_file_that_is_no_valid_playbook_ends_the_run_as_in_ansible() {
    // Bad YAML or a malformed task ends the run (exit 4, no recap) when the file is
    // included; a file that holds no list fails the hosts including it.
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    sb.write("bad_yaml.yml", "- debug: {msg: x}\n  bad: [\n");
    sb.write("unknown.yml", "- name: typo\n  pnig:\n");
    sb.write("mapping.yml", "a: 1\n");
    let work = sb.dir("work");
    for (file, code) in [("bad_yaml", 4), ("unknown", 4), ("mapping", 2)] {
        let pb = sb.write(
            "play.yml",
            &format!(
                "- hosts: all\n  gather_facts: false\n  tasks:\n    - {{name: first, debug: {{msg: first}}}}\n    - include_tasks: {file}.yml\n    - {{name: after, debug: {{msg: after}}}}\n"
            ),
        );
        let ours = sb.play(&pb, &work, &[]).run();
        ours.assert_no_panic().assert_code(code);
        if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
            let theirs = theirs.run();
            theirs.assert_code(code);
            if code == 4 {
                // No recap: the run ended at the include.
                ours.assert_same_stdout_as(&theirs);
            } else {
                ours.assert_same_recap_as(&theirs);
            }
        }
    }
}

#[test]
fn role_file_options_are_templated_omitted_or_refused_as_in_ansible() {
    // `tasks_from` templated with the import's own vars, or to `omit` (the role's main
    // file); a file the role lacks, or an include naming no file, ends the run.
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    sb.write(
        "roles/r/tasks/main.yml",
        "- name: r main\n  debug: {msg: main}\n",
    );
    sb.write(
        "roles/r/tasks/other.yml",
        "- name: r other\n  debug: {msg: other}\n",
    );
    sb.write(
        "tasks/unnamed.yml",
        "- name: ping first\n  ping:\n- name: no file\n  include_tasks:\n",
    );
    let work = sb.dir("work");
    let cases = [
        (
            "- import_role: {name: r, tasks_from: \"{{ which }}\"}\n      vars: {which: other}\n    - include_role: {name: r, tasks_from: \"{{ omit }}\"}\n    - import_tasks: \"{{ file }}.yml\"\n      vars: {file: tasks/more}\n",
            0,
        ),
        ("- include_role: {name: r, tasks_from: nothere}\n", 4),
        ("- import_role: {name: r, tasks_from: nothere}\n", 4),
        ("- include_tasks: tasks/unnamed.yml\n", 4),
    ];
    sb.write("tasks/more.yml", "- name: more\n  debug: {msg: more}\n");
    for (tasks, code) in cases {
        let pb = sb.write(
            "play.yml",
            &format!("- hosts: all\n  gather_facts: false\n  tasks:\n    - {{name: first, debug: {{msg: first}}}}\n    {tasks}"),
        );
        let ours = sb.play(&pb, &work, &[]).run();
        ours.assert_no_panic().assert_code(code);
        if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
            let theirs = theirs.run();
            theirs.assert_code(code);
            ours.assert_same_stdout_as(&theirs);
        }
    }
}

#[test]
fn the_removed_include_action_ends_the_run_before_it_starts_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    sb.write("t.yml", "- debug: {msg: included}\n");
    let work = sb.dir("work");
    for (name, task) in [
        ("short", "include: t.yml"),
        ("fqcn", "ansible.builtin.include: t.yml"),
        ("mapping", "include: {file: t.yml}"),
    ] {
        let pb = sb.write(
            &format!("{name}.yml"),
            &format!(
                "- hosts: all\n  gather_facts: false\n  tasks:\n    - debug: {{msg: first}}\n    - {task}\n"
            ),
        );
        let ours = sb.play(&pb, &work, &[]).run();
        ours.assert_no_panic().assert_code(1);
        ours.assert_stderr_has(
            "The 'ansible.builtin.include' action plugin has been removed. Use include_tasks or import_tasks instead.",
        );
        ours.assert_stderr_has(&format!("{name}.yml:5:7"));
        assert!(!ours.stdout.contains("TASK ["), "{ours}");
        if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
            let theirs = theirs.run();
            assert_eq!(ours.code, theirs.code, "{ours}\n{theirs}");
            assert!(
                theirs
                    .stderr
                    .contains("'ansible.builtin.include' action plugin has been removed"),
                "{theirs}"
            );
        }
    }
}

/// A role's task file in a subdirectory of `tasks/` imports and includes the role's
/// other task files by their names in `tasks/` (ansible-lockdown's CIS roles do), as
/// in ansible-core.
#[test]
fn a_roles_nested_task_file_finds_the_roles_task_files_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    sb.write(
        "roles/deep/tasks/main.yml",
        "- import_tasks: section_1/main.yml\n",
    );
    sb.write(
        "roles/deep/tasks/section_1/main.yml",
        "- import_tasks: warning.yml\n- include_tasks: warning.yml\n",
    );
    sb.write("roles/deep/tasks/warning.yml", "- debug: {msg: warned}\n");
    let pb = sb.write(
        "site.yml",
        "- hosts: all\n  gather_facts: false\n  roles: [deep]\n",
    );
    let work = sb.dir("work");
    let ours = sb.play(&pb, &work, &[]).run();
    ours.assert_no_panic().assert_code(0);
    assert_eq!(
        ours.stdout.matches("\"msg\": \"warned\"").count(),
        2,
        "{ours}"
    );
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        assert_eq!(ours.stdout, theirs.stdout, "{theirs}\n{ours}");
    }
}
