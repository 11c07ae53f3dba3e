//! `vars_files`: files of variables above the play's `vars`, names templated per host,
//! lists whose first existing file wins, and a missing file skipped with a warning —
//! compared with ansible-playbook.

use sandball_e2e::Sandbox;

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  vars:
    shared: from play vars
    only_play: play
  vars_files:
    - vars/common.yml
    - "vars/{{ inventory_hostname }}.yml"
    - [vars/missing.yml, "vars/{{ flavour }}.yml", vars/default.yml]
  tasks:
    - name: show
      debug:
        msg: "{{ shared }}|{{ only_play }}|{{ per_host }}|{{ chosen }}"
"#;

#[test]
fn vars_files_are_a_layer_above_play_vars_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta"]);
    let work = sb.dir("work");
    sb.write("vars/common.yml", "shared: from vars_files\n");
    sb.write("vars/alpha.yml", "per_host: a\n");
    sb.write("vars/beta.yml", "per_host: b\n");
    sb.write("vars/spicy.yml", "chosen: spicy\n");
    sb.write("vars/default.yml", "chosen: default\n");
    let pb = sb.write("play.yml", PLAY);
    for (flavour, chosen) in [("spicy", "spicy"), ("plain", "default")] {
        let extra = format!("flavour={flavour}");
        let out = sb.play(&pb, &work, &["-e", &extra]).run();
        out.assert_no_panic().assert_code(0);
        for (host, per_host) in [("alpha", "a"), ("beta", "b")] {
            let line = format!("from vars_files|play|{per_host}|{chosen}");
            assert!(
                out.stdout
                    .contains(&format!("ok: [{host}] => {{\n    \"msg\": \"{line}\"")),
                "{host} with flavour {flavour}:\n{out}"
            );
        }
        if let Some(theirs) = sb.ansible_play(&pb, &work, &["-e", &extra]) {
            let theirs = theirs.run();
            assert_eq!(theirs.code, 0, "{theirs}");
            assert_eq!(
                theirs.task_results("show"),
                out.task_results("show"),
                "{theirs}\n{out}"
            );
        }
    }

    // A file that does not exist is skipped, as ansible-core 2.19 skips it, but not
    // silently: a warning names it.
    let missing = sb.write(
        "missing.yml",
        "- hosts: all\n  gather_facts: false\n  vars_files: [vars/nope.yml]\n  tasks:\n    - debug: {msg: hi}\n",
    );
    let out = sb.play(&missing, &work, &[]).run();
    out.assert_no_panic().assert_code(0);
    assert!(
        out.stderr
            .contains("[WARNING]: vars file vars/nope.yml was not found"),
        "{out}"
    );
    if let Some(theirs) = sb.ansible_play(&missing, &work, &[]) {
        let theirs = theirs.run();
        assert_eq!(theirs.code, 0, "{theirs}");
        out.assert_same_recap_as(&theirs);
    }
}

const PROMPTS: &str = r#"
- hosts: all
  gather_facts: false
  vars:
    with_default: from play vars
  vars_prompt:
    - name: with_default
      prompt: Give one
      default: dflt
      private: false
    - name: secret
      prompt: Password
    - name: given
      prompt: Given by -e
  tasks:
    - name: answers
      debug: {msg: "{{ with_default }}|{{ secret }}|{{ given }}"}
"#;

/// Without a terminal, `vars_prompt` asks nothing: a warning says so, each variable
/// takes its default (above the play's vars) or none, and `-e` wins.
#[test]
fn vars_prompt_without_a_terminal_takes_defaults_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    let work = sb.dir("work");
    let pb = sb.write("play.yml", PROMPTS);
    let out = sb.play(&pb, &work, &["-e", "given=x"]).run();
    out.assert_no_panic().assert_code(0);
    out.assert_stderr_has("[WARNING]: Not prompting as we are not in interactive mode");
    out.assert_stdout_has("\"msg\": \"dflt|None|x\"");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &["-e", "given=x"]) {
        let theirs = theirs.run();
        assert_eq!(
            theirs.task_lines("answers"),
            out.task_lines("answers"),
            "{theirs}\n{out}"
        );
    }
}

/// Hashes as Ansible makes them (with passlib): `vars_prompt`'s `encrypt` (with a
/// `salt`, or a random one of `salt_size`), the `password_hash` filter, and the
/// `password` lookup's `encrypt`, which keeps its salt beside the password so that the
/// hash is the same on the next run.
const HASHES: &str = r#"
- hosts: all
  gather_facts: false
  vars_prompt:
    - name: pw
      default: secret
      encrypt: sha512_crypt
      salt: mysalt
    - name: pw2
      encrypt: sha256_crypt
      salt_size: 7
      default: x
  tasks:
    - name: prompted
      debug: {msg: "{{ pw }}|{{ pw2 is match('[$]5[$]rounds=535000[$][./0-9A-Za-z]{7}[$]') }}"}
    - name: filtered
      debug:
        msg: "{{ 'secret' | password_hash('sha512', 'mysalt', rounds=10000) }}|{{ 'secret' | password_hash('sha256', salt='mysalt') }}|{{ 'secret' | password_hash('sha512') | length }}"
    - name: looked up
      debug: {msg: "{{ lookup('password', work ~ '/pw.txt encrypt=sha512_crypt') }}"}
"#;

#[test]
fn hashes_are_made_as_ansible_makes_them() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    let work = sb.dir("work");
    let pb = sb.write("hashes.yml", HASHES);
    let out = sb.play(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(0);
    out.assert_stdout_has(
        "\"msg\": \"$6$rounds=656000$mysalt$cDA0t8lm/qt.LT6DzpoHxJ.NwTpx.WTkOPwhseSva8pRixDSH2./ffedCjAMbTX1Uo1QNT7jJPJ6FIzU2i59K/|True\"",
    );
    let kept = std::fs::read_to_string(work.join("pw.txt")).unwrap();
    let (plain, salt) = kept.trim_end().split_once(" salt=").expect("a salt kept");
    assert_eq!((plain.len(), salt.len()), (20, 8), "{kept}");
    let looked_up = |o: &sandball_e2e::Output| o.task_lines("looked up").join("\n");
    let first = looked_up(&out);
    assert!(
        first.contains(&format!("$6$rounds=656000${salt}$")),
        "{first}"
    );
    let again = sb.play(&pb, &work, &[]).run();
    assert_eq!(looked_up(&again), first, "the same hash on the next run");
    // ansible-playbook hashes the same password with the same salt the same way.
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        for task in ["prompted", "filtered", "looked up"] {
            assert_eq!(
                theirs.task_lines(task),
                out.task_lines(task),
                "{theirs}\n{out}"
            );
        }
    }
}

const INCLUDE: &str = r#"
- hosts: all
  gather_facts: false
  vars:
    cfg: {a: 1, keep: yes}
  tasks:
    - include_vars: {dir: conf, ignore_files: [skip.yml], name: conf}
    - include_vars: {file: merge.yml, hash_behaviour: merge}
    - name: show
      debug:
        msg: "{{ conf.order }}|{{ conf.deep | default('none') }}|{{ cfg.a }}|{{ cfg.b }}|{{ cfg.keep }}"
    - include_vars: "{{ inventory_hostname }}.yml"
    - name: per host
      debug: {msg: "{{ flavour }}"}
    - name: no file found
      include_vars:
        file: "{{ lookup('first_found', ['nowhere.yml'], errors='ignore') }}"
      ignore_errors: true
      register: none_found
    - name: looked for all the same
      debug: {msg: "{{ [none_found.message, none_found.warnings, none_found.msg] }}"}
"#;

#[test]
fn include_vars_reads_files_and_directories_as_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta"]);
    let work = sb.dir("work");
    sb.write("conf/10-first.yml", "order: first\n");
    sb.write("conf/20-second.yml", "order: second\n");
    sb.write("conf/skip.yml", "order: skipped\n");
    sb.write("conf/sub/deep.yml", "deep: found\n");
    sb.write("vars/merge.yml", "cfg: {b: 2}\n");
    sb.write("vars/alpha.yml", "flavour: a\n");
    sb.write("beta.yml", "flavour: b\n");
    let pb = sb.write("play.yml", INCLUDE);
    let out = sb.play(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(0);
    out.assert_stdout_has("\"msg\": \"second|found|1|2|True\"");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        assert_eq!(theirs.code, 0, "{theirs}");
        for task in ["show", "per host", "looked for all the same"] {
            // Hosts finish in any order.
            let mut a = theirs.task_lines(task);
            let mut b = out.task_lines(task);
            a.sort_unstable();
            b.sort_unstable();
            assert_eq!(a, b, "{theirs}\n{out}");
        }
        out.assert_same_recap_as(&theirs);
    }
}
