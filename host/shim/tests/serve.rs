//! The session loop over in-memory streams: handshake, module upload and lookup,
//! runs, bad requests and shutdown.

mod common;

use common::*;
use sandball_shim::Runtime;
use sandball_shim::cache::{Cache, sha256_hex};
use sandball_shim::serve::{End, ServeError, serve};
use sandball_wire::capability::Grant;
use sandball_wire::frame::{self, Frame, FrameError};
use sandball_wire::protocol::{ModuleEntry, Outcome, Request, Response};
use sandball_wire::{PROTOCOL, VERSION};
use serde_json::json;

fn hello() -> Request {
    Request::Hello {
        version: VERSION.to_string(),
        protocol: PROTOCOL,
    }
}

fn encode(requests: &[(Request, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    for (r, payload) in requests {
        out.extend(frame::encode(r, payload).unwrap());
    }
    out
}

fn decode(mut bytes: &[u8]) -> Vec<Frame<Response>> {
    let mut out = Vec::new();
    loop {
        match frame::read::<Response, _>(&mut bytes) {
            Ok(f) => out.push(f),
            Err(FrameError::Closed) => return out,
            Err(e) => panic!("bad response stream: {e}"),
        }
    }
}

fn session(input: &[u8]) -> (Result<End, ServeError>, Vec<Frame<Response>>) {
    let dir = tempfile::tempdir().unwrap();
    let mut rt = Runtime::new(Cache::open(dir.path()).unwrap()).unwrap();
    let mut output = Vec::new();
    let end = serve(&mut rt, &mut &input[..], &mut output);
    (end, decode(&output))
}

fn error_message(f: &Frame<Response>) -> &str {
    match &f.header {
        Response::Error { message, .. } => message,
        other => panic!("expected an error, got {other:?}"),
    }
}

#[test]
fn a_whole_session_answers_every_request_in_order() {
    let module = component(HELLO);
    let sha = sha256_hex(&module);
    let wrong = sha256_hex(b"something else");
    let run = |id| Request::Run {
        id,
        sha256: sha.clone(),
        module: "hello".into(),
        args: json!({}),
        grant: Grant::default(),
    };
    let mut input = encode(&[
        (hello(), &[]),
        (
            Request::HasModule {
                sha256: sha.clone(),
            },
            &[],
        ),
        (
            Request::PutModule {
                sha256: wrong.clone(),
                gzip: false,
            },
            &module,
        ),
        (
            Request::HasModule {
                sha256: wrong.clone(),
            },
            &[],
        ),
        (
            Request::PutModule {
                sha256: sha.clone(),
                gzip: false,
            },
            &module,
        ),
        (
            Request::HasModule {
                sha256: sha.clone(),
            },
            &[],
        ),
        (run(5), &[]),
        (run(6), &[]),
    ]);
    // A complete frame whose header is not a request.
    input.extend(frame::encode(&json!({"op": "fly"}), &[]).unwrap());
    input.extend(encode(&[
        (
            Request::HasModule {
                sha256: "../etc".into(),
            },
            &[],
        ),
        (Request::Shutdown, &[]),
        (
            Request::HasModule {
                sha256: sha.clone(),
            },
            &[],
        ),
    ]));

    let (end, out) = session(&input);
    assert_eq!(end.unwrap(), End::Shutdown);
    assert_eq!(out.len(), 11, "one response per request up to shutdown");
    match &out[0].header {
        Response::Hello {
            version,
            protocol,
            engine,
            os,
            arch,
        } => {
            assert_eq!((version.as_str(), *protocol), (VERSION, PROTOCOL));
            assert_eq!(engine.len(), 32);
            assert_eq!(os, std::env::consts::OS);
            assert_eq!(arch, std::env::consts::ARCH);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(out[1].header, Response::HasModule { present: false });
    assert!(error_message(&out[2]).contains("not the announced"));
    assert_eq!(out[3].header, Response::HasModule { present: false });
    assert_eq!(
        out[4].header,
        Response::Stored {
            sha256: sha.clone()
        }
    );
    assert_eq!(out[5].header, Response::HasModule { present: true });
    for (f, id) in [(&out[6], 5), (&out[7], 6)] {
        match &f.header {
            Response::RunResult(r) => {
                assert_eq!(r.id, id);
                assert_eq!(r.outcome, Outcome::Exited { code: 0 });
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(f.payload, b"hello from wasm\n");
    }
    assert!(error_message(&out[8]).starts_with("bad request"));
    assert!(error_message(&out[9]).contains("is not a sha256"));
    assert!(matches!(out[10].header, Response::Hello { .. }));
}

/// `bytes` gzip-compressed.
fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

#[test]
fn a_gzip_upload_is_stored_uncompressed_and_one_request_names_the_missing_modules() {
    let module = component(HELLO);
    let sha = sha256_hex(&module);
    let absent = sha256_hex(b"absent");
    let packed = gzip(&module);
    assert!(packed.len() < module.len());
    // Cut short: not a whole gzip stream.
    let torn = &packed[..packed.len() / 2];
    let missing = Request::MissingModules {
        sha256s: vec![sha.clone(), absent.clone()],
    };
    let put = |gzip| Request::PutModule {
        sha256: sha.clone(),
        gzip,
    };
    let input = encode(&[
        (hello(), &[]),
        (missing.clone(), &[]),
        (put(true), torn),
        (missing.clone(), &[]),
        // The compressed bytes are not the module: the sha256 is of the uncompressed.
        (put(false), &packed),
        (put(true), &packed),
        (missing, &[]),
        (
            Request::Run {
                id: 1,
                sha256: sha.clone(),
                module: "hello".into(),
                args: json!({}),
                grant: Grant::default(),
            },
            &[],
        ),
    ]);
    let (end, out) = session(&input);
    assert_eq!(end.unwrap(), End::Closed);
    assert_eq!(out.len(), 8);
    let both = Response::MissingModules {
        sha256s: vec![sha.clone(), absent.clone()],
    };
    assert_eq!(out[1].header, both);
    let message = error_message(&out[2]);
    assert!(message.contains("is not a gzip stream"), "{message}");
    assert_eq!(out[3].header, both);
    assert!(error_message(&out[4]).contains("not the announced"));
    assert_eq!(out[5].header, Response::Stored { sha256: sha });
    assert_eq!(
        out[6].header,
        Response::MissingModules {
            sha256s: vec![absent]
        }
    );
    assert_eq!(out[7].payload, b"hello from wasm\n");
}

/// `bytes` as one xz stream, as the controller sends a batch of modules.
fn xz(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut w =
        lzma_rust2::XzWriter::new(Vec::new(), lzma_rust2::XzOptions::with_preset(6)).unwrap();
    w.write_all(bytes).unwrap();
    w.finish().unwrap()
}

#[test]
fn a_batch_of_modules_in_one_xz_stream_is_stored_module_by_module() {
    let (one, two) = (component(HELLO), component_with_data(HELLO, "two"));
    let entry = |bytes: &[u8]| ModuleEntry {
        sha256: sha256_hex(bytes),
        bytes: bytes.len() as u64,
    };
    let both = [one.clone(), two.clone()].concat();
    let packed = xz(&both);
    let put = |modules: Vec<ModuleEntry>, xz| Request::PutModules { modules, xz };
    let missing = Request::MissingModules {
        sha256s: vec![sha256_hex(&one), sha256_hex(&two)],
    };
    // The second module's length one byte short: the payload holds a byte more.
    let mut short = entry(&two);
    short.bytes -= 1;
    // The second module announced under another address.
    let mut wrong = entry(&two);
    wrong.sha256 = sha256_hex(b"other");
    let input = encode(&[
        (hello(), &[]),
        (put(vec![entry(&one), short], true), &packed),
        (
            put(vec![entry(&one), entry(&two)], true),
            &packed[..packed.len() / 2],
        ),
        (missing.clone(), &[]),
        (put(vec![entry(&one), wrong], false), &both),
        (missing.clone(), &[]),
        (put(vec![entry(&one), entry(&two)], true), &packed),
        (missing, &[]),
        (run_hello(&sha256_hex(&two)), &[]),
    ]);
    let (end, out) = session(&input);
    assert_eq!(end.unwrap(), End::Closed);
    assert_eq!(out.len(), 9);
    let message = error_message(&out[1]);
    let sizes = format!(
        "holds {} bytes, not the {} of its modules",
        both.len(),
        both.len() - 1
    );
    assert!(
        message.contains(&sizes) && message.contains("no module of it was stored"),
        "{message}"
    );
    let message = error_message(&out[2]);
    assert!(message.contains("is not an xz stream"), "{message}");
    // Nothing of either failed batch was kept.
    assert_eq!(
        out[3].header,
        Response::MissingModules {
            sha256s: vec![sha256_hex(&one), sha256_hex(&two)]
        }
    );
    // Uncompressed, the first module is kept and the second refused by its sha256.
    assert!(error_message(&out[4]).contains("not the announced"));
    assert_eq!(
        out[5].header,
        Response::MissingModules {
            sha256s: vec![sha256_hex(&two)]
        }
    );
    assert_eq!(out[6].header, Response::StoredModules { count: 2 });
    assert_eq!(out[7].header, Response::MissingModules { sha256s: vec![] });
    assert_eq!(out[8].payload, b"hello from wasm\n");
}

#[test]
fn runs_of_missing_modules_are_errors_and_the_session_goes_on() {
    let input = encode(&[
        (hello(), &[]),
        (
            Request::Run {
                id: 1,
                sha256: sha256_hex(b"absent"),
                module: "ghost".into(),
                args: json!({}),
                grant: Grant::default(),
            },
            &[],
        ),
        (
            Request::HasModule {
                sha256: sha256_hex(b"x"),
            },
            &[],
        ),
    ]);
    let (end, out) = session(&input);
    assert_eq!(end.unwrap(), End::Closed);
    assert_eq!(out.len(), 3);
    let message = error_message(&out[1]);
    assert!(message.starts_with("run 1 of ghost: module"), "{message}");
    assert!(
        message.contains("send it with put-module first"),
        "{message}"
    );
    assert_eq!(out[2].header, Response::HasModule { present: false });
}

#[test]
fn the_session_must_start_with_hello() {
    let input = encode(&[
        (
            Request::HasModule {
                sha256: sha256_hex(b"x"),
            },
            &[],
        ),
        (hello(), &[]),
    ]);
    let (end, out) = session(&input);
    assert_eq!(end.unwrap(), End::Closed);
    assert_eq!(error_message(&out[0]), "the session must start with hello");
    assert!(matches!(out[1].header, Response::Hello { .. }));
}

#[test]
fn another_version_is_refused_naming_both() {
    let input = encode(&[
        (
            Request::Hello {
                version: "0.0.9".into(),
                protocol: 99,
            },
            &[],
        ),
        (hello(), &[]),
    ]);
    let (end, out) = session(&input);
    assert!(matches!(end, Err(ServeError::VersionMismatch(_))));
    assert_eq!(out.len(), 1, "the shim stops after refusing");
    let message = error_message(&out[0]);
    assert!(
        message.contains("sandball 0.0.9 (protocol 99)"),
        "{message}"
    );
    assert!(
        message.contains(&format!("sandball {VERSION} (protocol {PROTOCOL})")),
        "{message}"
    );
}

#[test]
fn a_broken_stream_ends_the_session_with_an_error() {
    let mut input = encode(&[(hello(), &[])]);
    let next = frame::encode(&Request::Shutdown, &[]).unwrap();
    input.extend(&next[..next.len() - 3]);
    let (end, out) = session(&input);
    assert!(matches!(end, Err(ServeError::Frame(FrameError::Io(_)))));
    assert_eq!(out.len(), 1);
}

/// A run of the hello module stored (or compiled) under `sha`, without arguments or
/// grant.
fn run_hello(sha: &str) -> Request {
    Request::Run {
        id: 1,
        sha256: sha.to_string(),
        module: "hello".into(),
        args: json!({}),
        grant: Grant::default(),
    }
}

#[test]
fn precompiling_leaves_the_compiled_code_for_the_first_run() {
    let module = component(HELLO);
    let sha = sha256_hex(&module);
    let missing = sha256_hex(b"never stored");
    let precompile = Request::Precompile {
        sha256s: vec![sha.clone(), missing, "not-a-sha".into()],
    };
    let run = run_hello(&sha);
    let input = encode(&[
        (hello(), &[]),
        (
            Request::PutModule {
                sha256: sha.clone(),
                gzip: false,
            },
            &module,
        ),
        (precompile.clone(), &[]),
        (run, &[]),
        (precompile, &[]),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::open(dir.path()).unwrap();
    let mut rt = Runtime::new(cache.clone()).unwrap();
    let fingerprint = rt.fingerprint().to_string();
    let mut output = Vec::new();
    serve(&mut rt, &mut &input[..], &mut output).unwrap();
    let frames = decode(&output);
    // Only the stored module without compiled code is compiled; the run then finds
    // the code (waiting for the compile), and a second request has nothing to do.
    assert!(
        matches!(frames[2].header, Response::Precompiling { count: 1 }),
        "{:?}",
        frames[2].header
    );
    match &frames[3].header {
        Response::RunResult(r) => assert_eq!(r.outcome, Outcome::Exited { code: 0 }, "{r:?}"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        frames[4].header,
        Response::Precompiling { count: 0 }
    ));
    assert!(cache.compiled_path(&sha, &fingerprint).is_file());
}

#[test]
fn compiled_code_given_by_another_shim_runs_without_compiling() {
    let module = component(HELLO);
    let sha = sha256_hex(&module);
    let run = run_hello(&sha);
    let get = Request::GetCompiled {
        sha256: sha.clone(),
    };
    let uncompiled = Request::Uncompiled {
        sha256s: vec![sha.clone()],
    };
    // The giving shim: nothing to give before its first run compiled the module.
    let dir = tempfile::tempdir().unwrap();
    let mut rt = Runtime::new(Cache::open(dir.path()).unwrap()).unwrap();
    let engine = rt.fingerprint().to_string();
    let input = encode(&[
        (hello(), &[]),
        (get.clone(), &[]),
        (
            Request::PutModule {
                sha256: sha.clone(),
                gzip: false,
            },
            &module,
        ),
        (run.clone(), &[]),
        (get, &[]),
    ]);
    let mut output = Vec::new();
    serve(&mut rt, &mut &input[..], &mut output).unwrap();
    let frames = decode(&output);
    assert!(matches!(
        frames[1].header,
        Response::Compiled { present: false }
    ));
    assert!(matches!(
        frames[4].header,
        Response::Compiled { present: true }
    ));
    let code = frames[4].payload.clone();
    // The receiving shim never holds the module: it runs from the code it was given.
    let put = |engine: &str| Request::PutCompiled {
        sha256: sha.clone(),
        engine: engine.to_string(),
    };
    let input = encode(&[
        (hello(), &[]),
        (uncompiled.clone(), &[]),
        (put("0123"), &code),
        (put(&engine), &code),
        (uncompiled, &[]),
        (run, &[]),
    ]);
    let (end, frames) = session(&input);
    assert!(end.is_ok());
    match &frames[1].header {
        Response::Uncompiled { sha256s } => assert_eq!(sha256s, std::slice::from_ref(&sha)),
        other => panic!("{other:?}"),
    }
    assert!(error_message(&frames[2]).contains("for engine 0123"));
    assert!(matches!(&frames[3].header, Response::Stored { sha256 } if *sha256 == sha));
    match &frames[4].header {
        Response::Uncompiled { sha256s } => assert!(sha256s.is_empty(), "{sha256s:?}"),
        other => panic!("{other:?}"),
    }
    match &frames[5].header {
        Response::RunResult(r) => assert_eq!(r.outcome, Outcome::Exited { code: 0 }, "{r:?}"),
        other => panic!("{other:?}"),
    }
}
