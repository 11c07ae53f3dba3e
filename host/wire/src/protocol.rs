//! Requests from the controller to a shim session and the shim's responses.
//!
//! A session starts with [`Request::Hello`]; the shim answers [`Response::Hello`] with
//! its own versions, and the controller refuses a shim whose version or protocol
//! differs (the error names both). Every request gets exactly one response, in order.

use crate::capability::Grant;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// One module of a [`Request::PutModules`]: its address and its length in the payload
/// (uncompressed).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModuleEntry {
    /// Content address the module's bytes must have.
    pub sha256: String,
    /// How many bytes of the (uncompressed) payload are this module's.
    pub bytes: u64,
}

/// A request. Payloads (module bytes) travel raw in the frame, not in the header.
// One request lives at a time on each side of a session, so the size of the `Run`
// variant costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum Request {
    /// Opens the session.
    Hello {
        /// Controller's sandball version.
        version: String,
        /// Controller's protocol number.
        protocol: u32,
    },
    /// Asks whether the shim already holds a module.
    HasModule {
        /// Content address (lowercase hex sha256).
        sha256: String,
    },
    /// Asks which of these modules the shim does not hold (one request for all of a
    /// play's modules); answered with [`Response::MissingModules`].
    MissingModules {
        /// The modules (content addresses).
        sha256s: Vec<String>,
    },
    /// Stores a module; the frame payload is the component's bytes, gzip-compressed
    /// when `gzip` is set. The shim checks the sha256 (of the uncompressed bytes)
    /// before keeping it.
    PutModule {
        /// Content address the (uncompressed) component must have.
        sha256: String,
        /// Whether the payload is gzip-compressed.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        gzip: bool,
    },
    /// Stores several modules at once; the frame payload is their bytes one after the
    /// other, in the order of `modules`, as one xz stream when `xz` is set (modules
    /// share much of their code, which one stream compresses once). The shim checks
    /// each module's sha256 before keeping it; answered with
    /// [`Response::StoredModules`].
    PutModules {
        /// The modules, in the payload's order.
        modules: Vec<ModuleEntry>,
        /// Whether the payload is one xz stream.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        xz: bool,
    },
    /// Asks whether the shim holds a file (a `copy` source from the controller).
    HasFile {
        /// Content address (lowercase hex sha256).
        sha256: String,
    },
    /// One chunk of a file: the frame payload is its raw bytes from `offset`. After the
    /// `last` chunk the shim checks the sha256 of the whole and keeps the file.
    PutFile {
        /// Content address the whole file must have.
        sha256: String,
        /// Where this chunk starts (chunks come in order).
        offset: u64,
        /// Whether this is the last chunk.
        last: bool,
    },
    /// Runs a stored module once.
    Run {
        /// Request id, echoed in the response.
        id: u64,
        /// Which module.
        sha256: String,
        /// Module name, for messages.
        module: String,
        /// The arguments, written as JSON to the module's stdin.
        args: Value,
        /// What the module may use.
        grant: Grant,
    },
    /// Starts a background job (`async` with `poll: 0`) in a shim process of its own,
    /// which outlives the session and records the job in its file under the async
    /// directory; answered with [`Response::Job`] once the job has started. A
    /// [`Job::Command`]'s stdin is the frame payload.
    StartJob {
        /// The job id (`j` and digits, as Ansible's); names the job file.
        jid: String,
        /// The async directory (`~/.ansible_async` when not given).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        async_dir: Option<String>,
        /// Seconds the job may run before it is stopped.
        limit_s: u64,
        /// What runs.
        job: Job,
    },
    /// Reads a job's file (`async_status`); `cleanup` removes it instead.
    JobStatus {
        /// The job id.
        jid: String,
        /// The async directory (`~/.ansible_async` when not given).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        async_dir: Option<String>,
        /// Remove the job's file.
        cleanup: bool,
    },
    /// Starts compiling stored modules that have no compiled code yet, in the
    /// background, so that their first runs find it; answered at once with
    /// [`Response::Precompiling`].
    Precompile {
        /// The modules (content addresses), in the order they will first run.
        sha256s: Vec<String>,
    },
    /// Asks which of these modules have no compiled code in the shim's cache yet;
    /// answered with [`Response::Uncompiled`].
    Uncompiled {
        /// The modules (content addresses).
        sha256s: Vec<String>,
    },
    /// Asks for a module's compiled code, if the shim's cache holds it intact (its
    /// sha256 as recorded when it was compiled); answered with [`Response::Compiled`],
    /// the code as its payload.
    GetCompiled {
        /// The module (content address).
        sha256: String,
    },
    /// Keeps the frame payload as the module's compiled code, for the engine with
    /// this fingerprint (refused when it is not the shim's); answered with
    /// [`Response::Stored`]. The controller sends only code a shim running as root
    /// gave it ([`Request::GetCompiled`]); see docs/CAPABILITIES.md.
    PutCompiled {
        /// The module (content address).
        sha256: String,
        /// The fingerprint of the engine that compiled it.
        engine: String,
    },
    /// Runs a legacy Python module's script (an Ansiballz payload, the frame payload)
    /// as `interpreter` would run it piped to its stdin, in a child of the session's
    /// fork server for that interpreter and environment (see the shim's
    /// `fork_server`); answered with [`Response::Ran`].
    RunPython {
        /// The interpreter (a path).
        interpreter: String,
        /// Variables added to the shim's original environment (the task's
        /// `environment`).
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        env: BTreeMap<String, String>,
        /// The directory the payload unpacks to (`~` allowed): the server imports
        /// `ansible.module_utils.basic` from there once a run has succeeded.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        modlib: Option<String>,
    },
    /// Ends the session; the shim exits after answering.
    Shutdown,
}

/// What a background job runs.
// One job is encoded or decoded at a time: the size of `Module` costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Job {
    /// A stored module, as [`Request::Run`] runs it.
    Module {
        /// Which module.
        sha256: String,
        /// Module name, for messages.
        module: String,
        /// The arguments.
        args: Value,
        /// What the module may use.
        grant: Grant,
    },
    /// A program outside the sandbox (a legacy module's interpreter), with the shim's
    /// original environment; its exit code and output make the result.
    Command {
        /// The legacy module's name, for messages.
        module: String,
        /// Program and arguments.
        argv: Vec<String>,
    },
}

impl Job {
    /// The module the job runs.
    pub fn module(&self) -> &str {
        match self {
            Job::Module { module, .. } | Job::Command { module, .. } => module,
        }
    }
}

/// Where a background job stands, as its file says.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum JobState {
    /// No file for this job id.
    Missing,
    /// Started and not finished.
    Running,
    /// Finished: how it ended and its stdout.
    Finished {
        /// The module the job ran.
        module: String,
        /// How the run ended.
        result: RunResult,
        /// What it wrote to stdout.
        stdout: String,
    },
    /// Stopped at its time limit.
    TimedOut {
        /// The module the job ran.
        module: String,
        /// The process id it had.
        pid: u32,
    },
    /// The job's file was removed (`cleanup`).
    Erased,
}

/// A response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum Response {
    /// Answer to [`Request::Hello`].
    Hello {
        /// Shim's sandball version.
        version: String,
        /// Shim's protocol number.
        protocol: u32,
        /// Fingerprint of the wasmtime engine (compiled code is cached under it).
        engine: String,
        /// Node operating system (`linux`, …).
        os: String,
        /// Node architecture (`x86_64`, …).
        arch: String,
    },
    /// Answer to [`Request::HasModule`].
    HasModule {
        /// Whether the module is stored.
        present: bool,
    },
    /// Answer to [`Request::MissingModules`].
    MissingModules {
        /// Those of the modules asked about that the shim does not hold.
        sha256s: Vec<String>,
    },
    /// Answer to [`Request::PutModule`] and [`Request::PutCompiled`].
    Stored {
        /// The stored module's address.
        sha256: String,
    },
    /// Answer to [`Request::PutModules`]: how many modules were stored.
    StoredModules {
        /// The modules stored.
        count: u64,
    },
    /// Answer to [`Request::HasFile`] and to the last [`Request::PutFile`] chunk.
    File {
        /// Where the file is on the node; `None` when the shim does not hold it.
        path: Option<String>,
    },
    /// Answer to a [`Request::PutFile`] chunk that is not the last.
    Chunk {
        /// Bytes of the file received so far.
        received: u64,
    },
    /// Answer to [`Request::Run`]; the frame payload is the module's stdout.
    RunResult(RunResult),
    /// Answer to [`Request::StartJob`] and [`Request::JobStatus`].
    Job {
        /// The job id.
        jid: String,
        /// The job's file on the node.
        results_file: String,
        /// Where the job stands.
        state: JobState,
    },
    /// Answer to [`Request::Precompile`].
    Precompiling {
        /// How many of the modules are being compiled.
        count: u64,
    },
    /// Answer to [`Request::Uncompiled`].
    Uncompiled {
        /// Those of the modules asked about that have no compiled code.
        sha256s: Vec<String>,
    },
    /// Answer to [`Request::GetCompiled`]: the frame payload is the code.
    Compiled {
        /// Whether the cache held it intact (else the payload is empty).
        present: bool,
    },
    /// Answer to [`Request::RunPython`]: the frame payload is the run's stdout
    /// followed by its stderr.
    Ran {
        /// Exit status; minus the signal number when a signal ended the run.
        rc: i32,
        /// How many bytes of the payload are stdout.
        stdout_len: u64,
    },
    /// The request could not be served (bad request, unknown module, I/O error).
    Error {
        /// What went wrong.
        message: String,
        /// Set when the request failed because the shim does not hold this module
        /// intact (never stored, or its stored copy no longer matches its sha256 and
        /// was removed): the controller sends it again and retries.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        missing_module: Option<String>,
    },
}

/// How one module run ended. The module's stdout is the frame payload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// The request id.
    pub id: u64,
    /// How it ended.
    pub outcome: Outcome,
    /// What the module wrote to stderr (possibly truncated).
    pub stderr: String,
    /// Capabilities the module tried to use and was refused (the first ones: the
    /// shim keeps a bounded number of them, of bounded size).
    #[serde(default)]
    pub denials: Vec<Denial>,
    /// How many further denials were not kept.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub denials_omitted: u64,
    /// What the shim has to say about the run besides its outcome (compiled code
    /// found corrupt and compiled again, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Time spent, in microseconds: instantiation plus run.
    pub elapsed_us: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// How a module run ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Outcome {
    /// `wasi:cli/run` returned; `code` is 0 for ok, 1 for an error return or an
    /// explicit exit code.
    Exited {
        /// Exit code.
        code: i32,
    },
    /// The module trapped (panic, unreachable, stack overflow, …).
    Trapped {
        /// The trap, as wasmtime describes it.
        message: String,
    },
    /// The wall-time limit was reached and the module was interrupted.
    TimedOut {
        /// The limit, in milliseconds.
        limit_ms: u64,
    },
    /// The module asked for more memory than its limit.
    OutOfMemory {
        /// The limit, in bytes.
        limit_bytes: u64,
    },
    /// The module wrote more output than its limit.
    OutputLimit {
        /// The limit, in bytes.
        limit_bytes: u64,
    },
}

/// One refused use of a capability.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Denial {
    /// The capability kind and target, e.g. `exec /bin/sh` or `fs write /etc/x`.
    pub capability: String,
    /// Why it was refused.
    pub reason: String,
}

/// The task's `environment` in a module's arguments (the internal argument
/// `_ansible_environment`, a mapping the controller resolved), values as Python's
/// `str` gives them (`True`, `None`), as ansible-core sets them. The
/// shim sets it for every program the module runs; the module sees it as its own
/// environment (path arguments, `$VAR`s).
pub fn task_environment(args: &serde_json::Map<String, Value>) -> Vec<(String, String)> {
    match args.get("_ansible_environment") {
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| (k.clone(), sandball_pycompat::pyfmt::py_str(v)))
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_task_environment_is_text_as_python_writes_it() {
        let args =
            json!({"x": 1, "_ansible_environment": {"A": "a b", "B": true, "C": null, "D": 1.5}});
        assert_eq!(
            task_environment(args.as_object().unwrap()),
            [("A", "a b"), ("B", "True"), ("C", "None"), ("D", "1.5")]
                .map(|(k, v)| (k.to_string(), v.to_string()))
        );
        assert!(task_environment(json!({"x": 1}).as_object().unwrap()).is_empty());
    }

    #[test]
    fn requests_are_tagged_by_op() {
        let r = Request::HasModule {
            sha256: "ab".into(),
        };
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"op": "has-module", "sha256": "ab"})
        );
        let back: Response = serde_json::from_value(json!({
            "op": "run-result", "id": 3, "outcome": {"kind": "exited", "code": 0},
            "stderr": "", "elapsed_us": 75
        }))
        .unwrap();
        assert!(matches!(back, Response::RunResult(RunResult { id: 3, .. })));
    }
}
