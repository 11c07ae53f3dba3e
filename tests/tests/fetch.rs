//! `fetch`: files from the node to the controller, laid out as Ansible lays them out
//! (`dest/<host>/<path>`, `flat`), unchanged on a second run, skipped in check mode, a
//! missing file failing or ignored, a directory failing (the action's failure) or
//! ignored, arguments refused (raised), a file fetched or slurped through an absolute
//! symlink — compared with ansible-playbook.

use sandball_e2e::{Output, Sandbox};
use std::path::Path;

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: per host
      fetch: {src: "{{ work }}/node/{{ inventory_hostname }}.txt", dest: "{{ out }}/tree"}
    - name: flat
      fetch: {src: "{{ work }}/node/alpha.txt", dest: "{{ out }}/flat-{{ inventory_hostname }}.txt", flat: true}
    - name: flat into a directory
      fetch: {src: "{{ work }}/node/beta.txt", dest: "{{ out }}/dir-{{ inventory_hostname }}/", flat: true}
    - name: missing ignored
      fetch: {src: "{{ work }}/node/nope.txt", dest: "{{ out }}/tree", fail_on_missing: false}
    - name: missing
      fetch: {src: "{{ work }}/node/nope.txt", dest: "{{ out }}/tree"}
      ignore_errors: true
    - name: a directory
      fetch: {src: "{{ work }}/node", dest: "{{ out }}/tree"}
      ignore_errors: true
    - name: a directory ignored
      fetch: {src: "{{ work }}/node", dest: "{{ out }}/tree", fail_on_missing: false}
      register: directory
    - name: what a directory said
      debug: {msg: "{{ directory.msg }} {{ directory.file | default('no file') }}"}
    - name: no src
      fetch: {dest: "{{ out }}/tree"}
      ignore_errors: true
    - name: through a symlink
      fetch: {src: "{{ work }}/node/link", dest: "{{ out }}/link-{{ inventory_hostname }}", flat: true}
    - name: slurp a symlink
      slurp: {src: "{{ work }}/node/link"}
      register: slurped
    - name: slurped
      debug: {msg: "{{ slurped.content | b64decode }}"}
"#;

fn run(sb: &Sandbox, pb: &Path, out: &Path, ansible: bool, extra: &[&str]) -> Option<Output> {
    let work = sb.path().join("work");
    let dest = format!("out={}", out.display());
    let mut args = vec!["-e", &dest];
    args.extend_from_slice(extra);
    if ansible {
        sb.ansible_play(pb, &work, &args).map(|i| i.run())
    } else {
        Some(sb.play(pb, &work, &args).run())
    }
}

#[test]
fn fetch_lays_out_files_as_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta"]);
    sb.write("work/node/alpha.txt", "from alpha\n");
    sb.write("work/node/beta.txt", "from beta\n");
    std::os::unix::fs::symlink(
        sb.path().join("work/node/alpha.txt"),
        sb.path().join("work/node/link"),
    )
    .unwrap();
    let pb = sb.write("play.yml", PLAY);
    let ours = sb.dir("ours");
    let first = run(&sb, &pb, &ours, false, &[]).unwrap();
    first.assert_no_panic().assert_code(0);
    let work = sb.path().join("work");
    let tree = ours
        .join("tree/alpha")
        .join(work.strip_prefix("/").unwrap());
    assert_eq!(
        std::fs::read_to_string(tree.join("node/alpha.txt")).unwrap(),
        "from alpha\n"
    );
    assert_eq!(
        std::fs::read_to_string(ours.join("dir-beta/beta.txt")).unwrap(),
        "from beta\n"
    );
    assert_eq!(
        std::fs::read_to_string(ours.join("link-beta")).unwrap(),
        "from alpha\n"
    );
    assert!(
        first
            .stdout
            .contains("the remote file does not exist, not transferring, ignored"),
        "{first}"
    );
    let second = run(&sb, &pb, &ours, false, &[]).unwrap();
    let dry = run(&sb, &pb, &sb.dir("dry"), false, &["-C"]).unwrap();
    assert!(
        std::fs::read_dir(sb.path().join("dry"))
            .unwrap()
            .next()
            .is_none(),
        "check mode fetched files"
    );
    let theirs_dir = sb.dir("theirs");
    if let Some(theirs) = run(&sb, &pb, &theirs_dir, true, &[]) {
        assert_eq!(theirs.code, 0, "{theirs}");
        first.assert_same_recap_as(&theirs);
        for task in [
            "per host",
            "flat",
            "missing ignored",
            "a directory",
            "what a directory said",
            "no src",
            "through a symlink",
            "slurped",
        ] {
            // Hosts finish in any order.
            let sorted = |o: &Output| {
                let mut lines: Vec<String> =
                    o.task_lines(task).iter().map(|l| l.to_string()).collect();
                lines.sort();
                lines
            };
            assert_eq!(sorted(&theirs), sorted(&first), "{theirs}\n{first}");
        }
        let theirs_second = run(&sb, &pb, &theirs_dir, true, &[]).unwrap();
        second.assert_same_recap_as(&theirs_second);
        let theirs_dry = run(&sb, &pb, &sb.dir("theirs-dry"), true, &["-C"]).unwrap();
        dry.assert_same_recap_as(&theirs_dry);
        let listing = |root: &Path| -> Vec<String> {
            let mut v: Vec<String> = sandball_e2e::tree::snapshot(root).keys().cloned().collect();
            v.sort();
            v
        };
        assert_eq!(listing(&ours), listing(&theirs_dir));
    }
}
