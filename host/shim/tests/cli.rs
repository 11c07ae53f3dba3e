//! The `sandball-shim` binary: `version`, one-shot `run`, and `serve` as a child
//! process speaking frames on its stdin/stdout.

mod common;

use common::*;
use sandball_shim::cache::sha256_hex;
use sandball_wire::capability::Grant;
use sandball_wire::frame::{self, FrameError};
use sandball_wire::protocol::{Outcome, Request, Response};
use sandball_wire::{PROTOCOL, VERSION};
use serde_json::json;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn shim() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sandball-shim"))
}

fn run_module(dir: &Path, body: &str, extra: &[&str]) -> Output {
    let module = dir.join("mod.wasm");
    std::fs::write(&module, component(body)).unwrap();
    shim()
        .arg("run")
        .arg(&module)
        .arg("--cache-dir")
        .arg(dir.join("cache"))
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn version_prints_versions() {
    let out = shim().arg("version").output().unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("sandball-shim {VERSION} (protocol {PROTOCOL})\n")
    );
}

#[test]
fn bad_command_lines_exit_2_with_usage() {
    let out = shim().arg("fly").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("unknown command \"fly\"") && err.contains("usage:"),
        "{err}"
    );
}

#[test]
fn run_prints_the_module_output_and_exits_with_its_code() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run_module(tmp.path(), HELLO, &[]);
    assert!(out.status.success());
    assert_eq!(out.stdout, b"hello from wasm\n");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let out = run_module(tmp.path(), ECHO, &["--args", r#"{"x": [1, 2]}"#]);
    assert_eq!(out.stdout, br#"{"x":[1,2]}"#);

    let out = run_module(tmp.path(), FAIL, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("exited with code 1"));
}

#[test]
fn run_reports_traps_limits_and_bad_options_on_stderr() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run_module(tmp.path(), TRAP, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("mod: trapped: "));

    let grant = tmp.path().join("grant.json");
    std::fs::write(
        &grant,
        r#"{"limits": {"memory_bytes": 1048576, "wall_time_ms": 50, "output_bytes": 100}}"#,
    )
    .unwrap();
    let out = run_module(
        tmp.path(),
        SPIN,
        &["--grant", &format!("@{}", grant.display())],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("timed out (wall-time limit 50 ms)"));

    let out = run_module(tmp.path(), HELLO, &["--grant", "{\"fs\": 3}"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--grant is not valid"));
}

fn frames(requests: &[(Request, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    for (r, p) in requests {
        out.extend(frame::encode(r, p).unwrap());
    }
    out
}

/// Runs `serve` on `input` as a controller does: its standard input stays open until
/// the shim has answered and ended (a shim whose input closes takes its controller
/// for gone and stops at once).
fn serve(input: &[u8], cache: &Path) -> Output {
    let mut child = shim()
        .arg("serve")
        .arg("--cache-dir")
        .arg(cache)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    out
}

#[test]
fn serve_speaks_only_frames_on_stdout() {
    let tmp = tempfile::tempdir().unwrap();
    let module = component(HELLO);
    let sha = sha256_hex(&module);
    let hello = Request::Hello {
        version: VERSION.into(),
        protocol: PROTOCOL,
    };
    let input = frames(&[
        (hello, &[]),
        (
            Request::PutModule {
                sha256: sha.clone(),
                gzip: false,
            },
            &module,
        ),
        (
            Request::Run {
                id: 9,
                sha256: sha,
                module: "hello".into(),
                args: json!({}),
                grant: Grant::default(),
            },
            &[],
        ),
        (Request::Shutdown, &[]),
    ]);
    let out = serve(&input, &tmp.path().join("cache"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut stream = &out.stdout[..];
    let mut responses = Vec::new();
    loop {
        match frame::read::<Response, _>(&mut stream) {
            Ok(f) => responses.push(f),
            Err(FrameError::Closed) => break,
            Err(e) => panic!("stdout is not only frames: {e}"),
        }
    }
    assert_eq!(responses.len(), 4);
    assert!(matches!(responses[1].header, Response::Stored { .. }));
    match &responses[2].header {
        Response::RunResult(r) => assert_eq!(r.outcome, Outcome::Exited { code: 0 }),
        other => panic!("{other:?}"),
    }
    assert_eq!(responses[2].payload, b"hello from wasm\n");
    let mode = std::fs::metadata(tmp.path().join("cache")).unwrap();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode.permissions()) & 0o777,
        0o700
    );
}

#[test]
fn serve_exits_non_zero_on_mismatch_and_broken_frames() {
    let tmp = tempfile::tempdir().unwrap();
    let old = Request::Hello {
        version: "0.0.1".into(),
        protocol: PROTOCOL,
    };
    let out = serve(&frames(&[(old, &[])]), tmp.path());
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("version mismatch"));

    let out = serve(&u32::MAX.to_be_bytes(), tmp.path());
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("frame too large"));
    assert!(out.stdout.is_empty());
}

#[test]
fn serve_leaves_nothing_of_its_environment_readable() {
    let dir = tempfile::tempdir().unwrap();
    let secret = "sandball-shim-env-secret-7731";
    let mut child = shim()
        .arg("serve")
        .arg("--cache-dir")
        .arg(dir.path().join("cache"))
        .env("SANDBALL_TEST_SECRET", secret)
        .env("AWS_SECRET_ACCESS_KEY", secret)
        .env("LC_ALL", "C")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    // Once the shim answers, it has scrubbed its environment.
    let hello = Request::Hello {
        version: VERSION.to_string(),
        protocol: PROTOCOL,
    };
    frame::write(&mut stdin, &hello, &[]).unwrap();
    let answer = frame::read::<Response, _>(&mut stdout).unwrap();
    assert!(matches!(answer.header, Response::Hello { .. }));
    let environ = std::fs::read(format!("/proc/{}/environ", child.id())).unwrap();
    let text = String::from_utf8_lossy(&environ);
    drop(stdin);
    let _ = child.wait();
    assert!(!text.contains(secret), "{text:?}");
    assert!(!text.contains("SANDBALL_TEST_SECRET"), "{text:?}");
    assert!(
        environ.iter().all(|&b| b == 0),
        "the environment block still holds text: {text:?}"
    );
}
