//! How the end of a run maps to an [`Outcome`].

use sandball_wire::capability::Limits;
use sandball_wire::protocol::Outcome;
use wasmtime::{Trap, WasmBacktrace};
use wasmtime_wasi::I32Exit;

/// What the limiters observed during a run.
#[derive(Clone, Copy, Debug, Default)]
pub struct Observed {
    /// A memory growth was refused.
    pub memory_refused: bool,
    /// stdout or stderr received more than the output limit.
    pub output_overflowed: bool,
}

/// Classifies the end of a run (instantiation plus `wasi:cli/run`). Exceeding a
/// limit wins over whatever the module did next: a module whose output was cut
/// usually fails or traps because of it.
pub fn classify(
    result: &wasmtime::Result<Result<(), ()>>,
    limits: &Limits,
    observed: Observed,
) -> Outcome {
    if observed.output_overflowed {
        return Outcome::OutputLimit {
            limit_bytes: limits.output_bytes,
        };
    }
    let error = match result {
        Ok(Ok(())) => return Outcome::Exited { code: 0 },
        Ok(Err(())) => return Outcome::Exited { code: 1 },
        Err(e) => e,
    };
    if let Some(exit) = error.downcast_ref::<I32Exit>() {
        return Outcome::Exited { code: exit.0 };
    }
    if observed.memory_refused {
        return Outcome::OutOfMemory {
            limit_bytes: limits.memory_bytes,
        };
    }
    if matches!(error.downcast_ref::<Trap>(), Some(Trap::Interrupt)) {
        return Outcome::TimedOut {
            limit_ms: limits.wall_time_ms,
        };
    }
    Outcome::Trapped {
        message: trap_message(error),
    }
}

/// The trap (or error) followed by the wasm backtrace when there is one.
fn trap_message(error: &wasmtime::Error) -> String {
    let head = match error.downcast_ref::<Trap>() {
        Some(trap) => trap.to_string(),
        None => format!("{:#}", error),
    };
    match error.downcast_ref::<WasmBacktrace>() {
        Some(bt) => format!("{head}\n{bt}"),
        None => head,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits {
            memory_bytes: 1 << 20,
            wall_time_ms: 50,
            output_bytes: 10,
        }
    }

    #[test]
    fn returns_and_exits_become_exit_codes() {
        let none = Observed::default();
        assert_eq!(
            classify(&Ok(Ok(())), &limits(), none),
            Outcome::Exited { code: 0 }
        );
        assert_eq!(
            classify(&Ok(Err(())), &limits(), none),
            Outcome::Exited { code: 1 }
        );
        let exit = Err(wasmtime::Error::new(I32Exit(3)));
        assert_eq!(
            classify(&exit, &limits(), none),
            Outcome::Exited { code: 3 }
        );
    }

    #[test]
    fn limits_win_over_what_followed() {
        let interrupted = Err(wasmtime::Error::new(Trap::Interrupt));
        assert_eq!(
            classify(&interrupted, &limits(), Observed::default()),
            Outcome::TimedOut { limit_ms: 50 }
        );
        let trapped = Err(wasmtime::Error::new(Trap::UnreachableCodeReached));
        let oom = Observed {
            memory_refused: true,
            output_overflowed: false,
        };
        assert_eq!(
            classify(&trapped, &limits(), oom),
            Outcome::OutOfMemory {
                limit_bytes: 1 << 20
            }
        );
        let full = Observed {
            memory_refused: false,
            output_overflowed: true,
        };
        assert_eq!(
            classify(&Ok(Ok(())), &limits(), full),
            Outcome::OutputLimit { limit_bytes: 10 }
        );
        match classify(&trapped, &limits(), Observed::default()) {
            Outcome::Trapped { message } => assert!(message.contains("unreachable"), "{message}"),
            other => panic!("{other:?}"),
        }
    }
}
