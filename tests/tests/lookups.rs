//! Lookups and `with_<lookup>` loops, compared with ansible-playbook: `file`,
//! `template`, `env`, `pipe`, `vars`, `fileglob`, `first_found`, `lines`, `lookup`
//! joining texts and `query`/`wantlist` giving lists, `errors='ignore'`, a role's
//! `files/` searched first, and the error naming the lookup.

use sandball_e2e::Sandbox;

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  vars:
    who: world
    other: 5
  tasks:
    - name: file
      debug: {msg: "{{ lookup('file', 'a.txt') }}"}
    - name: files joined
      debug: {msg: "{{ lookup('file', 'a.txt', 'b.txt') }}"}
    - name: query
      debug: {msg: "{{ query('file', 'a.txt', 'b.txt') }}"}
    - name: wantlist
      debug: {msg: "{{ lookup('file', 'b.txt', wantlist=True) }}"}
    - name: env
      debug: {msg: "{{ lookup('env', 'SANDBALL_LOOKUP_TEST') }} {{ lookup('env', 'SANDBALL_NOT_SET', default='dflt') }}"}
    - name: pipe
      debug: {msg: "{{ lookup('pipe', 'echo piped') }}"}
    - name: template
      debug: {msg: "{{ lookup('template', 't.j2') }}"}
    - name: vars
      debug: {msg: "{{ lookup('vars', 'other') }}"}
    - name: fileglob
      debug: {msg: "{{ query('fileglob', '*.txt') | map('basename') | sort }}"}
    - name: first_found
      debug: {msg: "{{ lookup('first_found', ['nope.txt', 'files/b.txt']) | basename }}"}
    - name: with_file
      debug: {msg: "{{ item }}"}
      with_file: [a.txt, b.txt]
    - name: with_lines
      debug: {msg: "{{ item }}"}
      with_lines: "printf 'l1\\nl2\\n'"
    - name: errors ignore
      debug: {msg: "[{{ lookup('file', 'missing.txt', errors='ignore') }}]"}
  roles:
    - reader
"#;

#[test]
fn lookups_read_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    sb.write("files/a.txt", "hello file\n\n");
    sb.write("files/b.txt", "b\n");
    sb.write("templates/t.j2", "T {{ who }}\n");
    sb.write("roles/reader/files/a.txt", "the role's a\n");
    sb.write(
        "roles/reader/tasks/main.yml",
        "- name: role file\n  debug: {msg: \"{{ lookup('file', 'a.txt') }} {{ lookup('file', 'b.txt') }}\"}\n",
    );
    let pb = sb.write("play.yml", PLAY);
    let work = sb.dir("work");
    let ours = sb
        .play(&pb, &work, &[])
        .env("SANDBALL_LOOKUP_TEST", "envval")
        .run();
    ours.assert_no_panic().assert_code(0);
    ours.assert_stdout_has("\"msg\": \"the role's a b\"");
    ours.assert_stdout_has("\"msg\": \"hello file,b\"");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.env("SANDBALL_LOOKUP_TEST", "envval").run();
        assert_eq!(ours.stdout, theirs.stdout, "{theirs}\n{ours}");
    }

    let bad = sb.write(
        "bad.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - debug: {msg: \"{{ lookup('file', 'missing.txt') }}\"}\n    - debug: {msg: \"{{ lookup('nosuchlookup', 'x') }}\"}\n      ignore_errors: true\n",
    );
    let out = sb.play(&bad, &work, &[]).run();
    out.assert_no_panic().assert_code(2);
    out.assert_stdout_has("lookup plugin 'file'");
    out.assert_stdout_has("Unable to access the file 'missing.txt': File not found.");
}

/// The warnings of lookups whose files are missing, compared with ansible-playbook: a
/// file in none of the places looked in is warned about (`template`, `unvault`), and
/// `errors='warn'` shows the failure as a warning, before the task's result.
#[test]
fn missing_files_are_warned_about() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    let pb = sb.write(
        "warn.yml",
        r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: template ignored
      debug: {msg: "{{ lookup('template', 'nope.j2', errors='ignore') }}"}
    - name: unvault warned
      debug: {msg: "{{ lookup('unvault', 'nope.v', errors='warn') }}"}
    - name: file warned
      debug: {msg: "{{ lookup('file', 'nope.txt', errors='warn') }}"}
    - name: first_found warned
      debug: {msg: "{{ lookup('first_found', 'nope', errors='warn') }}"}
"#,
    );
    let work = sb.dir("work");
    let ours = sb.play(&pb, &work, &[]).run();
    ours.assert_no_panic().assert_code(0);
    let warnings = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with("[WARNING]: ") && !l.contains("host"))
            .map(str::to_string)
            .collect()
    };
    let ours_warned = warnings(&ours.stderr);
    assert_eq!(ours_warned.len(), 5, "{ours}");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        assert_eq!(ours_warned, warnings(&theirs.stderr), "{theirs}\n{ours}");
        ours.assert_same_stdout_as(&theirs);
    }
}

/// `fileglob` along the search path, compared with ansible-playbook: a bare pattern is
/// tried in each folder (a role's `files/` and folder, then the playbook's), the first
/// with matches winning; a pattern with a folder, in the first place it exists.
#[test]
fn fileglob_searches_as_ansible_does() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    sb.write("roles/r/files/in_role.txt", "r\n");
    sb.write("roles/r/files/sub/deep.txt", "d\n");
    sb.write("files/top.md", "t\n");
    sb.write("files/top.txt", "t\n");
    sb.write("adjacent.conf", "a\n");
    sb.write(
        "roles/r/tasks/main.yml",
        r#"- name: globs
  debug:
    msg:
      - "{{ query('fileglob', '*.txt') | map('basename') }}"
      - "{{ query('fileglob', '*.md') | map('basename') }}"
      - "{{ query('fileglob', '*.conf') | map('basename') }}"
      - "{{ query('fileglob', 'sub/*.txt') | map('basename') }}"
      - "{{ query('fileglob', '*.none') }}"
"#,
    );
    let pb = sb.write(
        "glob.yml",
        "- hosts: all\n  gather_facts: false\n  roles: [r]\n",
    );
    let work = sb.dir("work");
    let ours = sb.play(&pb, &work, &[]).run();
    ours.assert_no_panic().assert_code(0);
    ours.assert_stdout_has("\"in_role.txt\"");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        assert_eq!(
            ours.result_lines("r : globs"),
            theirs.result_lines("r : globs"),
            "{theirs}\n{ours}"
        );
    }
}

/// `with_first_found` passes over undefined values in its terms wherever they are (a
/// name, an item of a variable's list, a value a template made), and names and paths
/// are split at `,`/`;` (and paths at `:`) as ansible-core splits them; a task's
/// `ansible_search_path` is ansible-core's, and files are found along it.
const FIRST_FOUND_PLAY: &str = r#"
- hosts: all
  gather_facts: false
  vars:
    names: ["{{ missing }}a.txt", b.txt]
  tasks:
    - name: undefined names
      debug: {msg: "{{ item | basename }}"}
      with_first_found:
        - "{{ missing }}a.txt"
        - files: ["{{ nope.attr }}", b.txt]
    - name: undefined in a variable's list
      debug: {msg: "{{ item | basename }}"}
      with_first_found:
        - files: "{{ names }}"
    - name: undefined values a template made
      debug: {msg: "{{ item | basename }}"}
      with_first_found: '{{ [{"files": missing}] | zip([{"files": ["b.txt"]}]) }}'
    - name: names and paths split
      debug: {msg: "{{ item }}"}
      loop: "{{ q('first_found', {'files': 'nope.txt;hosts', 'paths': 'no/such:/etc'}) }}"
    - name: the play's search path
      debug: {var: ansible_search_path}
    - name: a role's included task file finds files beside it
      include_role: {name: finder}
"#;

#[test]
fn first_found_passes_over_undefined_terms_as_ansible_does() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    sb.write("files/b.txt", "b\n");
    sb.write(
        "roles/finder/tasks/main.yml",
        "- include_tasks: sub/main.yml\n",
    );
    sb.write(
        "roles/finder/tasks/sub/main.yml",
        "- debug: {var: ansible_search_path}\n- debug: {msg: \"{{ lookup('first_found', 'beside.txt') | basename }}\"}\n",
    );
    sb.write("roles/finder/tasks/sub/beside.txt", "");
    let pb = sb.write("play.yml", FIRST_FOUND_PLAY);
    let work = sb.dir("work");
    let ours = sb.play(&pb, &work, &[]).run();
    ours.assert_no_panic().assert_code(0);
    assert_eq!(
        ours.stdout.matches("\"msg\": \"b.txt\"").count(),
        3,
        "{ours}"
    );
    ours.assert_stdout_has("\"msg\": \"/etc/hosts\"")
        .assert_stdout_has("\"msg\": \"beside.txt\"");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        assert_eq!(ours.stdout, theirs.stdout, "{theirs}\n{ours}");
    }
}
