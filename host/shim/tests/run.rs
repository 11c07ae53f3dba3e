//! Runs real (WAT-built) components through the runtime: output, exit codes, traps,
//! each resource limit, host-interface denials and the compiled-code cache.

mod common;

use common::*;
use sandball_shim::Runtime;
use sandball_shim::ShimError;
use sandball_shim::cache::{Cache, sha256_hex};
use sandball_shim::runtime::RunOutput;
use sandball_wire::capability::{Access, FsGrant, FsScope, Grant, Limits};
use sandball_wire::protocol::Outcome;
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

fn runtime() -> (tempfile::TempDir, Runtime) {
    let dir = tempfile::tempdir().unwrap();
    let rt = Runtime::new(Cache::open(dir.path()).unwrap()).unwrap();
    (dir, rt)
}

fn run_with(rt: &mut Runtime, bytes: &[u8], args: Value, grant: &Grant) -> RunOutput {
    let sha = rt.load("test", bytes).unwrap();
    rt.run(7, &sha, "test", &args, grant).unwrap()
}

fn run(body: &str, grant: &Grant) -> RunOutput {
    let (_dir, mut rt) = runtime();
    run_with(&mut rt, &component(body), json!({}), grant)
}

fn limits(f: impl FnOnce(&mut Limits)) -> Grant {
    let mut grant = Grant::default();
    f(&mut grant.limits);
    grant
}

#[test]
fn a_clean_run_returns_its_output() {
    let out = run(HELLO, &Grant::default());
    assert_eq!(out.result.outcome, Outcome::Exited { code: 0 });
    assert_eq!(out.result.id, 7);
    assert_eq!(out.stdout, b"hello from wasm\n");
    assert!(out.result.denials.is_empty());
    assert!(out.result.elapsed_us > 0);
}

#[test]
fn arguments_arrive_as_json_on_stdin() {
    let (_dir, mut rt) = runtime();
    let out = run_with(
        &mut rt,
        &component(ECHO),
        json!({"path": "/tmp/x", "n": 1}),
        &Grant::default(),
    );
    assert_eq!(out.result.outcome, Outcome::Exited { code: 0 });
    let echoed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(echoed, json!({"path": "/tmp/x", "n": 1}));
}

#[test]
fn an_error_return_is_exit_code_one() {
    assert_eq!(
        run(FAIL, &Grant::default()).result.outcome,
        Outcome::Exited { code: 1 }
    );
}

#[test]
fn a_trap_is_reported_with_its_backtrace() {
    match run(TRAP, &Grant::default()).result.outcome {
        Outcome::Trapped { message } => {
            assert!(message.contains("unreachable"), "{message}");
            assert!(message.contains("wasm backtrace"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_endless_loop_times_out() {
    let started = Instant::now();
    let out = run(SPIN, &limits(|l| l.wall_time_ms = 100));
    assert_eq!(out.result.outcome, Outcome::TimedOut { limit_ms: 100 });
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(out.result.elapsed_us >= 100_000);
}

#[test]
fn unbounded_memory_growth_runs_out_of_memory() {
    let out = run(GROW, &limits(|l| l.memory_bytes = 4 << 20));
    assert_eq!(
        out.result.outcome,
        Outcome::OutOfMemory {
            limit_bytes: 4 << 20
        }
    );
}

#[test]
fn too_much_output_hits_the_output_limit() {
    let out = run(FLOOD, &limits(|l| l.output_bytes = 10_000));
    assert_eq!(
        out.result.outcome,
        Outcome::OutputLimit {
            limit_bytes: 10_000
        }
    );
    assert_eq!(out.stdout.len(), 10_000);
}

#[test]
fn output_up_to_the_limit_is_fine() {
    let out = run(FLOOD, &limits(|l| l.output_bytes = 64 << 10));
    assert_eq!(out.result.outcome, Outcome::Exited { code: 0 });
    assert_eq!(out.stdout.len(), 64 << 10);
}

#[test]
fn there_is_no_network() {
    let out = run(TCP, &Grant::default());
    assert_eq!(out.result.outcome, Outcome::Exited { code: 0 });
    assert_eq!(out.stdout, b"access-denied\n");
}

#[test]
fn a_network_grant_allows_tcp_sockets() {
    let grant = Grant {
        net: vec!["127.0.0.1:9".into()],
        ..Grant::default()
    };
    let out = run(TCP, &grant);
    assert_eq!(out.result.outcome, Outcome::Exited { code: 0 });
    assert_eq!(out.stdout, b"allowed\n");
}

#[test]
fn host_calls_outside_the_grant_are_denied_and_recorded() {
    let (_dir, mut rt) = runtime();
    let bytes = component_with_data(&chmod_body("/etc/hostname"), "/etc/hostname");
    let out = run_with(&mut rt, &bytes, json!({}), &Grant::default());
    assert_eq!(out.result.outcome, Outcome::Exited { code: 0 });
    let message = String::from_utf8(out.stdout).unwrap();
    assert!(
        message.starts_with("chmod of /etc/hostname denied"),
        "{message}"
    );
    assert!(message.contains("fs read-write /etc/hostname"), "{message}");
    assert_eq!(out.result.denials.len(), 1);
    assert_eq!(
        out.result.denials[0].capability,
        "fs read-write /etc/hostname"
    );
}

#[test]
fn host_calls_inside_the_grant_work() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("f");
    std::fs::write(&file, b"x").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let path = file.to_str().unwrap();
    let grant = Grant {
        fs: vec![FsGrant {
            path: path.to_string(),
            ops: Access::ReadWrite.into(),
            scope: FsScope::Entry,
        }],
        ..Grant::default()
    };
    let (_dir, mut rt) = runtime();
    let out = run_with(
        &mut rt,
        &component_with_data(&chmod_body(path), path),
        json!({}),
        &grant,
    );
    assert_eq!(out.result.outcome, Outcome::Exited { code: 0 });
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o644);
}

#[test]
fn compiled_code_is_cached_on_disk_and_reused() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = component(HELLO);
    let sha = sha256_hex(&bytes);
    {
        let mut rt = Runtime::new(Cache::open(dir.path()).unwrap()).unwrap();
        assert!(!rt.has_module(&sha).unwrap());
        assert_eq!(rt.load("hello", &bytes).unwrap(), sha);
        assert!(rt.cache().compiled_path(&sha, rt.fingerprint()).is_file());
    }
    // A new process finds the compiled code without the module being stored.
    let mut rt = Runtime::new(Cache::open(dir.path()).unwrap()).unwrap();
    assert!(rt.has_module(&sha).unwrap());
    let out = rt
        .run(1, &sha, "hello", &json!({}), &Grant::default())
        .unwrap();
    assert_eq!(out.stdout, b"hello from wasm\n");
}

#[test]
fn unknown_modules_and_bad_network_grants_are_errors() {
    let (_dir, mut rt) = runtime();
    let sha = sha256_hex(b"nothing");
    let err = rt
        .run(1, &sha, "m", &json!({}), &Grant::default())
        .unwrap_err();
    assert!(matches!(err, ShimError::UnknownModule(_)), "{err}");
    let bytes = component(HELLO);
    let sha = rt.load("m", &bytes).unwrap();
    let grant = Grant {
        net: vec!["example.org".into()],
        ..Grant::default()
    };
    let err = rt.run(1, &sha, "m", &json!({}), &grant).unwrap_err();
    assert!(err.to_string().contains("bad network pattern"), "{err}");
}

#[test]
fn a_run_costs_well_under_a_millisecond_once_linked() {
    let (_dir, mut rt) = runtime();
    let bytes = component(HELLO);
    run_with(&mut rt, &bytes, json!({}), &Grant::default());
    let sha = sha256_hex(&bytes);
    let n = 200;
    let started = Instant::now();
    for i in 0..n {
        let out = rt
            .run(i, &sha, "hello", &json!({}), &Grant::default())
            .unwrap();
        assert_eq!(out.result.outcome, Outcome::Exited { code: 0 });
    }
    let per_run = started.elapsed() / n as u32;
    eprintln!("per run: {per_run:?}");
    // Generous for unoptimised test builds; release builds are far below.
    assert!(per_run < Duration::from_millis(5), "{per_run:?}");
}
