//! Behaviour of the whole module, run natively through the SDK's `execute`: ports
//! opened and closed on 127.0.0.1, files appearing, going away and holding a pattern,
//! timeouts and the argument checks, as Ansible's wait_for behaves.

use super::{MANIFEST, wait_for};
use serde_json::json;
use std::io::Write;
use std::net::TcpListener;
use std::thread;
use std::time::Duration;

sandball_guest_sdk::module_test_helpers!(MANIFEST, wait_for);

#[test]
fn an_open_port_is_ready_at_once() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    ok(json!({"port": port, "host": "localhost", "timeout": 5}));
    let r = ok(json!({"port": port, "timeout": 5}));
    assert_eq!(r["state"], json!("started"));
    assert_eq!(r["port"], json!(port));
    assert_eq!(r["path"], json!(null));
    assert_eq!(r["search_regex"], json!(null));
    assert_eq!(r["match_groups"], json!([]));
    assert_eq!(r["match_groupdict"], json!({}));
    assert_eq!(r["elapsed"], json!(0));
    assert_eq!(r["changed"], json!(false));
}

#[test]
fn a_port_opened_later_is_waited_for() {
    let probe = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = probe.local_addr().unwrap().port();
    drop(probe);
    let opener = thread::spawn(move || {
        thread::sleep(Duration::from_millis(1500));
        let l = TcpListener::bind(("127.0.0.1", port)).unwrap();
        thread::sleep(Duration::from_secs(3));
        drop(l);
    });
    let r = ok(json!({"port": port, "timeout": 10}));
    assert!(r["elapsed"].as_u64().unwrap() >= 1, "{r:?}");
    opener.join().unwrap();
}

#[test]
fn a_closed_port_times_out_with_ansibles_message() {
    let probe = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = probe.local_addr().unwrap().port();
    drop(probe);
    let (r, failed) = run(json!({"port": port, "timeout": 1}));
    assert!(failed);
    assert_eq!(
        r["msg"],
        json!(format!("Timeout when waiting for 127.0.0.1:{port}"))
    );
    assert_eq!(r["elapsed"], json!(1));
    let msg = fails(json!({"port": port, "timeout": 1, "msg": "not up"}));
    assert_eq!(msg, "not up");
    // Stopped: a closed port is stopped at once; an open one times out.
    let r = ok(json!({"port": port, "state": "stopped", "timeout": 2}));
    assert_eq!(r["state"], json!("stopped"));
    let listener = TcpListener::bind(("127.0.0.1", port)).unwrap();
    let msg = fails(json!({"port": port, "state": "stopped", "timeout": 1}));
    assert_eq!(
        msg,
        format!("Timeout when waiting for 127.0.0.1:{port} to stop.")
    );
    drop(listener);
}

#[test]
fn a_port_must_send_what_the_pattern_matches() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = thread::spawn(move || {
        for _ in 0..2 {
            let (mut s, _) = listener.accept().unwrap();
            s.write_all(b"SSH-2.0-Test\r\n").unwrap();
            thread::sleep(Duration::from_millis(200));
        }
    });
    let r = ok(json!({"port": port, "search_regex": "^SSH-2", "timeout": 5}));
    assert_eq!(r["search_regex"], json!("^SSH-2"));
    let msg = fails(json!({"port": port, "search_regex": "HTTP", "timeout": 1}));
    assert_eq!(
        msg,
        format!("Timeout when waiting for search string HTTP in 127.0.0.1:{port}")
    );
    server.join().unwrap();
}

#[test]
fn files_appear_hold_patterns_and_go_away() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("f");
    let p = path.to_str().unwrap().to_string();
    let writer = {
        let path = path.clone();
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(1200));
            std::fs::write(&path, "starting\nready port=8080 name=web\n").unwrap();
        })
    };
    let r = ok(json!({
        "path": p,
        "search_regex": r"^ready port=(?P<port>\d+) name=(\w+)$",
        "timeout": 10,
    }));
    writer.join().unwrap();
    assert_eq!(r["match_groups"], json!(["8080", "web"]));
    assert_eq!(r["match_groupdict"], json!({"port": "8080"}));
    assert_eq!(r["path"], json!(p));
    assert_eq!(r["port"], json!(null));
    let msg = fails(json!({"path": p, "search_regex": "never", "timeout": 1}));
    assert_eq!(
        msg,
        format!("Timeout when waiting for search string never in {p}")
    );
    let r = ok(json!({"path": p, "state": "present", "timeout": 1}));
    assert_eq!(r["match_groups"], json!([]));
    // The result tells what the path is, as Ansible's add_path_info does.
    assert_eq!(
        (r["state"].clone(), r["size"].clone()),
        (json!("file"), json!(34))
    );
    let msg = fails(json!({"path": p, "state": "absent", "timeout": 1}));
    assert_eq!(msg, format!("Timeout when waiting for {p} to be absent."));
    std::fs::remove_file(&path).unwrap();
    let r = ok(json!({"path": p, "state": "absent", "timeout": 1}));
    assert_eq!(r["state"], json!("absent"));
    let msg = fails(json!({"path": p, "timeout": 1}));
    assert_eq!(msg, format!("Timeout when waiting for file {p}"));
}

#[test]
fn only_a_timeout_sleeps_that_long() {
    let r = ok(json!({"timeout": 1}));
    assert_eq!(r["elapsed"], json!(1));
    let r = ok(json!({"timeout": 0, "delay": 1}));
    assert_eq!(r["elapsed"], json!(1));
}

#[test]
fn bad_combinations_fail_before_waiting() {
    let msg = fails(json!({"port": 1, "path": "/x"}));
    assert_eq!(
        msg,
        "port and path parameter can not both be passed to wait_for"
    );
    let msg = fails(json!({"path": "/x", "state": "stopped"}));
    assert_eq!(
        msg,
        "state=stopped should only be used for checking a port in the wait_for module"
    );
    let msg = fails(json!({"port": 1, "exclude_hosts": ["10.0.0.1"]}));
    assert_eq!(msg, "exclude_hosts should only be with state=drained");
    let msg = fails(json!({"port": 1, "active_connection_states": ["BOGUS"]}));
    assert_eq!(msg, "unknown active_connection_state (BOGUS) defined");
    let msg = fails(json!({"port": 1, "state": "drained"}));
    assert!(msg.contains("state=drained is not supported"), "{msg}");
    let msg = fails(json!({"path": "/x", "search_regex": "("}));
    assert!(msg.starts_with("Invalid regular expression: "), "{msg}");
    let msg = fails(json!({"port": 1, "host": "db.example.com"}));
    assert!(
        msg.contains("\"db.example.com\"") && msg.contains("IP addresses"),
        "{msg}"
    );
    let msg = fails(json!({"port": 70000}));
    assert!(msg.contains("70000"), "{msg}");
}
