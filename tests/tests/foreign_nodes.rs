//! Nodes that are not the controller's machine, each a Debian root that `make
//! test-roots` makes with debootstrap (tests/roots/make-root.sh) and an sshd started in
//! a chroot of it on a loopback port ([`Sshd::start_in`]):
//!
//! - Debian 11 (bullseye) on x86_64, reached as an unprivileged user with sudo: the
//!   components, a legacy Python module on its Python 3.9, ansible-core's own
//!   `dpkg_selections`, become and facts, compared with ansible-playbook against the
//!   same node;
//! - Debian 11 on aarch64, run by qemu-user-static: the controller picks the aarch64
//!   static shim from its build tree by the node's `uname -sm` and deploys it;
//!   components run there and the facts say `aarch64`;
//! - Debian 11 without Python: components, `setup` and `raw` work; a legacy module
//!   fails as it fails under ansible-playbook.

use sandball_e2e::binaries::{file_says, sha256, static_shim};
use sandball_e2e::compare::{ansible_bin, at, result};
use sandball_e2e::sshd::{Sshd, deployable_shim, test_root};
use sandball_e2e::{Binaries, HostRecap, Output, Sandbox};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long one test of an x86_64 node may take, all its runs included.
const TEST_LIMIT: Duration = Duration::from_secs(600);

/// How long one run on an x86_64 node may take.
const RUN_LIMIT: Duration = Duration::from_secs(300);

/// How long the aarch64 node's test and its run may take: the first run of a build of
/// the modules compiles them under emulation, over a minute each.
const AARCH64_LIMIT: Duration = Duration::from_secs(900);

/// The root `name`, with a message naming the command that makes it when it is missing.
fn root(name: &str) -> PathBuf {
    let root = test_root(name);
    assert!(
        root.join("usr/sbin/sshd").is_file(),
        "the test root {} is missing: run `make test-roots` (`make test` does it)",
        root.display()
    );
    root
}

/// The uid and gid of `user` in the root's `/etc/passwd`.
fn ids_in(root: &Path, user: &str) -> (u32, u32) {
    let passwd = std::fs::read_to_string(root.join("etc/passwd")).expect("the root's passwd");
    passwd
        .lines()
        .map(|l| l.split(':').collect::<Vec<_>>())
        .find(|f| f.len() > 3 && f[0] == user)
        .map(|f| (f[2].parse().unwrap(), f[3].parse().unwrap()))
        .unwrap_or_else(|| panic!("no {user} in {}/etc/passwd", root.display()))
}

/// A directory of `sshd`'s (so inside the node's root, removed with it) owned by `ids`;
/// returns it as this machine sees it.
fn node_dir(sshd: &Sshd, name: &str, ids: (u32, u32)) -> PathBuf {
    let dir = sshd.dir().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::chown(&dir, Some(ids.0), Some(ids.1)).unwrap();
    dir
}

/// Runs `playbook` under sandball with `shim` as `SANDBALL_SHIM` (none: the controller
/// picks one of the build tree's static shims by the node's `uname -sm`), ansible-core
/// for the legacy modules, `work` the node's directory.
fn sandball(
    sb: &Sandbox,
    playbook: &Path,
    work: &Path,
    shim: Option<&Path>,
    limit: Duration,
) -> Output {
    let run = sb
        .play_with_core(playbook, work, &["-v"])
        .env("SANDBALL_LOG", "sandball=debug")
        .env("SSH_AUTH_SOCK", "")
        .limit(limit);
    let run = match shim {
        Some(shim) => run.env("SANDBALL_SHIM", shim),
        None => run.env_remove("SANDBALL_SHIM"),
    };
    let out = run.run();
    out.assert_no_panic();
    out
}

/// Runs `playbook` under ansible-playbook, `work` the node's directory, with its
/// temporary files on the node in `sshd`'s directory `remote_tmp` (this machine's
/// path: removed with it, not left in the root).
fn ansible(sb: &Sandbox, sshd: &Sshd, playbook: &Path, work: &Path, remote_tmp: &Path) -> Output {
    let bin = ansible_bin("ANSIBLE_BIN_DIR", "venv");
    let inventory = sb.path().join("inventory.ini");
    sb.ansible_playbook_in(
        &bin,
        [
            "-i".to_string(),
            inventory.display().to_string(),
            playbook.display().to_string(),
            "-e".to_string(),
            format!("work={}", work.display()),
            "-v".to_string(),
        ],
    )
    .env("SSH_AUTH_SOCK", "")
    .env("ANSIBLE_REMOTE_TEMP", sshd.on_node(remote_tmp))
    // No ssh master left running after the run (ansible-core's ControlPersist).
    .env("ANSIBLE_SSH_ARGS", "-o ControlMaster=no")
    .limit(RUN_LIMIT)
    .run()
}

/// Asserts that each task's `fields` are the same in both runs (work directories
/// written as `WORK`).
fn same_fields(ours: (&Output, &Path), theirs: (&Output, &Path), fields: &[(&str, &[&str])]) {
    for (task, fields) in fields {
        let a = result(ours.0, task, ours.1);
        let b = result(theirs.0, task, theirs.1);
        for f in *fields {
            assert_eq!(
                at(&a, f),
                at(&b, f),
                "task {task:?}, field {f}: sandball gave {a}\nansible-playbook gave {b}"
            );
            assert!(!at(&a, f).is_null(), "task {task:?} has no {f}: {a}");
        }
    }
}

/// The shims deployed to the node cache `cache` (this machine's path), by sha256.
fn deployed(cache: &Path) -> Vec<String> {
    std::fs::read_dir(cache.join("shim"))
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Where the node keeps the code it compiles for the user `uid` from one test run to
/// the next, as the node sees it: in the root, so that a module is compiled once per
/// build of it, as on a real node, rather than in every run (under emulation the
/// aarch64 node takes over a minute a module).
fn kept_compiled(uid: u32) -> PathBuf {
    PathBuf::from(format!("/var/cache/sandball-test-compiled/{uid}"))
}

/// Makes `cache` (this machine's path, in `root`) a node cache whose `compiled`
/// directory is [`kept_compiled`] for the user `ids`, both owned by that user.
fn cache_keeping_compiled(root: &Path, cache: &Path, ids: (u32, u32)) {
    let kept = kept_compiled(ids.0);
    let kept_here = root.join(kept.strip_prefix("/").unwrap());
    for dir in [&kept_here, cache] {
        std::fs::create_dir_all(dir).unwrap();
        std::os::unix::fs::chown(dir, Some(ids.0), Some(ids.1)).unwrap();
    }
    std::os::unix::fs::symlink(&kept, cache.join("compiled")).unwrap();
}

/// Removes from `root`'s kept compiled code (for every user) what was compiled from
/// modules other than this build's built-in ones (a module is known by its sha256).
fn prune_compiled(root: &Path) {
    let built: Vec<String> = std::fs::read_dir(&Binaries::get().modules)
        .unwrap()
        .flatten()
        .filter(|m| m.path().extension().is_some_and(|e| e == "wasm"))
        .map(|m| sha256(&m.path()))
        .collect();
    let kept = root.join("var/cache/sandball-test-compiled");
    for user in std::fs::read_dir(&kept).unwrap().flatten() {
        for code in std::fs::read_dir(user.path()).unwrap().flatten() {
            let name = code.file_name().to_string_lossy().into_owned();
            if !built.iter().any(|sha| name.starts_with(sha.as_str())) {
                let _ = std::fs::remove_file(code.path());
            }
        }
    }
}

/// Removes what a run left in the root beyond the sshd's own directory: the become
/// user's shim cache (`~root/.sandball`, its place under become), when made and when
/// dropped (a killed run leaves it).
struct CleanUp(PathBuf);

impl CleanUp {
    fn new(path: PathBuf) -> CleanUp {
        let _ = std::fs::remove_dir_all(&path);
        CleanUp(path)
    }
}

impl Drop for CleanUp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A library module (new-style Python) that says which Python runs it.
const PYTHON_VERSION_MODULE: &str = r#"#!/usr/bin/python
import platform
import sys

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(argument_spec={})
    module.exit_json(
        changed=False,
        version=platform.python_version(),
        major_minor="%d.%d" % sys.version_info[:2],
    )


if __name__ == "__main__":
    main()
"#;

const BULLSEYE: &str = r#"
- hosts: all
  gather_facts: true
  tasks:
    - name: reach
      ping:
    - name: a directory
      file:
        path: "{{ work }}/dir"
        state: directory
        mode: "0750"
    - name: a copy
      copy:
        content: "made on Debian {{ ansible_distribution_major_version }}\n"
        dest: "{{ work }}/dir/note"
        mode: "0640"
    - name: look
      stat:
        path: "{{ work }}/dir/note"
      register: st
    - name: read
      command: cat {{ work }}/dir/note
      register: note
    - name: the facts
      debug:
        msg:
          distribution: "{{ ansible_distribution }}"
          major: "{{ ansible_distribution_major_version }}"
          release: "{{ ansible_distribution_release }}"
          family: "{{ ansible_os_family }}"
          architecture: "{{ ansible_architecture }}"
          system: "{{ ansible_system }}"
          user: "{{ ansible_user_id }}"
          pkg_mgr: "{{ ansible_pkg_mgr }}"
    - name: the node's Python
      python_version:
      register: py
    - name: an ansible-core module
      dpkg_selections:
        name: openssh-server
        selection: install
    - name: become root
      command: id -un
      become: true
      register: who
    - name: a file as root
      file:
        path: "{{ work }}/by-root"
        state: touch
        mode: "0600"
      become: true
    - name: its owner
      stat:
        path: "{{ work }}/by-root"
      become: true
      register: by_root
    - name: Debian 11 and its Python 3.9
      assert:
        that:
          - ansible_distribution == "Debian"
          - ansible_distribution_major_version == "11"
          - ansible_distribution_release == "bullseye"
          - note.stdout == "made on Debian 11"
          - st.stat.size == 18
          - py.major_minor == "3.9"
          - who.stdout == "root"
          - by_root.stat.pw_name == "root"
          - ansible_user_id == "node"
"#;

#[test]
fn a_debian_11_node_runs_components_its_python_3_9_become_and_facts_as_ansible_does() {
    let started = Instant::now();
    let root = root("bullseye-amd64");
    let _become_cache = CleanUp::new(root.join("root/.sandball"));
    let sshd = Sshd::start_in(&root);
    // The user `node` reads the server's key directory (its authorized_keys).
    std::fs::set_permissions(
        sshd.dir(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let node = ids_in(&root, "node");
    let cache = sshd.dir().join("cache");
    cache_keeping_compiled(&root, &cache, node);
    cache_keeping_compiled(&root, &root.join("root/.sandball"), (0, 0));
    let ours_work = node_dir(&sshd, "work-sandball", node);
    let theirs_work = node_dir(&sshd, "work-ansible", node);
    let sb = Sandbox::new();
    sb.write(
        "inventory.ini",
        &format!(
            "[nodes]\n{}",
            sshd.host_line(
                "bullseye",
                &sshd.on_node(&cache),
                "ansible_user=node ansible_python_interpreter=/usr/bin/python3"
            )
        ),
    );
    sb.write("library/python_version.py", PYTHON_VERSION_MODULE);
    let pb = sb.write("play.yml", BULLSEYE);
    let shim = deployable_shim();
    let ours = sandball(&sb, &pb, &sshd.on_node(&ours_work), Some(&shim), RUN_LIMIT);
    let theirs = ansible(
        &sb,
        &sshd,
        &pb,
        &sshd.on_node(&theirs_work),
        &node_dir(&sshd, "ansible-tmp", node),
    );
    ours.assert_code(0);
    theirs.assert_code(0);
    ours.assert_same_recap_as(&theirs);
    assert_eq!(
        ours.host("bullseye"),
        HostRecap {
            ok: 13,
            changed: 5,
            ..Default::default()
        },
        "{ours}"
    );
    same_fields(
        (&ours, &sshd.on_node(&ours_work)),
        (&theirs, &sshd.on_node(&theirs_work)),
        &[
            ("a directory", &["mode", "state", "owner"]),
            ("a copy", &["checksum", "mode", "size", "owner"]),
            ("look", &["stat/size", "stat/mode", "stat/pw_name"]),
            ("read", &["stdout", "rc"]),
            ("the facts", &["msg"]),
            ("the node's Python", &["version", "major_minor"]),
            ("an ansible-core module", &["before", "after"]),
            ("become root", &["stdout", "rc"]),
            ("its owner", &["stat/pw_name", "stat/mode"]),
        ],
    );
    // The node got this machine's static shim (stripped), in the cache given.
    assert_eq!(deployed(&cache), vec![sha256(&shim)], "{ours}");
    prune_compiled(&root);
    assert!(
        started.elapsed() < TEST_LIMIT,
        "took {:?}",
        started.elapsed()
    );
}

const AARCH64: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: the machine
      raw: uname -m
      register: machine
    # Two components only: each module is compiled on the node, under emulation here
    # (minutes each with a debug shim); the x86_64 nodes run the others.
    - name: reach
      ping:
    - name: gather
      setup:
    - name: an aarch64 node
      assert:
        that:
          - machine.stdout | trim == "aarch64"
          - ansible_architecture == "aarch64"
          - ansible_machine == "aarch64"
          - ansible_distribution_major_version == "11"
"#;

#[test]
fn an_aarch64_node_gets_the_aarch64_shim_and_runs_components() {
    let started = Instant::now();
    let root = root("bullseye-arm64");
    let sshd = Sshd::start_in(&root);
    let cache = sshd.dir().join("cache");
    cache_keeping_compiled(&root, &cache, (0, 0));
    let work = sshd.dir().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let sb = Sandbox::new();
    sb.write(
        "inventory.ini",
        &format!(
            "[nodes]\n{}",
            sshd.host_line("arm", &sshd.on_node(&cache), "")
        ),
    );
    let pb = sb.write("play.yml", AARCH64);
    // No SANDBALL_SHIM: the controller picks the shim by the node's `uname -sm`.
    let out = sandball(&sb, &pb, &sshd.on_node(&work), None, AARCH64_LIMIT);
    out.assert_code(0);
    assert_eq!(
        out.host("arm"),
        HostRecap {
            ok: 4,
            changed: 1,
            ..Default::default()
        },
        "{out}"
    );
    // The node holds the aarch64 static shim of the build tree, and no other.
    let shim = static_shim("aarch64-unknown-linux-musl");
    let sha = sha256(&shim);
    assert_eq!(deployed(&cache), vec![sha.clone()], "{out}");
    prune_compiled(&root);
    let on_node = cache.join("shim").join(&sha).join("sandball-shim");
    let said = file_says(&on_node);
    assert!(
        said.contains("ARM aarch64")
            && (said.contains("statically linked") || said.contains("static-pie linked")),
        "{said}"
    );
    assert!(
        started.elapsed() < AARCH64_LIMIT,
        "took {:?}",
        started.elapsed()
    );
}

const NO_PYTHON: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: no python here
      raw: command -v python3 python python2 || echo none
      register: pythons
      changed_when: false
    - name: reach
      ping:
    - name: a copy
      copy:
        content: "no python\n"
        dest: "{{ work }}/note"
    - name: look
      stat:
        path: "{{ work }}/note"
      register: st
    - name: gather
      setup:
    - name: a node without python
      assert:
        that:
          - pythons.stdout | trim == "none"
          - st.stat.size == 10
          - ansible_distribution == "Debian"
          - ansible_distribution_major_version == "11"
    - name: a legacy module
      dpkg_selections:
        name: openssh-server
        selection: install
      ignore_errors: true
"#;

/// What ansible-playbook runs of [`NO_PYTHON`]: `raw` and the legacy module (all its
/// modules are Python, so nothing else would run).
const NO_PYTHON_ANSIBLE: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: no python here
      raw: command -v python3 python python2 || echo none
      register: pythons
      changed_when: false
    - name: a legacy module
      dpkg_selections:
        name: openssh-server
        selection: install
      ignore_errors: true
"#;

#[test]
fn a_node_without_python_runs_components_facts_and_raw_and_fails_legacy_modules_as_ansible_does() {
    let started = Instant::now();
    let root = root("bullseye-nopython");
    assert!(
        !root.join("usr/bin/python3").exists(),
        "{} has a python3",
        root.display()
    );
    let sshd = Sshd::start_in(&root);
    let cache = sshd.dir().join("cache");
    cache_keeping_compiled(&root, &cache, (0, 0));
    let ours_work = sshd.dir().join("work-sandball");
    let theirs_work = sshd.dir().join("work-ansible");
    for dir in [&ours_work, &theirs_work] {
        std::fs::create_dir_all(dir).unwrap();
    }
    let sb = Sandbox::new();
    sb.write(
        "inventory.ini",
        &format!(
            "[nodes]\n{}",
            sshd.host_line(
                "bare",
                &sshd.on_node(&cache),
                "ansible_python_interpreter=/usr/bin/python3"
            )
        ),
    );
    let pb = sb.write("play.yml", NO_PYTHON);
    let ours = sandball(
        &sb,
        &pb,
        &sshd.on_node(&ours_work),
        Some(&deployable_shim()),
        RUN_LIMIT,
    );
    ours.assert_code(0);
    prune_compiled(&root);
    assert_eq!(
        ours.host("bare"),
        HostRecap {
            ok: 7,
            changed: 1,
            ignored: 1,
            ..Default::default()
        },
        "{ours}"
    );
    let theirs_pb = sb.write("ansible.yml", NO_PYTHON_ANSIBLE);
    let theirs = ansible(
        &sb,
        &sshd,
        &theirs_pb,
        &sshd.on_node(&theirs_work),
        &sshd.dir().join("ansible-tmp"),
    );
    theirs.assert_code(0);
    assert_eq!(
        theirs.host("bare"),
        HostRecap {
            ok: 2,
            ignored: 1,
            ..Default::default()
        },
        "{theirs}"
    );
    same_fields(
        (&ours, &sshd.on_node(&ours_work)),
        (&theirs, &sshd.on_node(&theirs_work)),
        &[
            // Not `stdout`: ansible-core runs `raw` on a terminal (`\r\n`).
            ("no python here", &["stdout_lines", "rc"]),
            // Not the module's output: ansible-core runs it on a terminal, where the
            // shell's error is in stdout and ssh's goodbye in stderr.
            ("a legacy module", &["msg", "rc"]),
        ],
    );
    let failure = result(&ours, "a legacy module", &sshd.on_node(&ours_work));
    assert!(
        at(&failure, "module_stderr")
            .as_str()
            .is_some_and(|e| e.contains("/usr/bin/python3")),
        "{ours}"
    );
    assert!(
        started.elapsed() < TEST_LIMIT,
        "took {:?}",
        started.elapsed()
    );
}
