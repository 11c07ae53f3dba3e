//! The shim's runtime: one engine and linker (WASI 0.2 plus the sandball host
//! interface), modules compiled once per node (cached on disk per engine) and
//! linked once per process, and one fresh store per run.

use crate::cache::{self, Cache};
use crate::engine::{self, Ticker};
use crate::error::ShimError;
use crate::host::{self, HostState};
use crate::limits::{MemoryLimiter, OutputPipes};
use crate::outcome::{self, Observed};
use crate::sandbox::{self, Stdio};
use sandball_wire::capability::Grant;
use sandball_wire::protocol::{Response, RunResult};
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use wasmtime::component::{Component, HasSelf, Linker, ResourceTable};
use wasmtime::{Engine, Store};
use wasmtime_wasi::p2::bindings::sync::CommandPre;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

/// Most bytes of a module's stderr returned in a run result.
pub const STDERR_RESULT_BYTES: usize = 64 << 10;

/// The data of one run's store.
pub struct RunState {
    wasi: WasiCtx,
    table: ResourceTable,
    memory: MemoryLimiter,
    host: HostState,
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
    home: PathBuf,
    prepared: HashMap<String, CommandPre<RunState>>,
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
            .map_err(|e| ShimError::Engine(format!("cannot set up the linker: {e:#}")))?;
        Ok(Runtime {
            fingerprint: engine::fingerprint(&engine),
            _ticker: Ticker::start(&engine)?,
            engine,
            linker,
            cache,
            home: crate::paths::home_dir(),
            prepared: HashMap::new(),
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
    /// stored, or its compiled code is cached.
    pub fn has_module(&self, sha: &str) -> Result<bool, ShimError> {
        cache::check_sha(sha)?;
        Ok(self.prepared.contains_key(sha)
            || self.cache.has_module(sha)
            || self.cache.compiled_path(sha, &self.fingerprint).is_file())
    }

    /// Stores a module sent by the controller (after checking its sha256).
    pub fn put_module(&self, sha: &str, bytes: &[u8]) -> Result<(), ShimError> {
        self.cache.store_module(sha, bytes)
    }

    /// Compiles `bytes` and keeps the compiled code in the cache.
    fn compile(&self, sha: &str, module: &str, bytes: &[u8]) -> Result<Component, ShimError> {
        let component =
            Component::from_binary(&self.engine, bytes).map_err(|e| ShimError::Compile {
                module: module.to_string(),
                message: format!("{e:#}"),
            })?;
        match component.serialize() {
            Ok(code) => {
                let path = self.cache.compiled_path(sha, &self.fingerprint);
                if let Err(e) = cache::write_atomic(&path, &code) {
                    eprintln!("sandball-shim: warning: compiled code not cached: {e}");
                }
            }
            Err(e) => {
                eprintln!("sandball-shim: warning: cannot serialize compiled {module}: {e:#}")
            }
        }
        Ok(component)
    }

    /// The compiled module: from the compiled-code cache, else compiled from
    /// `bytes` (or the stored module when `bytes` is `None`).
    fn component(
        &self,
        sha: &str,
        module: &str,
        bytes: Option<&[u8]>,
    ) -> Result<Component, ShimError> {
        let path = self.cache.compiled_path(sha, &self.fingerprint);
        // Held until this shim has the component: another shim compiling the same
        // module finishes first, and this one then loads its cached code.
        let _lock = self
            .cache
            .compile_lock(sha, &self.fingerprint)
            .map_err(|e| eprintln!("sandball-shim: warning: {e}"))
            .ok();
        if path.is_file() {
            // SAFETY: the file was written by this shim (`compile`), in its private
            // cache directory, under this engine's fingerprint; wasmtime checks the
            // header's compatibility again before using it.
            match unsafe { Component::deserialize_file(&self.engine, &path) } {
                Ok(c) => return Ok(c),
                Err(e) => eprintln!(
                    "sandball-shim: warning: cached code {} unusable ({e:#}); compiling again",
                    path.display()
                ),
            }
        }
        match bytes {
            Some(b) => self.compile(sha, module, b),
            None => self.compile(sha, module, &self.cache.read_module(sha)?),
        }
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
        let link_error = |e: wasmtime::Error| ShimError::Link {
            module: module.to_string(),
            message: format!("{e:#}"),
        };
        let pre = self
            .linker
            .instantiate_pre(&component)
            .and_then(CommandPre::new)
            .map_err(link_error)?;
        self.prepared.insert(sha.to_string(), pre.clone());
        Ok(pre)
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
        let pre = self.prepare(sha, module, None)?;
        let regions = sandbox::regions(grant, &self.home)?;
        let network = sandbox::Network::from_grant(grant)?;
        let limits = grant.limits;
        let pipes = OutputPipes::new(limits.output_bytes);
        let stdin = args.to_string().into_bytes();
        let wasi = sandbox::wasi_ctx(
            module,
            grant,
            &regions,
            &network,
            Stdio {
                stdin,
                stdout: pipes.stdout.clone(),
                stderr: pipes.stderr.clone(),
            },
        )?;
        let started = Instant::now();
        let deadline = started + Duration::from_millis(limits.wall_time_ms);
        let mut store = Store::new(
            &self.engine,
            RunState {
                wasi,
                table: ResourceTable::new(),
                memory: MemoryLimiter::new(limits.memory_bytes),
                host: HostState::new(
                    regions,
                    grant.exec.clone(),
                    self.home.clone(),
                    deadline,
                    limits.output_bytes,
                ),
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
        denials.extend(network.take_denials());
        drop(store);
        Ok(RunOutput {
            result: RunResult {
                id,
                outcome,
                stderr: pipes.stderr_text(STDERR_RESULT_BYTES),
                denials,
                elapsed_us,
            },
            stdout: pipes.stdout_bytes(),
        })
    }
}
