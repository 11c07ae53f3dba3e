//! Patterns ansible-core's own integration targets use (each a role, run the way
//! ansible-test runs them), which sandball once handled differently: `add_host` from a
//! mapping, a handler including a task file from its role's `tasks/` (its tasks shown
//! as handlers), `set_fact` names templated per item, a `changed_when` that cannot be
//! evaluated keeping the result, an empty loop skipped, `failed: false` registered,
//! `stat`'s MIME type, encoding and attributes, `copy` of a controller file into a
//! directory keeping its name, `\1` kept in `key=value` arguments, a `script` whose
//! path has a space, a template inside a conditional's string. The same task lines and recap as
//! ansible-playbook.

use sandball_e2e::Sandbox;

const FILES: &[(&str, &str)] = &[
    ("play.yml", include_str!("target_patterns/play.yml")),
    ("files/note.txt", "a note\n"),
    ("files/space dir/hello.sh", "#!/bin/sh\necho \"$# $1 $2\"\n"),
    (
        "roles/cleaner/tasks/main.yml",
        include_str!("target_patterns/roles/cleaner/tasks/main.yml"),
    ),
    (
        "roles/cleaner/tasks/clean-up.yml",
        include_str!("target_patterns/roles/cleaner/tasks/clean-up.yml"),
    ),
    (
        "roles/cleaner/handlers/main.yml",
        include_str!("target_patterns/roles/cleaner/handlers/main.yml"),
    ),
];

#[test]
fn patterns_of_ansible_core_targets_run_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory_with_python(&["alpha"]);
    for (name, text) in FILES {
        sb.write(name, text);
    }
    let pb = sb.path().join("play.yml");
    let work = sb.dir("work");
    let out = sb
        .play(&pb, &work, &[])
        .env(
            "SANDBALL_ANSIBLE_PYTHON",
            sandball_e2e::binaries::ansible_python(),
        )
        .run();
    out.assert_no_panic().assert_code(0);
    out.assert_stdout_has("RUNNING HANDLER [cleaner : remove the file]");
    out.assert_stdout_has("\"msg\": \"moo moo\"");
    assert!(
        !work.join("made.txt").exists(),
        "the handler's task ran:\n{out}"
    );
    if let Some(theirs) = sb.ansible_play(&pb, &sb.dir("theirs"), &[]) {
        let theirs = theirs.run();
        assert_eq!(theirs.code, 0, "{theirs}");
        out.assert_same_recap_as(&theirs);
        for task in [
            "add a host from a mapping",
            "the added host",
            "a templated fact name",
            "facts named by the loop",
            "what it kept",
            "an empty loop",
            "says it did not fail",
            "its type",
            "where it went",
            "a back-reference in key=value arguments",
            "what the script said",
            "an embedded template in a conditional",
        ] {
            assert_eq!(
                theirs.task_lines(task),
                out.task_lines(task),
                "{task}:\n{theirs}\n{out}"
            );
        }
        let handlers = |o: &sandball_e2e::Output| -> Vec<String> {
            o.stdout
                .lines()
                .filter(|l| l.starts_with("RUNNING HANDLER"))
                .map(str::to_string)
                .collect()
        };
        assert_eq!(handlers(&theirs), handlers(&out));
    }
}

/// Roles included and imported as ansible-core's `special_vars` target and everyday
/// roles use them: `include_role` shown as itself (`include_role : ROLE`), every
/// `include_role` and `import_role` of the same role running it again (a role listed
/// twice under `roles:` runs once), `ansible_parent_role_names`/`paths`, `role_names`
/// and `ansible_dependent_role_names`, and an `import_role` inside an included role.
#[test]
fn included_and_imported_roles_run_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    sb.write(
        "roles/a/tasks/main.yml",
        "- include_role: name=b\n- name: named\n  include_role: name=b\n- ansible.builtin.include_role: {name: b, tasks_from: nested}\n- include_tasks: t.yml\n",
    );
    sb.write("roles/a/tasks/t.yml", "- debug: msg=t\n");
    sb.write("roles/a/meta/main.yml", "dependencies: [c]\n");
    sb.write(
        "roles/c/tasks/main.yml",
        "- debug: {msg: \"{{ role_names }} {{ ansible_dependent_role_names }}\"}\n",
    );
    sb.write(
        "roles/b/tasks/main.yml",
        "- debug: {msg: \"{{ ansible_parent_role_names | default('none') }} {{ ansible_parent_role_paths | default([]) | length }}\"}\n",
    );
    sb.write("roles/b/tasks/nested.yml", "- import_role: name=c\n");
    let pb = sb.write(
        "play.yml",
        "- hosts: all\n  gather_facts: false\n  roles: [a, a]\n  tasks:\n    - import_role: name=b\n    - import_role: name=b\n    - include_role: name=b\n",
    );
    let work = sb.dir("work");
    let out = sb.play(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(0);
    out.assert_stdout_has("TASK [include_role : b]");
    out.assert_stdout_has("\"msg\": \"['a'] 1\"");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        assert_eq!(theirs.code, 0, "{theirs}");
        out.assert_same_recap_as(&theirs);
        let shown = |o: &sandball_e2e::Output| -> Vec<String> {
            o.stdout
                .lines()
                .filter(|l| l.starts_with("TASK [") || l.contains("\"msg\""))
                .map(str::to_string)
                .collect()
        };
        assert_eq!(shown(&theirs), shown(&out), "{theirs}\n{out}");
    }
}
