//! A relative path that climbs above the node's working directory with `..`
//! (`file: path=../../shared/blah`, as a deploy role writes it), taken from where
//! ansible-core's modules take it — the login directory over SSH, the directory the
//! run starts in on the local connection — and granted exactly there; compared with
//! ansible-playbook over both connections.

use sandball_e2e::sshd::deployable_shim;
use sandball_e2e::{Output, Sandbox, Sshd};
use std::path::Path;
use std::time::Duration;

const ROLE: &str = r#"
- name: the shared directory
  file:
    path: "{{ up }}{{ where }}/shared/blah"
    state: directory
- name: a file in it
  copy:
    content: "deployed\n"
    dest: "{{ up }}{{ where }}/shared/blah/release.txt"
- name: read back
  stat:
    path: "{{ up }}{{ where }}/shared/blah/release.txt"
  register: st
- name: what was read
  debug:
    msg: "{{ st.stat.size }}"
"#;

/// `../` as many times as `dir` is deep: from `dir`, the relative path then climbs to
/// `/`.
fn climb_from(dir: &Path) -> String {
    "../".repeat(dir.components().count().saturating_sub(1))
}

/// Runs the deploy role under sandball and, when it is there, ansible-playbook, each
/// writing under its own directory (`ours`, `theirs` in the sandbox) through a path
/// relative to `workdir`, the node's working directory.
fn deploys_where_ansible_does(sb: &Sandbox, workdir: &Path, env: &[(&str, &Path)]) {
    sb.write("roles/deploy/tasks/main.yml", ROLE);
    let pb = sb.write(
        "play.yml",
        "- hosts: all\n  gather_facts: false\n  roles: [deploy]\n",
    );
    let up = climb_from(workdir);
    let at = |who: &str| {
        let dir = sb.dir(who);
        let relative = dir.strip_prefix("/").unwrap_or(&dir).display().to_string();
        (dir, relative)
    };
    let (ours_dir, ours_rel) = at("ours");
    let args = |rel: &str| {
        vec![
            "-e".to_string(),
            format!("up={up}"),
            "-e".to_string(),
            format!("where={rel}"),
        ]
    };
    let ours_args = args(&ours_rel);
    let ours_args: Vec<&str> = ours_args.iter().map(String::as_str).collect();
    let mut ours = sb
        .play(&pb, &ours_dir, &ours_args)
        .limit(Duration::from_secs(300));
    for (k, v) in env {
        ours = ours.env(k, v);
    }
    let ours: Output = ours.run();
    ours.assert_no_panic().assert_code(0);
    assert_eq!(
        std::fs::read_to_string(ours_dir.join("shared/blah/release.txt")).unwrap_or_default(),
        "deployed\n",
        "{ours}"
    );
    let (theirs_dir, theirs_rel) = at("theirs");
    let theirs_args = args(&theirs_rel);
    let theirs_args: Vec<&str> = theirs_args.iter().map(String::as_str).collect();
    if let Some(theirs) = sb.ansible_play(&pb, &theirs_dir, &theirs_args) {
        // No SSH master left running after the run.
        let theirs = theirs
            .env("ANSIBLE_SSH_ARGS", "-o ControlMaster=no")
            .limit(Duration::from_secs(300))
            .run();
        assert_eq!(theirs.code, 0, "{theirs}");
        ours.assert_same_recap_as(&theirs)
            .assert_same_results_as(&theirs, &["deploy : what was read"]);
        assert!(theirs_dir.join("shared/blah/release.txt").is_file());
    }
}

#[test]
fn a_path_climbing_above_the_working_directory_is_taken_from_it_locally() {
    let sb = Sandbox::new();
    sb.inventory_with_python(&["alpha"]);
    // The run starts in the sandbox (`Sandbox::sandball`).
    deploys_where_ansible_does(&sb, sb.path(), &[]);
}

#[test]
fn a_path_climbing_above_the_login_directory_is_taken_from_it_over_ssh() {
    let sshd = Sshd::start();
    let sb = Sandbox::new();
    let python = sandball_e2e::binaries::ansible_python();
    sb.write(
        "inventory.ini",
        &format!(
            "[nodes]\n{}",
            sshd.host_line(
                "node",
                &sb.path().join("node-cache"),
                &format!("ansible_python_interpreter={}", python.display())
            )
        ),
    );
    let home = std::env::var_os("HOME").map_or_else(|| "/root".into(), std::path::PathBuf::from);
    let shim = deployable_shim();
    deploys_where_ansible_does(
        &sb,
        &home,
        &[
            ("SANDBALL_SHIM", shim.as_path()),
            ("SSH_AUTH_SOCK", Path::new("")),
        ],
    );
}
