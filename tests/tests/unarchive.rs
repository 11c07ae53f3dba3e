//! `unarchive`: an archive from the controller sent to the node and unpacked by
//! ansible-core's `unarchive` module, `creates`, a missing destination, and a second
//! run that changes nothing — compared with ansible-playbook.

use sandball_e2e::Sandbox;
use sandball_e2e::binaries::ansible_python;
use std::process::Command;

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: unpack
      unarchive: {src: bundle.tar.gz, dest: "{{ work }}/out"}
    - name: creates
      unarchive: {src: bundle.tar.gz, dest: "{{ work }}/out", creates: "{{ work }}/out/bundle"}
    - name: no dest
      unarchive: {src: bundle.tar.gz, dest: "{{ work }}/nowhere"}
      ignore_errors: true
"#;

#[test]
fn unarchive_unpacks_a_controller_archive_as_in_ansible() {
    let sb = Sandbox::new();
    let python = ansible_python();
    sb.inventory_with_python(&["alpha"]);
    sb.write("bundle/a.txt", "a\n");
    sb.write("bundle/sub/b.txt", "b\n");
    sb.dir("files");
    let made = Command::new("tar")
        .args(["czf", "files/bundle.tar.gz", "bundle"])
        .current_dir(sb.path())
        .status()
        .expect("tar runs");
    assert!(made.success());
    let pb = sb.write("play.yml", PLAY);
    let run = |work: &str, ansible: bool| {
        let work = sb.path().join(work);
        std::fs::create_dir_all(work.join("out")).unwrap();
        if ansible {
            sb.ansible_play(&pb, &work, &[]).map(|i| i.run())
        } else {
            Some(
                sb.play(&pb, &work, &[])
                    .env("SANDBALL_ANSIBLE_PYTHON", &python)
                    .run(),
            )
        }
    };
    let first = run("ours", false).unwrap();
    first.assert_no_panic().assert_code(0);
    assert_eq!(
        std::fs::read_to_string(sb.path().join("ours/out/bundle/sub/b.txt")).unwrap(),
        "b\n"
    );
    first.assert_stdout_has("must be an existing dir");
    let second = run("ours", false).unwrap();
    if let Some(theirs) = run("theirs", true) {
        assert_eq!(theirs.code, 0, "{theirs}");
        first.assert_same_recap_as(&theirs);
        second.assert_same_recap_as(&run("theirs", true).unwrap());
    }
}
