//! The `git` component against ansible-core's `git` module: one playbook of scenarios
//! run under sandball and ansible-playbook 2.19, each side with its own upstream
//! repository made by the play with fixed dates (so both have the same commits and the
//! SHA-1s must match), each task's result fields compared: clone, clone again, check
//! mode, diff, new upstream commits, tags, SHA-1s, branches, depth, single_branch,
//! refspec, bare, clone=no, update=no, a new remote address, local modifications with
//! and without force, a missing repository. Then the options sandball refuses.
//!
//! Needs git on the node (`/usr/local/bin/git` or in `PATH`).

use sandball_e2e::Sandbox;
use sandball_e2e::binaries::ansible_python;
use sandball_e2e::compare::{ansible_bin, both_run, result};

/// Commits with fixed authors and dates, whatever the user's git configuration.
const COMMIT: &str = "GIT_AUTHOR_DATE=2020-01-01T00:00:00Z GIT_COMMITTER_DATE=2020-01-01T00:00:00Z \
                      git -c user.name=t -c user.email=t@example.com -c commit.gpgsign=false";

fn play() -> String {
    r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: upstream
      shell: |
        set -e
        mkdir -p {{ work }}/up && cd {{ work }}/up
        git init -q -b main .
        echo 1 > f && git add f && COMMIT commit -qm one
        COMMIT tag v1 && COMMIT tag -a -m annotated v2
        echo 2 > f && COMMIT commit -qam two
        git branch dev && git checkout -q dev && echo d > d && git add d && COMMIT commit -qm dev
        git checkout -q main
        git clone -q --bare . {{ work }}/up2.git
    - name: first commit
      command: git -C {{ work }}/up rev-parse v1
      register: first

    - name: clone
      git: {repo: "{{ work }}/up", dest: "{{ work }}/co"}
    - name: clone again
      git: {repo: "{{ work }}/up", dest: "{{ work }}/co"}
    - name: clone in check mode
      git: {repo: "{{ work }}/up", dest: "{{ work }}/co-check"}
      check_mode: true
      diff: true
    - name: a file url
      git: {repo: "file://{{ work }}/up", dest: "{{ work }}/co"}

    - name: a new commit upstream
      shell: cd {{ work }}/up && echo 3 > f && COMMIT commit -qam three
    - name: update in check mode
      git: {repo: "{{ work }}/up", dest: "{{ work }}/co"}
      check_mode: true
    - name: update
      git: {repo: "{{ work }}/up", dest: "{{ work }}/co"}
      diff: true
    - name: update again
      git: {repo: "{{ work }}/up", dest: "{{ work }}/co"}

    - name: a tag
      git: {repo: "{{ work }}/up", dest: "{{ work }}/co", version: v1}
    - name: an annotated tag
      git: {repo: "{{ work }}/up", dest: "{{ work }}/co", version: v2}
    - name: a sha
      git: {repo: "{{ work }}/up", dest: "{{ work }}/co", version: "{{ first.stdout }}"}
    - name: a branch
      git: {repo: "{{ work }}/up", dest: "{{ work }}/co", version: dev}
    - name: a branch again
      git: {repo: "{{ work }}/up", dest: "{{ work }}/co", version: dev}
    - name: a tag in check mode
      git: {repo: "{{ work }}/up", dest: "{{ work }}/co", version: v2}
      check_mode: true

    - name: depth
      git: {repo: "{{ work }}/up", dest: "{{ work }}/shallow", depth: 1}
    - name: depth count
      command: git -C {{ work }}/shallow rev-list --count HEAD
      register: shallow_count
    - name: depth of a tag
      git: {repo: "{{ work }}/up", dest: "{{ work }}/shallow-tag", depth: 1, version: v1}
    - name: depth of a sha
      git: {repo: "{{ work }}/up", dest: "{{ work }}/shallow-sha", depth: 1, version: "{{ first.stdout }}"}
    - name: single branch
      git: {repo: "{{ work }}/up", dest: "{{ work }}/single", single_branch: true, version: dev}
    - name: refspec
      git: {repo: "{{ work }}/up", dest: "{{ work }}/refspec", refspec: "+refs/heads/dev:refs/remotes/origin/dev"}
    - name: another remote name
      git: {repo: "{{ work }}/up", dest: "{{ work }}/named", remote: upstream}

    - name: bare
      git: {repo: "{{ work }}/up", dest: "{{ work }}/bare.git", bare: true}
    - name: bare again
      git: {repo: "{{ work }}/up", dest: "{{ work }}/bare.git", bare: true}

    - name: clone no
      git: {repo: "{{ work }}/up", clone: false}
    - name: clone no with a tag
      git: {repo: "{{ work }}/up", clone: false, version: v2}
    - name: update no
      git: {repo: "{{ work }}/up", dest: "{{ work }}/co", update: false}

    - name: a new remote address in check mode
      git: {repo: "{{ work }}/up2.git", dest: "{{ work }}/co", version: main}
      check_mode: true
    - name: a new remote address
      git: {repo: "{{ work }}/up2.git", dest: "{{ work }}/co", version: main}

    - name: local modifications
      copy: {dest: "{{ work }}/co/f", content: "local\n"}
    - name: without force
      git: {repo: "{{ work }}/up2.git", dest: "{{ work }}/co", version: main}
      ignore_errors: true
    - name: with force in check mode
      git: {repo: "{{ work }}/up2.git", dest: "{{ work }}/co", version: main, force: true}
      check_mode: true
    - name: with force
      git: {repo: "{{ work }}/up2.git", dest: "{{ work }}/co", version: main, force: true}
    - name: the file restored
      command: cat {{ work }}/co/f
      register: restored

    - name: a missing repository
      git: {repo: "{{ work }}/nope", dest: "{{ work }}/nope-co"}
      ignore_errors: true
    - name: a missing version
      git: {repo: "{{ work }}/up", dest: "{{ work }}/co", version: no-such-ref}
      ignore_errors: true
    - name: no dest
      git: {repo: "{{ work }}/up"}
      ignore_errors: true
    - name: show
      debug:
        msg: "{{ shallow_count.stdout }} {{ restored.stdout }}"
"#
    .replace("COMMIT", COMMIT)
}

/// Every field a result of ansible-core's module has (its warnings are printed apart
/// from the result, and compared below).
const CORE: &[&str] = &[
    "changed",
    "failed",
    "msg",
    "before",
    "after",
    "remote_url_changed",
    "diff",
    "submodules_changed",
];

const FIELDS: &[(&str, &[&str])] = &[
    ("clone", CORE),
    ("clone again", CORE),
    ("clone in check mode", CORE),
    ("a file url", CORE),
    ("update in check mode", CORE),
    ("update", CORE),
    ("update again", CORE),
    ("a tag", CORE),
    ("an annotated tag", CORE),
    ("a sha", CORE),
    ("a branch", CORE),
    ("a branch again", CORE),
    ("a tag in check mode", CORE),
    ("depth", CORE),
    ("depth of a tag", CORE),
    ("depth of a sha", CORE),
    ("single branch", CORE),
    ("refspec", CORE),
    ("another remote name", CORE),
    ("bare", CORE),
    ("bare again", CORE),
    ("clone no", CORE),
    ("clone no with a tag", CORE),
    ("update no", CORE),
    ("a new remote address in check mode", CORE),
    ("a new remote address", CORE),
    ("without force", CORE),
    ("with force in check mode", CORE),
    ("with force", CORE),
    // `cmd` names git by its path in ansible-core (get_bin_path), by name here.
    ("a missing repository", &["failed", "msg", "rc", "stderr"]),
    ("a missing version", &["failed", "msg", "rc", "stderr"]),
    ("no dest", &["failed", "msg"]),
    ("show", &["msg"]),
];

#[test]
fn git_matches_ansible_core() {
    let sb = Sandbox::new();
    let (ours, theirs, work, _) = both_run(
        &sb,
        &ansible_bin("ANSIBLE_BIN_DIR", "venv"),
        &play(),
        FIELDS,
    );
    assert!(!ours.stdout.contains("legacy"), "{ours}");
    // The scenarios did what they say (the same in both, compared above).
    let r = result(&ours, "update", &work);
    assert_ne!(r["before"], r["after"], "{ours}");
    assert_eq!(result(&ours, "clone again", &work)["changed"], false);
    let refused = result(&ours, "without force", &work);
    assert_eq!(
        refused["msg"], "Local modifications exist in the destination: WORK/co (force=no).",
        "{ours}"
    );
    assert_eq!(result(&ours, "show", &work)["msg"], "1 2");
    let ignoring = "Ignoring depth argument. Shallow clones are only available for HEAD";
    assert!(theirs.stderr.contains(ignoring), "{theirs}");
    // A warning of its own, apart from the result, as ansible-core 2.19 shows it.
    assert!(
        ours.stderr.contains(&format!("[WARNING]: {ignoring}")),
        "{ours}"
    );
    assert!(
        result(&ours, "depth of a sha", &work)
            .get("warnings")
            .is_none(),
        "{ours}"
    );
}

#[test]
fn options_that_cannot_be_granted_are_refused_by_name() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let play = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: umask
      git: {repo: "{{ work }}/up", dest: "{{ work }}/co", umask: "0022"}
      ignore_errors: true
    - name: key
      git: {repo: "{{ work }}/up", dest: "{{ work }}/co", key_file: "{{ work }}/k"}
      ignore_errors: true
"#;
    let pb = sb.write("play.yml", play);
    let work = sb.dir("work");
    // Where policy allows legacy modules, ansible-core's git would carry them out
    // (module_routing.rs tests the hand-over); refused, the component's words stand.
    let policy = sb.policy_denying_legacy();
    let out = sb
        .play(&pb, &work, &["-v", "--policy", &policy])
        .env("SANDBALL_ANSIBLE_PYTHON", ansible_python())
        .run();
    out.assert_no_panic();
    assert!(
        result(&out, "umask", &work)["msg"]
            .as_str()
            .unwrap()
            .starts_with("The git module does not support the option 'umask' in sandball: programs run with the node's umask, which a module cannot change. ansible-core's module would carry it out"),
        "{out}"
    );
    let key = result(&out, "key", &work);
    assert!(key["msg"].as_str().unwrap().contains("'key_file'"), "{key}");
}
