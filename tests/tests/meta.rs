//! `meta` actions, `run_once`, `force_handlers` and what a failed host means for the
//! rest of the playbook, compared with ansible-playbook: recap, exit code and the
//! hosts each task ran on.

use sandball_e2e::{Output, Sandbox};

/// For each task banner (and handler banner), the hosts it reported on; banners that
/// report on no host are left out (ansible-core prints a `flush_handlers` banner twice).
fn hosts_per_task(out: &Output) -> Vec<(String, Vec<String>)> {
    let mut tasks: Vec<(String, Vec<String>)> = Vec::new();
    for line in out.stdout.lines() {
        let banner = line
            .strip_prefix("TASK [")
            .or_else(|| line.strip_prefix("RUNNING HANDLER ["));
        if let Some(rest) = banner {
            let name = rest.split(']').next().unwrap_or_default().to_string();
            tasks.push((name, Vec::new()));
        } else if !line.starts_with(' ')
            && let Some((_, rest)) = line.split_once(": [")
            && let Some((host, _)) = rest.split_once(']')
            && let Some(last) = tasks.last_mut()
        {
            last.1.push(host.to_string());
            last.1.sort();
        }
    }
    tasks.retain(|(_, hosts)| !hosts.is_empty());
    tasks
}

fn compare(sb: &Sandbox, play: &str, code: i32) -> Output {
    compare_with(sb, play, code, &[])
}

/// [`compare`] with more command-line arguments.
fn compare_with(sb: &Sandbox, play: &str, code: i32, args: &[&str]) -> Output {
    let work = sb.dir("work");
    let pb = sb.write("play.yml", play);
    let out = sb.play(&pb, &work, args).run();
    out.assert_no_panic().assert_code(code);
    if let Some(theirs) = sb.ansible_play(&pb, &work, args) {
        let theirs = theirs.run();
        assert_eq!(theirs.code, out.code, "{theirs}\n{out}");
        out.assert_same_recap_as(&theirs);
        assert_eq!(
            hosts_per_task(&theirs),
            hosts_per_task(&out),
            "{theirs}\n{out}"
        );
    }
    out
}

const METAS: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: change
      debug: {msg: c}
      changed_when: true
      notify: h
    - name: flush
      meta: flush_handlers
    - name: once
      debug: {msg: "once on {{ inventory_hostname }}"}
      run_once: true
      register: r
    - name: seen
      debug: {msg: "{{ inventory_hostname }} sees {{ r.msg }}"}
    - name: fail alpha
      fail: {msg: x}
      when: inventory_hostname == 'alpha'
    - name: clear
      meta: clear_host_errors
    - name: after clearing
      debug: {msg: back}
    - meta: noop
    - name: end gamma
      meta: end_host
      when: inventory_hostname == 'gamma'
    - name: only beta
      debug: {msg: only}
    - name: change2
      debug: {msg: c2}
      changed_when: true
      notify: h
    - meta: end_play
    - name: never
      debug: {msg: never}
  handlers:
    - name: h
      debug: {msg: "handler {{ inventory_hostname }}"}
- hosts: all
  gather_facts: false
  tasks:
    - name: second play
      debug: {msg: second}
"#;

const FAILURES: &str = r#"
- hosts: all
  gather_facts: false
  force_handlers: true
  tasks:
    - name: change
      debug: {msg: c}
      changed_when: true
      notify: h
    - name: fail alpha
      fail: {msg: x}
      when: inventory_hostname == 'alpha'
  handlers:
    - name: h
      debug: {msg: "handler {{ inventory_hostname }}"}
- hosts: all
  gather_facts: false
  tasks:
    - name: without alpha
      debug: {msg: second}
    - name: everyone fails
      fail: {msg: y}
- hosts: all
  gather_facts: false
  tasks:
    - name: never reached
      debug: {msg: third}
"#;

/// A play's `run_once` does not reach its fact gathering: every host gathers.
const GATHER_ONCE: &str = r#"
- hosts: all
  run_once: true
  gather_subset: ['!all']
  tasks:
    - name: once
      debug: {msg: "{{ groups['all'] | map('extract', hostvars, 'ansible_system') | list }}"}
"#;

#[test]
fn run_once_and_meta_actions_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta", "gamma"]);
    let out = compare(&sb, GATHER_ONCE, 0);
    out.assert_stdout_has("ok: [beta]");
    let out = compare(&sb, METAS, 0);
    out.assert_stdout_has("\"msg\": \"beta sees once on alpha\"");
    assert!(!out.stdout.contains("TASK [never]"), "{out}");
    let out = compare(&sb, FAILURES, 2);
    assert!(
        out.stdout.contains("\"msg\": \"handler alpha\""),
        "force_handlers:\n{out}"
    );
    assert!(!out.stdout.contains("never reached"), "{out}");
    // `--force-handlers` is the plays' default; a play's own `force_handlers` wins.
    let default = FAILURES.replace("  force_handlers: true\n", "");
    let out = compare_with(&sb, &default, 2, &["--force-handlers"]);
    out.assert_stdout_has("\"msg\": \"handler alpha\"");
    let off = FAILURES.replace("force_handlers: true", "force_handlers: false");
    let out = compare_with(&sb, &off, 2, &["--force-handlers"]);
    assert!(!out.stdout.contains("\"msg\": \"handler alpha\""), "{out}");
    // ANSIBLE_FORCE_HANDLERS (or ansible.cfg's force_handlers) sets the default too.
    let pb = sb.write("play.yml", &default);
    let out = sb
        .play(&pb, &sb.dir("work"), &[])
        .env("ANSIBLE_FORCE_HANDLERS", "true")
        .run();
    out.assert_no_panic().assert_code(2);
    out.assert_stdout_has("\"msg\": \"handler alpha\"");
}

const SERIAL: &str = r#"
- name: serial
  hosts: all
  gather_facts: false
  serial: [1, "50%"]
  tasks:
    - name: batch
      debug: {msg: "{{ ansible_play_batch }} of {{ ansible_play_hosts_all | length }}"}
    - name: change
      debug: {msg: c}
      changed_when: true
      notify: h
    - name: end the second batch
      meta: end_batch
      when: inventory_hostname == 'a2'
    - name: after
      debug: {msg: after}
  handlers:
    - name: h
      debug: {msg: "handler {{ inventory_hostname }}"}
- name: limited
  hosts: all
  gather_facts: false
  serial: 2
  max_fail_percentage: 40
  tasks:
    - name: fail a3
      fail: {msg: x}
      when: inventory_hostname == 'a3'
    - name: t2
      debug: {msg: t2}
"#;

#[test]
fn serial_batches_and_max_fail_percentage_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["a1", "a2", "a3", "a4", "a5"]);
    let out = compare(&sb, SERIAL, 2);
    out.assert_stdout_has("\"msg\": \"['a1'] of 5\"");
    out.assert_stdout_has("\"msg\": \"['a2', 'a3'] of 5\"");
    assert_eq!(out.stdout.matches("PLAY [serial]").count(), 3, "{out}");
    assert!(out.stdout.contains("NO MORE HOSTS LEFT"), "{out}");
}

#[test]
fn notices_are_templated_and_a_missing_handler_is_an_error() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let pb = sb.write(
        "play.yml",
        r#"- hosts: all
  gather_facts: false
  vars: {h1: name1, h2: name2, h4: name4, several: [name5, name6]}
  handlers:
    - name: name1
      set_fact: {one: true}
    - name: "{{ h2 }}"
      set_fact: {two: true}
    - name: listener
      set_fact: {four: true}
      listen: "{{ h4 }}"
    - name: name5
      set_fact: {five: true}
    - set_fact: {six: true}
      listen: name6
  tasks:
    - command: "true"
      notify: ["{{ h1 }}", "{{ h2 }}", "{{ h4 }}"]
    - meta: flush_handlers
    - command: "true"
      notify: "{{ several }}"
    - meta: flush_handlers
    - assert:
        that: [one, two, four is undefined, five, six]
"#,
    );
    let work = sb.dir("work");
    let lenient = sb
        .play(&pb, &work, &[])
        .env("ANSIBLE_ERROR_ON_MISSING_HANDLER", "false")
        .run();
    lenient.assert_no_panic().assert_code(0);
    lenient.assert_stderr_has("[WARNING]: The requested handler 'name4' was not found in either the main handlers list nor in the listening handlers list");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs
            .env("ANSIBLE_ERROR_ON_MISSING_HANDLER", "false")
            .run();
        lenient.assert_same_recap_as(&theirs);
    }
    // By default an unknown handler ends the whole run, with Ansible's words: no
    // task after it runs, handlers included, and there is no recap.
    let strict = sb.play(&pb, &work, &[]).run();
    strict.assert_no_panic().assert_code(1);
    strict.assert_stderr_has("[ERROR]: The requested handler 'name4' was not found");
    assert!(!strict.stdout.contains("RUNNING HANDLER"), "{strict}");
    assert!(!strict.stdout.contains("PLAY RECAP"), "{strict}");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        theirs.assert_code(1);
        assert!(!theirs.stdout.contains("PLAY RECAP"), "{theirs}");
    }
    // So does a `throttle` that is not a number, before the task runs anywhere.
    let throttle = sb.write(
        "throttle.yml",
        r#"- hosts: all
  gather_facts: false
  tasks:
    - block:
        - name: never runs
          debug: {msg: nope}
          throttle: "{{ 'abc' }}"
      always:
        - name: nor does this
          debug: {msg: nope}
"#,
    );
    let ours = sb.play(&throttle, &work, &[]).run();
    ours.assert_no_panic().assert_code(1);
    ours.assert_stderr_has(
        "Failed to convert the throttle value to an integer: invalid literal for int() with base 10: 'abc'",
    );
    assert!(!ours.stdout.contains("\"nope\""), "{ours}");
    assert!(!ours.stdout.contains("PLAY RECAP"), "{ours}");
    if let Some(theirs) = sb.ansible_play(&throttle, &work, &[]) {
        let theirs = theirs.run();
        theirs.assert_code(1);
        assert!(!theirs.stdout.contains("\"nope\""), "{theirs}");
    }
}

#[test]
fn meta_actions_say_what_they_did_or_why_not_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta"]);
    let pb = sb.write(
        "play.yml",
        r#"
- hosts: all
  gather_facts: false
  tasks:
    - meta: end_host
      when: inventory_hostname == 'beta'
    - meta: end_play
      when: false
    - meta: end_batch
      when: false
    - meta: clear_host_errors
      when: false
    - meta: flush_handlers
      when: false
    - meta: clear_facts
    - name: after
      debug: {msg: after}
"#,
    );
    let work = sb.dir("work");
    let said = |o: &Output| -> Vec<String> {
        o.stdout
            .lines()
            .filter(|l| l.starts_with("META: ") || l.starts_with("skipping: "))
            .map(str::to_string)
            .collect()
    };
    let ours = sb.play(&pb, &work, &["-vv"]).run();
    ours.assert_no_panic().assert_code(0);
    ours.assert_stdout_has(
        "META: end_host conditional evaluated to False, continuing execution for alpha",
    );
    ours.assert_stdout_has("META: ending play for beta");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &["-vv"]) {
        let theirs = theirs.run();
        assert_eq!(said(&ours), said(&theirs), "{theirs}\n{ours}");
        ours.assert_same_recap_as(&theirs);
    }
}

/// An inventory of local hosts with their `parity`: the one `meta: refresh_inventory`
/// reads first, then again (where `one` left and `four` joined).
fn parity_inventory(hosts: &[&str]) -> String {
    let mut text = String::from("all:\n  vars: {ansible_connection: local}\n  hosts:\n");
    for h in hosts {
        let parity = if ["two", "four"].contains(h) {
            "even"
        } else {
            "odd"
        };
        text.push_str(&format!("    {h}: {{parity: {parity}}}\n"));
    }
    text
}

const REFRESH: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - add_host: {name: added, ansible_connection: local}
    - group_by: {key: "{{ parity }}"}
    - name: named refresh
      run_once: true
      block:
        - name: swap the inventory
          debug: {msg: "{{ lookup('pipe', 'cp new.yml inventory.yml') }}"}
        - meta: refresh_inventory
        - name: still here
          debug: {msg: "{{ ansible_play_hosts_all | length }}"}
      always:
        - name: always
          debug: {msg: "{{ inventory_hostname }}"}
    - name: after the block
      debug: {msg: "{{ inventory_hostname }}"}
    - meta: noop
- hosts: all
  gather_facts: false
  tasks:
    - name: refreshed
      debug: {msg: "{{ ansible_play_hosts }} {{ groups.even | default([]) }} {{ groups.odd | default([]) }}"}
"#;

#[test]
fn refresh_inventory_keeps_added_hosts_and_groups_and_drops_removed_hosts_as_in_ansible() {
    let sb = Sandbox::new();
    sb.write("new.yml", &parity_inventory(&["two", "three", "four"]));
    let old = parity_inventory(&["one", "two", "three"]);
    let pb = sb.write("play.yml", REFRESH);
    let args = [
        "playbook",
        "-i",
        "inventory.yml",
        "-f",
        "1",
        pb.to_str().unwrap(),
    ];
    sb.write("inventory.yml", &old);
    let ours = sb.sandball(args).run();
    ours.assert_no_panic().assert_code(0);
    ours.assert_stdout_has("\"msg\": \"['two', 'three', 'four', 'added'] ['two'] ['three']\"");
    if let Some(theirs) = sb.ansible_playbook(&args[1..]) {
        sb.write("inventory.yml", &old);
        ours.assert_same_stdout_as(&theirs.run());
    }
}

const META_BANNERS: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - meta: noop
    - name: change
      debug: {msg: c}
      changed_when: true
      notify: noop handler
    - meta: reset_connection
    - meta: flush_handlers
    - meta: clear_facts
    - meta: end_host
      when: inventory_hostname == 'beta'
    - name: after
      debug: {msg: a}
  handlers:
    - name: noop handler
      meta: noop
"#;

#[test]
fn meta_banners_paths_and_messages_as_in_ansible() {
    // Per-host meta actions show their banner once per host, each followed by what it
    // did (at -vv); a handler's is a handler's banner; task paths are absolute.
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta"]);
    let work = sb.dir("work");
    let pb = sb.write("play.yml", META_BANNERS);
    let args = ["-vv", "-f", "1"];
    let ours = sb.play(&pb, &work, &args).run();
    ours.assert_no_panic().assert_code(0);
    ours.assert_stdout_has("RUNNING HANDLER [noop handler]");
    let kept = |o: &Output| -> Vec<String> {
        o.stdout
            .lines()
            .filter(|l| {
                [
                    "TASK [",
                    "RUNNING HANDLER [",
                    "META: ",
                    "task path: ",
                    "skipping: ",
                ]
                .iter()
                .any(|p| l.starts_with(p))
            })
            .map(str::to_string)
            .collect()
    };
    if let Some(theirs) = sb.ansible_play(&pb, &work, &args) {
        let theirs = theirs.run();
        assert_eq!(kept(&ours), kept(&theirs), "{theirs}\n{ours}");
    }
}

#[test]
fn flush_handlers_as_a_handler_ends_the_run_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    let work = sb.dir("work");
    let pb = sb.write(
        "play.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - name: change\n      debug: {msg: c}\n      changed_when: true\n      notify: flusher\n  handlers:\n    - name: flusher\n      meta: flush_handlers\n",
    );
    let ours = sb.play(&pb, &work, &[]).run();
    ours.assert_no_panic().assert_code(1);
    let said = "[ERROR]: flush_handlers cannot be used as a handler";
    assert!(
        ours.stdout.contains(said) || ours.stderr.contains(said),
        "{ours}"
    );
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        theirs.assert_code(1);
        ours.assert_same_stdout_as(&theirs);
    }
}

#[test]
fn a_conditional_flush_handlers_flushes_the_hosts_it_holds_for_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta", "gamma"]);
    let out = compare(
        &sb,
        r#"
- hosts: all
  gather_facts: false
  tasks:
    - {name: notify, debug: {msg: c}, changed_when: true, notify: [h]}
    - name: flush for alpha
      meta: flush_handlers
      when: inventory_hostname == 'alpha'
    - name: flush for nobody
      meta: flush_handlers
      when: false
    - name: between
      debug: {msg: b}
  handlers:
    - name: h
      debug: {msg: "handler {{ inventory_hostname }}"}
"#,
        0,
    );
    let first = out
        .stdout
        .find("handler alpha")
        .unwrap_or_else(|| panic!("{out}"));
    let between = out
        .stdout
        .find("TASK [between]")
        .unwrap_or_else(|| panic!("{out}"));
    let later = out
        .stdout
        .find("handler beta")
        .unwrap_or_else(|| panic!("{out}"));
    assert!(first < between && between < later, "{out}");
}

#[test]
fn a_block_inside_a_handler_block_is_refused_before_the_run_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    let work = sb.dir("work");
    let handler = |inner: &str| {
        format!(
            "- hosts: all\n  gather_facts: false\n  tasks:\n    - {{name: notify, debug: {{msg: n}}, changed_when: true, notify: [h]}}\n  handlers:\n    - name: block\n      block:\n        - {{debug: {{msg: first}}, listen: h}}\n{inner}"
        )
    };
    // Handlers may be written in a block.
    let flat = sb.write(
        "flat.yml",
        &handler("        - {debug: {msg: second}, listen: h}\n"),
    );
    let ours = sb.play(&flat, &work, &[]).run();
    ours.assert_no_panic().assert_code(0);
    ours.assert_stdout_has("\"msg\": \"second\"");
    let nested = sb.write(
        "nested.yml",
        &handler("        - name: nested\n          block:\n            - debug: {msg: never}\n"),
    );
    let refused = sb.play(&nested, &work, &[]).run();
    refused.assert_no_panic();
    refused.assert_stderr_has("Using a block as a handler is not supported.");
    refused.assert_stderr_has("nested.yml:9:11");
    assert!(!refused.stdout.contains("TASK ["), "{refused}");
    if let Some(theirs) = sb.ansible_play(&flat, &work, &[]) {
        ours.assert_same_stdout_as(&theirs.run());
    }
    if let Some(theirs) = sb.ansible_play(&nested, &work, &[]) {
        let theirs = theirs.run();
        theirs.assert_stderr_has("Using a block as a handler is not supported.");
        assert_eq!(refused.code, theirs.code, "{refused}\n{theirs}");
    }
    // A file a handler imports (or includes) holds handlers: the same holds there.
    sb.write(
        "handlers.yml",
        "- block:\n    - debug: {msg: first}\n    - block:\n        - debug: {msg: never}\n",
    );
    for (action, refused_before) in [("import_tasks", true), ("include_tasks", false)] {
        let pb = sb.write(
            &format!("{action}.yml"),
            &format!(
                "- hosts: all\n  gather_facts: false\n  tasks:\n    - {{name: notify, debug: {{msg: n}}, changed_when: true, notify: [h]}}\n  handlers:\n    - name: h\n      {action}: handlers.yml\n"
            ),
        );
        let ours = sb.play(&pb, &work, &[]).run();
        ours.assert_no_panic();
        assert!(ours.code != 0, "{ours}");
        let said = "Using a block as a handler is not supported.";
        assert!(
            ours.stdout.contains(said) || ours.stderr.contains(said),
            "{ours}"
        );
        assert_eq!(!ours.stdout.contains("TASK ["), refused_before, "{ours}");
    }
}

#[test]
fn a_handler_notifying_an_earlier_handler_runs_it_as_in_ansible() {
    // A notice raised after its handler started (`first` by `second`, `second` by
    // itself) waits for the next flush, the sections' implicit ones included.
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta"]);
    let out = compare(
        &sb,
        r#"
- name: renotified
  hosts: all
  gather_facts: false
  tasks:
    - {name: start, command: "true", notify: [second]}
    - {name: flush, meta: flush_handlers}
    - {name: again, command: "true", notify: [second], when: inventory_hostname == 'beta'}
  handlers:
    - {name: first, debug: {msg: "first {{ inventory_hostname }}"}}
    - {name: second, debug: {msg: s}, changed_when: true, notify: [first, third, second]}
    - {name: third, debug: {msg: t}}
"#,
        0,
    );
    let firsts = out.stdout.matches("\"msg\": \"first beta\"").count();
    assert!(firsts >= 2, "{out}");
}

/// A role that ends itself (`meta: end_role`) for some hosts: in a block with
/// `always`, in a file it includes, in a dependency; its handlers still run.
fn end_role_project(sb: &Sandbox) {
    sb.write(
        "roles/ender/tasks/main.yml",
        r#"
- name: ender starts
  debug: {msg: start}
  changed_when: true
  notify: ender handler
- block:
    - name: ender ends
      meta: end_role
      when: inventory_hostname == 'alpha'
    - name: after end_role in block
      debug: {msg: after}
  always:
    - name: ender always
      debug: {msg: always}
- name: ender last
  debug: {msg: last}
- include_tasks: more.yml
- name: ender very last
  debug: {msg: very last}
"#,
    );
    sb.write(
        "roles/ender/tasks/more.yml",
        "- name: nested end\n  meta: end_role\n  when: inventory_hostname == 'beta'\n- name: after nested end\n  debug: {msg: nested}\n",
    );
    sb.write(
        "roles/ender/handlers/main.yml",
        "- name: ender handler\n  debug: {msg: handled}\n",
    );
    sb.write(
        "roles/dep/tasks/main.yml",
        "- name: dep ends\n  meta: end_role\n- name: dep after end\n  debug: {msg: never}\n",
    );
    sb.write("roles/top/meta/main.yml", "dependencies: [dep]\n");
    sb.write(
        "roles/top/tasks/main.yml",
        "- name: top after dep\n  debug: {msg: top}\n",
    );
}

const END_ROLE: &str = r#"
- hosts: all
  gather_facts: false
  roles: [ender]
  tasks:
    - block:
        - include_role: {name: ender}
        - name: after include
          debug: {msg: after include}
      always:
        - name: play always
          debug: {msg: play always}
    - import_role: {name: top}
    - name: ended roles count as run
      include_role: {name: ender, allow_duplicates: false}
    - name: last
      debug: {msg: last}

- hosts: all
  gather_facts: false
  strategy: free
  roles: [ender]
"#;

#[test]
fn end_role_ends_the_role_for_its_hosts_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta"]);
    end_role_project(&sb);
    let work = sb.dir("work");
    let pb = sb.write("play.yml", END_ROLE);
    let args = ["-f", "1", "-v"];
    let ours = sb.play(&pb, &work, &args).run();
    ours.assert_no_panic().assert_code(0);
    ours.assert_stdout_has("end_role conditional evaluated to Falsecontinuing role ender for beta");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &args) {
        let theirs = theirs.run();
        ours.assert_same_recap_as(&theirs);
        // The linear play, line for line (the free one's lines interleave).
        let linear = |o: &Output| {
            o.stdout
                .split("PLAY [all]")
                .nth(1)
                .unwrap_or_default()
                .to_string()
        };
        assert_eq!(linear(&ours), linear(&theirs), "{theirs}\n{ours}");
    }
}

#[test]
fn end_role_outside_a_role_or_in_a_handler_is_refused_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    let work = sb.dir("work");
    sb.write("inc.yml", "- meta: end_role\n");
    let cases = [
        // Refused before the run.
        (
            "handler.yml",
            "- hosts: all\n  gather_facts: false\n  tasks:\n    - {name: n, debug: {msg: n}, changed_when: true, notify: h}\n  handlers:\n    - name: h\n      meta: end_role\n",
            "Cannot execute 'end_role' from a handler",
        ),
        (
            "play_task.yml",
            "- hosts: all\n  gather_facts: false\n  tasks:\n    - {name: first, debug: {msg: first}}\n    - meta: end_role\n",
            "Cannot execute 'end_role' from outside of a role",
        ),
        // Refused when the file is included: the run ends there.
        (
            "included.yml",
            "- hosts: all\n  gather_facts: false\n  tasks:\n    - {name: first, debug: {msg: first}}\n    - include_tasks: inc.yml\n    - {name: never, debug: {msg: never}}\n",
            "Cannot execute 'end_role' from outside of a role",
        ),
    ];
    for (file, play, said) in cases {
        let pb = sb.write(file, play);
        let ours = sb.play(&pb, &work, &[]).run();
        ours.assert_no_panic().assert_code(4);
        ours.assert_stderr_has(&format!("[ERROR]: {said}"));
        if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
            let theirs = theirs.run();
            theirs.assert_code(4).assert_stderr_has(said);
            ours.assert_same_stdout_as(&theirs);
        }
    }
}

#[test]
fn the_implicit_flush_says_so_when_debugging_as_in_ansible() {
    // ANSIBLE_DEBUG: the flush after a section says so for each host that notified a
    // handler there; none for the others.
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta"]);
    let work = sb.dir("work");
    let pb = sb.write(
        "play.yml",
        "- hosts: all\n  gather_facts: false\n  pre_tasks:\n    - {name: quiet, debug: {msg: q}}\n  tasks:\n    - {name: n, debug: {msg: n}, changed_when: true, notify: h, when: inventory_hostname == 'alpha'}\n  handlers:\n    - {name: h, debug: {msg: h}}\n",
    );
    let said = |o: &Output| {
        o.stdout
            .matches("META: triggered running handlers for")
            .count()
    };
    let ours = sb.play(&pb, &work, &[]).env("ANSIBLE_DEBUG", "1").run();
    ours.assert_no_panic().assert_code(0);
    assert_eq!(said(&ours), 1, "{ours}");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.env("ANSIBLE_DEBUG", "1").run();
        assert_eq!(said(&ours), said(&theirs), "{theirs}");
    }
}

#[test]
fn clear_host_errors_forgives_failed_and_unreachable_hosts_as_in_ansible() {
    // The forgiven hosts take part in the next play; those that fail again leave it
    // but stay among `ansible_play_hosts_all`.
    let sb = Sandbox::new();
    sb.write(
        "inventory.ini",
        "good ansible_connection=local\nbad ansible_connection=local\ngone ansible_connection=ssh ansible_host=127.0.0.1 ansible_port=1011\n",
    );
    let out = compare(
        &sb,
        r#"
- name: fail, then forgive
  hosts: all
  gather_facts: false
  tasks:
    - {name: ping, ping: {}, failed_when: "inventory_hostname == 'bad'"}
    - meta: clear_host_errors
- hosts: all
  gather_facts: false
  tasks:
    - {name: counts, debug: {msg: "{{ ansible_play_hosts | length }} {{ ansible_play_hosts_all | length }}"}}
    - {name: ping again, ping: {}, failed_when: "inventory_hostname == 'bad'"}
- hosts: all
  gather_facts: false
  tasks:
    - {name: counts after, debug: {msg: "{{ ansible_play_hosts | sort }} {{ ansible_play_hosts_all | length }}"}}
"#,
        4,
    );
    out.assert_stdout_has("\"msg\": \"3 3\"");
    out.assert_stdout_has("\"msg\": \"['good'] 3\"");
}

#[test]
fn a_loop_is_unreachable_unless_every_unreachable_item_was_ignored_as_in_ansible() {
    // Each item reads `ignore_unreachable` with its own variables; the loop's result
    // is unreachable, ignored only when every unreachable item's was.
    let sb = Sandbox::new();
    sb.write(
        "inventory.ini",
        "good ansible_connection=local\ngone ansible_connection=ssh ansible_host=127.0.0.1 ansible_port=1011\n",
    );
    compare(
        &sb,
        r#"
- name: unreachable items
  hosts: all
  gather_facts: false
  tasks:
    - name: all ignored
      ping:
      ignore_unreachable: "{{ item }}"
      loop: [true, true]
      register: r
    - {name: seen, debug: {msg: "{{ r is unreachable }}"}}
    - name: one not ignored
      ping:
      ignore_unreachable: "{{ item }}"
      loop: [true, false]
    - {name: after, debug: {msg: after}}
"#,
        4,
    );
}
