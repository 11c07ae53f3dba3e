//! Which tasks `-t`/`--skip-tags` select: tags written as templates (rendered with the
//! play's variables: a list, or a text that is one tag), `always`, `never`, `tagged`,
//! `untagged` and `all` on either side, and the `ansible_run_tags`/`ansible_skip_tags`
//! variables (sorted: ansible-core keeps them in a set) — the whole output compared
//! with ansible-playbook's.

use sandball_e2e::Sandbox;

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  vars:
    the_tags: [t3]
    csv: "t4, t5"
  tasks:
    - name: run tags
      debug: {msg: "{{ ansible_run_tags | sort }} {{ ansible_skip_tags | sort }}"}
      tags: always
    - name: plain
      debug: {msg: plain}
    - name: tagged one
      debug: {msg: one}
      tags: t1
    - name: templated list
      debug: {msg: list}
      tags: "{{ the_tags }}"
    - name: templated csv
      debug: {msg: csv}
      tags: "{{ csv }}"
    - name: never
      debug: {msg: never}
      tags: [never, nv]
    - block:
        - name: in block
          debug: {msg: block}
      tags: "{{ the_tags }}"
"#;

#[test]
fn tags_select_tasks_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    let pb = sb.write("play.yml", PLAY);
    let work = sb.dir("work");
    let cases: &[&[&str]] = &[
        &[],
        &["-t", "t3,t5"],
        &["-t", "tagged", "--skip-tags", "t1"],
        &["-t", "nv", "-t", "untagged"],
        &["--skip-tags", "all"],
        &["--skip-tags", "tagged", "--list-tasks"],
    ];
    for args in cases {
        let ours = sb.play(&pb, &work, args).run();
        ours.assert_no_panic().assert_code(0);
        if let Some(theirs) = sb.ansible_play(&pb, &work, args) {
            let theirs = theirs.run();
            assert_eq!(theirs.code, 0, "{args:?}\n{theirs}");
            ours.assert_same_stdout_as(&theirs);
        }
    }
    let ours = sb.play(&pb, &work, &["-t", "t3"]).run();
    ours.assert_stdout_has("TASK [templated list]");
    ours.assert_stdout_has("TASK [in block]");
    assert!(!ours.stdout.contains("TASK [plain]"), "{ours}");
}
