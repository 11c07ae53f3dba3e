//! Resource limits of one run: a store limiter that bounds the run's memories,
//! tables and instances (in number and in total size) and remembers when it refused
//! memory, stdout/stderr pipes that remember when they overflowed, the bounded record
//! of a run's denials, and the run's deadline. All arithmetic on limits saturates: any
//! `u64` a grant carries is a valid (if generous) limit.

use sandball_wire::protocol::Denial;
use std::time::{Duration, Instant};
use wasmtime::ResourceLimiter;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;

/// Most linear memories one run may create (a component holds one per core module
/// instance that defines one; sandball's modules hold one or two).
pub const MAX_MEMORIES: usize = 16;
/// Most tables one run may create.
pub const MAX_TABLES: usize = 64;
/// Most instances (core module and component instances) one run may create.
pub const MAX_INSTANCES: usize = 256;
/// Most table elements all of a run's tables may hold together.
pub const MAX_TABLE_ELEMENTS: usize = 1 << 20;

/// Bounds one run's store: every linear memory together holds at most the grant's
/// `memory_bytes`, the tables at most [`MAX_TABLE_ELEMENTS`] together, and there are
/// at most [`MAX_MEMORIES`] memories, [`MAX_TABLES`] tables and [`MAX_INSTANCES`]
/// instances. Growing beyond traps; a refused memory growth is remembered so the run
/// ends as out-of-memory rather than a trap.
pub struct MemoryLimiter {
    memory_limit: usize,
    memory_total: usize,
    table_total: usize,
    refused: bool,
}

impl MemoryLimiter {
    /// A limiter allowing at most `bytes` of linear memory in all.
    pub fn new(bytes: u64) -> Self {
        MemoryLimiter {
            memory_limit: usize::try_from(bytes).unwrap_or(usize::MAX),
            memory_total: 0,
            table_total: 0,
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
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let total = self
            .memory_total
            .saturating_sub(current)
            .saturating_add(desired);
        if total > self.memory_limit {
            self.refused = true;
            return Err(wasmtime::Error::msg(format!(
                "the run's memories would hold {total} bytes, beyond its limit of {} bytes",
                self.memory_limit
            )));
        }
        self.memory_total = total;
        Ok(true)
    }

    fn memory_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        self.refused = true;
        Err(error)
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let total = self
            .table_total
            .saturating_sub(current)
            .saturating_add(desired);
        if total > MAX_TABLE_ELEMENTS {
            return Err(wasmtime::Error::msg(format!(
                "the run's tables would hold {total} elements, beyond the limit of {MAX_TABLE_ELEMENTS}"
            )));
        }
        self.table_total = total;
        Ok(true)
    }

    fn instances(&self) -> usize {
        MAX_INSTANCES
    }

    fn tables(&self) -> usize {
        MAX_TABLES
    }

    fn memories(&self) -> usize {
        MAX_MEMORIES
    }
}

/// The instant a run that started at `started` must end by, for a wall-time limit
/// of `wall_time_ms`; a limit too far away to represent is a century.
pub fn deadline(started: Instant, wall_time_ms: u64) -> Instant {
    const CENTURY: Duration = Duration::from_secs(100 * 365 * 24 * 3600);
    let wanted = Duration::from_millis(wall_time_ms).min(CENTURY);
    started
        .checked_add(wanted)
        .or_else(|| started.checked_add(Duration::from_secs(24 * 3600)))
        .unwrap_or(started)
}

/// Most denials a run's result keeps.
pub const MAX_DENIALS: usize = 64;
/// Most bytes of a denial's capability, and of its reason, that are kept.
pub const MAX_DENIAL_TEXT: usize = 1024;
/// Most bytes all the denials a result keeps may take.
pub const MAX_DENIALS_BYTES: usize = 64 << 10;

/// The denials of one run: the first [`MAX_DENIALS`] (each text cut at
/// [`MAX_DENIAL_TEXT`] bytes, [`MAX_DENIALS_BYTES`] in all) and a count of the others,
/// so that a module cannot grow the shim's memory or the result frame by being
/// refused over and over. Reads as a slice of the kept denials.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Denials {
    kept: Vec<Denial>,
    bytes: usize,
    omitted: u64,
}

/// `text` cut at `max` bytes (on a character boundary), saying how much was cut.
fn cut(mut text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let dropped = text.len() - end;
    text.truncate(end);
    text.push_str(&format!("… ({dropped} bytes more)"));
    text
}

impl Denials {
    /// Records a refusal of `capability`, explained by `reason`.
    pub fn push(&mut self, capability: String, reason: String) {
        if self.kept.len() >= MAX_DENIALS {
            self.omitted = self.omitted.saturating_add(1);
            return;
        }
        let denial = Denial {
            capability: cut(capability, MAX_DENIAL_TEXT),
            reason: cut(reason, MAX_DENIAL_TEXT),
        };
        let size = denial.capability.len() + denial.reason.len();
        if self.bytes.saturating_add(size) > MAX_DENIALS_BYTES {
            self.omitted = self.omitted.saturating_add(1);
            return;
        }
        self.bytes += size;
        self.kept.push(denial);
    }

    /// Adds the denials of `other` after these.
    pub fn append(&mut self, other: Denials) {
        for d in other.kept {
            self.push(d.capability, d.reason);
        }
        self.omitted = self.omitted.saturating_add(other.omitted);
    }

    /// How many denials were not kept.
    pub fn omitted(&self) -> u64 {
        self.omitted
    }

    /// The kept denials and the number of the others.
    pub fn into_parts(self) -> (Vec<Denial>, u64) {
        (self.kept, self.omitted)
    }
}

impl std::ops::Deref for Denials {
    type Target = [Denial];

    fn deref(&self) -> &[Denial] {
        &self.kept
    }
}

impl IntoIterator for Denials {
    type Item = Denial;
    type IntoIter = std::vec::IntoIter<Denial>;

    fn into_iter(self) -> Self::IntoIter {
        self.kept.into_iter()
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
        let limit = usize::try_from(limit_bytes)
            .unwrap_or(usize::MAX)
            .min(usize::MAX - 1);
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
    fn the_limit_covers_all_memories_together() {
        let mut l = MemoryLimiter::new(3 << 16);
        assert!(l.memory_growing(0, 1 << 16, None).unwrap());
        assert!(l.memory_growing(0, 2 << 16, None).unwrap());
        // A third memory would pass a per-memory limit, not the run's.
        let err = l.memory_growing(0, 1 << 16, None).unwrap_err();
        assert!(err.to_string().contains("beyond its limit"), "{err}");
        assert!(l.refused());
        assert_eq!(l.memories(), MAX_MEMORIES);
        assert!(l.table_growing(0, MAX_TABLE_ELEMENTS, None).unwrap());
        assert!(l.table_growing(0, 1, None).is_err());
    }

    #[test]
    fn denials_are_bounded_in_number_and_size() {
        let mut d = Denials::default();
        let huge = "é".repeat(1 << 20);
        d.push(format!("fs read /{huge}"), huge.clone());
        assert!(
            d[0].capability.len() < MAX_DENIAL_TEXT + 40,
            "{}",
            d[0].capability.len()
        );
        assert!(d[0].reason.ends_with(" bytes more)"));
        for i in 0..100 {
            d.push(format!("exec /bin/{i}"), huge.clone());
        }
        for i in 100..200_000 {
            d.push(format!("exec /bin/{i}"), "denied".into());
        }
        let mut net = Denials::default();
        net.push("net 127.0.0.1:1".into(), "no".into());
        d.append(net);
        assert!(d.len() <= MAX_DENIALS);
        let bytes: usize = d.iter().map(|x| x.capability.len() + x.reason.len()).sum();
        assert!(bytes <= MAX_DENIALS_BYTES, "{bytes}");
        assert_eq!(d.len() as u64 + d.omitted(), 200_002);
        let (kept, omitted) = d.into_parts();
        assert_eq!(kept[0].capability.chars().next(), Some('f'));
        assert_eq!(kept.len() as u64 + omitted, 200_002);
    }

    /// A small deterministic generator (splitmix64) for the property tests.
    pub(crate) struct Gen(pub u64);

    impl Gen {
        pub(crate) fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }

        /// Mostly edge values (0, 1, powers of two and their neighbours, the top of
        /// the range), sometimes anything.
        pub(crate) fn limit(&mut self) -> u64 {
            let shift = self.next() % 64;
            match self.next() % 6 {
                0 => 0,
                1 => u64::MAX - self.next() % 3,
                2 => (1u64 << shift).wrapping_sub(1),
                3 => 1u64 << shift,
                4 => (1u64 << shift).wrapping_add(1),
                _ => self.next(),
            }
        }
    }

    #[test]
    fn any_limit_a_grant_can_carry_is_handled_without_overflow() {
        let mut g = Gen(0x5eed);
        let started = Instant::now();
        for _ in 0..20_000 {
            let (memory, wall, output) = (g.limit(), g.limit(), g.limit());
            let mut l = MemoryLimiter::new(memory);
            let want = usize::try_from(g.limit()).unwrap_or(usize::MAX);
            let allowed = l.memory_growing(0, want, None).is_ok();
            assert_eq!(
                allowed,
                (want as u128) <= (memory as u128).min(usize::MAX as u128)
            );
            let _ = l.memory_growing(want, usize::MAX, Some(usize::MAX));
            let _ = l.table_growing(usize::MAX, usize::MAX, None);
            let at = deadline(started, wall);
            assert!(at >= started);
            if wall <= 1 << 40 {
                assert_eq!(at - started, Duration::from_millis(wall));
            }
            let _ = crate::engine::deadline_ticks(wall);
            let pipes = OutputPipes::new(output);
            assert!(!pipes.overflowed());
            assert!(pipes.stdout_bytes().is_empty());
        }
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
