//! Where programs run and what lies directly under `/`: `chdir: /`, a `chdir` through
//! a symlink, `stat` and `creates` on a directory under `/`, and a program that cannot
//! start — compared with ansible-playbook on the recap and the values registered.

use sandball_e2e::Sandbox;

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - command: pwd
      args: {chdir: /}
      register: root
    - shell: pwd && pwd -P
      args: {chdir: "{{ work }}/../link"}
      register: linked
    - stat: {path: /etc}
      register: etc
    - command: "true"
      args: {creates: /etc}
      register: skipped
    - command: sandball-no-such-program --flag
      register: missing
      failed_when: false
    - copy:
        dest: "{{ work }}/out.json"
        content: "{{ {'root': root.stdout, 'linked': linked.stdout_lines | map('basename') | list,
                      'etc': [etc.stat.isdir, etc.stat.path], 'skipped': skipped.rc,
                      'missing': [missing.changed, missing.rc, 'start' in missing]} | to_json }}"
"#;

#[test]
fn programs_run_where_ansible_runs_them() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    let real = sb.dir("real");
    std::os::unix::fs::symlink(&real, sb.path().join("link")).unwrap();
    let pb = sb.write("play.yml", PLAY);
    let ours = sb.dir("ours");
    let out = sb.play(&pb, &ours, &[]).run();
    out.assert_no_panic().assert_code(0);
    let read = |dir: &std::path::Path| {
        let text = std::fs::read_to_string(dir.join("out.json")).unwrap();
        serde_json::from_str::<serde_json::Value>(&text).unwrap()
    };
    let got = read(&ours);
    assert_eq!(
        got,
        serde_json::json!({"root": "/", "linked": ["real", "real"], "etc": [true, "/etc"],
                           "skipped": 0, "missing": [false, 2, false]}),
        "{out}"
    );
    if let Some(theirs) = sb.ansible_play(&pb, &sb.dir("theirs"), &[]) {
        let theirs = theirs.run();
        out.assert_same_recap_as(&theirs);
        assert_eq!(got, read(&sb.path().join("theirs")));
    }
}
