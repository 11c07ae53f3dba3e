//! How YAML files load, compared with ansible-playbook: the tags Ansible's loader
//! accepts (`!!binary`, `!!set`, `!!omap`, `!!pairs`, `!!int`…), flow collections and
//! quoted scalars whose lines are not indented under their key (JSON pasted into a vars
//! file), and a mapping key written twice under each `ANSIBLE_DUPLICATE_YAML_DICT_KEY`
//! setting.

use sandball_e2e::{Output, Sandbox};

#[test]
fn tags_and_duplicate_keys_load_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let work = sb.dir("work");
    sb.write(
        "flow.yml",
        "json: {\n\"list\": [\n  1, {\"k\": \"v]\"},\n[]\n],\n\"n\": null\n}\nfolded: \"one\ntwo\"\nafter: [a,\nb]\n",
    );
    let tags = sb.write(
        "tags.yml",
        r#"
- hosts: all
  gather_facts: false
  vars_files: [flow.yml]
  vars:
    b: !!binary aGVsbG8=
    s: !!set {only: }
    o: !!omap [x: 1, y: 2]
    p: !!pairs [x: 1, x: 2]
    i: !!int "12"
    f: !!float "1"
    t: !!str 3
  tasks:
    - name: tagged
      debug: {msg: "{{ [b, b | length, s, o, p, i + 1, f, t ~ '!', json, folded, after] }}"}
"#,
    );
    let lines = |o: &Output| -> Vec<String> {
        o.stdout
            .lines()
            .filter(|l| l.trim_start().starts_with('"') || l.trim_start().starts_with('['))
            .map(str::to_string)
            .collect()
    };
    let ours = sb.play(&tags, &work, &[]).run();
    ours.assert_no_panic().assert_code(0);
    if let Some(theirs) = sb.ansible_play(&tags, &work, &[]) {
        let theirs = theirs.run();
        assert_eq!(lines(&ours), lines(&theirs), "{theirs}\n{ours}");
    }
    let twice = sb.write(
        "twice.yml",
        "- hosts: all\n  gather_facts: false\n  vars:\n    foo: bar\n    foo: baz\n  tasks:\n    - debug: {var: foo}\n",
    );
    for (mode, code, said) in [("warn", 0, true), ("error", 4, true), ("ignore", 0, false)] {
        let ours = sb
            .play(&twice, &work, &[])
            .env("ANSIBLE_DUPLICATE_YAML_DICT_KEY", mode)
            .run();
        ours.assert_no_panic().assert_code(code);
        let shown = |o: &Output| {
            format!("{}{}", o.stdout, o.stderr).contains("Found duplicate mapping key 'foo'")
        };
        assert_eq!(shown(&ours), said, "{mode}: {ours}");
        if let Some(theirs) = sb.ansible_play(&twice, &work, &[]) {
            let theirs = theirs.env("ANSIBLE_DUPLICATE_YAML_DICT_KEY", mode).run();
            assert_eq!(theirs.code, code, "{mode}: {theirs}");
            assert_eq!(shown(&theirs), said, "{mode}: {theirs}");
            if code == 0 {
                ours.assert_same_recap_as(&theirs);
            }
        }
    }
}
