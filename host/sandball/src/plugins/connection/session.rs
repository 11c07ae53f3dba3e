//! One persistent shim session: the controller's side of the wire protocol.
//!
//! A session is opened once per host (and later per become user), says hello, uploads
//! the modules it lacks (by sha256; compressed over a network, see
//! [`Session::compressing`]) and then runs tasks, one request and one response at a
//! time.

use super::compress::{Format, XZ_MODULES};
use sandball_wire::capability::Grant;
use sandball_wire::frame::{self, FrameError};
use sandball_wire::protocol::{Denial, Job, JobState, ModuleEntry, Outcome, Request, Response};
use sandball_wire::{PROTOCOL, VERSION};
use serde_json::Value;
use sha2::Digest;
use std::collections::{BTreeMap, HashSet};
use tokio::io::{AsyncRead, AsyncWrite};

/// Errors of a session. Any of them makes the host's session unusable; the next task
/// opens a fresh one.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The shim could not be started.
    #[error("cannot start sandball-shim ({program}): {source}")]
    Spawn {
        /// The program run.
        program: String,
        /// Why it failed.
        source: std::io::Error,
    },
    /// The stream broke or closed.
    #[error("the shim session ended unexpectedly: {detail}")]
    Broken {
        /// What happened, with the shim's stderr when known.
        detail: String,
    },
    /// The connection to the node was lost while the session was in use (the network
    /// dropped, the node went away): the host is unreachable, and what was running
    /// there is not run again.
    #[error("the connection to the node was lost: {detail}")]
    Lost {
        /// What the stream said as it ended.
        detail: String,
    },
    /// The node does not hold the shim yet (the start command exited with
    /// [`NOT_DEPLOYED`]); `node` is what it said of itself, when it did.
    #[error("sandball-shim is not deployed on the node")]
    NotDeployed {
        /// The node's system and machine (`Linux x86_64`) and what it can decompress
        /// with.
        node: Option<super::deploy::NodeSaid>,
    },
    /// The shim is another version.
    #[error(
        "sandball-shim version mismatch: controller is {ours} (protocol {our_protocol}), shim is {theirs} (protocol {their_protocol})"
    )]
    Version {
        /// Controller version.
        ours: String,
        /// Controller protocol.
        our_protocol: u32,
        /// Shim version.
        theirs: String,
        /// Shim protocol.
        their_protocol: u32,
    },
    /// The shim answered with an error.
    #[error("sandball-shim: {0}")]
    Remote(String),
    /// The shim does not hold the module intact (its stored copy was corrupt and
    /// removed): [`Session::run_module`] sends it again.
    #[error("sandball-shim: {message}")]
    MissingModule {
        /// The module's sha256.
        sha256: String,
        /// The shim's message.
        message: String,
    },
    /// The shim answered out of turn.
    #[error("sandball-shim answered {0} out of turn")]
    Unexpected(String),
}

impl SessionError {
    /// Whether the session is unusable after this error (the shim's own refusals of
    /// a request leave it usable).
    pub fn broke_session(&self) -> bool {
        !matches!(
            self,
            SessionError::Remote(_) | SessionError::MissingModule { .. }
        )
    }
}

impl From<FrameError> for SessionError {
    fn from(e: FrameError) -> Self {
        SessionError::Broken {
            detail: e.to_string(),
        }
    }
}

/// What one module run returned.
#[derive(Debug)]
pub struct RunReply {
    /// How the run ended.
    pub outcome: Outcome,
    /// The module's stdout.
    pub stdout: Vec<u8>,
    /// The module's stderr.
    pub stderr: String,
    /// Capabilities the module was refused (the first ones).
    pub denials: Vec<Denial>,
    /// How many more denials the shim did not keep.
    pub denials_omitted: u64,
    /// What the shim had to say about the run (compiled code found corrupt, …).
    pub warnings: Vec<String>,
}

/// How a background job is started.
#[derive(Clone, Copy, Debug)]
pub struct JobStart<'a> {
    /// The job id.
    pub jid: &'a str,
    /// The async directory (`ansible_async_dir`), the shim's default when `None`.
    pub async_dir: Option<&'a str>,
    /// Seconds the job may run.
    pub limit_s: u64,
    /// A module job's component, sent when the node lacks it.
    pub module_bytes: Option<&'a [u8]>,
}

/// What the shim says of a background job.
#[derive(Debug)]
pub struct JobReply {
    /// The job's file on the node.
    pub results_file: String,
    /// Where the job stands.
    pub state: JobState,
}

/// Facts the shim reported in its hello.
#[derive(Clone, Debug)]
pub struct NodeInfo {
    /// Node OS.
    pub os: String,
    /// Node architecture.
    pub arch: String,
    /// wasmtime engine fingerprint.
    pub engine: String,
}

/// The exit status of a session's start command when the node does not hold the shim.
pub const NOT_DEPLOYED: u32 = 97;

/// What starts the line of stderr in which that command tells the node's `uname -sm`.
pub const NODE_LINE: &str = "sandball-node: ";

/// What starts the line of stderr in which that command tells what the node can
/// decompress an upload with: `xz`, else `gzip` (no line: neither).
pub const DECODER_LINE: &str = "sandball-decoder: ";

/// Tells, once the stream has ended, how the shim ended (exit status, last lines of
/// stderr), when the transport knows.
pub type LastWords = Box<dyn Fn() -> Option<String> + Send + Sync>;

/// A session over any byte stream pair.
pub struct Session {
    reader: Box<dyn AsyncRead + Unpin + Send>,
    writer: Box<dyn AsyncWrite + Unpin + Send>,
    /// Keeps the transport alive (child process, SSH channel) for the session's life.
    _transport: Box<dyn Send + Sync>,
    last_words: Option<LastWords>,
    /// Whether the connection under the session is gone (see [`Session::watching`]).
    lost: Option<Box<dyn Fn() -> bool + Send + Sync>>,
    uploaded: HashSet<String>,
    /// Modules are sent compressed (see [`Session::compressing`]).
    compress: bool,
    next_id: u64,
    /// A request is on its way and its answer not read yet. Still set when the next
    /// request comes, the caller gave up waiting (a task `timeout`) and the stream may
    /// hold a stale or half-read answer: the session cannot be used again.
    in_flight: bool,
    /// What the shim said about its node.
    pub node: NodeInfo,
    /// The command line that started the shim over the connection (shown at `-vvv`).
    pub command: String,
}

impl Session {
    /// Says hello over a fresh stream and checks the shim's version. `last_words`
    /// completes the error of a stream that ends.
    pub async fn open(
        reader: Box<dyn AsyncRead + Unpin + Send>,
        writer: Box<dyn AsyncWrite + Unpin + Send>,
        transport: Box<dyn Send + Sync>,
        last_words: Option<LastWords>,
    ) -> Result<Session, SessionError> {
        let mut s = Session {
            reader,
            writer,
            _transport: transport,
            last_words,
            lost: None,
            uploaded: HashSet::new(),
            compress: false,
            next_id: 1,
            in_flight: false,
            node: NodeInfo {
                os: String::new(),
                arch: String::new(),
                engine: String::new(),
            },
            command: String::new(),
        };
        let hello = Request::Hello {
            version: VERSION.to_string(),
            protocol: PROTOCOL,
        };
        match s.call(&hello, &[]).await?.0 {
            Response::Hello {
                version,
                protocol,
                engine,
                os,
                arch,
            } => {
                if version != VERSION || protocol != PROTOCOL {
                    return Err(SessionError::Version {
                        ours: VERSION.into(),
                        our_protocol: PROTOCOL,
                        theirs: version,
                        their_protocol: protocol,
                    });
                }
                s.node = NodeInfo { os, arch, engine };
                Ok(s)
            }
            other => Err(unexpected(&other)),
        }
    }

    async fn call(
        &mut self,
        req: &Request,
        payload: &[u8],
    ) -> Result<(Response, Vec<u8>), SessionError> {
        if self.in_flight {
            return Err(SessionError::Broken {
                detail: "an earlier request was abandoned before its answer came".into(),
            });
        }
        self.in_flight = true;
        let start = std::time::Instant::now();
        let sent = frame::asynchronous::write(&mut self.writer, req, payload).await;
        let f = match sent {
            Ok(()) => frame::asynchronous::read::<Response, _>(&mut self.reader).await,
            Err(e) => Err(e),
        };
        let f = f.map_err(|e| self.broken(e))?;
        self.in_flight = false;
        tracing::trace!(
            elapsed_us = start.elapsed().as_micros() as u64,
            "shim round trip"
        );
        match f.header {
            Response::Error {
                message,
                missing_module: Some(sha256),
            } => Err(SessionError::MissingModule { sha256, message }),
            Response::Error { message, .. } => Err(SessionError::Remote(message)),
            other => Ok((other, f.payload)),
        }
    }

    /// Whether a request was abandoned halfway (see `in_flight`): the session must be
    /// replaced.
    pub fn abandoned(&self) -> bool {
        self.in_flight
    }

    /// Has the session tell a stream that ended because its connection is gone
    /// (`lost` says so) from a shim that ended: the first is [`SessionError::Lost`].
    pub fn watching(mut self, lost: impl Fn() -> bool + Send + Sync + 'static) -> Session {
        self.lost = Some(Box::new(lost));
        self
    }

    /// The error of a broken stream, with how the shim ended when that is known.
    fn broken(&self, e: FrameError) -> SessionError {
        let mut detail = e.to_string();
        if let Some(words) = self.last_words.as_ref().and_then(|f| f()) {
            detail = format!("{detail}; {words}");
        }
        if self.lost.as_ref().is_some_and(|lost| lost()) {
            SessionError::Lost { detail }
        } else {
            SessionError::Broken { detail }
        }
    }

    /// Has the session send modules compressed: those a new session lacks as one xz
    /// stream, one sent later (a run's module) gzip-compressed. For a shim at the other
    /// end of a network, where bytes cost more than compressing them (each content is
    /// compressed once per run, see [`super::compress`]).
    pub fn compressing(mut self) -> Session {
        self.compress = true;
        self
    }

    /// Makes sure the shim holds a module, uploading it only if it has not got it.
    pub async fn ensure_module(&mut self, sha256: &str, bytes: &[u8]) -> Result<(), SessionError> {
        if self.uploaded.contains(sha256) {
            return Ok(());
        }
        let present = match self
            .call(
                &Request::HasModule {
                    sha256: sha256.to_string(),
                },
                &[],
            )
            .await?
            .0
        {
            Response::HasModule { present } => present,
            other => return Err(unexpected(&other)),
        };
        if !present {
            self.put_module(sha256, bytes).await?;
        }
        self.uploaded.insert(sha256.to_string());
        Ok(())
    }

    /// Makes sure the shim holds `modules` (sending those it lacks) and has it start
    /// compiling, in the background, those it has no compiled code for; returns how
    /// many it compiles.
    /// One request asks which of them the shim lacks.
    pub async fn precompile(&mut self, modules: &[(&str, &[u8])]) -> Result<u64, SessionError> {
        let unknown: Vec<String> = modules
            .iter()
            .filter(|(sha, _)| !self.uploaded.contains(*sha))
            .map(|(sha, _)| sha.to_string())
            .collect();
        if !unknown.is_empty() {
            let req = Request::MissingModules { sha256s: unknown };
            let missing = match self.call(&req, &[]).await?.0 {
                Response::MissingModules { sha256s } => sha256s,
                other => return Err(unexpected(&other)),
            };
            let lacked: Vec<(&str, &[u8])> = modules
                .iter()
                .filter(|(sha, _)| missing.iter().any(|m| m == sha))
                .copied()
                .collect();
            if !lacked.is_empty() {
                self.put_modules(&lacked).await?;
            }
            for (sha256, _) in modules {
                self.uploaded.insert(sha256.to_string());
            }
        }
        let req = Request::Precompile {
            sha256s: modules.iter().map(|(sha, _)| sha.to_string()).collect(),
        };
        match self.call(&req, &[]).await?.0 {
            Response::Precompiling { count } => Ok(count),
            other => Err(unexpected(&other)),
        }
    }

    /// Those of `sha256s` the shim has no compiled code for.
    pub async fn uncompiled(&mut self, sha256s: &[&str]) -> Result<Vec<String>, SessionError> {
        let req = Request::Uncompiled {
            sha256s: sha256s.iter().map(|sha| sha.to_string()).collect(),
        };
        match self.call(&req, &[]).await?.0 {
            Response::Uncompiled { sha256s } => Ok(sha256s),
            other => Err(unexpected(&other)),
        }
    }

    /// The module's compiled code, when the shim's cache holds it intact.
    pub async fn compiled_code(&mut self, sha256: &str) -> Result<Option<Vec<u8>>, SessionError> {
        let req = Request::GetCompiled {
            sha256: sha256.to_string(),
        };
        match self.call(&req, &[]).await? {
            (Response::Compiled { present }, code) => Ok(present.then_some(code)),
            (other, _) => Err(unexpected(&other)),
        }
    }

    /// Gives the shim `code` as the module's compiled code (for the engine of
    /// fingerprint `engine`).
    pub async fn put_compiled(
        &mut self,
        sha256: &str,
        engine: &str,
        code: &[u8],
    ) -> Result<(), SessionError> {
        let req = Request::PutCompiled {
            sha256: sha256.to_string(),
            engine: engine.to_string(),
        };
        match self.call(&req, code).await?.0 {
            Response::Stored { .. } => Ok(()),
            other => Err(unexpected(&other)),
        }
    }

    /// Sends the shim modules in one request, their bytes one after the other as one
    /// xz stream when the session is [compressing](Session::compressing). The stream
    /// is compressed once for all the sessions that lack the same modules, keyed by
    /// their addresses (which name the joined bytes as well as their hash would,
    /// without hashing them again for every node).
    async fn put_modules(&mut self, modules: &[(&str, &[u8])]) -> Result<(), SessionError> {
        let joined = modules
            .iter()
            .map(|(_, bytes)| *bytes)
            .collect::<Vec<_>>()
            .concat();
        let packed = match self.compress {
            true => {
                let mut addresses = sha2::Sha256::new();
                for (sha256, _) in modules {
                    addresses.update(sha256.as_bytes());
                }
                let key = hex::encode(addresses.finalize());
                super::compress::compressed(XZ_MODULES, &key, &joined).await
            }
            false => None,
        };
        let payload = packed.as_deref().map_or(joined.as_slice(), Vec::as_slice);
        tracing::debug!(
            modules = modules.len(),
            module_bytes = joined.len(),
            sent_bytes = payload.len(),
            "uploading modules"
        );
        let put = Request::PutModules {
            modules: modules
                .iter()
                .map(|(sha256, bytes)| ModuleEntry {
                    sha256: sha256.to_string(),
                    bytes: bytes.len() as u64,
                })
                .collect(),
            xz: packed.is_some(),
        };
        match self.call(&put, payload).await?.0 {
            Response::StoredModules { .. } => Ok(()),
            other => Err(unexpected(&other)),
        }
    }

    /// Sends a module to the shim, compressed when the session is
    /// [compressing](Session::compressing).
    async fn put_module(&mut self, sha256: &str, bytes: &[u8]) -> Result<(), SessionError> {
        let packed = match self.compress {
            true => super::compress::compressed(Format::Gzip, sha256, bytes).await,
            false => None,
        };
        let payload = packed.as_deref().map_or(bytes, Vec::as_slice);
        tracing::debug!(
            sha256,
            module_bytes = bytes.len(),
            sent_bytes = payload.len(),
            "uploading a module"
        );
        let put = Request::PutModule {
            sha256: sha256.to_string(),
            gzip: packed.is_some(),
        };
        match self.call(&put, payload).await?.0 {
            Response::Stored { .. } => Ok(()),
            other => Err(unexpected(&other)),
        }
    }

    /// Runs a module (`bytes`, addressed by `sha256`), sending it first when the shim
    /// does not hold it. When the shim finds its stored copy corrupt during the run
    /// (it removes it and says so), the module is sent again and the run retried once.
    pub async fn run_module(
        &mut self,
        sha256: &str,
        bytes: &[u8],
        module: &str,
        args: Value,
        grant: Grant,
    ) -> Result<RunReply, SessionError> {
        self.ensure_module(sha256, bytes).await?;
        match self.run(sha256, module, args.clone(), grant.clone()).await {
            Err(SessionError::MissingModule { message, .. }) => {
                tracing::warn!(sha256, module, %message, "sending the module again");
                self.put_module(sha256, bytes).await?;
                self.run(sha256, module, args, grant).await
            }
            other => other,
        }
    }

    /// Makes sure the node holds the controller's file `local` (content-addressed by
    /// `sha256`) and returns its path on the node. It is sent in raw chunks only when
    /// the node does not hold the same content yet.
    pub async fn ensure_file(
        &mut self,
        sha256: &str,
        local: &std::path::Path,
    ) -> Result<String, SessionError> {
        let has = Request::HasFile {
            sha256: sha256.to_string(),
        };
        match self.call(&has, &[]).await?.0 {
            Response::File { path: Some(path) } => return Ok(path),
            Response::File { path: None } => {}
            other => return Err(unexpected(&other)),
        }
        tracing::debug!(sha256, file = %local.display(), "sending a file");
        let mut file = tokio::fs::File::open(local)
            .await
            .map_err(|e| SessionError::Remote(format!("cannot read {}: {e}", local.display())))?;
        let len = file
            .metadata()
            .await
            .map_err(|e| SessionError::Remote(format!("cannot read {}: {e}", local.display())))?
            .len();
        let mut offset = 0u64;
        let mut chunk = vec![0u8; FILE_CHUNK];
        loop {
            let n = read_full(&mut file, &mut chunk).await.map_err(|e| {
                SessionError::Remote(format!("cannot read {}: {e}", local.display()))
            })?;
            let last = offset + n as u64 >= len || n < FILE_CHUNK;
            let put = Request::PutFile {
                sha256: sha256.to_string(),
                offset,
                last,
            };
            match self.call(&put, &chunk[..n]).await?.0 {
                Response::File { path: Some(path) } if last => return Ok(path),
                Response::Chunk { received } if !last && received == offset + n as u64 => {}
                other => return Err(unexpected(&other)),
            }
            offset += n as u64;
        }
    }

    /// Runs a module the shim holds.
    async fn run(
        &mut self,
        sha256: &str,
        module: &str,
        args: Value,
        grant: Grant,
    ) -> Result<RunReply, SessionError> {
        let id = self.next_id;
        self.next_id += 1;
        let req = Request::Run {
            id,
            sha256: sha256.to_string(),
            module: module.to_string(),
            args,
            grant,
        };
        match self.call(&req, &[]).await? {
            (Response::RunResult(r), stdout) if r.id == id => Ok(RunReply {
                outcome: r.outcome,
                stdout,
                stderr: r.stderr,
                denials: r.denials,
                denials_omitted: r.denials_omitted,
                warnings: r.warnings,
            }),
            (other, _) => Err(unexpected(&other)),
        }
    }

    /// Runs a legacy Python module's piped script in the shim's fork server for
    /// `interpreter` and `env` (see [`Request::RunPython`]); `modlib` is the directory
    /// its payload unpacks to.
    pub async fn run_python(
        &mut self,
        interpreter: &str,
        env: BTreeMap<String, String>,
        modlib: Option<&str>,
        script: &[u8],
    ) -> Result<super::ExecOutput, SessionError> {
        let req = Request::RunPython {
            interpreter: interpreter.to_string(),
            env,
            modlib: modlib.map(str::to_string),
        };
        match self.call(&req, script).await? {
            (Response::Ran { rc, stdout_len }, mut stdout) if stdout_len <= stdout.len() as u64 => {
                let stderr = stdout.split_off(stdout_len as usize);
                Ok(super::ExecOutput { rc, stdout, stderr })
            }
            (other, _) => Err(unexpected(&other)),
        }
    }

    /// Starts a background job (`async` with `poll: 0`) that outlives the session; a
    /// module job's module is sent first if the node lacks it, a command job's `stdin`
    /// goes to its program.
    pub async fn start_job(
        &mut self,
        start: JobStart<'_>,
        job: Job,
        stdin: &[u8],
    ) -> Result<JobReply, SessionError> {
        if let (Job::Module { sha256, .. }, Some(bytes)) = (&job, start.module_bytes) {
            self.ensure_module(sha256, bytes).await?;
        }
        let req = Request::StartJob {
            jid: start.jid.to_string(),
            async_dir: start.async_dir.map(str::to_string),
            limit_s: start.limit_s,
            job,
        };
        self.job_call(&req, stdin).await
    }

    /// Where a background job stands (`async_status`); `cleanup` removes its file.
    pub async fn job_status(
        &mut self,
        jid: &str,
        async_dir: Option<&str>,
        cleanup: bool,
    ) -> Result<JobReply, SessionError> {
        let req = Request::JobStatus {
            jid: jid.to_string(),
            async_dir: async_dir.map(str::to_string),
            cleanup,
        };
        self.job_call(&req, &[]).await
    }

    async fn job_call(&mut self, req: &Request, payload: &[u8]) -> Result<JobReply, SessionError> {
        match self.call(req, payload).await? {
            (
                Response::Job {
                    results_file,
                    state,
                    ..
                },
                _,
            ) => Ok(JobReply {
                results_file,
                state,
            }),
            (other, _) => Err(unexpected(&other)),
        }
    }

    /// Ends the session without a goodbye, whatever it is doing (the run was
    /// interrupted): its input is closed, so that the shim ends the programs it started
    /// and exits (its watchdog sees the input end), and the shim is given up to `wait`
    /// to go before the transport is dropped (which kills what is left of it).
    pub async fn close(mut self, wait: std::time::Duration) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let ended = async {
            // An SSH channel's end of input is a message of its own (EOF), which
            // dropping its writer does not send; a pipe ends when dropped.
            let _ = self.writer.shutdown().await;
            drop(std::mem::replace(
                &mut self.writer,
                Box::new(tokio::io::sink()),
            ));
            let mut buf = [0u8; 4096];
            while matches!(self.reader.read(&mut buf).await, Ok(n) if n > 0) {}
        };
        let _ = tokio::time::timeout(wait, ended).await;
    }

    /// Asks the shim to exit. A session whose last request was abandoned (a task's
    /// `timeout`) is only dropped: its shim is still busy with that request, and the
    /// run does not wait for it, as ansible-playbook does not.
    pub async fn shutdown(mut self) {
        if self.in_flight {
            return;
        }
        // Best effort: the shim also exits when its stdin closes.
        let _ = frame::asynchronous::write(&mut self.writer, &Request::Shutdown, &[]).await;
        let _ = frame::asynchronous::read::<Response, _>(&mut self.reader).await;
    }
}

/// How much of a file one frame carries.
const FILE_CHUNK: usize = 1 << 20;

/// Fills `buf` from `file` as far as the file goes; the number of bytes read.
async fn read_full(file: &mut tokio::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    use tokio::io::AsyncReadExt;
    let mut n = 0;
    while n < buf.len() {
        match file.read(&mut buf[n..]).await? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

fn unexpected(r: &Response) -> SessionError {
    let name = serde_json::to_value(r)
        .ok()
        .and_then(|v| v.get("op").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_else(|| "?".into());
    SessionError::Unexpected(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sandball_wire::protocol::RunResult;

    /// Plays a shim that holds the module when asked, finds its stored copy corrupt
    /// when it runs it (until it is sent again), and records the requests it got.
    async fn shim<R, W>(mut input: R, mut output: W) -> Vec<String>
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin,
    {
        let mut seen = Vec::new();
        while let Ok(f) = frame::asynchronous::read::<Request, _>(&mut input).await {
            let resent = seen.iter().any(|s: &String| s.starts_with("put-module"));
            let (answer, payload) = match f.header {
                Request::Hello { .. } => {
                    seen.push("hello".to_string());
                    let hello = Response::Hello {
                        version: VERSION.into(),
                        protocol: PROTOCOL,
                        engine: "e".into(),
                        os: "linux".into(),
                        arch: "x86_64".into(),
                    };
                    (hello, vec![])
                }
                Request::HasModule { .. } => {
                    seen.push("has-module".to_string());
                    (Response::HasModule { present: true }, vec![])
                }
                Request::MissingModules { sha256s } => {
                    seen.push(format!("missing-modules {}", sha256s.len()));
                    // The node holds the modules whose address starts with `a`.
                    let sha256s = sha256s
                        .into_iter()
                        .filter(|s| !s.starts_with('a'))
                        .collect();
                    (Response::MissingModules { sha256s }, vec![])
                }
                Request::PutModule { sha256, gzip } => {
                    let mut payload = f.payload.clone();
                    if gzip {
                        payload.clear();
                        std::io::Read::read_to_end(
                            &mut flate2::read::GzDecoder::new(&f.payload[..]),
                            &mut payload,
                        )
                        .unwrap();
                    }
                    seen.push(format!(
                        "put-module{} {}",
                        if gzip { " (gzip)" } else { "" },
                        String::from_utf8_lossy(&payload)
                    ));
                    (Response::Stored { sha256 }, vec![])
                }
                Request::PutModules { modules, xz } => {
                    let mut payload = f.payload.clone();
                    if xz {
                        payload.clear();
                        std::io::Read::read_to_end(
                            &mut lzma_rust2::XzReader::new(&f.payload[..], false),
                            &mut payload,
                        )
                        .unwrap();
                    }
                    let mut rest = &payload[..];
                    for m in &modules {
                        let (module, after) = rest.split_at(m.bytes as usize);
                        seen.push(format!(
                            "put-modules{} {}",
                            if xz { " (xz)" } else { "" },
                            String::from_utf8_lossy(module)
                        ));
                        rest = after;
                    }
                    assert!(rest.is_empty());
                    let count = modules.len() as u64;
                    (Response::StoredModules { count }, vec![])
                }
                Request::Run { id, sha256, .. } if resent => {
                    seen.push("run".to_string());
                    let result = RunResult {
                        id,
                        outcome: Outcome::Exited { code: 0 },
                        stderr: String::new(),
                        denials: vec![],
                        denials_omitted: 0,
                        warnings: vec![format!("{sha256} was stored again")],
                        elapsed_us: 1,
                    };
                    (Response::RunResult(result), b"{}".to_vec())
                }
                Request::Precompile { sha256s } => {
                    seen.push(format!("precompile {}", sha256s.len()));
                    let count = sha256s.len() as u64;
                    (Response::Precompiling { count }, vec![])
                }
                Request::Run { sha256, .. } => {
                    seen.push("run".to_string());
                    let error = Response::Error {
                        message: "the stored module is corrupt".into(),
                        missing_module: Some(sha256),
                    };
                    (error, vec![])
                }
                other => panic!("unexpected {other:?}"),
            };
            if frame::asynchronous::write(&mut output, &answer, &payload)
                .await
                .is_err()
            {
                break;
            }
        }
        seen
    }

    #[tokio::test]
    async fn a_module_found_corrupt_during_its_run_is_sent_again_and_run() {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let (our_read, our_write) = tokio::io::split(ours);
        let (their_read, their_write) = tokio::io::split(theirs);
        let node = tokio::spawn(shim(their_read, their_write));
        let mut session =
            Session::open(Box::new(our_read), Box::new(our_write), Box::new(()), None)
                .await
                .unwrap();
        let sha = "a".repeat(64);
        let reply = session
            .run_module(&sha, b"the module", "m", Value::Null, Grant::default())
            .await
            .unwrap();
        assert_eq!(reply.stdout, b"{}");
        assert_eq!(reply.warnings, vec![format!("{sha} was stored again")]);
        drop(session);
        let seen = node.await.unwrap();
        assert_eq!(
            seen,
            ["hello", "has-module", "run", "put-module the module", "run"]
        );
    }

    #[tokio::test]
    async fn one_request_finds_the_modules_a_node_lacks_and_only_those_are_sent_in_one_xz_stream() {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let (our_read, our_write) = tokio::io::split(ours);
        let (their_read, their_write) = tokio::io::split(theirs);
        let node = tokio::spawn(shim(their_read, their_write));
        let mut session =
            Session::open(Box::new(our_read), Box::new(our_write), Box::new(()), None)
                .await
                .unwrap()
                .compressing();
        let (held, lacked, other) = ("a".repeat(64), "b".repeat(64), "d".repeat(64));
        let modules: [(&str, &[u8]); 3] =
            [(&held, b"held"), (&lacked, b"lacked"), (&other, b"other")];
        assert_eq!(session.precompile(&modules).await.unwrap(), 3);
        // Asked again, the session asks nothing of what it already made sure of.
        assert_eq!(session.precompile(&modules[1..]).await.unwrap(), 2);
        drop(session);
        let seen = node.await.unwrap();
        assert_eq!(
            seen,
            [
                "hello",
                "missing-modules 3",
                "put-modules (xz) lacked",
                "put-modules (xz) other",
                "precompile 3",
                "precompile 2"
            ]
        );
    }
}
