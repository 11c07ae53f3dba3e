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
            create_parents: false,
            create_parents_if: None,
            fallback: None,
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

/// A component whose core module defines `memories` memories of `pages` pages each,
/// instantiated `instances` times.
fn hoarder(memories: usize, pages: u32, instances: usize) -> Vec<u8> {
    let mems = format!("(memory {pages}) ").repeat(memories);
    let mut wat = format!(
        r#"(component
  (core module $M {mems}
    (func (export "run") (result i32) (i32.const 0)))
"#
    );
    for i in 0..instances {
        wat.push_str(&format!("  (core instance $m{i} (instantiate $M))\n"));
    }
    wat.push_str(
        r#"  (func $run (result (result)) (canon lift (core func $m0 "run")))
  (instance $run-inst (export "run" (func $run)))
  (export "wasi:cli/run@0.2.0" (instance $run-inst))
)"#,
    );
    wat::parse_str(wat).unwrap()
}

#[test]
fn memories_tables_and_instances_are_bounded_together() {
    let grant = limits(|l| l.memory_bytes = 256 << 20);
    // 32 memories of 64 KiB: within the memory limit, beyond the number allowed.
    let (_dir, mut rt) = runtime();
    let out = run_with(&mut rt, &hoarder(32, 1, 1), json!({}), &grant);
    match &out.result.outcome {
        Outcome::Trapped { message } => assert!(message.contains("memory"), "{message}"),
        other => panic!("32 memories were allowed: {other:?}"),
    }
    // 8 instances, each with a memory of 64 MiB: each fits the limit alone, together
    // they would hold 512 MiB.
    let out = run_with(&mut rt, &hoarder(1, 1024, 8), json!({}), &grant);
    assert_eq!(
        out.result.outcome,
        Outcome::OutOfMemory {
            limit_bytes: 256 << 20
        }
    );
    // Within every limit, it runs.
    let out = run_with(&mut rt, &hoarder(2, 1, 2), json!({}), &grant);
    assert_eq!(out.result.outcome, Outcome::Exited { code: 0 });
    // Too many instances.
    let out = run_with(&mut rt, &hoarder(0, 0, 300), json!({}), &grant);
    match &out.result.outcome {
        Outcome::Trapped { message } => assert!(message.contains("instance"), "{message}"),
        other => panic!("300 instances were allowed: {other:?}"),
    }
}

#[test]
fn extreme_limits_neither_panic_nor_overflow() {
    let (_dir, mut rt) = runtime();
    for value in [u64::MAX, u64::MAX - 1, 1 << 63, 0] {
        let grant = limits(|l| {
            l.memory_bytes = value;
            l.wall_time_ms = value;
            l.output_bytes = value;
        });
        let out = run_with(&mut rt, &component(HELLO), json!({}), &grant);
        if value == 0 {
            assert_ne!(out.result.outcome, Outcome::Exited { code: 0 });
        } else {
            assert_eq!(out.result.outcome, Outcome::Exited { code: 0 }, "{value}");
            assert_eq!(out.stdout, b"hello from wasm\n");
        }
    }
}

#[test]
fn tampered_compiled_code_is_never_loaded_and_is_compiled_again() {
    let dir = tempfile::tempdir().unwrap();
    let hello = component(HELLO);
    let other = component(FAIL);
    let sha = sha256_hex(&hello);
    let fingerprint = {
        let mut rt = Runtime::new(Cache::open(dir.path()).unwrap()).unwrap();
        rt.put_module(&sha, &hello, false).unwrap();
        rt.load("hello", &hello).unwrap();
        rt.load("other", &other).unwrap();
        rt.fingerprint().to_string()
    };
    let cache = Cache::open(dir.path()).unwrap();
    let hello_code = cache.compiled_path(&sha, &fingerprint);
    // Valid native code, but another module's, where hello's code was: a loader that
    // trusts the file runs it (and exits 1 without a word).
    std::fs::copy(
        cache.compiled_path(&sha256_hex(&other), &fingerprint),
        &hello_code,
    )
    .unwrap();
    let mut rt = Runtime::new(Cache::open(dir.path()).unwrap()).unwrap();
    assert!(rt.has_module(&sha).unwrap());
    let out = rt
        .run(1, &sha, "hello", &json!({}), &Grant::default())
        .unwrap();
    assert_eq!(out.result.outcome, Outcome::Exited { code: 0 });
    assert_eq!(out.stdout, b"hello from wasm\n");
    let warned = out.result.warnings.join("\n");
    assert!(
        warned.contains("was not loaded")
            && warned.contains("recorded when it was compiled")
            && warned.contains("compiling it again"),
        "{warned}"
    );
    // Compiled again, with its sha256 recorded: the next process loads it silently.
    assert_eq!(
        std::fs::read_to_string(cache.digest_path(&sha, &fingerprint)).unwrap(),
        sha256_hex(&std::fs::read(&hello_code).unwrap())
    );
    let mut rt = Runtime::new(Cache::open(dir.path()).unwrap()).unwrap();
    let out = rt
        .run(2, &sha, "hello", &json!({}), &Grant::default())
        .unwrap();
    assert_eq!(out.stdout, b"hello from wasm\n");
    assert!(out.result.warnings.is_empty(), "{:?}", out.result.warnings);
    // Code without a recorded sha256, or that others may write, is not loaded either.
    std::fs::remove_file(cache.digest_path(&sha, &fingerprint)).unwrap();
    let mut rt = Runtime::new(Cache::open(dir.path()).unwrap()).unwrap();
    let out = rt
        .run(3, &sha, "hello", &json!({}), &Grant::default())
        .unwrap();
    assert!(
        out.result
            .warnings
            .join("\n")
            .contains("no sha256 was recorded"),
        "{:?}",
        out.result.warnings
    );
    std::fs::set_permissions(&hello_code, std::fs::Permissions::from_mode(0o666)).unwrap();
    let mut rt = Runtime::new(Cache::open(dir.path()).unwrap()).unwrap();
    let out = rt
        .run(4, &sha, "hello", &json!({}), &Grant::default())
        .unwrap();
    assert!(
        out.result
            .warnings
            .join("\n")
            .contains("writable by group or others"),
        "{:?}",
        out.result.warnings
    );
    assert_eq!(out.stdout, b"hello from wasm\n");
}

#[test]
fn a_corrupt_stored_module_is_removed_and_reported_missing() {
    let dir = tempfile::tempdir().unwrap();
    let hello = component(HELLO);
    let sha = sha256_hex(&hello);
    let cache = Cache::open(dir.path()).unwrap();
    cache.store_module(&sha, &hello).unwrap();
    let mut patched = hello.clone();
    let last = patched.len() - 1;
    patched[last] ^= 1;
    std::fs::write(cache.module_path(&sha), &patched).unwrap();
    let mut rt = Runtime::new(Cache::open(dir.path()).unwrap()).unwrap();
    let err = rt
        .run(1, &sha, "hello", &json!({}), &Grant::default())
        .unwrap_err();
    assert_eq!(err.missing_module(), Some(sha.as_str()), "{err}");
    assert!(err.to_string().contains("is corrupt"), "{err}");
    assert!(!cache.module_path(&sha).exists());
    // Asked again, the shim says it does not hold it: the controller sends it.
    std::fs::write(cache.module_path(&sha), &patched).unwrap();
    assert!(!rt.has_module(&sha).unwrap());
    assert!(!cache.module_path(&sha).exists());
    rt.put_module(&sha, &hello, false).unwrap();
    assert!(rt.has_module(&sha).unwrap());
    let out = rt
        .run(2, &sha, "hello", &json!({}), &Grant::default())
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

/// Once a component is linked, running it again needs nothing from the cache: the
/// compiled component stays in memory, so a run is not a compilation. (What a run
/// costs is measured in `make bench`.)
#[test]
fn a_linked_component_runs_again_without_the_cache() {
    let (dir, mut rt) = runtime();
    let bytes = component(HELLO);
    run_with(&mut rt, &bytes, json!({}), &Grant::default());
    let sha = sha256_hex(&bytes);
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            std::fs::remove_dir_all(&path).unwrap();
        } else {
            std::fs::remove_file(&path).unwrap();
        }
    }
    for i in 0..20 {
        let out = rt
            .run(i, &sha, "hello", &json!({}), &Grant::default())
            .unwrap();
        assert_eq!(out.result.outcome, Outcome::Exited { code: 0 });
    }
}
