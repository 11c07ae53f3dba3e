//! The shim's one wasmtime [`Engine`]: its configuration, the fingerprint that keys
//! compiled code, and the epoch ticker that lets a run be interrupted at its
//! wall-time deadline.

use crate::error::ShimError;
use sha2::{Digest, Sha256};
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;
use wasmtime::{Config, Engine, Strategy};

/// Interval between two epoch ticks; wall-time limits are enforced to this precision.
pub const TICK: Duration = Duration::from_millis(10);

/// Builds the engine: component model, epoch interruption, parallel compilation, and
/// Winch, wasmtime's baseline compiler, for the modules' code. A module is compiled
/// on its node's first contact with it and then usually runs for milliseconds: Winch
/// compiles about five times faster than Cranelift (10 built-in modules: 1.6 s
/// against 8.1 s on one 2-core machine) for code that runs slower, which a module that
/// mostly waits on the host's calls does not notice (docs/BENCHMARKS.md). Cranelift
/// still compiles the trampolines between the host and the modules.
pub fn new_engine() -> Result<Engine, ShimError> {
    let mut config = Config::new();
    config
        .strategy(Strategy::Winch)
        .wasm_component_model(true)
        .epoch_interruption(true)
        .parallel_compilation(true);
    Engine::new(&config).map_err(|e| ShimError::Engine(format!("{e:#}")))
}

/// Feeds `Hash` input into sha256 so the fingerprint is stable across processes.
struct Sha256Hasher(Sha256);

impl Hasher for Sha256Hasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    fn finish(&self) -> u64 {
        let digest = self.0.clone().finalize();
        let mut first = [0u8; 8];
        first.copy_from_slice(&digest[..8]);
        u64::from_be_bytes(first)
    }
}

/// The engine's fingerprint: hex of a sha256 of wasmtime's precompile
/// compatibility hash (wasmtime version, target, compiler settings). Compiled code is
/// only reused by an engine with the same fingerprint.
pub fn fingerprint(engine: &Engine) -> String {
    let mut hasher = Sha256Hasher(Sha256::new());
    engine.precompile_compatibility_hash().hash(&mut hasher);
    hex::encode(&hasher.0.finalize()[..16])
}

/// A thread that advances the engine's epoch every [`TICK`] until dropped.
pub struct Ticker {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Ticker {
    /// Starts ticking `engine`.
    pub fn start(engine: &Engine) -> Result<Ticker, ShimError> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let engine = engine.clone();
        let thread = std::thread::Builder::new()
            .name("epoch-ticker".into())
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    std::thread::sleep(TICK);
                    engine.increment_epoch();
                }
            })
            .map_err(|e| ShimError::Engine(format!("cannot start the epoch ticker: {e}")))?;
        Ok(Ticker {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            // The thread only sleeps and increments; it cannot panic.
            let _ = thread.join();
        }
    }
}

/// Epoch ticks to allow for a wall-time limit: the limit rounded up to whole ticks,
/// plus one for the tick already under way.
pub fn deadline_ticks(wall_time_ms: u64) -> u64 {
    let tick_ms = TICK.as_millis() as u64;
    wall_time_ms.div_ceil(tick_ms).saturating_add(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprint_is_stable_for_one_configuration() {
        let a = new_engine().unwrap();
        let b = new_engine().unwrap();
        assert_eq!(fingerprint(&a), fingerprint(&b));
        assert_eq!(fingerprint(&a).len(), 32);
    }

    #[test]
    fn deadlines_round_up_to_ticks() {
        assert_eq!(deadline_ticks(0), 1);
        assert_eq!(deadline_ticks(1), 2);
        assert_eq!(deadline_ticks(10), 2);
        assert_eq!(deadline_ticks(25), 4);
    }
}
