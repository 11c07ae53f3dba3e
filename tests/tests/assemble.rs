//! The `assemble` action: fragments joined on the controller (`remote_src: false`,
//! `regexp`, `delimiter`, `ignore_hidden`) and on the node (ansible-core's module) —
//! compared with ansible-playbook on the files written and the recaps of a first run,
//! a second (idempotent) run and a dry run with diff.

use sandball_e2e::Sandbox;
use sandball_e2e::binaries::ansible_python;

const PLAY: &str = r##"
- hosts: all
  gather_facts: false
  tasks:
    - copy: {content: "node one\n", dest: "{{ work }}/frags/01-one"}
    - copy: {content: "node two\n", dest: "{{ work }}/frags/02-two"}
    - assemble:
        src: parts
        dest: "{{ work }}/controller.conf"
        remote_src: false
        regexp: '^\d+-'
        delimiter: "# --"
        mode: "0640"
    - assemble:
        src: parts
        dest: "{{ work }}/hidden.conf"
        remote_src: false
        ignore_hidden: true
    - assemble:
        src: "{{ work }}/frags"
        dest: "{{ work }}/node.conf"
"##;

fn project(sb: &Sandbox) -> std::path::PathBuf {
    sb.write("parts/10-first", "first {{ not templated }}\n");
    sb.write("parts/20-second", "second");
    sb.write("parts/README", "not a fragment\n");
    sb.write("parts/.hidden", "hidden\n");
    sb.write("play.yml", PLAY)
}

#[test]
fn assemble_joins_fragments_as_ansible_does() {
    let sb = Sandbox::new();
    // The node's fragments are joined by ansible-core's module.
    let python = ansible_python();
    sb.inventory_with_python(&["alpha"]);
    let pb = project(&sb);
    let ours_run = |args: &[&str]| {
        sb.play(&pb, &sb.path().join("ours"), args)
            .env("SANDBALL_ANSIBLE_PYTHON", &python)
            .run()
    };
    let ours = sb.dir("ours");
    sb.dir("ours/frags");
    let first = ours_run(&[]);
    first.assert_no_panic().assert_code(0);
    let read = |p: std::path::PathBuf| {
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    };
    assert_eq!(
        read(ours.join("controller.conf")),
        "first {{ not templated }}\n# --\nsecond"
    );
    assert_eq!(read(ours.join("node.conf")), "node one\nnode two\n");
    assert!(!read(ours.join("hidden.conf")).contains("hidden"));
    let second = ours_run(&[]);
    second.assert_no_panic().assert_code(0);
    assert_eq!(second.host("alpha").changed, 0, "{second}");
    sb.write("parts/15-middle", "middle\n");
    let dry = ours_run(&["-C", "-D"]);
    dry.assert_no_panic().assert_code(0);
    assert!(dry.stdout.contains("+middle"), "{dry}");
    assert!(!read(ours.join("controller.conf")).contains("middle"));
    std::fs::remove_file(sb.path().join("parts/15-middle")).unwrap();
    if let Some(theirs) = sb.ansible_play(&pb, &sb.dir("theirs"), &[]) {
        sb.dir("theirs/frags");
        let dir = sb.path().join("theirs");
        let theirs_first = theirs.run();
        first.assert_same_recap_as(&theirs_first);
        for file in ["controller.conf", "hidden.conf", "node.conf"] {
            assert_eq!(read(ours.join(file)), read(dir.join(file)), "{file}");
        }
        second.assert_same_recap_as(&sb.ansible_play(&pb, &dir, &[]).unwrap().run());
        sb.write("parts/15-middle", "middle\n");
        let theirs_dry = sb.ansible_play(&pb, &dir, &["-C", "-D"]).unwrap().run();
        dry.assert_same_recap_as(&theirs_dry);
    }
}
