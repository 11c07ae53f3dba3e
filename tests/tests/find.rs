//! The `find` component against ansible-core 2.19's module of the same name: the play
//! builds a tree (files of chosen sizes, modes and modification times, hidden
//! entries, nested directories, symlinks inside and out of the tree, a file that is
//! not UTF-8), then searches it in every way the module offers under sandball and
//! ansible-playbook; each task's whole result is compared, `files` in order, but for
//! the fields that cannot agree between two trees made at different moments (see
//! [`VOLATILE`]). A search that follows a link out of its tree fails under sandball
//! naming the grant it needs, and finds what ansible-core finds once granted.

use sandball_e2e::Sandbox;
use sandball_e2e::compare::{ansible_bin, both_run, result};
use serde_json::Value;

/// The tree, then the searches (`{{ work }}/tree` is searched; `outside` is not). The
/// link out of the tree is alone in `edge`: sandball cannot tell whether a link's
/// target outside the granted tree is a directory without a grant there, so it lists
/// such a link among the files where `os.walk` lists it among the directories — its
/// place among its siblings would differ (its own entry does not).
const PLAY: &str = r##"
- hosts: all
  gather_facts: false
  vars:
    tree: "{{ work }}/tree"
  tasks:
    - name: directories
      file: {path: "{{ work }}/{{ item }}", state: directory}
      loop: [tree, tree/sub, tree/sub/deeper, tree/sub/.inner, tree/enc, tree/edge, outside]
    - name: files
      copy: {dest: "{{ work }}/{{ item.name }}", content: "{{ item.text }}", mode: "{{ item.mode }}"}
      loop:
        - {name: tree/a.txt, text: "hello\n", mode: "0644"}
        - {name: tree/b.log, text: "{{ 'x' * 2048 }}", mode: "0600"}
        - {name: tree/.hidden, text: "secret\n", mode: "0640"}
        - {name: tree/run.sh, text: "#!/bin/sh\n", mode: "4755"}
        - {name: tree/sub/c.txt, text: "first\nkey=value\n", mode: "0644"}
        - {name: tree/sub/deeper/d.txt, text: "d\n", mode: "0444"}
        - {name: tree/sub/.inner/e.txt, text: "e\n", mode: "0644"}
        - {name: tree/enc/good.txt, text: "key=1\n", mode: "0644"}
        - {name: outside/o.txt, text: "o\n", mode: "0644"}
      loop_control: {label: "{{ item.name }}"}
    - name: a file that is not UTF-8
      shell: printf 'key=\377\n' > {{ tree }}/enc/bad.txt
    - name: links
      file: {path: "{{ tree }}/{{ item.name }}", src: "{{ item.src }}", state: link, force: "{{ item.force | default(false) }}"}
      loop:
        - {name: link, src: a.txt}
        - {name: sublink, src: sub}
        - {name: sub/deeplink, src: deeper}
        - {name: edge/outlink, src: "{{ work }}/outside"}
        - {name: dangling, src: nowhere, force: true}
    - name: times
      file:
        path: "{{ tree }}/{{ item.name }}"
        modification_time: "{{ item.when }}"
        access_time: "{{ item.when }}"
      loop:
        - {name: a.txt, when: "202001011200.00"}
        - {name: b.log, when: "202401011200.00"}
        - {name: .hidden, when: "202001011200.00"}
        - {name: run.sh, when: "202401011200.00"}
        - {name: sub/c.txt, when: "202001011200.00"}
        - {name: sub/deeper/d.txt, when: "202001011200.00"}
        - {name: sub/.inner/e.txt, when: "202001011200.00"}
        - {name: enc/good.txt, when: "202001011200.00"}
        - {name: enc/bad.txt, when: "202001011200.00"}
      loop_control: {label: "{{ item.name }}"}

    - name: files on top
      find: {paths: "{{ tree }}"}
    - name: everything
      find: {paths: "{{ tree }}", file_type: any, recurse: true, hidden: true}
    - name: directories
      find: {paths: "{{ tree }}", file_type: directory, recurse: true}
    - name: links only
      find: {path: "{{ tree }}", file_type: link, hidden: true}
    - name: globs and excludes
      find: {paths: "{{ tree }}", patterns: "*.txt,*.log", excludes: "b*", recurse: true}
    - name: globs as a list
      find: {paths: "{{ tree }}", patterns: ["[ab].*", "r?n.sh"]}
    - name: regexes
      find: {paths: "{{ tree }}", patterns: ['[a-c]\.', 'run'], use_regex: true, recurse: true}
    - name: regex excludes
      find: {paths: "{{ tree }}", excludes: ['.*\.txt'], use_regex: true, file_type: any}
    - name: contains at a line start
      find: {paths: "{{ tree }}/sub", contains: 'key=', recurse: true}
    - name: contains inside a line
      find: {paths: "{{ tree }}/sub", contains: '=val', recurse: true}
    - name: contains in the whole file
      find: {paths: "{{ tree }}/sub", contains: 'first\nkey', read_whole_file: true, recurse: true}
    - name: not UTF-8
      find: {paths: ["{{ tree }}/enc", "{{ tree }}/sub"], contains: 'key', recurse: true}
    - name: latin-1
      find: {paths: "{{ tree }}/enc", contains: 'key=.$', encoding: latin-1}
    - name: old files
      find: {paths: "{{ tree }}", age: 104w, recurse: true, hidden: true}
    - name: young files
      find: {paths: "{{ tree }}", age: -104w, age_stamp: mtime}
    - name: by access time
      find: {paths: "{{ tree }}", age: 104w, age_stamp: atime}
    - name: big files
      find: {paths: "{{ tree }}", size: 1k}
    - name: small files
      find: {paths: "{{ tree }}", size: -10b, recurse: true}
    - name: size of any
      find: {paths: "{{ tree }}", size: 1k, file_type: any}
    - name: exact mode
      find: {paths: "{{ tree }}", mode: "0600", recurse: true}
    - name: symbolic mode
      find: {paths: "{{ tree }}", mode: "u=rw,g=r,o=r", recurse: true}
    - name: any of the bits
      find: {paths: "{{ tree }}", mode: "4000", exact_mode: false, file_type: any}
    - name: checksums
      find: {paths: "{{ tree }}", get_checksum: true}
    - name: sha256 checksums of any
      find: {paths: "{{ tree }}/sub", get_checksum: true, checksum_algorithm: sha256, file_type: any, recurse: true}
    - name: two levels
      find: {paths: "{{ tree }}", recurse: true, depth: 2, file_type: any}
    - name: depth without recurse
      find: {paths: "{{ tree }}", depth: 3, file_type: any}
    - name: a limit
      find: {paths: "{{ tree }}", recurse: true, file_type: any, limit: 3}
    - name: a limit over two paths
      find: {paths: ["{{ tree }}/sub", "{{ tree }}"], recurse: true, limit: 1}
    - name: following links inside the tree
      find: {paths: "{{ tree }}/sub/", recurse: true, follow: true, patterns: "d.txt"}
    - name: missing paths and a file
      find: {paths: ["{{ work }}/nothing", "{{ tree }}/a.txt", "{{ tree }}/sub"]}
    - name: relative normalised paths
      find: {paths: "{{ tree }}/sub/../sub/./deeper"}
    - name: check mode
      find: {paths: "{{ tree }}", file_type: directory}
      check_mode: true
    - name: a bad regex
      find: {paths: "{{ tree }}", patterns: "(", use_regex: true}
    - name: a bad symbolic mode
      find: {paths: "{{ tree }}", mode: "u=q"}
    - name: a bad age
      find: {paths: "{{ tree }}", age: "old"}
      ignore_errors: true
    - name: a bad size
      find: {paths: "{{ tree }}", size: "1z"}
      ignore_errors: true
    - name: a zero limit
      find: {paths: "{{ tree }}", limit: 0}
      ignore_errors: true
    - name: a mode that is a number
      find: {paths: "{{ tree }}", mode: 0644}
      ignore_errors: true
"##;

/// The tasks compared whole (but for [`VOLATILE`] and the error text of a bad regex,
/// which Python's `re` words its own way).
const SEARCHES: &[&str] = &[
    "files on top",
    "everything",
    "directories",
    "links only",
    "globs and excludes",
    "globs as a list",
    "regexes",
    "regex excludes",
    "contains at a line start",
    "contains inside a line",
    "contains in the whole file",
    "not UTF-8",
    "latin-1",
    "old files",
    "young files",
    "by access time",
    "big files",
    "small files",
    "size of any",
    "exact mode",
    "symbolic mode",
    "any of the bits",
    "checksums",
    "sha256 checksums of any",
    "two levels",
    "depth without recurse",
    "a limit",
    "a limit over two paths",
    "following links inside the tree",
    "missing paths and a file",
    "relative normalised paths",
    "check mode",
    "a bad regex",
    "a bad symbolic mode",
    "a bad age",
    "a bad size",
    "a zero limit",
    "a mode that is a number",
];

/// Fields of an entry in `files` that differ between two trees built one after the
/// other: the inode numbers, the change times (set by the kernel when each tree was
/// written) and the access times (a search reads the files it looks into), and the
/// modification times of directories and links, which the play cannot set before
/// their contents change them. Files' modification times are set by the play, and
/// compared.
const VOLATILE: &[&str] = &["inode", "ctime", "atime"];

/// A result without what cannot agree.
fn comparable(mut v: Value, task: &str) -> Value {
    if let Some(files) = v.get_mut("files").and_then(Value::as_array_mut) {
        for f in files {
            let obj = f.as_object_mut().expect("a file entry is an object");
            for k in VOLATILE {
                assert!(obj.remove(*k).is_some(), "{task}: no {k} in {obj:?}");
            }
            if obj["isreg"] != Value::Bool(true) {
                obj.remove("mtime");
            }
            // The link out of the tree holds the work directory's path, whose
            // length differs between the two runs.
            if obj["path"] == "WORK/tree/edge/outlink" {
                obj.remove("size");
            }
        }
    }
    // Warnings are compared as both print them, on stderr (ansible-playbook leaves
    // them out of the result it shows).
    if let Some(obj) = v.as_object_mut() {
        obj.remove("warnings");
    }
    if task == "a bad regex" {
        // Python's re and sandball's pyre word a broken pattern differently; both
        // skip the path for it.
        let skipped = v["skipped_paths"]["WORK/tree"].take();
        assert!(skipped.as_str().is_some_and(|s| !s.is_empty()), "{v}");
    }
    v
}

#[test]
fn find_matches_ansible_core() {
    let sb = Sandbox::new();
    let (ours, theirs, ours_work, theirs_work) =
        both_run(&sb, &ansible_bin("ANSIBLE_BIN_DIR", "venv"), PLAY, &[]);
    assert!(!ours.stdout.contains("legacy"), "{ours}");
    for task in SEARCHES {
        let a = comparable(result(&ours, task, &ours_work), task);
        let b = comparable(result(&theirs, task, &theirs_work), task);
        assert_eq!(
            a, b,
            "task {task:?}: sandball gave\n{a:#}\nansible-playbook gave\n{b:#}"
        );
    }
    // The same warnings, but for the words of a broken regex.
    let warnings = |out: &sandball_e2e::Output, work: &std::path::Path| -> Vec<String> {
        out.stderr
            .lines()
            .filter(|l| {
                l.starts_with("[WARNING]: Skipped")
                    && !l.contains("subpattern")
                    && !l.contains("invalid regular expression")
            })
            .map(|l| l.replace(&work.display().to_string(), "WORK"))
            .collect()
    };
    let ours_warnings = warnings(&ours, &ours_work);
    assert_eq!(ours_warnings.len(), 4, "{ours_warnings:#?}");
    assert_eq!(ours_warnings, warnings(&theirs, &theirs_work));
    // The searches found something, in the places expected.
    let everything = result(&ours, "everything", &ours_work);
    assert_eq!(everything["matched"], Value::from(19), "{everything:#}");
    let followed = result(&ours, "following links inside the tree", &ours_work);
    assert_eq!(
        followed["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["path"].as_str().unwrap())
            .collect::<Vec<_>>()
            .len(),
        2,
        "{followed:#}"
    );
    let missing = result(&ours, "missing paths and a file", &ours_work);
    assert_eq!(
        missing["skipped_paths"]["WORK/nothing"],
        Value::from("'WORK/nothing' is not a directory")
    );
}

/// A link out of the searched tree, followed.
const OUT_OF_TREE: &str = r##"
- hosts: all
  gather_facts: false
  tasks:
    - name: a tree and a directory beside it
      file: {path: "{{ work }}/{{ item }}", state: directory}
      loop: [tree, outside]
    - name: a file beside it
      copy: {dest: "{{ work }}/outside/o.txt", content: "o\n"}
    - name: a link out of the tree
      file: {path: "{{ work }}/tree/out", src: "{{ work }}/outside", state: link}
    - name: followed without a grant
      find: {paths: "{{ work }}/tree", recurse: true, follow: true}
      ignore_errors: true
    - name: followed with one
      find: {paths: "{{ work }}/tree", recurse: true, follow: true}
      capabilities: [{kind: fs, path: "{{ work }}/outside", access: read, scope: tree}]
      register: granted
    - name: what it found
      debug: {msg: "{{ granted.files | map(attribute='path') | list }}"}
"##;

#[test]
fn following_a_link_out_of_the_tree_needs_a_grant() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let pb = sb.write("out.yml", OUT_OF_TREE);
    let work = sb.dir("work");
    let out = sb.play(&pb, &work, &["-v"]).run();
    out.assert_no_panic().assert_code(0);
    let denied = result(&out, "followed without a grant", &work);
    assert_eq!(denied["denied"], Value::Bool(true), "{out}");
    let msg = denied["msg"].as_str().unwrap();
    assert!(
        msg.contains("module find was denied fs read WORK/outside")
            && msg.contains("capabilities: [{kind: fs, path: WORK/outside"),
        "{msg}"
    );
    let work_text = work.display().to_string();
    out.assert_stdout_has(&format!("\"{work_text}/tree/out/o.txt\""));
}
