//! The shim's runtime: one engine and linker (WASI 0.2, `wasi:http` whose requests
//! the run's `net` grant gates, and the sandball host interface), modules compiled
//! once per node (cached on disk per engine) and linked once per process, and one
//! fresh store per run.

use crate::cache::{self, Cache, Compiled};
use crate::engine::{self, Ticker};
use crate::error::ShimError;
use crate::host::{self, HostState};
use crate::http::HttpGate;
use crate::limits::{MemoryLimiter, OutputPipes};
use crate::outcome::{self, Observed};
use crate::paths::Places;
use crate::sandbox::{self, Stdio};
use sandball_wire::capability::Grant;
use sandball_wire::protocol::{ModuleEntry, Response, RunResult, task_environment};
use serde_json::Value;
use std::collections::HashMap;
use std::time::Instant;
use wasmtime::component::{Component, HasSelf, Linker, ResourceTable};
use wasmtime::{Engine, Store};
use wasmtime_wasi::p2::bindings::sync::CommandPre;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

/// Most bytes of a module's stderr returned in a run result.
pub const STDERR_RESULT_BYTES: usize = 64 << 10;

/// The data of one run's store.
pub struct RunState {
    wasi: WasiCtx,
    table: ResourceTable,
    memory: MemoryLimiter,
    host: HostState,
    http: WasiHttpCtx,
    gate: HttpGate,
}

impl WasiHttpView for RunState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: &mut self.gate,
        }
    }
}

impl WasiView for RunState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// What one run produced.
#[derive(Debug)]
pub struct RunOutput {
    /// How it ended, its stderr, denials and time.
    pub result: RunResult,
    /// The module's stdout (the frame payload of the result).
    pub stdout: Vec<u8>,
}

/// The shim's runtime for one process.
pub struct Runtime {
    engine: Engine,
    fingerprint: String,
    linker: Linker<RunState>,
    cache: Cache,
    places: Places,
    prepared: HashMap<String, CommandPre<RunState>>,
    /// Warnings about the cache gathered while preparing a module, reported with the
    /// next run's result.
    warnings: Vec<String>,
    _ticker: Ticker,
    watchdog: Option<crate::watchdog::Watchdog>,
}

impl Runtime {
    /// Sets up the engine, its epoch ticker and the linker, over `cache`.
    pub fn new(cache: Cache) -> Result<Runtime, ShimError> {
        let engine = engine::new_engine()?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)
            .and_then(|()| {
                host::Module::add_to_linker::<RunState, HasSelf<HostState>>(&mut linker, |s| {
                    &mut s.host
                })
            })
            .and_then(|()| wasmtime_wasi_http::p2::add_only_http_to_linker_sync(&mut linker))
            .map_err(|e| ShimError::Engine(format!("cannot set up the linker: {e:#}")))?;
        Ok(Runtime {
            fingerprint: engine::fingerprint(&engine),
            _ticker: Ticker::start(&engine)?,
            engine,
            linker,
            cache,
            places: Places::of_process(),
            prepared: HashMap::new(),
            warnings: Vec::new(),
            watchdog: None,
        })
    }

    /// The engine fingerprint compiled code is kept under.
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// The cache this runtime uses.
    pub fn cache(&self) -> &Cache {
        &self.cache
    }

    /// The answer to a hello: versions, engine fingerprint, OS and architecture.
    pub fn hello(&self) -> Response {
        Response::Hello {
            version: sandball_wire::VERSION.to_string(),
            protocol: sandball_wire::PROTOCOL,
            engine: self.fingerprint.clone(),
            os: std::env::consts::OS.to_string(),
            arch: std::env::consts::ARCH.to_string(),
        }
    }

    /// Has every later run watched for being stuck in a host call (serve mode).
    pub fn set_watchdog(&mut self, watchdog: crate::watchdog::Watchdog) {
        self.watchdog = Some(watchdog);
    }

    /// Whether the module can be run without sending it: it is linked already, or
    /// its compiled code is cached and intact (it is then linked now), or it is
    /// stored intact. A stored copy that is corrupt is removed (and reported on
    /// stderr), so the controller sends it again.
    pub fn has_module(&mut self, sha: &str) -> Result<bool, ShimError> {
        cache::check_sha(sha)?;
        if self.prepared.contains_key(sha) {
            return Ok(true);
        }
        // A has-module request does not name the module: messages use its address.
        let name = format!("module {sha}");
        let cached = {
            let _lock = self.compile_lock(sha);
            self.cached_component(sha, &name)
        };
        if let Some(component) = cached
            && self.link(sha, &name, &component).is_ok()
        {
            return Ok(true);
        }
        match self.cache.read_module(sha) {
            Ok(_) => Ok(true),
            Err(ShimError::UnknownModule(_)) => Ok(false),
            Err(e @ ShimError::CorruptModule { .. }) => {
                eprintln!("sandball-shim: warning: {e}");
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// Those of `shas` this node does not hold (intact), in their order.
    pub fn missing_modules(&mut self, shas: &[String]) -> Result<Vec<String>, ShimError> {
        let mut missing = vec![];
        for sha in shas {
            if !self.has_module(sha)? {
                missing.push(sha.clone());
            }
        }
        Ok(missing)
    }

    /// Stores a module sent by the controller, `gzip`-compressed or not (after
    /// checking the sha256 of its uncompressed bytes).
    pub fn put_module(&self, sha: &str, payload: &[u8], gzip: bool) -> Result<(), ShimError> {
        if !gzip {
            return self.cache.store_module(sha, payload);
        }
        let bytes = gunzip(payload).map_err(|e| ShimError::Gunzip {
            sha: sha.to_string(),
            source: e,
        })?;
        self.cache.store_module(sha, &bytes)
    }

    /// Stores the modules of one [`sandball_wire::protocol::Request::PutModules`]:
    /// `payload` is their bytes one after the other (one xz stream when `xz`), each
    /// module's sha256 checked before it is kept. A payload that does not hold exactly
    /// the modules' bytes stores none; a module that does not match its address fails
    /// the request after the ones before it were stored. Returns how many it stored.
    pub fn put_modules(
        &self,
        modules: &[ModuleEntry],
        payload: &[u8],
        xz: bool,
    ) -> Result<u64, ShimError> {
        let expected = modules
            .iter()
            .try_fold(0u64, |sum, m| sum.checked_add(m.bytes))
            .filter(|sum| *sum <= sandball_wire::frame::MAX_PAYLOAD)
            .ok_or_else(|| {
                ShimError::BadBatch("is larger than a frame's largest payload".into())
            })?;
        let unpacked;
        let bytes = if xz {
            unpacked = unxz(payload, expected).map_err(|e| {
                ShimError::BadBatch(format!("is not an xz stream this shim can read ({e})"))
            })?;
            unpacked.as_slice()
        } else {
            payload
        };
        if bytes.len() as u64 != expected {
            return Err(ShimError::BadBatch(format!(
                "holds {} bytes, not the {expected} of its modules",
                bytes.len()
            )));
        }
        let mut rest = bytes;
        for m in modules {
            // The lengths add up to the payload's, checked above.
            let (module, after) = rest.split_at(m.bytes as usize);
            self.cache.store_module(&m.sha256, module)?;
            rest = after;
        }
        Ok(modules.len() as u64)
    }

    /// Compiles stored modules that have no compiled code yet, one after the other in
    /// a background thread (each compile already uses every core), so that their first
    /// runs find the code: a run of one of them meanwhile waits on its compile lock,
    /// then loads what was compiled. Returns how many it compiles. A module that fails
    /// to compile here is compiled again by its run, which reports the error.
    pub fn precompile(&mut self, shas: &[String]) -> usize {
        let todo: Vec<String> = self
            .uncompiled(shas)
            .into_iter()
            .filter(|sha| self.cache.module_path(sha).exists())
            .collect();
        let Some(first) = todo.first() else {
            return 0;
        };
        let (engine, cache, fingerprint) = (
            self.engine.clone(),
            self.cache.clone(),
            self.fingerprint.clone(),
        );
        // The first lock is taken before answering, so the run that comes next waits
        // for this compile instead of starting its own.
        let mut lock = cache.compile_lock(first, &fingerprint).ok();
        let count = todo.len();
        let spawned = std::thread::Builder::new()
            .name("precompile".into())
            .spawn(move || {
                for (i, sha) in todo.iter().enumerate() {
                    if i > 0 {
                        lock = cache.compile_lock(sha, &fingerprint).ok();
                    }
                    if !cache.compiled_path(sha, &fingerprint).exists()
                        && let Ok(bytes) = cache.read_module(sha)
                        && let Ok(component) = Component::from_binary(&engine, &bytes)
                        && let Ok(code) = component.serialize()
                    {
                        let _ = cache.store_compiled(sha, &fingerprint, &code);
                    }
                    drop(lock.take());
                }
            });
        if spawned.is_err() { 0 } else { count }
    }

    /// Those of `shas` (well-formed addresses) that are neither linked in this
    /// process nor have compiled code in the cache.
    pub fn uncompiled(&self, shas: &[String]) -> Vec<String> {
        shas.iter()
            .filter(|sha| {
                cache::check_sha(sha).is_ok()
                    && !self.prepared.contains_key(*sha)
                    && !self.cache.compiled_path(sha, &self.fingerprint).exists()
            })
            .cloned()
            .collect()
    }

    /// The module's compiled code, when the cache holds it intact (the sha256
    /// recorded when it was compiled matches); `None` otherwise.
    pub fn compiled_code(&mut self, sha: &str) -> Result<Option<Vec<u8>>, ShimError> {
        cache::check_sha(sha)?;
        let _lock = self.compile_lock(sha);
        Ok(match self.cache.load_compiled(sha, &self.fingerprint) {
            Compiled::Verified(code) => Some(code),
            Compiled::Missing | Compiled::Rejected(_) => None,
        })
    }

    /// Keeps `code`, compiled by the engine with fingerprint `engine`, as the
    /// module's compiled code, with its sha256 (as if this shim had compiled it).
    /// Code for another engine is refused.
    pub fn put_compiled(&mut self, sha: &str, engine: &str, code: &[u8]) -> Result<(), ShimError> {
        cache::check_sha(sha)?;
        if engine != self.fingerprint {
            return Err(ShimError::Engine(format!(
                "compiled code of module {sha} is for engine {engine}, not this shim's {}",
                self.fingerprint
            )));
        }
        let _lock = self.compile_lock(sha);
        self.cache.store_compiled(sha, &self.fingerprint, code)
    }

    /// Compiles `bytes` and keeps the compiled code in the cache, with its sha256.
    fn compile(&mut self, sha: &str, module: &str, bytes: &[u8]) -> Result<Component, ShimError> {
        let component =
            Component::from_binary(&self.engine, bytes).map_err(|e| ShimError::Compile {
                module: module.to_string(),
                message: format!("{e:#}"),
            })?;
        match component.serialize() {
            Ok(code) => {
                if let Err(e) = self.cache.store_compiled(sha, &self.fingerprint, &code) {
                    self.warn(format!("compiled code of {module} not cached: {e}"));
                }
            }
            Err(e) => self.warn(format!("cannot serialize compiled {module}: {e:#}")),
        }
        Ok(component)
    }

    /// Records a warning for the next run's result (and says it on stderr).
    fn warn(&mut self, message: String) {
        eprintln!("sandball-shim: warning: {message}");
        self.warnings.push(message);
    }

    /// Takes the lock that serialises compiling the module (held until dropped): a
    /// shim compiling it finishes before another loads or compiles it. Without the
    /// lock, the worst is a duplicate compile.
    fn compile_lock(&mut self, sha: &str) -> Option<std::fs::File> {
        match self.cache.compile_lock(sha, &self.fingerprint) {
            Ok(l) => Some(l),
            Err(e) => {
                self.warn(e.to_string());
                None
            }
        }
    }

    /// The module's compiled code from the cache, when there is some whose sha256
    /// matches the one recorded when it was compiled. Code that does not match is
    /// never loaded: it is removed, with a warning, and compiled again by the caller.
    fn cached_component(&mut self, sha: &str, module: &str) -> Option<Component> {
        let why = match self.cache.load_compiled(sha, &self.fingerprint) {
            Compiled::Missing => return None,
            Compiled::Verified(code) => {
                // SAFETY: wasmtime runs deserialized code as native code without
                // checking it. These bytes are the code this shim's engine compiled:
                // they were read into memory from the private cache (checked to be
                // writable by the shim's user and root only) and their sha256 matched
                // the one recorded when they were compiled, so what is deserialized is
                // what was checked. wasmtime checks the header's compatibility again.
                match unsafe { Component::deserialize(&self.engine, &code) } {
                    Ok(c) => return Some(c),
                    Err(e) => format!("wasmtime cannot use it ({e:#})"),
                }
            }
            Compiled::Rejected(why) => why,
        };
        self.warn(format!(
            "compiled code of {module} was not loaded: {why}; compiling it again"
        ));
        self.cache.discard_compiled(sha, &self.fingerprint);
        None
    }

    /// The compiled module: from the compiled-code cache when it is intact, else
    /// compiled from `bytes` (or the stored module when `bytes` is `None`).
    fn component(
        &mut self,
        sha: &str,
        module: &str,
        bytes: Option<&[u8]>,
    ) -> Result<Component, ShimError> {
        // Held until this shim has the component: another shim compiling the same
        // module finishes first, and this one then loads its cached code.
        let _lock = self.compile_lock(sha);
        if let Some(c) = self.cached_component(sha, module) {
            return Ok(c);
        }
        match bytes {
            Some(b) => self.compile(sha, module, b),
            None => {
                let stored = self.cache.read_module(sha)?;
                self.compile(sha, module, &stored)
            }
        }
    }

    /// Links a compiled module and keeps it ready to run for this process.
    fn link(
        &mut self,
        sha: &str,
        module: &str,
        component: &Component,
    ) -> Result<CommandPre<RunState>, ShimError> {
        let pre = self
            .linker
            .instantiate_pre(component)
            .and_then(CommandPre::new)
            .map_err(|e| ShimError::Link {
                module: module.to_string(),
                message: format!("{e:#}"),
            })?;
        self.prepared.insert(sha.to_string(), pre.clone());
        Ok(pre)
    }

    /// The module ready to run (compiled and linked), once per process.
    fn prepare(
        &mut self,
        sha: &str,
        module: &str,
        bytes: Option<&[u8]>,
    ) -> Result<CommandPre<RunState>, ShimError> {
        cache::check_sha(sha)?;
        if let Some(pre) = self.prepared.get(sha) {
            return Ok(pre.clone());
        }
        let component = self.component(sha, module, bytes)?;
        self.link(sha, module, &component)
    }

    /// Makes a module given as bytes (not stored) ready to run, and returns its
    /// content address for [`Runtime::run`].
    pub fn load(&mut self, module: &str, bytes: &[u8]) -> Result<String, ShimError> {
        let sha = cache::sha256_hex(bytes);
        self.prepare(&sha, module, Some(bytes))?;
        Ok(sha)
    }

    /// Runs a module once with `args` on its stdin and only what `grant` allows.
    pub fn run(
        &mut self,
        id: u64,
        sha: &str,
        module: &str,
        args: &Value,
        grant: &Grant,
    ) -> Result<RunOutput, ShimError> {
        let pre = match self.prepare(sha, module, None) {
            Ok(pre) => pre,
            Err(e) => {
                // Already said on stderr; the error is what the controller sees.
                self.warnings.clear();
                return Err(e);
            }
        };
        let opened = sandbox::regions::regions(grant, &self.places, &self.cache.protected_paths())?;
        let regions = &opened.regions;
        let network = sandbox::network::Network::from_grant(grant)?;
        let limits = grant.limits;
        let pipes = OutputPipes::new(limits.output_bytes);
        let stdin = args.to_string().into_bytes();
        let wasi = sandbox::wasi_ctx(
            module,
            &self.places,
            grant,
            regions,
            &network,
            Stdio {
                stdin,
                stdout: pipes.stdout.clone(),
                stderr: pipes.stderr.clone(),
            },
        )?;
        let started = Instant::now();
        let deadline = crate::limits::deadline(started, limits.wall_time_ms);
        let mut store = Store::new(
            &self.engine,
            RunState {
                wasi,
                table: ResourceTable::new(),
                memory: MemoryLimiter::new(limits.memory_bytes),
                host: {
                    let mut host = HostState::new(
                        regions.clone(),
                        grant.exec.clone(),
                        grant.env.clone(),
                        self.places.clone(),
                        deadline,
                        limits.output_bytes,
                    );
                    host.allow_dns(grant.dns);
                    if let Some(args) = args.as_object() {
                        host.set_task_environment(task_environment(args));
                    }
                    host
                },
                http: WasiHttpCtx::new(),
                gate: HttpGate::new(network.clone()),
            },
        );
        store.limiter(|s| &mut s.memory);
        store.set_epoch_deadline(engine::deadline_ticks(limits.wall_time_ms));
        if let Some(w) = &self.watchdog {
            w.arm(id, limits.wall_time_ms);
        }
        let result = pre
            .instantiate(&mut store)
            .and_then(|command| command.wasi_cli_run().call_run(&mut store));
        if let Some(w) = &self.watchdog {
            w.disarm();
        }
        let elapsed_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        let observed = Observed {
            memory_refused: store.data().memory.refused(),
            output_overflowed: pipes.overflowed(),
        };
        let outcome = outcome::classify(&result, &limits, observed);
        let mut denials = store.data_mut().host.take_denials();
        denials.append(network.take_denials());
        let (denials, denials_omitted) = denials.into_parts();
        drop(store);
        drop(opened);
        Ok(RunOutput {
            result: RunResult {
                id,
                outcome,
                stderr: pipes.stderr_text(STDERR_RESULT_BYTES),
                denials,
                denials_omitted,
                warnings: std::mem::take(&mut self.warnings),
                elapsed_us,
            },
            stdout: pipes.stdout_bytes(),
        })
    }
}

/// Most memory (KiB) the xz reader may take for its dictionary: twice the 64 MiB of
/// xz's largest preset (`-9`); the controller's streams use far less (preset 3 or 0,
/// the dictionary no larger than the content).
const XZ_MEMORY_KIB: u32 = 128 << 10;

/// The bytes an xz stream holds, up to `expected` and one more (so that a stream
/// holding more is told apart without unpacking all of it). The reader verifies the
/// stream's own check.
fn unxz(payload: &[u8], expected: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::with_capacity(usize::try_from(expected).unwrap_or(0));
    lzma_rust2::XzReader::new_mem_limit(payload, false, XZ_MEMORY_KIB)
        .take(expected + 1)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The bytes a gzip stream holds, at most a frame's largest payload of them.
fn gunzip(payload: &[u8]) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let limit = sandball_wire::frame::MAX_PAYLOAD;
    let mut bytes = Vec::with_capacity(payload.len().saturating_mul(3));
    flate2::read::GzDecoder::new(payload)
        .take(limit + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(std::io::Error::other(format!(
            "it holds more than {limit} bytes"
        )));
    }
    Ok(bytes)
}
