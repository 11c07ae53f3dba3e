//! `package` and `service`: the module is the node's manager, from `use` or from the
//! `pkg_mgr`/`service_mgr` facts — compared with ansible-playbook, with stand-in
//! manager modules in the playbook's `library/` so that nothing is installed.

use sandball_e2e::Sandbox;
use sandball_e2e::binaries::ansible_python;

/// A manager module that says which module ran (`NAME`) and with which arguments.
const FAKE: &str = "#!/usr/bin/python\n# WANT_JSON\nimport json, sys\nargs = json.load(open(sys.argv[1]))\nmine = sorted(k for k in args if not k.startswith('_ansible'))\nprint(json.dumps({'changed': False, 'ran': 'NAME', 'args': mine}))\n";

/// A module that plants manager facts.
const FACTS: &str = "#!/usr/bin/python\n# WANT_JSON\nimport json\nprint(json.dumps({'changed': False, 'ansible_facts': {'pkg_mgr': 'fakepkg', 'service_mgr': 'fakesvc'}}))\n";

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - plant_facts:
    - name: package by fact
      package: {name: curl, state: present}
      register: p
    - name: package by use
      package: {name: curl, use: otherpkg}
      register: u
    - name: service by fact
      service: {name: cron, state: started}
      register: s
    - name: service with no such module
      service: {name: cron, use: nosuchmgr, enabled: true}
      register: n
    - name: show
      debug:
        msg: "{{ p.ran }} {{ p.args }} {{ u.ran }} {{ u.args }} {{ s.ran }} {{ n.ran | default(n.msg) }}"
"#;

#[test]
fn package_and_service_run_the_nodes_manager_as_in_ansible() {
    let sb = Sandbox::new();
    let python = ansible_python();
    sb.inventory_with_python(&["localhost"]);
    for m in ["fakepkg", "otherpkg", "fakesvc", "service"] {
        sb.write(&format!("library/{m}.py"), &FAKE.replace("NAME", m));
    }
    sb.write("library/plant_facts.py", FACTS);
    let pb = sb.write("play.yml", PLAY);
    let work = sb.dir("work");
    let out = sb
        .play(&pb, &work, &[])
        .env("SANDBALL_ANSIBLE_PYTHON", &python)
        .run();
    out.assert_no_panic().assert_code(0);
    out.assert_stdout_has(
        "\"msg\": \"fakepkg ['name', 'state'] otherpkg ['name'] fakesvc service\"",
    );
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        assert_eq!(theirs.code, 0, "{theirs}");
        assert_eq!(
            theirs.task_lines("show"),
            out.task_lines("show"),
            "{theirs}\n{out}"
        );
        out.assert_same_recap_as(&theirs);
    }
}

/// A manager module that would change something, as apt does in check mode: its diff is
/// a `prepared` text (with or without a final newline) or `before`/`after`, one of them
/// null.
const CHANGING: &str = "#!/usr/bin/python\n# WANT_JSON\nimport json, sys\nargs = json.load(open(sys.argv[1]))\ndiffs = {'prepared': {'prepared': 'The following NEW packages will be installed:\\n  ' + args['name']}, 'newline': {'prepared': 'Removing ' + args['name'] + '\\n'}, 'none': {'before': None, 'after': 'running\\n'}}\nprint(json.dumps({'changed': True, 'check': args['_ansible_check_mode'], 'diff': diffs[args['name']]}))\n";

const DIFF_PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: prepared
      package: {name: prepared, use: changingpkg}
    - name: prepared with newline
      package: {name: newline, use: changingpkg}
    - name: service from nothing
      service: {name: none, use: changingpkg}
    - name: after
      debug: {msg: done}
"#;

#[test]
fn package_and_service_diffs_in_check_mode_show_as_in_ansible() {
    let sb = Sandbox::new();
    let python = ansible_python();
    sb.inventory_with_python(&["localhost"]);
    sb.write("library/changingpkg.py", CHANGING);
    let pb = sb.write("play.yml", DIFF_PLAY);
    let work = sb.dir("work");
    let tasks = ["prepared", "prepared with newline", "service from nothing"];
    let out = sb
        .play(&pb, &work, &["--check", "--diff"])
        .env("SANDBALL_ANSIBLE_PYTHON", &python)
        .run();
    out.assert_no_panic().assert_code(0);
    assert_eq!(
        out.task_lines("prepared"),
        [
            "The following NEW packages will be installed:",
            "  prepared",
            "changed: [localhost]"
        ],
        "{out}"
    );
    if let Some(theirs) = sb.ansible_play(&pb, &work, &["--check", "--diff"]) {
        let theirs = theirs.run();
        assert_eq!(theirs.code, 0, "{theirs}");
        out.assert_same_recap_as(&theirs);
        for task in tasks {
            let banner = format!("TASK [{task}]");
            let block = |o: &str| -> String {
                let from = o.find(&banner).expect("task banner");
                let to = o[from..].find("\nTASK [").map_or(o.len(), |n| from + n);
                o[from..to].to_string()
            };
            assert_eq!(block(&out.stdout), block(&theirs.stdout), "{theirs}\n{out}");
        }
    }
}
