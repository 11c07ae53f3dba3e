//! The session loop: reads request frames, answers each with exactly one response
//! frame, in order. A bad request is answered with an `Error` response and the
//! session goes on; only a broken stream (or a hello from another version) ends it
//! with an error.

use crate::error::ShimError;
use crate::runtime::{RunOutput, Runtime};
use sandball_wire::frame::{self, FrameError};
use sandball_wire::protocol::{JobState, Request, Response};
use sandball_wire::{PROTOCOL, VERSION};
use std::io::{Read, Write};

/// Why a session ended badly.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The stream broke, or a frame could not be read or written.
    #[error("session framing failed: {0}")]
    Frame(#[from] FrameError),
    /// The controller is another version; it was told so before the session ended.
    #[error("{0}")]
    VersionMismatch(String),
}

/// How a session ended normally.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// The controller asked the shim to shut down.
    Shutdown,
    /// The controller closed the stream between two frames.
    Closed,
}

fn respond<W: Write>(
    output: &mut W,
    response: &Response,
    payload: &[u8],
) -> Result<(), ServeError> {
    frame::write(output, response, payload)?;
    Ok(())
}

/// Answers a run: its result, with the module's stdout as the payload. A result too
/// large for a frame fails that run (the answer says so) and the session goes on.
fn answer_run<W: Write>(
    output: &mut W,
    id: u64,
    module: &str,
    ran: Result<RunOutput, ShimError>,
) -> Result<(), ServeError> {
    let answer = match ran {
        Ok(out) => match frame::encode(&Response::RunResult(out.result), &out.stdout) {
            Ok(bytes) => {
                output.write_all(&bytes).map_err(FrameError::from)?;
                output.flush().map_err(FrameError::from)?;
                return Ok(());
            }
            Err(FrameError::TooLarge { what, len, limit }) => Response::Error {
                message: format!(
                    "run {id} of {module}: its result is too large to send: its {} would be {len} bytes, beyond the session's limit of {limit}; the module's output was dropped",
                    if what == "payload" {
                        "output"
                    } else {
                        "header (stderr, denials)"
                    }
                ),
                missing_module: None,
            },
            Err(e) => return Err(e.into()),
        },
        Err(e) => Response::Error {
            message: format!("run {id} of {module}: {e}"),
            missing_module: e.missing_module().map(str::to_string),
        },
    };
    respond(output, &answer, &[])
}

/// Answers a `RunPython` whose module ran without output to show: a failed run whose
/// stderr says why.
fn ran_without_output<W: Write>(output: &mut W, why: &str) -> Result<(), ServeError> {
    let stderr = format!("sandball-shim: {why}\n");
    respond(
        output,
        &Response::Ran {
            rc: 1,
            stdout_len: 0,
        },
        stderr.as_bytes(),
    )
}

fn error(message: String) -> Response {
    Response::Error {
        message,
        missing_module: None,
    }
}

/// Serves one session on `input`/`output` until shutdown or end of stream. However
/// it ends, the files staged for it are removed (before the answer to a shutdown,
/// after which the controller may kill the shim).
pub fn serve<R: Read, W: Write>(
    runtime: &mut Runtime,
    input: &mut R,
    output: &mut W,
) -> Result<End, ServeError> {
    let end = session(runtime, input, output);
    clear_staged(runtime);
    end
}

fn clear_staged(runtime: &Runtime) {
    if let Err(e) = runtime.cache().clear_staged() {
        eprintln!("sandball-shim: warning: staged files not removed: {e}");
    }
}

fn session<R: Read, W: Write>(
    runtime: &mut Runtime,
    input: &mut R,
    output: &mut W,
) -> Result<End, ServeError> {
    let mut greeted = false;
    let mut pythons = crate::fork_server::ForkServers::default();
    loop {
        let request = match frame::read::<Request, _>(input) {
            Ok(f) => f,
            Err(FrameError::Closed) => return Ok(End::Closed),
            // The whole frame was read; only its header was not a request.
            Err(FrameError::Json(e)) => {
                respond(output, &error(format!("bad request: {e}")), &[])?;
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        match request.header {
            Request::Hello { version, protocol } => {
                if version != VERSION || protocol != PROTOCOL {
                    let message = format!(
                        "version mismatch: the controller is sandball {version} (protocol {protocol}), this shim is sandball {VERSION} (protocol {PROTOCOL}); install the shim of the controller's version"
                    );
                    respond(output, &error(message.clone()), &[])?;
                    return Err(ServeError::VersionMismatch(message));
                }
                greeted = true;
                respond(output, &runtime.hello(), &[])?;
            }
            Request::Shutdown => {
                clear_staged(runtime);
                // The wire has no acknowledgement of its own: the shim's hello says
                // who is leaving.
                respond(output, &runtime.hello(), &[])?;
                return Ok(End::Shutdown);
            }
            _ if !greeted => {
                respond(
                    output,
                    &error("the session must start with hello".into()),
                    &[],
                )?;
            }
            Request::HasModule { sha256 } => {
                let answer = match runtime.has_module(&sha256) {
                    Ok(present) => Response::HasModule { present },
                    Err(e) => error(e.to_string()),
                };
                respond(output, &answer, &[])?;
            }
            Request::MissingModules { sha256s } => {
                let answer = match runtime.missing_modules(&sha256s) {
                    Ok(sha256s) => Response::MissingModules { sha256s },
                    Err(e) => error(e.to_string()),
                };
                respond(output, &answer, &[])?;
            }
            Request::PutModule { sha256, gzip } => {
                let answer = match runtime.put_module(&sha256, &request.payload, gzip) {
                    Ok(()) => Response::Stored { sha256 },
                    Err(e) => error(e.to_string()),
                };
                respond(output, &answer, &[])?;
            }
            Request::PutModules { modules, xz } => {
                let answer = match runtime.put_modules(&modules, &request.payload, xz) {
                    Ok(count) => Response::StoredModules { count },
                    Err(e) => error(e.to_string()),
                };
                respond(output, &answer, &[])?;
            }
            Request::HasFile { sha256 } => {
                let answer = match runtime.cache().find_file(&sha256) {
                    Ok(path) => Response::File {
                        path: path.map(|p| p.display().to_string()),
                    },
                    Err(e) => error(e.to_string()),
                };
                respond(output, &answer, &[])?;
            }
            Request::PutFile {
                sha256,
                offset,
                last,
            } => {
                let stored =
                    runtime
                        .cache()
                        .put_file_chunk(&sha256, offset, &request.payload, last);
                let answer = match stored {
                    Ok((_, Some(path))) => Response::File {
                        path: Some(path.display().to_string()),
                    },
                    Ok((received, None)) => Response::Chunk { received },
                    Err(e) => error(e.to_string()),
                };
                respond(output, &answer, &[])?;
            }
            Request::StartJob {
                jid,
                async_dir,
                limit_s,
                job,
            } => {
                let dir = crate::jobs::async_dir(async_dir.as_deref());
                let answer = match crate::jobs::start(
                    runtime.cache(),
                    &jid,
                    &dir,
                    limit_s,
                    job,
                    &request.payload,
                ) {
                    Ok(file) => Response::Job {
                        jid,
                        results_file: file.display().to_string(),
                        state: JobState::Running,
                    },
                    Err(e) => error(e.to_string()),
                };
                respond(output, &answer, &[])?;
            }
            Request::JobStatus {
                jid,
                async_dir,
                cleanup,
            } => {
                let dir = crate::jobs::async_dir(async_dir.as_deref());
                let answer = match crate::jobs::status(&jid, &dir, cleanup) {
                    Ok((file, state)) => Response::Job {
                        jid,
                        results_file: file.display().to_string(),
                        state,
                    },
                    Err(e) => error(e.to_string()),
                };
                respond(output, &answer, &[])?;
            }
            Request::Precompile { sha256s } => {
                let count = runtime.precompile(&sha256s) as u64;
                respond(output, &Response::Precompiling { count }, &[])?;
            }
            Request::Uncompiled { sha256s } => {
                let sha256s = runtime.uncompiled(&sha256s);
                respond(output, &Response::Uncompiled { sha256s }, &[])?;
            }
            Request::GetCompiled { sha256 } => match runtime.compiled_code(&sha256) {
                Ok(code) => respond(
                    output,
                    &Response::Compiled {
                        present: code.is_some(),
                    },
                    code.as_deref().unwrap_or_default(),
                )?,
                Err(e) => respond(output, &error(e.to_string()), &[])?,
            },
            Request::PutCompiled { sha256, engine } => {
                let answer = match runtime.put_compiled(&sha256, &engine, &request.payload) {
                    Ok(()) => Response::Stored { sha256 },
                    Err(e) => error(e.to_string()),
                };
                respond(output, &answer, &[])?;
            }
            Request::RunPython {
                interpreter,
                env,
                modlib,
            } => match pythons.run(&interpreter, &env, modlib.as_deref(), &request.payload) {
                Ok(ran) => {
                    let mut payload = ran.stdout;
                    let stdout_len = payload.len() as u64;
                    payload.extend_from_slice(&ran.stderr);
                    let answer = Response::Ran {
                        rc: ran.rc,
                        stdout_len,
                    };
                    match frame::encode(&answer, &payload) {
                        Ok(bytes) => {
                            output.write_all(&bytes).map_err(FrameError::from)?;
                            output.flush().map_err(FrameError::from)?;
                        }
                        // The module ran: its failure says why its output is gone
                        // (answering with an error would have it run again).
                        Err(e @ FrameError::TooLarge { .. }) => {
                            ran_without_output(output, &format!("its output was dropped: {e}"))?
                        }
                        Err(e) => return Err(e.into()),
                    }
                }
                // The module may have run: it fails, and is not run again.
                Err(e @ crate::fork_server::ForkError::Lost { .. }) => {
                    ran_without_output(output, &e.to_string())?
                }
                // It did not run: the controller runs it the usual way.
                Err(e) => respond(output, &error(e.to_string()), &[])?,
            },
            Request::Run {
                id,
                sha256,
                module,
                args,
                grant,
            } => {
                let ran = runtime.run(id, &sha256, &module, &args, &grant);
                answer_run(output, id, &module, ran)?
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sandball_wire::protocol::{Outcome, RunResult};

    fn output(stderr: String) -> RunOutput {
        RunOutput {
            result: RunResult {
                id: 9,
                outcome: Outcome::Exited { code: 0 },
                stderr,
                denials: vec![],
                denials_omitted: 0,
                warnings: vec![],
                elapsed_us: 1,
            },
            stdout: b"{}".to_vec(),
        }
    }

    #[test]
    fn a_result_too_large_for_a_frame_fails_its_run_only() {
        let mut out = Vec::new();
        let huge = "x".repeat(frame::MAX_HEADER as usize + 1);
        answer_run(&mut out, 9, "flood", Ok(output(huge))).unwrap();
        answer_run(&mut out, 10, "fine", Ok(output("small".into()))).unwrap();
        let mut stream = out.as_slice();
        match frame::read::<Response, _>(&mut stream).unwrap().header {
            Response::Error { message, .. } => assert!(
                message.starts_with("run 9 of flood: its result is too large to send")
                    && message.contains("header (stderr, denials)"),
                "{message}"
            ),
            other => panic!("{other:?}"),
        }
        let next = frame::read::<Response, _>(&mut stream).unwrap();
        assert!(matches!(
            next.header,
            Response::RunResult(RunResult { id: 9, .. })
        ));
        assert_eq!(next.payload, b"{}");
        assert!(stream.is_empty());
    }
}
