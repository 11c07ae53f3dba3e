//! Resource limits of one run: a memory limiter that remembers when it refused to
//! grow memory, and stdout/stderr pipes that remember when they overflowed.

use wasmtime::{ResourceLimiter, StoreLimits, StoreLimitsBuilder};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;

/// Limits a store's memory to the grant's `memory_bytes`; growing beyond traps, and
/// the refusal is remembered so the run ends as out-of-memory rather than a trap.
pub struct MemoryLimiter {
    limits: StoreLimits,
    refused: bool,
}

impl MemoryLimiter {
    /// A limiter allowing at most `bytes` of linear memory per memory.
    pub fn new(bytes: u64) -> Self {
        MemoryLimiter {
            limits: StoreLimitsBuilder::new()
                .memory_size(usize::try_from(bytes).unwrap_or(usize::MAX))
                .trap_on_grow_failure(true)
                .build(),
            refused: false,
        }
    }

    /// Whether a memory growth was refused during the run.
    pub fn refused(&self) -> bool {
        self.refused
    }
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let r = self.limits.memory_growing(current, desired, maximum);
        if !matches!(r, Ok(true)) {
            self.refused = true;
        }
        r
    }

    fn memory_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        self.refused = true;
        self.limits.memory_grow_failed(error)
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        self.limits.table_growing(current, desired, maximum)
    }

    fn instances(&self) -> usize {
        self.limits.instances()
    }

    fn tables(&self) -> usize {
        self.limits.tables()
    }

    fn memories(&self) -> usize {
        self.limits.memories()
    }
}

/// The module's stdout and stderr, each an in-memory pipe holding at most the
/// output limit plus one byte: a pipe that is full therefore received more than
/// the limit.
pub struct OutputPipes {
    /// The module's stdout.
    pub stdout: MemoryOutputPipe,
    /// The module's stderr.
    pub stderr: MemoryOutputPipe,
    limit: usize,
}

impl OutputPipes {
    /// Pipes for a run whose output limit is `limit_bytes` per stream.
    pub fn new(limit_bytes: u64) -> Self {
        let limit = usize::try_from(limit_bytes).unwrap_or(usize::MAX - 1);
        OutputPipes {
            stdout: MemoryOutputPipe::new(limit + 1),
            stderr: MemoryOutputPipe::new(limit + 1),
            limit,
        }
    }

    /// Whether either stream received more than the limit.
    pub fn overflowed(&self) -> bool {
        self.stdout.contents().len() > self.limit || self.stderr.contents().len() > self.limit
    }

    /// The module's stdout, cut at the limit.
    pub fn stdout_bytes(&self) -> Vec<u8> {
        let all = self.stdout.contents();
        all[..all.len().min(self.limit)].to_vec()
    }

    /// The module's stderr as text, cut at `max` bytes (and at the limit).
    pub fn stderr_text(&self, max: usize) -> String {
        let all = self.stderr.contents();
        let end = all.len().min(self.limit).min(max);
        String::from_utf8_lossy(&all[..end]).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmtime_wasi::p2::OutputStream;

    #[test]
    fn memory_refusals_are_remembered() {
        let mut l = MemoryLimiter::new(1 << 16);
        assert!(l.memory_growing(0, 1 << 16, None).unwrap());
        assert!(!l.refused());
        assert!(l.memory_growing(1 << 16, 2 << 16, None).is_err());
        assert!(l.refused());
    }

    #[test]
    fn a_full_pipe_means_the_limit_was_passed() {
        let pipes = OutputPipes::new(4);
        let mut out = pipes.stdout.clone();
        out.write((&b"abcd"[..]).into()).unwrap();
        assert!(!pipes.overflowed());
        // One byte more than the limit fits in the pipe, and marks the overflow.
        out.write((&b"e"[..]).into()).unwrap();
        assert!(pipes.overflowed());
        assert_eq!(pipes.stdout_bytes(), b"abcd");
    }
}
