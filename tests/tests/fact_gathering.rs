//! Fact gathering as the play sees it: `gathering = smart` gathers again a host whose
//! facts a `setup` task returned (only `gather_facts` marks them gathered, in
//! `ansible_facts` alone), and neither shows its facts with -v; facts a loop item
//! returns reach the later items as facts (a fact named `ansible_facts` replaces
//! nothing); `module_defaults` of `setup` reach the gathering, under the action's
//! own — the output from the first play on compared with ansible-playbook's.

use sandball_e2e::{Output, Sandbox};

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: explicit setup
      setup: {gather_subset: ['!all']}
    - name: marked
      debug: {msg: "{{ '_ansible_facts_gathered' in ansible_facts }}"}
- hosts: all
  gather_subset: ['!all']
  tasks:
    - name: gathered
      debug: {msg: "{{ ansible_facts._ansible_facts_gathered }} {{ ansible_facts.system }}"}
- hosts: all
  gather_subset: ['!all']
  tasks:
    - name: again
      gather_facts: {gather_subset: ['!all']}
      register: g
    - name: registered
      debug: {msg: "{{ g.ansible_facts._ansible_facts_gathered | default('not kept') }}"}
"#;

/// Stdout from the first play's banner on (-v adds the configuration before it).
fn from_first_play(out: &Output) -> Vec<&str> {
    out.stdout
        .lines()
        .skip_while(|l| !l.starts_with("PLAY ["))
        .filter(|l| !l.starts_with("[WARNING]"))
        .collect()
}

/// Runs `play.yml` of the sandbox with `args` and `env` under sandball, which must
/// succeed, then under ansible-playbook, whose output from the first play on must be
/// the same; sandball's output.
fn same_as_ansible(sb: &Sandbox, args: &[&str], env: &[(&str, &str)]) -> Output {
    let pb = sb.path().join("play.yml");
    let work = sb.dir("work");
    let with_env = |mut run: sandball_e2e::Invocation| {
        for (k, v) in env {
            run = run.env(k, v);
        }
        run
    };
    let ours = with_env(sb.play(&pb, &work, args)).run();
    ours.assert_no_panic().assert_code(0);
    if let Some(theirs) = sb.ansible_play(&pb, &work, args) {
        let theirs = with_env(theirs).run();
        assert_eq!(theirs.code, 0, "{theirs}");
        assert_eq!(
            from_first_play(&ours),
            from_first_play(&theirs),
            "{theirs}\n{ours}"
        );
    }
    ours
}

#[test]
fn smart_gathering_and_gathered_facts_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory_with_python(&["alpha"]);
    sb.write("play.yml", PLAY);
    let ours = same_as_ansible(&sb, &["-v"], &[("ANSIBLE_GATHERING", "smart")]);
    ours.assert_stdout_has("\"msg\": \"True Linux\"");
    // The second play gathers (a `setup` task does not count), the third does not.
    assert_eq!(
        ours.stdout.matches("TASK [Gathering Facts]").count(),
        1,
        "{ours}"
    );
}

/// A module returning a fact named `ansible_facts` and one that would set the Python.
const BOGUS: &str = r#"#!/bin/sh
echo '{"changed": false, "ansible_facts": {"ansible_facts": {"bogus": "yes"}, "ansible_python_interpreter": "/nonexistent/python", "extra_fact": 1}}'
"#;

const LOOPED: &str = r#"
- hosts: all
  gather_subset: ['!all']
  tasks:
    - name: bogus facts
      bogus_facts:
      loop: [1, 2, 3]
      when: ansible_facts['system'] == 'Linux'
    - name: after
      debug: {msg: "{{ ansible_facts.system }} {{ ansible_facts.facts }} {{ extra_fact }}"}
    - name: python still works
      ping:
"#;

#[test]
fn facts_from_loop_items_reach_the_later_items_as_facts_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory_with_python(&["alpha"]);
    let module = sb.write("library/bogus_facts", BOGUS);
    std::fs::set_permissions(&module, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    sb.write("play.yml", LOOPED);
    let ours = same_as_ansible(&sb, &[], &[]);
    ours.assert_stdout_has("\"msg\": \"Linux {'bogus': 'yes'} 1\"");
}

const DEFAULTS: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: setup defaults
      gather_facts:
      module_defaults:
        setup: {gather_subset: '!all'}
    - name: subset
      debug: {var: gather_subset}
    - name: both
      gather_facts:
      module_defaults:
        gather_facts: {gather_subset: min}
        ansible.legacy.setup: {gather_subset: '!all'}
    - name: subset again
      debug: {var: gather_subset}
"#;

#[test]
fn module_defaults_of_setup_reach_fact_gathering_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory_with_python(&["alpha"]);
    sb.write("play.yml", DEFAULTS);
    let ours = same_as_ansible(&sb, &[], &[]);
    ours.assert_stdout_has("\"!all\"");
}
