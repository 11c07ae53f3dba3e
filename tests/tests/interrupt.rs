//! Ctrl-C and SIGTERM in the middle of a run, on 20 hosts of the local connection and
//! 5 over SSH: the controller starts no task after the signal, ends the shims and the
//! programs they started on every node (none is left running), prints what
//! ansible-playbook prints and exits with its code (99 after Ctrl-C, killed by SIGTERM
//! after SIGTERM), with no recap; the next run starts cleanly. A controller killed
//! outright (SIGKILL) leaves nothing running either: each shim sees its session's
//! input end and ends what it started within its watchdog's tick (50 ms).

use sandball_e2e::processes::ended_within;
use sandball_e2e::sshd::{Sshd, deployable_shim};
use sandball_e2e::{Output, Sandbox};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Each host writes the pid of a long `sleep` it starts, then waits for it; the task
/// after it must never start.
const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: a long task
      command: sh -c 'echo $$ > {{ work }}/pid-{{ inventory_hostname }}.tmp && mv {{ work }}/pid-{{ inventory_hostname }}.tmp {{ work }}/pid-{{ inventory_hostname }} && exec sleep 300'
    - name: after the signal
      command: touch {{ work }}/after-{{ inventory_hostname }}
"#;

/// The pids the hosts wrote, once every host has written its own.
fn pids(work: &Path, hosts: &[String]) -> Option<Vec<u32>> {
    hosts
        .iter()
        .map(|h| {
            std::fs::read_to_string(work.join(format!("pid-{h}")))
                .ok()
                .and_then(|t| t.trim().parse().ok())
        })
        .collect()
}

/// Asserts that none of `pids` runs (within 3 s: the last shims end theirs as
/// the controller exits).
fn none_left(pids: &[u32], out: &Output) {
    if let Err(left) = ended_within(pids, Duration::from_secs(3)) {
        panic!("programs the run started were left running: {left:?}\n{out}");
    }
}

fn hosts(n: usize) -> Vec<String> {
    (1..=n).map(|i| format!("h{i:02}")).collect()
}

/// Runs PLAY on every host of the sandbox's inventory, signals it once every host runs
/// its `sleep`, and checks what the issue says of an interrupted run; the output.
fn interrupted(sb: &Sandbox, hosts: &[String], signal: &str, shim: Option<PathBuf>) -> Output {
    let work = sb.dir("work");
    let pb = sb.write("play.yml", PLAY);
    let mut run = sb
        .play(&pb, &work, &["-f", "20"])
        .env("SSH_AUTH_SOCK", "")
        .limit(Duration::from_secs(120));
    if let Some(shim) = &shim {
        run = run.env("SANDBALL_SHIM", shim);
    }
    let signalled = Instant::now();
    let out = run.run_signalled(signal, || pids(&work, hosts).is_some());
    let pids = pids(&work, hosts).unwrap_or_default();
    none_left(&pids, &out);
    assert!(
        !out.stdout.contains("PLAY RECAP"),
        "an interrupted run has no recap:\n{out}"
    );
    assert!(!out.stdout.contains("TASK [after the signal]"), "{out}");
    for h in hosts {
        assert!(
            !work.join(format!("after-{h}")).exists(),
            "{h} went on:\n{out}"
        );
    }
    // Bounded: the shims are given 3 s to end what they started.
    assert!(
        signalled.elapsed() < Duration::from_secs(100),
        "the interrupted run took {:?}",
        signalled.elapsed()
    );
    // The next run starts cleanly.
    let next = sb.write(
        "next.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - ping:\n",
    );
    let mut again = sb
        .play(&next, &work, &["-f", "20"])
        .env("SSH_AUTH_SOCK", "");
    if let Some(shim) = &shim {
        again = again.env("SANDBALL_SHIM", shim);
    }
    let again = again.run();
    again.assert_no_panic().assert_code(0);
    assert_eq!(again.recap().len(), hosts.len(), "{again}");
    out
}

#[test]
fn ctrl_c_ends_the_run_and_all_it_started_as_in_ansible() {
    let sb = Sandbox::new();
    let hosts = hosts(20);
    let names: Vec<&str> = hosts.iter().map(String::as_str).collect();
    sb.inventory_with_python(&names);
    let out = interrupted(&sb, &hosts, "INT", None);
    out.assert_no_panic().assert_code(99);
    assert!(
        out.stderr.contains("[ERROR]: User interrupted execution"),
        "{out}"
    );

    // ansible-playbook, on two of the hosts, says and exits the same.
    if let Some(theirs) = ansible_interrupted(&hosts[..2], "INT") {
        theirs.assert_code(99);
        assert!(
            theirs
                .stderr
                .contains("[ERROR]: User interrupted execution"),
            "{theirs}"
        );
    }
}

/// PLAY run by ansible-playbook on `hosts` of the local connection and signalled as
/// [`interrupted`] signals sandball; `None` without the reference.
fn ansible_interrupted(hosts: &[String], signal: &str) -> Option<Output> {
    let sb = Sandbox::new();
    let names: Vec<&str> = hosts.iter().map(String::as_str).collect();
    sb.inventory_with_python(&names);
    let work = sb.dir("work");
    let pb = sb.write("play.yml", PLAY);
    let run = sb.ansible_play(&pb, &work, &[])?;
    Some(
        run.limit(Duration::from_secs(120))
            .run_signalled(signal, || pids(&work, hosts).is_some()),
    )
}

#[test]
fn sigterm_ends_the_run_and_all_it_started_as_in_ansible() {
    let sb = Sandbox::new();
    let hosts = hosts(20);
    let names: Vec<&str> = hosts.iter().map(String::as_str).collect();
    sb.inventory_with_python(&names);
    let out = interrupted(&sb, &hosts, "TERM", None);
    // Killed by SIGTERM, as ansible-playbook is, and silent.
    out.assert_code(-15);
    assert!(
        !out.stderr.contains("[ERROR]") && !out.stderr.contains("panicked"),
        "{out}"
    );
    if let Some(theirs) = ansible_interrupted(&hosts[..2], "TERM") {
        theirs.assert_code(-15);
    }
}

#[test]
fn ctrl_c_over_ssh_ends_the_programs_on_the_nodes() {
    let sshd = Sshd::start();
    let sb = Sandbox::new();
    let hosts = hosts(5);
    let mut inv = String::from("[nodes]\n");
    for h in &hosts {
        inv.push_str(&sshd.host_line_warm(h, &sb.path().join(format!("node-{h}")), ""));
    }
    sb.write("inventory.ini", &inv);
    let out = interrupted(&sb, &hosts, "INT", Some(deployable_shim()));
    out.assert_no_panic().assert_code(99);
    assert!(
        out.stderr.contains("[ERROR]: User interrupted execution"),
        "{out}"
    );
}

#[test]
fn a_killed_controller_leaves_no_program_running() {
    let sb = Sandbox::new();
    let hosts = hosts(5);
    let names: Vec<&str> = hosts.iter().map(String::as_str).collect();
    sb.inventory_with_python(&names);
    let out = interrupted(&sb, &hosts, "KILL", None);
    out.assert_code(-9);
}

#[test]
fn a_killed_controller_leaves_no_program_running_over_ssh() {
    let sshd = Sshd::start();
    let sb = Sandbox::new();
    let hosts = hosts(3);
    let mut inv = String::from("[nodes]\n");
    for h in &hosts {
        inv.push_str(&sshd.host_line_warm(h, &sb.path().join(format!("node-{h}")), ""));
    }
    sb.write("inventory.ini", &inv);
    let out = interrupted(&sb, &hosts, "KILL", Some(deployable_shim()));
    out.assert_code(-9);
}
