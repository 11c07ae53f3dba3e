//! The `wait_for` component against ansible-core's module of the same name: one
//! playbook of scenarios (ports the test opens, opens later and keeps closed on
//! 127.0.0.1, files written later, patterns, timeouts, bad arguments) run under
//! sandball and ansible-playbook 2.19, each task's result fields compared (`elapsed`
//! excepted: it is wall time); and the grant the audit shows for it.

use sandball_e2e::Sandbox;
use sandball_e2e::compare::{ansible_bin, both_run};
use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

/// A loopback port nothing listens on (bound, then let go).
fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// Serves a banner on a loopback port for as long as the test runs.
fn banner_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    thread::spawn(move || {
        for s in l.incoming().flatten() {
            let mut s = s;
            let _ = s.write_all(b"SSH-2.0-Banner_7\r\n");
        }
    });
    port
}

/// Waits (at most two minutes) for the play to write `trigger` in `work`, then, after
/// a second and a half, runs `act`.
fn after_trigger(work: PathBuf, trigger: &'static str, act: impl FnOnce(&Path) + Send + 'static) {
    thread::spawn(move || {
        let start = Instant::now();
        while !work.join(trigger).exists() {
            if start.elapsed() > Duration::from_secs(120) {
                return;
            }
            thread::sleep(Duration::from_millis(50));
        }
        thread::sleep(Duration::from_millis(1500));
        act(&work);
    });
}

const PLAY: &str = r##"
- hosts: all
  gather_facts: false
  tasks:
    - name: an open port
      wait_for: {port: OPEN, timeout: 10}
    - name: an open port on localhost
      wait_for: {port: OPEN, host: localhost, timeout: 10}
    - name: a pattern in what the port sends
      wait_for: {port: OPEN, search_regex: '^SSH-(?P<major>\d)\.(\d)', timeout: 10}
    - name: a pattern the port never sends
      wait_for: {port: OPEN, search_regex: 'HTTP', timeout: 2}
      ignore_errors: true
    - name: a closed port
      wait_for: {port: CLOSED, host: 127.0.0.1, timeout: 1}
      ignore_errors: true
    - name: a closed port with a message
      wait_for: {port: CLOSED, timeout: 1, msg: "nothing on CLOSED"}
      ignore_errors: true
    - name: a closed port is stopped
      wait_for: {port: CLOSED, state: stopped, timeout: 5}
    - name: an open port does not stop
      wait_for: {port: OPEN, state: stopped, timeout: 1}
      ignore_errors: true
    - name: ask for a port later
      copy: {dest: "{{ work }}/open-later", content: ""}
    - name: a port opened later
      wait_for: {port: LATE, delay: 0, sleep: 1, connect_timeout: 2, timeout: 20}
    - name: ask for a file later
      copy: {dest: "{{ work }}/write-later", content: ""}
    - name: a file written later with a pattern
      wait_for:
        path: "{{ work }}/later.log"
        search_regex: '^ready port=(?P<port>\d+) (\w+)( \w+)?$'
        timeout: 20
    - name: the file is present
      wait_for: {path: "{{ work }}/later.log", state: present, timeout: 2}
    - name: a pattern the file lacks
      wait_for: {path: "{{ work }}/later.log", search_regex: 'never', timeout: 1}
      ignore_errors: true
    - name: the file is not absent
      wait_for: {path: "{{ work }}/later.log", state: absent, timeout: 1}
      ignore_errors: true
    - name: a missing file is absent
      wait_for: {path: "{{ work }}/missing", state: absent, timeout: 2}
    - name: a missing file times out
      wait_for: {path: "{{ work }}/missing", timeout: 1}
      ignore_errors: true
    - name: only time
      wait_for: {timeout: 1}
    - name: a sysfs file named through the kernel's links
      wait_for: {path: /sys/class/net/lo/address, search_regex: "00:00", timeout: 5}
    - name: port and path
      wait_for: {port: OPEN, path: "{{ work }}/later.log"}
      ignore_errors: true
    - name: stopped for a path
      wait_for: {path: "{{ work }}/later.log", state: stopped}
      ignore_errors: true
    - name: exclude_hosts without drained
      wait_for: {port: OPEN, exclude_hosts: [10.0.0.1]}
      ignore_errors: true
    - name: an unknown connection state
      wait_for: {port: OPEN, active_connection_states: [BOGUS]}
      ignore_errors: true
    - name: a bad pattern
      wait_for: {path: "{{ work }}/later.log", search_regex: '('}
      ignore_errors: true
"##;

const RESULT: &[&str] = &[
    "changed",
    "mode",
    "size",
    "uid",
    "owner",
    "failed",
    "msg",
    "state",
    "port",
    "path",
    "search_regex",
    "match_groups",
    "match_groupdict",
];
const FAILED: &[&str] = &["changed", "failed", "msg"];

const FIELDS: &[(&str, &[&str])] = &[
    ("an open port", RESULT),
    ("an open port on localhost", RESULT),
    ("a pattern in what the port sends", RESULT),
    ("a pattern the port never sends", FAILED),
    ("a closed port", FAILED),
    ("a closed port with a message", FAILED),
    ("a closed port is stopped", RESULT),
    ("an open port does not stop", FAILED),
    ("a port opened later", RESULT),
    ("a file written later with a pattern", RESULT),
    ("the file is present", RESULT),
    ("a pattern the file lacks", FAILED),
    ("the file is not absent", FAILED),
    ("a missing file is absent", RESULT),
    ("a missing file times out", FAILED),
    ("only time", RESULT),
    ("port and path", &["failed", "msg", "elapsed"]),
    ("stopped for a path", &["failed", "msg", "elapsed"]),
    (
        "exclude_hosts without drained",
        &["failed", "msg", "elapsed"],
    ),
    ("an unknown connection state", &["failed", "msg", "elapsed"]),
    // The pattern's error is worded by the regex engine, not by Python's `re`.
    ("a bad pattern", &["failed"]),
];

#[test]
fn wait_for_matches_ansible_core() {
    let (open, closed, late) = (banner_port(), free_port(), free_port());
    let sb = Sandbox::new();
    for name in ["work", "ansible-work"] {
        let work = sb.dir(name);
        after_trigger(work.clone(), "open-later", move |_| {
            let l = TcpListener::bind(("127.0.0.1", late)).unwrap();
            thread::sleep(Duration::from_secs(6));
            drop(l);
        });
        after_trigger(work, "write-later", |w| {
            std::fs::write(w.join("later.log"), "booting\nready port=8080 web\n").unwrap();
        });
    }
    let play = PLAY
        .replace("OPEN", &open.to_string())
        .replace("CLOSED", &closed.to_string())
        .replace("LATE", &late.to_string());
    let (ours, _, _, _) = both_run(&sb, &ansible_bin("ANSIBLE_BIN_DIR", "venv"), &play, FIELDS);
    assert!(!ours.stdout.contains("legacy"), "{ours}");
    let results = ours
        .task_results("a file written later with a pattern")
        .join("\n");
    assert!(results.contains("\"8080\""), "{ours}");
    let results = ours.task_results("a bad pattern").join("\n");
    assert!(results.contains("Invalid regular expression"), "{ours}");
}

#[test]
fn the_grant_is_the_port_or_the_file() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let pb = sb.write(
        "grant.yml",
        r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: port
      wait_for: {port: 8123}
    - name: file
      wait_for: {path: /srv/ready, search_regex: up}
    - name: time
      wait_for: {timeout: 1}
"#,
    );
    let (pb, inventory) = (pb.display().to_string(), sb.path().join("inventory.ini"));
    let inventory = inventory.display().to_string();
    let out = sb
        .sandball(["audit", "playbook", &pb, "-i", &inventory, "--json"])
        .run();
    out.assert_code(0);
    let report: serde_json::Value =
        serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out}"));
    let grant = |task: &str| {
        let entry = report
            .as_array()
            .and_then(|tasks| tasks.iter().find(|t| t["task"] == task))
            .unwrap_or_else(|| panic!("no task {task}: {report}"));
        assert_eq!(entry["kind"], "component", "{entry}");
        let g = &entry["grant"];
        (
            g["fs"].clone(),
            g["exec"].clone(),
            g["net"].clone(),
            g["dns"].clone(),
        )
    };
    use serde_json::json;
    assert_eq!(
        grant("port"),
        (
            json!([]),
            json!([]),
            json!(["127.0.0.1:8123"]),
            json!(false)
        )
    );
    assert_eq!(
        grant("file"),
        (
            json!([{"path": "/srv/ready", "access": "read"}]),
            json!([]),
            json!([]),
            json!(false)
        )
    );
    assert_eq!(
        grant("time"),
        (json!([]), json!([]), json!([]), json!(false))
    );
}
