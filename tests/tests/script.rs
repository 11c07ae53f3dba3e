//! `script`: a controller script run on the node with its arguments, `creates`,
//! `removes`, `chdir`, `executable`, and check mode — compared with ansible-playbook.

use sandball_e2e::Sandbox;

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: run
      script: greet.sh "hello there" {{ inventory_hostname }}
      args: {chdir: /}
      register: g
    - name: show
      debug: {var: g.stdout_lines}
    - name: creates
      script: touch.sh {{ work }}/made-{{ inventory_hostname }}
      args: {creates: "{{ work }}/made-{{ inventory_hostname }}"}
    - name: removes
      script: {cmd: "greet.sh x", removes: "{{ work }}/nothing-here"}
    - name: executable
      script: plain.txt
      args: {executable: /bin/sh}
      register: e
    - name: failing
      script: fail.sh
      ignore_errors: true
"#;

#[test]
fn script_runs_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta"]);
    sb.write("files/greet.sh", "#!/bin/sh\necho \"1=$1 2=$2\"\npwd\n");
    sb.write("files/touch.sh", "#!/bin/sh\ntouch \"$1\"\n");
    sb.write("files/plain.txt", "echo from sh\n");
    sb.write("files/fail.sh", "#!/bin/sh\necho bad >&2\nexit 4\n");
    let pb = sb.write("play.yml", PLAY);
    let work = sb.dir("work");
    let dry = sb.play(&pb, &work, &["-C"]).run();
    dry.assert_no_panic().assert_code(0);
    assert!(!work.join("made-alpha").exists(), "check mode ran a script");
    let out = sb.play(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(0);
    out.assert_stdout_has("\"1=hello there 2=alpha\"");
    assert!(work.join("made-beta").exists());
    let again = sb.play(&pb, &work, &[]).run();
    if let Some(theirs) = sb.ansible_play(&pb, &sb.dir("theirs"), &["-C"]) {
        let theirs = theirs.run();
        dry.assert_same_recap_as(&theirs);
    }
    let theirs_work = sb.dir("theirs-work");
    if let Some(theirs) = sb.ansible_play(&pb, &theirs_work, &[]) {
        let theirs = theirs.run();
        assert_eq!(theirs.code, 0, "{theirs}");
        out.assert_same_recap_as(&theirs);
        let mut a = theirs.task_lines("show");
        let mut b = out.task_lines("show");
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b, "{theirs}\n{out}");
        let theirs_again = sb.ansible_play(&pb, &theirs_work, &[]).unwrap().run();
        again.assert_same_recap_as(&theirs_again);
    }
}
