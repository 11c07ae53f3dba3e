//! Legacy modules end to end: ansible-core's own modules (2.19 and 2.16) run unchanged
//! through sandball on the local connection, compared task by task with what
//! ansible-playbook of the same version reports; the example modules of every legacy
//! type; both execution flows; failures explained; results never templated again.
//!
//! ansible-core comes from `target/venv` (2.19, or `$ANSIBLE_BIN_DIR`) and
//! `target/venv-2.16` (or `$ANSIBLE_216_BIN_DIR`), which `make test` installs.

use sandball_e2e::binaries::{target_dir, workspace_root};
use sandball_e2e::compare::{ansible_bin, at, both_run, result};
use sandball_e2e::{Output, Sandbox};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The Python of the ansible-core 2.19 venv, whose modules the tests run.
fn python_2_19() -> PathBuf {
    ansible_bin("ANSIBLE_BIN_DIR", "venv").join("python")
}

/// Runs `play` (written as `name`) against localhost with `-v` and `extra` flags, with
/// ansible-core 2.19's modules; returns the run and its work directory.
fn run_local(sb: &Sandbox, name: &str, play: &str, extra: &[&str]) -> (Output, PathBuf) {
    sb.inventory(&["localhost"]);
    let pb = sb.write(name, play);
    let work = sb.dir("work");
    let mut flags = vec!["-v"];
    flags.extend(extra);
    let out = sb
        .play(&pb, &work, &flags)
        .env("SANDBALL_ANSIBLE_PYTHON", python_2_19())
        .run();
    out.assert_no_panic();
    (out, work)
}

/// Whether `task` was reported as failed.
fn failed(out: &Output, task: &str) -> bool {
    out.task_lines(task)
        .iter()
        .any(|l| l.starts_with("fatal: ") && l.contains("FAILED!"))
}

const CORE_PLAY: &str = r#"
- hosts: all
  gather_facts: false
  vars:
    sandball_legacy_modules: all
  tasks:
    - name: ping
      ping: {data: hello}
    - name: command
      command: echo one two
    - name: command creates
      command: {cmd: "touch {{ work }}/made", creates: "{{ work }}/made"}
    - name: shell
      shell: echo "it's $((2 + 3))"; echo oops >&2; exit 3
      ignore_errors: true
    - name: file directory
      file: {path: "{{ work }}/d", state: directory, mode: "0750"}
    - name: file touch
      file: {path: "{{ work }}/d/t", state: touch, mode: "0640"}
    - name: lineinfile
      lineinfile: {path: "{{ work }}/lines", line: alpha, create: true}
    - name: lineinfile again
      lineinfile: {path: "{{ work }}/lines", line: alpha}
    - name: replace
      replace: {path: "{{ work }}/lines", regexp: "^al", replace: AL}
    - name: copy on the node
      copy: {src: "{{ work }}/lines", dest: "{{ work }}/d/copied", remote_src: true}
    - name: stat
      stat: {path: "{{ work }}/d/copied"}
    - name: slurp
      slurp: {src: "{{ work }}/lines"}
    - name: find
      find: {paths: "{{ work }}", recurse: true}
    - name: tempfile
      tempfile: {path: "{{ work }}", suffix: .tmp}
    - name: setup
      setup: {gather_subset: [min]}
      register: facts
    - name: facts
      debug:
        msg: "{{ facts.ansible_facts.ansible_system }} {{ facts.ansible_facts.ansible_user_id }} {{ facts.ansible_facts.ansible_python.executable }}"
    - name: file absent
      file: {path: "{{ work }}/d", state: absent}
"#;

/// What is compared, per task.
const FIELDS: &[(&str, &[&str])] = &[
    ("ping", &["changed", "ping"]),
    ("command", &["changed", "rc", "stdout", "stderr", "cmd"]),
    ("command creates", &["changed", "rc", "cmd"]),
    ("shell", &["changed", "rc", "stdout", "stderr", "cmd"]),
    ("file directory", &["changed", "state", "mode", "path"]),
    ("file touch", &["changed", "state", "mode", "dest"]),
    ("lineinfile", &["changed", "msg"]),
    ("lineinfile again", &["changed", "msg"]),
    ("replace", &["changed", "msg"]),
    (
        "copy on the node",
        &[
            "changed", "dest", "checksum", "md5sum", "size", "mode", "state",
        ],
    ),
    (
        "stat",
        &[
            "changed",
            "stat/exists",
            "stat/size",
            "stat/mode",
            "stat/isreg",
            "stat/checksum",
        ],
    ),
    ("slurp", &["changed", "content", "encoding", "source"]),
    ("find", &["changed", "matched", "examined"]),
    ("tempfile", &["changed", "state", "mode"]),
    ("facts", &["msg"]),
    ("file absent", &["changed", "path", "state"]),
];

/// Runs CORE_PLAY under sandball with the ansible-core of `bin` and under that
/// version's ansible-playbook, and compares every task's fields and the recap.
fn core_modules_match(bin: &Path) {
    let (ours, theirs, ours_work, theirs_work) = both_run(&Sandbox::new(), bin, CORE_PLAY, FIELDS);
    // Both found the same files, and the temporary file is where it was asked for.
    let paths = |v: &Value| {
        let mut p: Vec<String> = at(v, "files")
            .as_array()
            .unwrap_or_else(|| panic!("find returned no files: {v}"))
            .iter()
            .map(|f| at(f, "path").as_str().unwrap_or_default().to_string())
            .collect();
        p.sort();
        p
    };
    assert_eq!(
        paths(&result(&ours, "find", &ours_work)),
        paths(&result(&theirs, "find", &theirs_work))
    );
    let tmp = result(&ours, "tempfile", &ours_work);
    let tmp_path = at(&tmp, "path").as_str().unwrap_or_default();
    assert!(
        tmp_path.starts_with("WORK/") && tmp_path.ends_with(".tmp"),
        "{tmp}"
    );
    assert!(!ours_work.join("d").exists());
}

/// What a comparison run left: both outputs and both work directories.
/// The `shell` component's scenarios, compared with ansible-core's shell.
const SHELL_PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: a pipeline and variables
      shell: echo "it's $((2 + 3))" | tr 0-9 a-j; echo oops >&2; echo "$HOME" | wc -l
    - name: fails with its status
      shell: echo before; exit 3
      ignore_errors: true
    - name: another shell
      shell: echo $0; [ -n "$BASH_VERSION" ] && echo bash
      args: {executable: /bin/bash}
    - name: chdir and creates
      shell: pwd > made.txt; cat made.txt
      args: {chdir: "{{ work }}", creates: "{{ work }}/made.txt"}
    - name: creates again
      shell: pwd > made.txt
      args: {chdir: "{{ work }}", creates: made.txt}
    - name: removes nothing
      shell: rm nothing
      args: {removes: "{{ work }}/nothing"}
    - name: stdin
      shell: cat; echo
      args: {stdin: from stdin, stdin_add_newline: false}
    - name: argv
      shell:
        argv: [printf, "%s|", "a b", "$HOME"]
    - name: the environment
      shell: echo "$GREETING"
      environment: {GREETING: "hi 'there'"}
    - name: in check mode
      shell: touch never
      check_mode: true
"#;

const SHELL_FIELDS: &[(&str, &[&str])] = &[
    (
        "a pipeline and variables",
        &["changed", "rc", "stdout", "stderr", "cmd", "msg"],
    ),
    (
        "fails with its status",
        &["changed", "rc", "stdout", "cmd", "msg", "failed"],
    ),
    ("another shell", &["changed", "rc", "stdout", "cmd"]),
    ("chdir and creates", &["changed", "rc", "stdout", "cmd"]),
    ("creates again", &["changed", "rc", "stdout", "msg"]),
    ("removes nothing", &["changed", "rc", "stdout", "msg"]),
    ("stdin", &["changed", "stdout"]),
    ("argv", &["changed", "stdout", "cmd"]),
    ("the environment", &["stdout"]),
    ("in check mode", &["changed", "rc", "msg", "skipped"]),
];

/// sandball's `shell` component (no ansible-core, no Python) gives what ansible-core's
/// shell gives.
#[test]
fn the_shell_component_matches_ansible_core() {
    let (ours, _, _, _) = both_run(
        &Sandbox::new(),
        &ansible_bin("ANSIBLE_BIN_DIR", "venv"),
        SHELL_PLAY,
        SHELL_FIELDS,
    );
    assert!(!ours.stdout.contains("legacy"), "{ours}");
}

#[test]
fn ansible_core_2_19_modules_match_ansible_playbook() {
    core_modules_match(&ansible_bin("ANSIBLE_BIN_DIR", "venv"));
}

#[test]
fn ansible_core_2_16_modules_match_ansible_playbook() {
    core_modules_match(&ansible_bin("ANSIBLE_216_BIN_DIR", "venv-2.16"));
}

/// A WANT_JSON module that returns templates in values and keys, and a playbook that
/// uses the result every way it can be used.
const EVIL_MODULE: &str = r#"#!/usr/bin/python
# WANT_JSON
import json, sys
args = json.load(open(sys.argv[1]))
work = args["work"]
t = "{{ lookup('pipe', 'touch %s/%s') }}"
print(json.dumps({
    "changed": False,
    "msg": t % (work, "from_msg"),
    "nested": {"list": [t % (work, "from_list")], t % (work, "from_key"): 1},
    "ansible_facts": {"evil_fact": t % (work, "from_fact")},
}))
"#;

const EVIL_PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: evil
      evil: {work: "{{ work }}"}
      register: r
    - name: show
      debug: {var: r}
    - name: use
      debug: {msg: "{{ r.msg }} {{ r.nested.list[0] }} {{ r.nested | dict2items | map(attribute='key') | list }}"}
    - name: keep
      set_fact: {kept: "{{ r.msg }}", keys: "{{ r.nested.keys() | list }}"}
    - name: use kept
      debug: {msg: "{{ kept }} {{ keys }} {{ ansible_facts.evil_fact }}"}
    - name: condition
      debug: {msg: ok}
      when: r.msg is string and kept | length > 0
"#;

#[test]
fn module_results_are_never_templated() {
    let sb = Sandbox::new();
    sb.write("library/evil", EVIL_MODULE);
    let (out, work) = run_local(&sb, "evil.yml", EVIL_PLAY, &[]);
    out.assert_code(0);
    let leftovers: Vec<_> = std::fs::read_dir(&work)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(leftovers.is_empty(), "templates ran: {leftovers:?}\n{out}");
    // The strings came back verbatim.
    let used = result(&out, "use kept", &work);
    let msg = at(&used, "msg").as_str().unwrap_or_default();
    assert!(
        msg.contains("{{ lookup('pipe', 'touch WORK/from_msg') }}"),
        "{used}"
    );
    assert!(msg.contains("from_key"), "{used}");
    assert!(msg.contains("from_fact"), "{used}");
}

/// The example modules of `examples/modules/`, one of each legacy type.
const EXAMPLES_PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: old-style
      greet_oldstyle: {name: "it's \"me\"", shout: true}
    - name: old-style missing argument
      greet_oldstyle: {}
      ignore_errors: true
    - name: want json python
      write_file_want_json: {dest: "{{ work }}/out.txt", content: "hello"}
    - name: want json python again
      write_file_want_json: {dest: "{{ work }}/out.txt", content: "hello"}
    - name: want json python check mode
      write_file_want_json: {dest: "{{ work }}/out.txt", content: "changed"}
      check_mode: true
    - name: want json ruby
      reverse_want_json: {text: "sandball"}
    - name: jsonargs
      count_jsonargs: {text: "one \"two\" three\\four ''' \"\"\""}
    - name: binary
      uname_binary: {suffix: "-node"}
"#;

#[test]
fn example_modules_of_every_type_run() {
    let root = workspace_root().join("examples/modules");
    let binary = target_dir().join("debug/uname_binary");
    assert!(
        binary.is_file(),
        "{} is missing: run `make legacy-examples` (`make test` does)",
        binary.display()
    );
    let sb = Sandbox::new();
    let lib = sb.dir("library");
    std::fs::copy(&binary, lib.join("uname_binary")).unwrap();
    let mut args: Vec<String> = vec![];
    for d in ["oldstyle", "want_json", "jsonargs"] {
        args.push("-M".into());
        args.push(root.join(d).display().to_string());
    }
    let extra: Vec<&str> = args.iter().map(String::as_str).collect();
    let (out, work) = run_local(&sb, "examples.yml", EXAMPLES_PLAY, &extra);
    let r = |t: &str| result(&out, t, &work);
    assert_eq!(at(&r("old-style"), "greeting"), "HELLO, IT'S \"ME\"!");
    let missing = r("old-style missing argument");
    assert!(failed(&out, "old-style missing argument"));
    assert_eq!(at(&missing, "msg"), "missing required argument: name");
    assert_eq!(at(&r("want json python"), "changed"), true);
    assert_eq!(at(&r("want json python again"), "changed"), false);
    assert_eq!(at(&r("want json python check mode"), "changed"), true);
    assert_eq!(
        std::fs::read_to_string(work.join("out.txt")).unwrap(),
        "hello"
    );
    assert_eq!(at(&r("want json ruby"), "reversed"), "llabdnas");
    assert_eq!(at(&r("jsonargs"), "words"), 5);
    assert_eq!(at(&r("binary"), "sysname"), "Linux-node");
    let recap = out.host("localhost");
    assert_eq!((recap.failed, recap.ignored), (0, 1), "{out}");
}

const FLOW_PLAY: &str = r#"
- hosts: all
  gather_facts: false
  vars:
    sandball_legacy_modules: [ping, stat]
  tasks:
    - name: piped
      stat: {path: "{{ work }}"}
    - name: classic
      stat: {path: "{{ work }}"}
      vars: {ansible_pipelining: false, ansible_remote_tmp: "{{ work }}/remote"}
    - name: kept
      ping: {data: kept}
      vars: {ansible_pipelining: false, ansible_remote_tmp: "{{ work }}/kept", ansible_keep_remote_files: true}
    - name: environment
      shell: echo "$GREETING"
      environment: {GREETING: "hi 'there'"}
"#;

#[test]
fn pipelining_and_the_classic_flow_agree_and_clean_up() {
    let sb = Sandbox::new();
    let (out, work) = run_local(&sb, "flow.yml", FLOW_PLAY, &[]);
    out.assert_code(0);
    let piped = result(&out, "piped", &work);
    let classic = result(&out, "classic", &work);
    assert_eq!(at(&piped, "stat/isdir"), true);
    assert_eq!(at(&piped, "stat/mode"), at(&classic, "stat/mode"));
    // The classic flow made its directory private and removed it; kept files stay.
    // Beside them is the cache of unpacked payloads.
    let task_dirs = |dir: &str| -> Vec<PathBuf> {
        std::fs::read_dir(work.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| !p.ends_with("sandball-ansiballz"))
            .collect()
    };
    assert!(work.join("remote/sandball-ansiballz").is_dir());
    let remote = task_dirs("remote");
    assert!(remote.is_empty(), "{remote:?}");
    let kept = task_dirs("kept");
    assert_eq!(kept.len(), 1, "{kept:?}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&kept[0]).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "the module directory is private");
    assert!(kept[0].join("AnsiballZ_ping.py").is_file());
    assert_eq!(
        at(&result(&out, "environment", &work), "stdout"),
        "hi 'there'"
    );
}

/// A module that returns facts of every kind: plain, `ansible_`-prefixed,
/// `ansible_local`, and ones that would steer the connection.
const FACTS_MODULE: &str = r#"#!/usr/bin/python
# WANT_JSON
import json
print(json.dumps({"changed": False, "ansible_facts": {
    "foo": 1, "ansible_bar": 2, "ansible_local": {"x": 3},
    "ansible_python_interpreter": "/evil", "ansible_connection": "evil",
    "ansible_become_user": "evil", "ansible_ssh_host_key_x": "kept",
    "ansible_remote_tmp": "kept", "ansible_custom_interpreter": "evil",
}}))
"#;

const FACTS_PLAY: &str = r#"
- hosts: all
  gather_facts: false
  vars:
    sandball_legacy_modules: all
  tasks:
    - setup: {gather_subset: [min]}
    - factory:
    - name: facts
      debug:
        msg:
          - "{{ ansible_facts.distribution }}"
          - "{{ ansible_distribution }}"
          - "{{ ansible_facts['os_family'] }}"
          - "{{ ansible_facts.user_id }} {{ ansible_user_id }}"
          - "{{ foo | default('UNDEF') }}"
          - "{{ ansible_foo | default('UNDEF') }}"
          - "{{ ansible_bar | default('UNDEF') }}"
          - "{{ ansible_facts.foo | default('UNDEF') }}"
          - "{{ ansible_facts.bar | default('UNDEF') }}"
          - "{{ ansible_facts.ansible_bar | default('UNDEF') }}"
          - "{{ ansible_local | default('UNDEF') }}"
          - "{{ ansible_facts.ansible_local | default('UNDEF') }}"
          - "{{ ansible_facts.local | default('UNDEF') }}"
          - "{{ ansible_facts.python_interpreter | default('UNDEF') }}"
          - "{{ ansible_python_interpreter | default('UNDEF') }}"
          - "{{ ansible_connection | default('UNDEF') }}"
          - "{{ ansible_facts.connection | default('UNDEF') }}"
          - "{{ ansible_become_user | default('UNDEF') }}"
          - "{{ ansible_ssh_host_key_x | default('UNDEF') }}"
          - "{{ ansible_remote_tmp | default('UNDEF') }}"
          - "{{ ansible_custom_interpreter | default('UNDEF') }}"
          - "{{ hostvars[inventory_hostname].ansible_distribution }}"
          - "{{ hostvars[inventory_hostname].ansible_facts.distribution }}"
          - "{{ hostvars[inventory_hostname].ansible_facts.foo }}"
"#;

#[test]
fn facts_are_variables_and_in_ansible_facts_as_in_ansible() {
    let sb = Sandbox::new();
    sb.write("library/factory", FACTS_MODULE);
    sb.write(
        "inventory.ini",
        "[nodes]\nlocalhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n",
    );
    let pb = sb.write("facts.yml", FACTS_PLAY);
    let work = sb.dir("work");
    let ours = sb
        .play(&pb, &work, &["-v"])
        .env("SANDBALL_ANSIBLE_PYTHON", python_2_19())
        .run();
    ours.assert_no_panic();
    ours.assert_code(0);
    let inventory = sb.path().join("inventory.ini");
    let theirs = sb
        .ansible_playbook_in(
            &ansible_bin("ANSIBLE_BIN_DIR", "venv"),
            [
                "-i",
                inventory.to_str().unwrap_or_default(),
                pb.to_str().unwrap_or_default(),
                "-v",
            ],
        )
        .run();
    ours.assert_same_recap_as(&theirs);
    let a = result(&ours, "facts", &work);
    let mut b = result(&theirs, "facts", &work);
    // ansible-core lets a module's facts set `ansible_remote_tmp`, where the next
    // legacy module is then unpacked and run; sandball does not (a module could plant
    // code there): the only intended difference.
    assert_eq!(at(&b, "msg/19"), "kept", "{theirs}");
    b["msg"][19] = serde_json::json!("UNDEF");
    assert_eq!(a, b, "sandball:\n{ours}\nansible-playbook:\n{theirs}");
    assert_eq!(at(&a, "msg/4"), 1, "{a}");
    assert_eq!(at(&a, "msg/14"), "/usr/bin/python3", "{a}");
}

const CHOICE_PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: component
      ping:
    - name: legacy
      ping:
      vars: {sandball_legacy_modules: [ping]}
"#;

#[test]
fn the_choice_of_module_is_shown_at_vvv() {
    let sb = Sandbox::new();
    // run_local passes -v: with -vv more, that is -vvv.
    for (extra, shown) in [(&[][..], false), (&["-vv"][..], true)] {
        let (out, _) = run_local(&sb, "choice.yml", CHOICE_PLAY, extra);
        out.assert_code(0);
        let line = |task: &str, what: &str| {
            out.task_lines(task)
                .iter()
                .any(|l| l.starts_with("<localhost> Using module file ") && l.ends_with(what))
        };
        let component = line("component", "");
        let legacy = line(
            "legacy",
            "ping.py (legacy module, new-style Python (Ansiballz))",
        );
        assert_eq!((component, legacy), (shown, shown), "{out}");
        if shown {
            assert!(
                out.task_lines("component")
                    .iter()
                    .any(|l| l.contains("ping.wasm (sandball component, sha256 ")),
                "{out}"
            );
        }
    }
}

const BROKEN_PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: no interpreter
      ping:
      vars: {sandball_legacy_modules: all, ansible_python_interpreter: /nonexistent/python9}
      ignore_errors: true
    - name: traceback
      crash: {}
      ignore_errors: true
    - name: exit without failed
      exits: {}
      ignore_errors: true
    - name: junk around the json
      junk: {}
    - name: become
      ping:
      vars: {sandball_legacy_modules: all}
      become: true
      become_user: sandball-no-such-user
      ignore_errors: true
"#;

#[test]
fn failures_are_explained() {
    let sb = Sandbox::new();
    sb.write(
        "library/crash",
        "#!/usr/bin/python\n# WANT_JSON\nraise ValueError('boom')\n",
    );
    sb.write(
        "library/exits",
        "#!/bin/sh\necho '{\"changed\": true, \"msg\": \"half done\"}'\nexit 4\n",
    );
    sb.write(
        "library/junk",
        "#!/bin/sh\necho 'motd noise {'\necho '{\"changed\": false, \"answer\": 42}'\necho trailing noise\n",
    );
    let (out, work) = run_local(&sb, "broken.yml", BROKEN_PLAY, &[]);
    let r = |t: &str| result(&out, t, &work);
    // As ansible-core 2.19 words them.
    let missing = r("no interpreter");
    assert_eq!(
        at(&missing, "msg"),
        "The module interpreter '/nonexistent/python9' was not found."
    );
    assert_eq!(at(&missing, "rc"), 127);
    let crash = r("traceback");
    assert_eq!(
        at(&crash, "msg"),
        "Module result deserialization failed: No start of json char found"
    );
    assert!(
        at(&crash, "module_stderr")
            .as_str()
            .unwrap_or_default()
            .contains("ValueError: boom")
    );
    // A result is a result, whatever the exit status (ansible-core reads it so).
    let exits = r("exit without failed");
    assert!(!failed(&out, "exit without failed"), "{exits}");
    assert_eq!(at(&exits, "msg"), "half done");
    let junk = r("junk around the json");
    assert_eq!(at(&junk, "answer"), 42);
    // Said as a warning of its own, apart from the result.
    assert!(at(&junk, "warnings").is_null(), "{junk}");
    assert!(
        out.stderr
            .lines()
            .any(|l| l.starts_with("[WARNING]") && l.contains("trailing noise")),
        "{out}"
    );
    let become_ = r("become");
    assert!(failed(&out, "become"), "{become_}");
    assert!(
        at(&become_, "msg")
            .as_str()
            .unwrap_or_default()
            .contains("become (sudo to sandball-no-such-user) failed"),
        "{become_}"
    );
    assert_eq!(out.host("localhost").failed, 0, "{out}");
}

/// Legacy modules under become: to root and to an unprivileged user, piped and through
/// the classic flow (Ansiballz, WANT_JSON), with sudo and su.
const BECOME_PLAY: &str = r#"
- hosts: all
  gather_facts: false
  vars:
    sandball_legacy_modules: [command, file]
    ansible_pipelining: false
  tasks:
    - name: root piped
      command: id -un
      become: true
      vars: {ansible_pipelining: true}
    - name: root classic
      command: id -un
      become: true
    - name: user piped
      command: id -un
      become: true
      become_user: sandball-become
      vars: {ansible_pipelining: true}
    - name: user classic
      command: id -un
      become: true
      become_user: sandball-become
    - name: user su
      command: id -un
      become: true
      become_method: su
      become_user: sandball-become
    - name: user file
      file: {path: "{{ work }}/touched", state: touch}
      become: true
      become_user: sandball-become
    - name: user want json
      write_file_want_json: {dest: "{{ work }}/written", content: "x"}
      become: true
      become_user: sandball-become
    - name: not become
      command: id -un
    - name: counted
      command: id -un
      become: true
      become_user: sandball-become
      become_exe: "{{ work }}/counting-sudo"
      become_flags: "-H -S -n -E"
      loop: [1, 2, 3]
    - name: same user
      command: id -un
      become: true
      become_exe: "{{ work }}/counting-sudo"
"#;

/// A `become_exe` that logs each call, then runs sudo.
const COUNTING_SUDO: &str =
    "#!/bin/sh\necho \"$*\" >> \"$(dirname \"$0\")/sudo.log\"\nexec sudo \"$@\"\n";

#[test]
fn become_runs_legacy_modules_as_the_become_user() {
    if !sandball_e2e::users::become_user_ready() {
        return;
    }
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let sb = Sandbox::new();
    // The become user must reach the work directories.
    std::fs::set_permissions(sb.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    sb.write(
        "inventory.ini",
        "[nodes]\nlocalhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3 ansible_become_password=hunter2-not-shown\n",
    );
    let pb = sb.write("become.yml", BECOME_PLAY);
    let want_json = workspace_root().join("examples/modules/want_json");
    let want_json = want_json.to_str().unwrap_or_default();
    let mut runs = vec![];
    for (tool, work) in [("sandball", "work"), ("ansible", "ansible-work")] {
        let work = sb.dir(work);
        std::fs::set_permissions(&work, std::fs::Permissions::from_mode(0o777)).unwrap();
        let sudo = work.join("counting-sudo");
        std::fs::write(&sudo, COUNTING_SUDO).unwrap();
        std::fs::set_permissions(&sudo, std::fs::Permissions::from_mode(0o755)).unwrap();
        let out = if tool == "sandball" {
            sb.play(&pb, &work, &["-vvv", "-M", want_json])
                .env("SANDBALL_ANSIBLE_PYTHON", python_2_19())
                .run()
        } else {
            let inventory = sb.path().join("inventory.ini");
            let work_var = format!("work={}", work.display());
            sb.ansible_playbook_in(
                &ansible_bin("ANSIBLE_BIN_DIR", "venv"),
                [
                    "-i",
                    inventory.to_str().unwrap_or_default(),
                    pb.to_str().unwrap_or_default(),
                    "-e",
                    work_var.as_str(),
                    "-M",
                    want_json,
                    "-v",
                ],
            )
            // Ansible's default, so an unprivileged become user's files go to /var/tmp.
            .env("ANSIBLE_REMOTE_TEMP", "~/.ansible/tmp")
            .run()
        };
        out.assert_no_panic();
        runs.push((out, work));
    }
    let (ours, work) = &runs[0];
    let (theirs, theirs_work) = &runs[1];
    ours.assert_code(0);
    ours.assert_same_recap_as(theirs);
    for (task, who) in [
        ("root piped", "root"),
        ("root classic", "root"),
        ("user piped", "sandball-become"),
        ("user classic", "sandball-become"),
        ("user su", "sandball-become"),
        ("not become", "root"),
    ] {
        let a = result(ours, task, work);
        let b = result(theirs, task, theirs_work);
        assert_eq!(at(&a, "stdout"), who, "task {task}: {a}");
        assert_eq!(at(&a, "stdout"), at(&b, "stdout"), "task {task}: {b}");
    }
    let uid = sandball_e2e::users::become_uid();
    for name in ["touched", "written"] {
        assert_eq!(
            std::fs::metadata(work.join(name)).unwrap().uid(),
            uid,
            "{name}"
        );
    }
    assert!(
        !ours.stdout.contains("hunter2") && !ours.stderr.contains("hunter2"),
        "the become password was shown:\n{ours}"
    );
    // Whether sudo wants a password is asked once per host and become settings: one
    // probe and three runs; ansible-playbook runs sudo three times. Neither runs sudo
    // to become root as root.
    let calls = |w: &Path| {
        std::fs::read_to_string(w.join("sudo.log"))
            .unwrap()
            .lines()
            .count()
    };
    assert_eq!((calls(work), calls(theirs_work)), (4, 3));
    // `become_flags` reach sudo, as ansible-playbook passes them (it drops `-n` when
    // it has a password to give).
    for w in [work, theirs_work] {
        let log = std::fs::read_to_string(w.join("sudo.log")).unwrap();
        assert!(
            log.lines()
                .all(|l| l.starts_with("-H -S ") && l.contains(" -E ")),
            "{log}"
        );
    }
}

const SSH_PLAY: &str = r#"
- hosts: all
  gather_facts: false
  vars:
    sandball_legacy_modules: all
  tasks:
    - name: piped
      stat: {path: "{{ work }}"}
    - name: classic
      lineinfile: {path: "{{ work }}/over-ssh", line: "via {{ inventory_hostname }}", create: true}
      vars: {ansible_pipelining: false}
    - name: args file
      greet_oldstyle: {name: ssh}
"#;

#[test]
fn legacy_modules_run_over_ssh() {
    let sshd = sandball_e2e::sshd::Sshd::start();
    let sb = Sandbox::new();
    let cache = sb.dir("node-cache");
    sb.write(
        "inventory.ini",
        &format!(
            "[nodes]\n{}",
            sshd.host_line(
                "node1",
                &cache,
                "ansible_python_interpreter=/usr/bin/python3"
            )
        ),
    );
    let pb = sb.write("ssh.yml", SSH_PLAY);
    let work = sb.dir("work");
    let oldstyle = workspace_root().join("examples/modules/oldstyle");
    let out = sb
        .play(
            &pb,
            &work,
            &["-v", "-M", oldstyle.to_str().unwrap_or_default()],
        )
        .env("SANDBALL_ANSIBLE_PYTHON", python_2_19())
        .env("SANDBALL_SHIM", sandball_e2e::sshd::deployable_shim())
        .env("SSH_AUTH_SOCK", "")
        .limit(std::time::Duration::from_secs(300))
        .run();
    out.assert_no_panic();
    out.assert_code(0);
    assert_eq!(at(&result(&out, "piped", &work), "stat/isdir"), true);
    assert_eq!(at(&result(&out, "classic", &work), "changed"), true);
    assert_eq!(
        std::fs::read_to_string(work.join("over-ssh")).unwrap(),
        "via node1\n"
    );
    assert_eq!(
        at(&result(&out, "args file", &work), "greeting"),
        "Hello, ssh!"
    );
}

/// ansible-core is found as a user expects, with nothing set by hand: the Python
/// behind `ansible-playbook` on PATH (a venv, pipx) even when `python3` lacks it, else
/// `ANSIBLE_LIBRARY` pointing at ansible-core's own modules; `-v` says which was used.
#[test]
fn ansible_core_is_found_without_set_up() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    let work = sb.dir("work");
    let pb = sb.write(
        "find.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - name: core module\n      ansible.builtin.debconf: {name: tzdata}\n      register: t\n    - debug: {msg: \"{{ t.current is mapping }}\"}\n",
    );
    let venv_bin = ansible_bin("ANSIBLE_BIN_DIR", "venv");
    let bare_path = "/usr/local/bin:/usr/bin:/bin";
    // ansible-playbook alone on PATH (python3 there has no ansible-core).
    let bin = sb.dir("bin");
    std::os::unix::fs::symlink(
        venv_bin.join("ansible-playbook"),
        bin.join("ansible-playbook"),
    )
    .expect("a link to ansible-playbook");
    let out = sb
        .play(&pb, &work, &["-v"])
        .env("PATH", format!("{}:{bare_path}", bin.display()))
        .run();
    out.assert_no_panic().assert_code(0);
    out.assert_stdout_has("\"msg\": true");
    out.assert_stdout_has(&format!(
        "ansible-core for legacy modules: {}",
        ansible_package(&venv_bin)
            .canonicalize()
            .expect("the ansible package")
            .display()
    ));
    out.assert_stdout_has("(the Python of ");
    // ANSIBLE_LIBRARY naming ansible-core's modules, nothing on PATH.
    let modules = ansible_package(&venv_bin).join("modules");
    let out = sb
        .play(&pb, &work, &["-v"])
        .env("PATH", bare_path)
        .env("ANSIBLE_LIBRARY", &modules)
        .run();
    out.assert_no_panic().assert_code(0);
    out.assert_stdout_has("\"msg\": true");
    out.assert_stdout_has("(the library directory ");
    // Neither: refused before the run (as ansible-playbook refuses an unknown
    // module), saying what was looked for.
    let out = sb.play(&pb, &work, &[]).env("PATH", bare_path).run();
    out.assert_no_panic();
    assert_eq!(out.code, 4, "{out}");
    out.assert_stderr_has("no ansible-playbook on PATH");
}

/// The `ansible` package of the venv whose bin directory is `bin`.
fn ansible_package(bin: &Path) -> PathBuf {
    let lib = bin.parent().expect("the venv").join("lib");
    std::fs::read_dir(&lib)
        .expect("the venv's lib directory")
        .filter_map(Result::ok)
        .map(|e| e.path().join("site-packages/ansible"))
        .find(|p| p.join("module_utils/basic.py").is_file())
        .expect("ansible-core in the venv")
}

/// A new-style Python module that tells which process ran it and what it inherited.
const PROC_MODULE: &str = r#"#!/usr/bin/python
import os
import sys
from ansible.module_utils.basic import AnsibleModule


def main():
    m = AnsibleModule(argument_spec=dict(), supports_check_mode=True)
    m.exit_json(changed=False, pid=os.getpid(), ppid=os.getppid(), argv0=sys.argv[0],
                env=os.environ.get('SB_FORK', ''), stdin=sys.stdin.read())


if __name__ == '__main__':
    main()
"#;

const FORK_PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - {name: first, procinfo: }
    - {name: second, procinfo: }
    - name: with an environment
      procinfo:
      environment: {SB_FORK: "it's set"}
    - name: again with it
      procinfo:
      environment: {SB_FORK: "it's set"}
    - name: without the fork server
      procinfo:
      vars: {sandball_fork_server: false}
    - name: fails as a process does
      command: python3 -c 'import sys; sys.exit(3)'
      vars: {sandball_legacy_modules: all}
      ignore_errors: true
"#;

/// Piped Python modules are forked from one server per interpreter and environment in
/// the host's shim session: each run is a process of its own (as `python < script`
/// would start it), runs with the same environment share a parent, and the setting
/// turns the server off.
#[test]
fn piped_python_modules_fork_from_one_server_per_environment() {
    let sb = Sandbox::new();
    sb.write("library/procinfo.py", PROC_MODULE);
    let (out, work) = run_local(&sb, "fork.yml", FORK_PLAY, &[]);
    out.assert_code(0);
    let r = |task: &str| result(&out, task, &work);
    let (first, second) = (r("first"), r("second"));
    let (env1, env2, plain) = (
        r("with an environment"),
        r("again with it"),
        r("without the fork server"),
    );
    assert_ne!(first["pid"], second["pid"], "{first} {second}");
    assert_eq!(
        first["ppid"], second["ppid"],
        "one server: {first} {second}"
    );
    assert_eq!(first["env"], "");
    assert_eq!(first["stdin"], "", "the module's stdin is empty");
    assert_eq!(env1["env"], "it's set");
    assert_eq!(env1["ppid"], env2["ppid"], "{env1} {env2}");
    assert_ne!(
        env1["ppid"], first["ppid"],
        "another environment, another server"
    );
    assert_ne!(plain["ppid"], first["ppid"], "{plain} {first}");
    assert_eq!(first["argv0"], plain["argv0"]);
    let failed = r("fails as a process does");
    assert_eq!(failed["rc"], 3, "{failed}");
}

/// A new-style module failing with `fail_json(exception=…)`, as third-party modules do
/// around a missing library.
const EXCEPTION_MODULE: &str = r#"#!/usr/bin/python
from ansible.module_utils.basic import AnsibleModule
m = AnsibleModule(argument_spec=dict(mode=dict()))
m.warn('the library may be missing', help_text='Install it.')
m.deprecate('mode is old', version='9.0.0', collection_name='ns.col')
try:
    raise ValueError('inner')
except ValueError as e:
    if m.params['mode'] == 'given':
        m.fail_json(msg='the library is missing', exception=e)
    m.fail_json(msg='caught it')
"#;

/// A legacy module's own failure keeps its message, exception or not (only a crash is
/// 'Task failed: Module failed'), as under ansible-playbook; the error shown before it
/// says the exception's message after it, and the registered `exception` holds no
/// traceback (none was asked for), as ansible-core 2.19 keeps it. The module's warning
/// is registered as its text and shown with its help text; its deprecation is shown
/// once, after the word on how to turn them off, and registered as ansible-core
/// registers it.
#[test]
fn a_legacy_modules_failure_message_is_its_own() {
    let sb = Sandbox::new();
    sb.write(
        "inventory.ini",
        "[nodes]\nlocalhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n",
    );
    sb.write("library/failing.py", EXCEPTION_MODULE);
    let pb = sb.write(
        "fail.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - {name: given, failing: {mode: given}, ignore_errors: true, register: r}\n    - {name: implicit, failing: {mode: other}, ignore_errors: true}\n    - {name: registered, debug: {var: r.exception}}\n    - {name: warnings, debug: {var: r.warnings}}\n    - {name: deprecations, debug: {var: r.deprecations}}\n",
    );
    let work = sb.dir("work");
    let ours = sb
        .play(&pb, &work, &[])
        .env("SANDBALL_ANSIBLE_PYTHON", python_2_19())
        .run();
    ours.assert_no_panic();
    let fatal = |out: &Output, task: &str| -> String {
        out.task_lines(task)
            .into_iter()
            .find(|l| l.starts_with("fatal: "))
            .unwrap_or_else(|| panic!("no failure for {task}:\n{out}"))
            .to_string()
    };
    assert!(
        fatal(&ours, "given").contains(r#""msg": "the library is missing""#),
        "{ours}"
    );
    assert!(
        ours.task_lines("given")[0].ends_with("Module failed: the library is missing: inner"),
        "{ours}"
    );
    let warning = "[WARNING]: the library may be missing Install it.\n";
    let deprecation = "[WARNING]: Deprecation warnings can be disabled by setting `deprecation_warnings=False` in ansible.cfg.\n[DEPRECATION WARNING]: mode is old. This feature will be removed from collection 'ns.col' version 9.0.0.\n";
    assert_eq!(ours.stderr.matches(warning).count(), 1, "{ours}");
    assert_eq!(ours.stderr.matches(deprecation).count(), 1, "{ours}");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        // The harness turns deprecations off for ansible-playbook's other runs.
        let theirs = theirs.env("ANSIBLE_DEPRECATION_WARNINGS", "1").run();
        assert_eq!(theirs.stderr.matches(warning).count(), 1, "{theirs}");
        assert_eq!(theirs.stderr.matches(deprecation).count(), 1, "{theirs}");
        ours.assert_same_task_lines_as(
            &theirs,
            &[
                "given",
                "implicit",
                "registered",
                "warnings",
                "deprecations",
            ],
        );
    }
}

#[test]
fn unsandboxed_modules_are_named_in_one_line_and_each_at_v() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let pb = sb.write(
        "unsandboxed.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - debconf: {name: tzdata}\n    - debconf: {name: debconf}\n    - mount_facts: {include_aggregate_mounts: true}\n",
    );
    let work = sb.dir("work");
    let run = |flags: &[&str]| {
        let out = sb
            .play(&pb, &work, flags)
            .env("SANDBALL_ANSIBLE_PYTHON", python_2_19())
            .run();
        out.assert_no_panic().assert_code(0);
        out
    };
    let quiet = run(&[]);
    let warnings: Vec<&str> = quiet
        .stderr
        .lines()
        .filter(|l| l.contains("unsandboxed") || l.contains("not sandboxed"))
        .collect();
    assert_eq!(
        warnings.len(),
        1,
        "one line for the playbook, not one per task:\n{quiet}"
    );
    assert!(
        warnings[0].starts_with("[WARNING]: legacy (non-component) modules ran unsandboxed")
            && warnings[0].contains(": debconf, mount_facts ("),
        "{quiet}"
    );
    let verbose = run(&["-v"]);
    let each: Vec<&str> = verbose
        .stderr
        .lines()
        .filter(|l| l.contains("is a legacy (non-component) module"))
        .collect();
    assert_eq!(each.len(), 2, "one per module at -v:\n{verbose}");
    assert!(
        !verbose.stderr.contains("modules ran unsandboxed"),
        "{verbose}"
    );
}

const DISCOVERY_PLAY: &str = r#"
- hosts: alpha
  gather_facts: false
  vars: &fallback
    ansible_interpreter_python_fallback: [sandball-no-such-python, PYTHON]
  tasks:
    - name: no module
      debug: {msg: no discovery}
    - name: a component
      ping:
    - name: not discovered by a component
      debug: {msg: "{{ discovered_interpreter_python | default('not yet') }}"}
    - name: first Python module
      ping:
      vars: {sandball_legacy_modules: [ping]}
    - name: second module
      ping:
    - name: the fact
      debug: {var: discovered_interpreter_python}
- hosts: beta
  gather_facts: true
  gather_subset: ["!all"]
  vars: *fallback
  tasks:
    - name: gathered
      ping:
"#;

/// With no `ansible_python_interpreter` (nor `INTERPRETER_PYTHON`), the first Python
/// module a host runs looks for the names of `ansible_interpreter_python_fallback` in
/// order, warns about the one it found and returns it as the
/// `discovered_interpreter_python` fact, which the next modules use, as
/// ansible-playbook does. Components need no Python: a host that runs only components
/// (`ping`, gathering facts) is not probed and warned about, where ansible-core, all of
/// whose modules are Python, discovers at the first.
#[test]
fn python_is_discovered_at_a_hosts_first_python_module_as_ansible_core_discovers_it() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta"]);
    let python = python_2_19().display().to_string();
    let pb = sb.write("discovery.yml", &DISCOVERY_PLAY.replace("PYTHON", &python));
    let work = sb.dir("work");
    let ours = sb
        .play_with_core(&pb, &work, &["-v"])
        .env_remove("ANSIBLE_PYTHON_INTERPRETER")
        .run();
    ours.assert_code(0);
    let warning = |host: &str| {
        format!(
            "[WARNING]: Host '{host}' is using the discovered Python interpreter at '{python}', but future installation of another Python interpreter could cause a different interpreter to be discovered. See https://docs.ansible.com/ansible-core/2.19/reference_appendices/interpreter_discovery.html for more information.\n"
        )
    };
    assert_eq!(ours.stderr.matches(&warning("alpha")).count(), 1, "{ours}");
    assert_eq!(ours.stderr.matches(&warning("beta")).count(), 0, "{ours}");
    let fact = format!(r#""discovered_interpreter_python": "{python}""#);
    let shows_fact = |task: &str| ours.task_lines(task).iter().any(|l| l.contains(&fact));
    assert!(!shows_fact("a component"), "{ours}");
    ours.assert_stdout_has("\"msg\": \"not yet\"");
    assert!(shows_fact("first Python module"), "{ours}");
    let Some(theirs) = sb.ansible_play(&pb, &work, &["-v"]) else {
        return;
    };
    let theirs = theirs.env_remove("ANSIBLE_PYTHON_INTERPRETER").run();
    for host in ["alpha", "beta"] {
        assert_eq!(theirs.stderr.matches(&warning(host)).count(), 1, "{theirs}");
    }
    ours.assert_same_recap_as(&theirs)
        .assert_same_task_lines_as(
            &theirs,
            &["no module", "second module", "the fact", "gathered"],
        );
}
