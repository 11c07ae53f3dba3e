//! The built-in modules end to end: idempotence of file, copy, stat and command
//! (creates/removes), check mode and diff mode. Each test checks what was reported,
//! what is on disk, and (when `ANSIBLE_BIN_DIR` is set) that ansible-playbook reports
//! the same recap for the same playbook.

use sandball_e2e::tree::snapshot;
use sandball_e2e::{HostRecap, Output, Sandbox};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

fn counts(ok: u32, changed: u32) -> HostRecap {
    HostRecap {
        ok,
        changed,
        ..HostRecap::default()
    }
}

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .permissions()
        .mode()
        & 0o7777
}

fn write(p: &Path, text: &str, mode: u32) {
    std::fs::write(p, text).unwrap();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Runs `yaml` twice against localhost in a fresh work dir set up by `prepare`, and
/// checks each run's recap against ansible-playbook's for the same two runs (in a
/// work dir of its own). Returns sandball's two runs and the work dir.
fn run_twice(
    sb: &Sandbox,
    yaml: &str,
    prepare: impl Fn(&Path),
) -> (Output, Output, std::path::PathBuf) {
    sb.inventory(&["localhost"]);
    let pb = sb.write("play.yml", yaml);
    let work = sb.dir("work");
    prepare(&work);
    let first = sb.play(&pb, &work, &[]).run();
    first.assert_no_panic();
    let second = sb.play(&pb, &work, &[]).run();
    second.assert_no_panic();

    let reference = sb.dir("ansible-work");
    prepare(&reference);
    if let Some(theirs) = sb.ansible_play(&pb, &reference, &[]) {
        first.assert_same_recap_as(&theirs.run());
        let theirs = sb
            .ansible_play(&pb, &reference, &[])
            .expect("ansible ran once already");
        second.assert_same_recap_as(&theirs.run());
    }
    (first, second, work)
}

const FILE_PLAY: &str = r#"
- name: file states
  hosts: all
  gather_facts: false
  tasks:
    - name: a directory
      file:
        path: "{{ work }}/d"
        state: directory
        mode: "0750"

    - name: nested directories
      file:
        path: "{{ work }}/d/a/b"
        state: directory

    - name: touch a file
      file:
        path: "{{ work }}/d/t"
        state: touch

    - name: state=file only changes attributes
      file:
        path: "{{ work }}/d/t"
        state: file
        mode: "0600"

    - name: a symlink
      file:
        src: "{{ work }}/d/t"
        path: "{{ work }}/d/l"
        state: link

    - name: remove a file
      file:
        path: "{{ work }}/gone"
        state: absent

    - name: remove a tree, named with a trailing slash
      file:
        path: "{{ work }}/gone-tree/"
        state: absent

    - name: state=file does not create
      file:
        path: "{{ work }}/never"
        state: file
      register: never
      ignore_errors: true

    - name: the failure said why
      assert:
        that:
          - never is failed
          - "'is absent, cannot continue' in never.msg"
"#;

#[test]
fn file_states_are_idempotent_except_touch() {
    let sb = Sandbox::new();
    let prepare = |w: &Path| {
        std::fs::write(w.join("gone"), "x").unwrap();
        std::fs::create_dir_all(w.join("gone-tree/x/y")).unwrap();
        std::fs::write(w.join("gone-tree/x/y/z"), "z").unwrap();
    };
    let (first, second, work) = run_twice(&sb, FILE_PLAY, prepare);

    first.assert_code(0).assert_stdout_has("...ignoring");
    assert_eq!(
        first.host("localhost"),
        HostRecap {
            ignored: 1,
            ..counts(9, 7)
        },
        "{first}"
    );
    let d = work.join("d");
    assert!(d.is_dir());
    assert_eq!(mode(&d), 0o750);
    assert!(d.join("a/b").is_dir());
    let t = d.join("t");
    assert!(std::fs::symlink_metadata(&t).unwrap().is_file());
    assert_eq!(std::fs::metadata(&t).unwrap().len(), 0);
    assert_eq!(mode(&t), 0o600);
    assert_eq!(std::fs::read_link(d.join("l")).unwrap(), t);
    assert!(!work.join("gone").exists());
    assert!(!work.join("gone-tree").exists());
    assert!(!work.join("never").exists());

    // Only `touch` changes again (it always updates the times, as in Ansible).
    second.assert_code(0);
    assert_eq!(
        second.host("localhost"),
        HostRecap {
            ignored: 1,
            ..counts(9, 1)
        },
        "{second}"
    );
    assert_eq!(
        second.task_lines("touch a file"),
        vec!["changed: [localhost]"]
    );
    assert_eq!(second.task_lines("a symlink"), vec!["ok: [localhost]"]);
    assert_eq!(mode(&t), 0o600);
}

const ALIAS_PLAY: &str = r#"
- name: argument aliases
  hosts: all
  gather_facts: false
  tasks:
    - name: file with dest
      file:
        dest: "{{ work }}/by-dest"
        state: touch

    - name: file with name
      file:
        name: "{{ work }}/by-name"
        state: directory

    - name: a link with src and dest
      file:
        src: "{{ work }}/by-dest"
        dest: "{{ work }}/link"
        state: link

    - name: stat with name
      stat:
        name: "{{ work }}/by-dest"
      register: s

    - name: stat found it
      assert:
        that:
          - s.stat.exists and s.stat.isreg
"#;

/// An alias (`dest`, `name` for `path`) must get the grant its canonical argument gets.
#[test]
fn argument_aliases_are_granted_like_their_argument() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let pb = sb.write("play.yml", ALIAS_PLAY);
    let work = sb.dir("work");
    let out = sb.play(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(0);
    assert_eq!(out.host("localhost"), counts(5, 3), "{out}");
    assert!(work.join("by-dest").is_file() && work.join("by-name").is_dir());
    assert_eq!(
        std::fs::read_link(work.join("link")).unwrap(),
        work.join("by-dest")
    );
    let reference = sb.dir("ansible-work");
    if let Some(theirs) = sb.ansible_play(&pb, &reference, &[]) {
        out.assert_same_recap_as(&theirs.run());
    }
}

const COPY_PLAY: &str = r#"
- name: copy content
  hosts: all
  gather_facts: false
  vars:
    version: v1
  tasks:
    - name: write a file
      copy:
        content: "one\n"
        dest: "{{ work }}/c.txt"
        mode: "0640"

    - name: write it again in the same run
      copy:
        content: "one\n"
        dest: "{{ work }}/c.txt"
        mode: "0640"

    - name: force=no leaves an existing file alone
      copy:
        content: "other\n"
        dest: "{{ work }}/c.txt"
        force: false

    - name: a versioned file with backups
      copy:
        content: "{{ version }}\n"
        dest: "{{ work }}/b.txt"
        backup: true
"#;

fn backups(work: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(work)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("b.txt.") && n.ends_with('~'))
        .collect();
    names.sort();
    names
}

#[test]
fn copy_content_is_idempotent_and_backs_up_what_it_replaces() {
    let sb = Sandbox::new();
    let (first, second, work) = run_twice(&sb, COPY_PLAY, |_| {});

    first.assert_code(0);
    assert_eq!(first.host("localhost"), counts(4, 2), "{first}");
    assert_eq!(
        first.task_lines("write it again in the same run"),
        vec!["ok: [localhost]"]
    );
    assert_eq!(
        first.task_lines("force=no leaves an existing file alone"),
        vec!["ok: [localhost]"]
    );
    let c = work.join("c.txt");
    assert_eq!(std::fs::read_to_string(&c).unwrap(), "one\n");
    assert_eq!(mode(&c), 0o640);
    assert_eq!(std::fs::read_to_string(work.join("b.txt")).unwrap(), "v1\n");
    assert!(
        backups(&work).is_empty(),
        "nothing to back up on the first write"
    );

    second.assert_code(0);
    assert_eq!(second.host("localhost"), counts(4, 0), "{second}");

    let pb = sb.path().join("play.yml");
    let third = sb.play(&pb, &work, &["-e", "version=v2"]).run();
    third.assert_no_panic().assert_code(0);
    assert_eq!(third.host("localhost"), counts(4, 1), "{third}");
    assert_eq!(std::fs::read_to_string(work.join("b.txt")).unwrap(), "v2\n");
    let saved = backups(&work);
    assert_eq!(saved.len(), 1, "one backup of b.txt: {saved:?}");
    assert_eq!(
        std::fs::read_to_string(work.join(&saved[0])).unwrap(),
        "v1\n"
    );
}

const STAT_PLAY: &str = r#"
- name: stat
  hosts: all
  gather_facts: false
  tasks:
    - name: stat a file
      stat:
        path: "{{ work }}/s.txt"
      register: s

    - name: stat a missing path
      stat:
        path: "{{ work }}/missing"
      register: m

    - name: stat a directory
      stat:
        path: "{{ work }}"
      register: d

    - name: stat a symlink
      stat:
        path: "{{ work }}/s.link"
      register: l

    - name: stat says what is there
      assert:
        that:
          - s.stat.exists and s.stat.isreg and not s.stat.isdir
          - s.stat.size == 4
          - s.stat.mode == '0640'
          - s.stat.checksum == 'c7059bb19433cc3cabaa6236c83d56668a843dd2'
          - s.stat.path == work ~ '/s.txt'
          - not m.stat.exists
          - d.stat.exists and d.stat.isdir
          - l.stat.islnk and not l.stat.isreg
          - l.stat.lnk_source == work ~ '/s.txt'
          - s is not changed and m is not changed
"#;

#[test]
fn stat_reports_files_links_and_absence_without_changing_anything() {
    let sb = Sandbox::new();
    let prepare = |w: &Path| {
        write(&w.join("s.txt"), "one\n", 0o640);
        std::os::unix::fs::symlink(w.join("s.txt"), w.join("s.link")).unwrap();
    };
    let (first, second, work) = run_twice(&sb, STAT_PLAY, prepare);
    for run in [&first, &second] {
        run.assert_code(0);
        assert_eq!(run.host("localhost"), counts(5, 0), "{run}");
    }
    assert_eq!(
        std::fs::read_to_string(work.join("s.txt")).unwrap(),
        "one\n"
    );
    assert!(!work.join("missing").exists());
}

const COMMAND_PLAY: &str = r#"
- name: command
  hosts: all
  gather_facts: false
  tasks:
    - name: make a file once
      command:
        argv: [/usr/bin/touch, "{{ work }}/made"]
        creates: "{{ work }}/made"

    - name: remove a file while it is there
      command:
        cmd: /bin/rm {{ work }}/victim
        removes: "{{ work }}/victim"

    - name: always runs
      command: /bin/echo hello {{ inventory_hostname }}
      register: echo

    - name: stdin is fed to the program
      command:
        argv: [/bin/cat]
        stdin: fed in
      register: cat

    - name: chdir sets the working directory
      command:
        argv: [/bin/pwd]
        chdir: "{{ work }}"
      register: pwd

    - name: the programs said what they should
      assert:
        that:
          - echo.stdout == 'hello localhost'
          - echo.rc == 0
          - echo is changed
          - echo.cmd == ['/bin/echo', 'hello', 'localhost']
          - cat.stdout == 'fed in'
          - pwd.stdout == work
"#;

#[test]
fn command_creates_and_removes_make_it_idempotent() {
    let sb = Sandbox::new();
    let (first, second, work) = run_twice(&sb, COMMAND_PLAY, |w| {
        std::fs::write(w.join("victim"), "v").unwrap()
    });

    first.assert_code(0);
    assert_eq!(first.host("localhost"), counts(6, 5), "{first}");
    assert!(work.join("made").is_file());
    assert!(!work.join("victim").exists());

    second.assert_code(0);
    assert_eq!(second.host("localhost"), counts(6, 3), "{second}");
    assert_eq!(
        second.task_lines("make a file once"),
        vec!["ok: [localhost]"]
    );
    assert_eq!(
        second.task_lines("remove a file while it is there"),
        vec!["ok: [localhost]"]
    );
}

const CHANGES_PLAY: &str = r#"
- name: changes
  hosts: all
  gather_facts: false
  tasks:
    - name: create a directory
      file:
        path: "{{ work }}/newdir"
        state: directory

    - name: touch a file
      file:
        path: "{{ work }}/touched"
        state: touch

    - name: remove a file
      file:
        path: "{{ work }}/keep"
        state: absent

    - name: write a new file
      copy:
        content: "new\n"
        dest: "{{ work }}/new.txt"

    - name: rewrite a file
      copy:
        content: "two\n"
        dest: "{{ work }}/c.txt"

    - name: run a command
      command:
        argv: [/usr/bin/touch, "{{ work }}/by-command"]
        creates: "{{ work }}/by-command"

    - name: already as wanted
      copy:
        content: "same\n"
        dest: "{{ work }}/same.txt"
"#;

fn prepare_changes(w: &Path) {
    write(&w.join("keep"), "keep\n", 0o644);
    write(&w.join("c.txt"), "one\n", 0o644);
    write(&w.join("same.txt"), "same\n", 0o644);
}

#[test]
fn check_mode_reports_changes_and_makes_none() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let pb = sb.write("play.yml", CHANGES_PLAY);
    let work = sb.dir("work");
    prepare_changes(&work);
    let before = snapshot(&work);

    let out = sb.play(&pb, &work, &["-C"]).run();
    out.assert_no_panic().assert_code(0);
    assert_eq!(out.host("localhost"), counts(7, 6), "{out}");
    assert_eq!(
        out.task_lines("rewrite a file"),
        vec!["changed: [localhost]"]
    );
    assert_eq!(out.task_lines("already as wanted"), vec!["ok: [localhost]"]);
    assert_eq!(
        snapshot(&work),
        before,
        "check mode changed the disk:\n{out}"
    );

    // With --diff as well, the would-be change is shown, and still not made.
    let out = sb.play(&pb, &work, &["--check", "--diff"]).run();
    out.assert_no_panic().assert_code(0);
    let lines = out.task_lines("rewrite a file");
    assert!(lines.contains(&"-one") && lines.contains(&"+two"), "{out}");
    assert_eq!(
        snapshot(&work),
        before,
        "check mode changed the disk:\n{out}"
    );

    let reference = sb.dir("ansible-work");
    prepare_changes(&reference);
    if let Some(theirs) = sb.ansible_play(&pb, &reference, &["-C"]) {
        sb.play(&pb, &work, &["-C"])
            .run()
            .assert_same_recap_as(&theirs.run());
    }
}

#[test]
fn diff_mode_shows_what_changed() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let pb = sb.write("play.yml", CHANGES_PLAY);
    let work = sb.dir("work");
    prepare_changes(&work);

    let out = sb.play(&pb, &work, &["-D"]).run();
    out.assert_no_panic().assert_code(0);
    let rewrite = out.task_lines("rewrite a file");
    let header = |prefix: &str| rewrite.iter().any(|l| l.starts_with(prefix));
    assert!(
        header("--- before") && header("+++ after"),
        "no diff header:\n{out}"
    );
    assert!(
        rewrite.contains(&"-one") && rewrite.contains(&"+two"),
        "{out}"
    );
    assert_eq!(rewrite.last(), Some(&"changed: [localhost]"), "{out}");
    let mkdir = out.task_lines("create a directory").join("\n");
    assert!(
        mkdir.contains("-    \"state\": \"absent\"")
            && mkdir.contains("+    \"state\": \"directory\""),
        "file shows its state change:\n{out}"
    );
    assert_eq!(out.task_lines("already as wanted"), vec!["ok: [localhost]"]);
    assert_eq!(
        std::fs::read_to_string(work.join("c.txt")).unwrap(),
        "two\n"
    );
    assert!(work.join("newdir").is_dir() && !work.join("keep").exists());
}

const REGISTER_PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: one result
      file: {path: "{{ work }}/r.txt", state: touch}
      register: one
    - name: a loop
      stat: {path: "{{ item }}"}
      loop: ["{{ work }}/r.txt"]
      register: looped
    - name: registered keys
      debug:
        msg: "{{ one.keys() | sort }} {{ looped.keys() | sort }} {{ 'invocation' in looped.results[0] }}"
"#;

/// A registered result keeps no `invocation` (a loop's items keep theirs), as in
/// ansible-core.
#[test]
fn registered_results_keep_no_invocation() {
    let sb = Sandbox::new();
    sb.inventory_with_python(&["localhost"]);
    let pb = sb.write("play.yml", REGISTER_PLAY);
    sandball_e2e::compare::same_as_ansible(&sb, &pb, &["registered keys"]);
    let out = sb.play(&pb, &sb.dir("work"), &[]).run();
    out.assert_stdout_has(
        "'size', 'state', 'uid'] ['changed', 'msg', 'results', 'skipped'] True\"",
    );
}
