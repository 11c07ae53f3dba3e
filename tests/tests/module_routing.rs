//! ansible-core's routing of builtin names: `yum` runs `dnf` (there is no `yum` module
//! in ansible-core 2.19), so playbooks written for `yum` are accepted and run it —
//! compared with ansible-playbook on the recap.

use sandball_e2e::Sandbox;
use sandball_e2e::binaries::ansible_python;

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: only on Red Hat
      yum: {name: httpd, state: present}
      when: false
    - name: through dnf, which this node may lack
      ansible.builtin.yum: {list: installed}
      register: listed
      ignore_errors: true
    - debug: {msg: "{{ listed.failed | default(false) }}"}
"#;

#[test]
fn yum_runs_dnf_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory_with_python(&["alpha"]);
    let pb = sb.write("play.yml", PLAY);
    let work = sb.dir("work");
    let out = sb
        .play(&pb, &work, &[])
        .env("SANDBALL_ANSIBLE_PYTHON", ansible_python())
        .run();
    out.assert_no_panic().assert_code(0);
    assert!(
        !out.stdout.contains("couldn't resolve module/action"),
        "{out}"
    );
    assert_eq!(out.host("alpha").skipped, 1, "{out}");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        out.assert_same_recap_as(&theirs.run());
    }
}
