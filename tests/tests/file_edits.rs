//! The file-editing components (`lineinfile`, `replace`, `blockinfile`) against
//! ansible-core's modules of the
//! same name: one playbook of scenarios run under sandball and ansible-playbook 2.19,
//! each task's result fields compared, then every file the two runs left, byte for
//! byte; a second run of the edits changes nothing in either.

use sandball_e2e::Sandbox;
use sandball_e2e::compare::{ansible_bin, both_run};
use std::path::Path;

/// The `lineinfile` scenarios: each edits a file the play writes first.
const LINEINFILE_PLAY: &str = r##"
- hosts: all
  gather_facts: false
  tasks:
    - name: files to edit
      copy:
        dest: "{{ work }}/{{ item.name }}"
        content: "{{ item.text }}"
      loop:
        - {name: conf, text: "[main]\nport=1\n# port=0\nname=x\n[extra]\nport=2\n"}
        - {name: nonl, text: "a\nb"}
        - {name: listen, text: "listen 80;\nlisten 81;\n"}
        - {name: comments, text: "#a\nb\n  #c\nd\n"}
      loop_control: {label: "{{ item.name }}"}

    - name: add at the end
      lineinfile: {path: "{{ work }}/nonl", line: c}
    - name: add at the end again
      lineinfile: {path: "{{ work }}/nonl", line: c}
    - name: replace the last match
      lineinfile: {path: "{{ work }}/conf", regexp: '^port=', line: port=9}
    - name: replace the first match
      lineinfile: {path: "{{ work }}/conf", regexp: '^port=', line: port=8, firstmatch: true}
    - name: dollar before the newline
      lineinfile: {path: "{{ work }}/conf", regexp: '^name=x$', line: name=y}
    - name: search string
      lineinfile: {path: "{{ work }}/conf", search_string: '# port=', line: '# port=7'}
    - name: insert after a section
      lineinfile: {path: "{{ work }}/conf", line: debug=1, insertafter: '^\[main\]'}
    - name: insert after a section again
      lineinfile: {path: "{{ work }}/conf", line: debug=1, insertafter: '^\[main\]'}
    - name: insert before the last section
      lineinfile: {path: "{{ work }}/conf", line: '; extra follows', insertbefore: '^\['}
    - name: insert before the first section
      lineinfile: {path: "{{ work }}/conf", line: '; top', insertbefore: '^\[', firstmatch: true}
    - name: insert at the start
      lineinfile: {path: "{{ work }}/conf", line: '; very top', insertbefore: BOF}
    - name: insertafter matching nothing
      lineinfile: {path: "{{ work }}/conf", line: last=1, insertafter: '^nothing'}
    - name: backrefs
      lineinfile: {path: "{{ work }}/listen", regexp: '^listen (\d+);$', line: 'listen \1 ssl;', backrefs: true}
    - name: backrefs again
      lineinfile: {path: "{{ work }}/listen", regexp: '^listen (\d+);$', line: 'listen \1 ssl;', backrefs: true}
    - name: backrefs with no match
      lineinfile: {path: "{{ work }}/listen", regexp: '^nothing (\d+)', line: 'x \1', backrefs: true}
    - name: lookahead
      lineinfile: {path: "{{ work }}/listen", regexp: '^listen (?!80)\d+', line: listen 82 ssl;}
    - name: remove by pattern
      lineinfile: {path: "{{ work }}/comments", regexp: '^\s*#', state: absent}
    - name: remove by line
      lineinfile: {path: "{{ work }}/comments", line: d, state: absent}
    - name: remove what is not there
      lineinfile: {path: "{{ work }}/comments", line: zzz, state: absent}
    - name: remove from a missing file
      lineinfile: {path: "{{ work }}/missing", line: zzz, state: absent}
    - name: create with a mode
      lineinfile: {path: "{{ work }}/new/dir/file", line: hello, create: true, mode: "0640"}
    - name: create again
      lineinfile: {path: "{{ work }}/new/dir/file", line: hello, create: true, mode: "0640"}
    - name: a missing file without create
      lineinfile: {path: "{{ work }}/absent-file", line: hello}
      ignore_errors: true
    - name: a missing directory without create
      lineinfile: {path: "{{ work }}/nodir/file", line: hello}
      ignore_errors: true
    - name: a directory
      lineinfile: {path: "{{ work }}/new", line: hello}
      ignore_errors: true
    - name: backrefs without regexp
      lineinfile: {path: "{{ work }}/conf", line: x, backrefs: true}
      ignore_errors: true
    - name: absent without anything to find
      lineinfile: {path: "{{ work }}/conf", state: absent}
      ignore_errors: true
    - name: validation refuses
      lineinfile: {path: "{{ work }}/conf", line: bad, validate: 'grep -q nothing-like-this %s'}
      ignore_errors: true
    - name: validation passes
      lineinfile: {path: "{{ work }}/conf", line: good, validate: 'grep -q port %s'}
    - name: check mode
      lineinfile: {path: "{{ work }}/conf", line: not-written}
      check_mode: true
    - name: check mode creating
      lineinfile: {path: "{{ work }}/later/file", line: x, create: true}
      check_mode: true
    - name: attributes only
      lineinfile: {path: "{{ work }}/nonl", line: c, mode: "0600"}
"##;

const LINEINFILE_FIELDS: &[(&str, &[&str])] = &[
    ("add at the end", &["changed", "msg", "backup"]),
    ("add at the end again", &["changed", "msg"]),
    ("replace the last match", &["changed", "msg"]),
    ("replace the first match", &["changed", "msg"]),
    ("dollar before the newline", &["changed", "msg"]),
    ("search string", &["changed", "msg"]),
    ("insert after a section", &["changed", "msg"]),
    ("insert after a section again", &["changed", "msg"]),
    ("insert before the last section", &["changed", "msg"]),
    ("insert before the first section", &["changed", "msg"]),
    ("insert at the start", &["changed", "msg"]),
    ("insertafter matching nothing", &["changed", "msg"]),
    ("backrefs", &["changed", "msg"]),
    ("backrefs again", &["changed", "msg"]),
    ("backrefs with no match", &["changed", "msg"]),
    ("lookahead", &["changed", "msg"]),
    ("remove by pattern", &["changed", "msg", "found"]),
    ("remove by line", &["changed", "msg", "found"]),
    ("remove what is not there", &["changed", "msg", "found"]),
    ("remove from a missing file", &["changed", "msg", "found"]),
    ("create with a mode", &["changed", "msg"]),
    ("create again", &["changed", "msg"]),
    ("a missing file without create", &["failed", "msg", "rc"]),
    (
        "a missing directory without create",
        &["failed", "msg", "rc"],
    ),
    ("a directory", &["failed", "msg", "rc"]),
    ("backrefs without regexp", &["failed", "msg"]),
    ("absent without anything to find", &["failed", "msg"]),
    ("validation refuses", &["failed", "msg"]),
    ("validation passes", &["changed", "msg"]),
    ("check mode", &["changed", "msg"]),
    ("check mode creating", &["changed", "msg", "backup"]),
    ("attributes only", &["changed", "msg"]),
];

/// Every regular file below `dir`, by relative path, with its content.
fn files(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let name = path.strip_prefix(dir).unwrap().display().to_string();
                out.push((name, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn lineinfile_matches_ansible_core() {
    matches_ansible_core(LINEINFILE_PLAY, LINEINFILE_FIELDS);
}

/// The `replace` scenarios.
const REPLACE_PLAY: &str = r##"
- hosts: all
  gather_facts: false
  tasks:
    - name: files to edit
      copy:
        dest: "{{ work }}/{{ item.name }}"
        content: "{{ item.text }}"
      loop:
        - {name: conf, text: "x=1\n[s]\nx=2\nname = old\n[t]\nx=3\n"}
        - {name: hosts, text: "10.0.0.1 alpha\n10.0.0.2 beta\n"}
      loop_control: {label: "{{ item.name }}"}

    - name: every line
      replace: {path: "{{ work }}/conf", regexp: '^x=(\d)$', replace: 'x=\1\1'}
    - name: every line again
      replace: {path: "{{ work }}/conf", regexp: '^x=(\d)$', replace: 'x=\1\1'}
    - name: named groups
      replace: {path: "{{ work }}/hosts", regexp: '^(?P<ip>[\d.]+)\s+(?P<name>\w+)$', replace: '\g<name> \g<ip>'}
    - name: after a section
      replace: {path: "{{ work }}/conf", regexp: '^x=', replace: 'y=', after: '\[s\]'}
    - name: before a section
      replace: {path: "{{ work }}/conf", regexp: '^y=', replace: 'z=', before: '\[t\]'}
    - name: between two
      replace: {path: "{{ work }}/conf", regexp: 'old', replace: 'new', after: '\[s\]', before: '\[t\]'}
    - name: a section that is not there
      replace: {path: "{{ work }}/conf", regexp: 'x', after: 'nothing-like-this'}
    - name: nothing matches
      replace: {path: "{{ work }}/conf", regexp: 'nothing-like-this', replace: x}
    - name: removing lines
      replace: {path: "{{ work }}/conf", regexp: '^name.*\n'}
    - name: check mode
      replace: {path: "{{ work }}/hosts", regexp: 'alpha', replace: gamma}
      check_mode: true
    - name: a mode
      replace: {path: "{{ work }}/hosts", regexp: 'beta', replace: delta, mode: "0600"}
    - name: a missing file
      replace: {path: "{{ work }}/missing", regexp: x}
      ignore_errors: true
    - name: validation refuses
      replace: {path: "{{ work }}/hosts", regexp: 'delta', replace: epsilon, validate: 'grep -q nothing-like-this %s'}
      ignore_errors: true
"##;

const REPLACE_FIELDS: &[(&str, &[&str])] = &[
    ("every line", &["changed", "msg", "rc"]),
    ("every line again", &["changed", "msg", "rc"]),
    ("named groups", &["changed", "msg"]),
    ("after a section", &["changed", "msg"]),
    ("before a section", &["changed", "msg"]),
    ("between two", &["changed", "msg"]),
    ("a section that is not there", &["changed", "msg", "rc"]),
    ("nothing matches", &["changed", "msg"]),
    ("removing lines", &["changed", "msg"]),
    ("check mode", &["changed", "msg"]),
    ("a mode", &["changed", "msg"]),
    ("a missing file", &["failed", "msg", "rc"]),
    ("validation refuses", &["failed", "msg"]),
];

/// The `blockinfile` scenarios.
const BLOCKINFILE_PLAY: &str = r##"
- hosts: all
  gather_facts: false
  tasks:
    - name: files to edit
      copy:
        dest: "{{ work }}/{{ item.name }}"
        content: "{{ item.text }}"
      loop:
        - {name: conf, text: "[a]\nk=v\n[b]\nk=w"}
        - {name: other, text: "line\n"}
      loop_control: {label: "{{ item.name }}"}

    - name: at the end
      blockinfile: {path: "{{ work }}/conf", block: "x=1\ny=2"}
    - name: at the end again
      blockinfile: {path: "{{ work }}/conf", block: "x=1\ny=2"}
    - name: updated in place
      blockinfile: {path: "{{ work }}/conf", block: "x=3", insertbefore: BOF}
    - name: a second block after a section
      blockinfile:
        path: "{{ work }}/conf"
        marker: "; {mark} extra"
        block: "z=1"
        insertafter: '^\[a\]'
        prepend_newline: true
        append_newline: true
    - name: a third before the last section
      blockinfile: {path: "{{ work }}/conf", marker: "; {mark} third", marker_begin: start, marker_end: stop, block: "t=1", insertbefore: '^\['}
    - name: removed
      blockinfile: {path: "{{ work }}/conf", state: absent}
    - name: removed again
      blockinfile: {path: "{{ work }}/conf", state: absent}
    - name: empty block removes
      blockinfile: {path: "{{ work }}/conf", marker: "; {mark} third", marker_begin: start, marker_end: stop, block: ""}
    - name: at the start
      blockinfile: {path: "{{ work }}/other", block: first, insertbefore: BOF}
    - name: created
      blockinfile: {path: "{{ work }}/new/file", block: hello, create: true, mode: "0640"}
    - name: created again
      blockinfile: {path: "{{ work }}/new/file", block: hello, create: true, mode: "0640"}
    - name: check mode creating
      blockinfile: {path: "{{ work }}/later/file", block: x, create: true}
      check_mode: true
    - name: a missing file
      blockinfile: {path: "{{ work }}/missing", block: x}
      ignore_errors: true
    - name: absent from a missing file
      blockinfile: {path: "{{ work }}/missing", state: absent, create: true}
"##;

const BLOCKINFILE_FIELDS: &[(&str, &[&str])] = &[
    ("at the end", &["changed", "msg"]),
    ("at the end again", &["changed", "msg"]),
    ("updated in place", &["changed", "msg"]),
    ("a second block after a section", &["changed", "msg"]),
    ("a third before the last section", &["changed", "msg"]),
    ("removed", &["changed", "msg"]),
    ("removed again", &["changed", "msg"]),
    ("empty block removes", &["changed", "msg"]),
    ("at the start", &["changed", "msg"]),
    ("created", &["changed", "msg"]),
    ("created again", &["changed", "msg"]),
    ("check mode creating", &["changed", "msg"]),
    ("a missing file", &["failed", "msg", "rc"]),
    ("absent from a missing file", &["changed", "msg"]),
];

/// Runs `play` under both tools, compares the fields, then the files left.
fn matches_ansible_core(play: &str, fields: &[(&str, &[&str])]) {
    let sb = Sandbox::new();
    let (ours, _, ours_work, theirs_work) =
        both_run(&sb, &ansible_bin("ANSIBLE_BIN_DIR", "venv"), play, fields);
    assert!(!ours.stdout.contains("legacy"), "{ours}");
    let (a, b) = (files(&ours_work), files(&theirs_work));
    assert!(a.len() > 1, "the play left its files: {a:?}");
    assert_eq!(a, b, "the files differ:\n{ours}");
}

#[test]
fn replace_matches_ansible_core() {
    matches_ansible_core(REPLACE_PLAY, REPLACE_FIELDS);
}

#[test]
fn blockinfile_matches_ansible_core() {
    matches_ansible_core(BLOCKINFILE_PLAY, BLOCKINFILE_FIELDS);
}

/// Relative paths, in the working directory and below it.
const RELATIVE_PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: a directory below
      file: {path: rel/sub, state: directory}
    - name: a line in a file below
      lineinfile: {path: rel/sub/a.txt, line: hello, create: true}
    - name: a copy below
      copy: {dest: rel/sub/b.txt, content: "b\n"}
    - name: stat below
      stat: {path: rel/sub/b.txt}
      register: below
    - name: a file here
      copy: {dest: here.txt, content: "h\n"}
    - name: what stat saw
      debug: {msg: "{{ below.stat.exists }} {{ below.stat.size }}"}
"#;

#[test]
fn relative_paths_start_in_the_working_directory_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let pb = sb.write("relative.yml", RELATIVE_PLAY);
    let work = sb.dir("work");
    let created = || {
        (
            std::fs::read_to_string(sb.path().join("rel/sub/a.txt")).ok(),
            std::fs::read_to_string(sb.path().join("rel/sub/b.txt")).ok(),
            std::fs::read_to_string(sb.path().join("here.txt")).ok(),
        )
    };
    let first = sb.play(&pb, &work, &[]).run();
    first.assert_no_panic().assert_code(0);
    first.assert_stdout_has("\"msg\": \"True 2\"");
    let second = sb.play(&pb, &work, &[]).run();
    second.assert_no_panic().assert_code(0);
    let ours = created();
    assert_eq!(
        ours,
        (
            Some("hello\n".into()),
            Some("b\n".into()),
            Some("h\n".into())
        )
    );
    std::fs::remove_dir_all(sb.path().join("rel")).unwrap();
    std::fs::remove_file(sb.path().join("here.txt")).unwrap();
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        first.assert_same_recap_as(&theirs.run());
        let again = sb.ansible_play(&pb, &work, &[]).expect("ran once already");
        second.assert_same_recap_as(&again.run());
        assert_eq!(created(), ours);
    }
}
