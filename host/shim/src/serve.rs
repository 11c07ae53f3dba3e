//! The session loop: reads request frames, answers each with exactly one response
//! frame, in order. A bad request is answered with an `Error` response and the
//! session goes on; only a broken stream (or a hello from another version) ends it
//! with an error.

use crate::runtime::Runtime;
use sandball_wire::frame::{self, FrameError};
use sandball_wire::protocol::{Request, Response};
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
            Request::PutModule { sha256 } => {
                let answer = match runtime.put_module(&sha256, &request.payload) {
                    Ok(()) => Response::Stored { sha256 },
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
            Request::Run {
                id,
                sha256,
                module,
                args,
                grant,
            } => match runtime.run(id, &sha256, &module, &args, &grant) {
                Ok(out) => respond(output, &Response::RunResult(out.result), &out.stdout)?,
                Err(e) => {
                    let answer = Response::Error {
                        message: format!("run {id} of {module}: {e}"),
                        missing_module: e.missing_module().map(str::to_string),
                    };
                    respond(output, &answer, &[])?
                }
            },
        }
    }
}
