//! Facts and `hostvars`, compared with ansible-playbook on the same playbooks. Plays
//! gather facts first, as Ansible does ("Gathering Facts", tagged `always`, the
//! built-in `setup` component); `gather_facts: false`, the gather_facts action and
//! `ANSIBLE_GATHERING=explicit`; no ansible-core is needed to gather. `hostvars[h]` holds host `h`'s inventory variables (templated
//! in its own scope), facts and `set_fact` values, live, without the play's variables.

use sandball_e2e::binaries::ansible_python;
use sandball_e2e::{Output, Sandbox};

const PLAYS: &str = r#"
- name: implicit
  hosts: all
  gather_subset: [min]
  tasks:
    - name: show
      debug:
        msg: "{{ ansible_system }} {{ ansible_user_id }} {{ ansible_facts is mapping }}"

- name: explicit
  hosts: all
  gather_facts: false
  tasks:
    - name: before
      debug:
        msg: "{{ ansible_env is defined }}"  # facts stay from the first play
    - name: gather now
      ansible.builtin.gather_facts:
        gather_subset: [min]
    - name: after
      debug:
        msg: "{{ ansible_system }}"
"#;

/// The `msg` lines the debug tasks printed, in order.
fn messages(out: &Output) -> Vec<String> {
    out.stdout
        .lines()
        .filter_map(|l| l.trim().strip_prefix("\"msg\": "))
        .map(str::to_string)
        .collect()
}

fn run(sb: &Sandbox, extra: &[&str], gathering: Option<&str>) -> (Output, Option<Output>) {
    let pb = sb.path().join("play.yml");
    let work = sb.dir("work");
    let mut ours = sb
        .play(&pb, &work, extra)
        .env("SANDBALL_ANSIBLE_PYTHON", ansible_python());
    let mut theirs = sb.ansible_play(&pb, &work, extra);
    if let Some(g) = gathering {
        ours = ours.env("ANSIBLE_GATHERING", g);
        theirs = theirs.map(|t| t.env("ANSIBLE_GATHERING", g));
    }
    let ours = ours.run();
    ours.assert_no_panic().assert_code(0);
    (ours, theirs.map(|t| t.run()))
}

#[test]
fn plays_gather_facts_first_as_ansible_does() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta"]);
    sb.write("play.yml", PLAYS);
    let (out, reference) = run(&sb, &[], None);
    let gathered = out.task_lines("Gathering Facts");
    assert_eq!(
        gathered.iter().filter(|l| l.starts_with("ok: [")).count(),
        2,
        "{out}"
    );
    let user = std::env::var("USER").unwrap_or_else(|_| "root".into());
    let msgs = messages(&out);
    assert!(
        msgs.contains(&format!("\"Linux {user} True\"")),
        "facts are not variables: {msgs:?}\n{out}"
    );
    assert!(msgs.contains(&"true".to_string()), "{msgs:?}");
    if let Some(reference) = reference {
        reference.assert_code(0);
        out.assert_same_recap_as(&reference);
        assert_eq!(msgs, messages(&reference), "{out}\n{reference}");
    }

    // Gathering is tagged `always`: it runs when tags select other tasks.
    let (tagged, reference) = run(&sb, &["-t", "show"], None);
    assert!(tagged.stdout.contains("TASK [Gathering Facts]"), "{tagged}");
    assert!(!tagged.stdout.contains("TASK [before]"), "{tagged}");
    if let Some(reference) = reference {
        tagged.assert_same_recap_as(&reference);
    }
}

#[test]
fn explicit_gathering_and_a_missing_ansible_core() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    sb.write(
        "play.yml",
        "- hosts: all\n  tasks:\n    - name: show\n      debug:\n        msg: \"{{ ansible_system | default('none') }}\"\n",
    );
    // ANSIBLE_GATHERING=explicit: only plays that say gather_facts: true gather.
    let (out, reference) = run(&sb, &[], Some("explicit"));
    assert!(!out.stdout.contains("TASK [Gathering Facts]"), "{out}");
    assert_eq!(messages(&out), ["\"none\""], "{out}");
    if let Some(reference) = reference {
        out.assert_same_recap_as(&reference);
    }
    // Without ansible-core the built-in setup component still gathers the facts.
    let pb = sb.path().join("play.yml");
    let out = sb
        .play(&pb, &sb.dir("work"), &[])
        .env("SANDBALL_ANSIBLE_PYTHON", sb.path().join("no-such-python"))
        .env("SANDBALL_ANSIBLE_CORE", sb.path().join("no-such-ansible"))
        .run();
    out.assert_no_panic().assert_code(0);
    assert!(out.stdout.contains("TASK [Gathering Facts]"), "{out}");
    assert!(
        !format!("{}{}", out.stdout, out.stderr).contains("no facts were gathered for play"),
        "{out}"
    );
    assert_eq!(messages(&out), ["\"Linux\""], "{out}");
}

const HOSTVARS_INVENTORY: &str = r#"
[nodes]
alpha ansible_connection=local url="http://{{ inventory_hostname }}:80"
beta ansible_connection=local url="http://{{ inventory_hostname }}:80"

[nodes:vars]
group_var=g
"#;

const HOSTVARS: &str = r#"
- hosts: all
  gather_facts: false
  vars:
    playvar: p
  tasks:
    - set_fact:
        mine: "{{ inventory_hostname }}-fact"
    - name: other hosts
      debug:
        msg: "{{ hostvars['beta'].mine }} {{ hostvars['beta'].group_var }} {{ hostvars.beta.url }} {{ hostvars | length }} {{ hostvars.beta.playvar | default('no play vars') }} {{ groups['nodes'] | map('extract', hostvars, 'mine') | list }}"
    - name: membership
      debug:
        msg: "{{ 'alpha' in hostvars }} {{ hostvars['nope'] is defined }} {{ hostvars[inventory_hostname].group_names }} {{ hostvars.alpha.inventory_hostname }}"
"#;

#[test]
fn hostvars_show_every_host_as_ansible_does() {
    let sb = Sandbox::new();
    sb.write("inventory.ini", HOSTVARS_INVENTORY);
    sb.write("play.yml", HOSTVARS);
    let (out, reference) = run(&sb, &[], None);
    let msgs = messages(&out);
    assert!(
        msgs.contains(
            &"\"beta-fact g http://beta:80 2 no play vars ['alpha-fact', 'beta-fact']\""
                .to_string()
        ),
        "{msgs:?}\n{out}"
    );
    assert!(
        msgs.contains(&"\"True False ['nodes'] alpha\"".to_string()),
        "{msgs:?}\n{out}"
    );
    if let Some(reference) = reference {
        reference.assert_code(0);
        out.assert_same_recap_as(&reference);
        assert_eq!(msgs, messages(&reference), "{out}\n{reference}");
    }
}

/// A variable of a name Ansible reserves (a template global, a keyword) in play, block
/// or task `vars`, a vars file, a role's `defaults` or `vars` or set by `set_fact` draws
/// ansible-core's warning, saying where it is, compared with ansible-playbook; the run
/// goes on.
#[test]
fn reserved_names_are_warned_about() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    let pb = sb.write(
        "play.yml",
        r#"
- hosts: all
  gather_facts: false
  vars:
    lipsum: play
  vars_files: [file_vars.yml]
  roles: [r]
  tasks:
    - include_vars: included.yml
    - block:
        - debug: {msg: "{{ query }}"}
          vars:
            timeout: task
      vars:
        query: block
    - set_fact: {now: later}
"#,
    );
    sb.write("file_vars.yml", "range: file\n");
    sb.write("included.yml", "x: 1\ndict: included\n");
    sb.write("roles/r/defaults/main.yml", "name: default\n");
    sb.write("roles/r/vars/main.yml", "x: 1\nenvironment: role\n");
    sb.write("roles/r/tasks/main.yml", "- debug: {msg: role}\n");
    let work = sb.dir("work");
    let ours = sb.play(&pb, &work, &[]).run();
    ours.assert_no_panic().assert_code(0);
    let warned = |stderr: &str| -> Vec<String> {
        let mut lines = Vec::new();
        let mut inside = false;
        for line in stderr.lines() {
            if line.starts_with("[WARNING]: ") {
                inside = line.contains("reserved name");
            }
            if inside {
                lines.push(line.to_string());
            }
        }
        lines
    };
    let ours_warned = warned(&ours.stderr);
    assert_eq!(
        ours_warned
            .iter()
            .filter(|l| l.starts_with("[WARNING]"))
            .count(),
        8,
        "{ours}"
    );
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        let mut ours_sorted = ours_warned.clone();
        let mut theirs_sorted = warned(&theirs.stderr);
        ours_sorted.sort();
        theirs_sorted.sort();
        assert_eq!(ours_sorted, theirs_sorted, "{theirs}\n{ours}");
        ours.assert_same_recap_as(&theirs);
    }
}
