//! Ctrl-C and SIGTERM during a run, answered as ansible-playbook answers them. The
//! first signal stops the run where it stands: no task starts after it and the running
//! ones are abandoned; every shim session is closed, and each shim then ends the
//! programs it started and exits (the shim's watchdog sees its input end); the command
//! ends without a recap or retry file. Ctrl-C (SIGINT) ends it with `[ERROR]: User
//! interrupted execution` and exit code 99; SIGTERM with exit code 143, as a process
//! that SIGTERM killed (as ansible-playbook is). A second signal ends it at once.

use super::Abort;
use tokio::signal::unix::{SignalKind, signal};

/// How long the shims get to end what they started before their transports are
/// dropped.
pub const SHIM_GRACE: std::time::Duration = std::time::Duration::from_secs(3);

/// The signal that interrupted a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interruption {
    /// SIGINT: Ctrl-C.
    Interrupt,
    /// SIGTERM.
    Terminate,
}

impl Interruption {
    /// The exit code the command ends with.
    pub fn code(self) -> i32 {
        match self {
            Interruption::Interrupt => 99,
            Interruption::Terminate => 128 + libc::SIGTERM,
        }
    }

    /// How the run ends: ansible-playbook's message for Ctrl-C; nothing for SIGTERM,
    /// which ends ansible-playbook without a word.
    pub fn abort(self) -> Abort {
        Abort {
            message: match self {
                Interruption::Interrupt => "User interrupted execution".to_string(),
                Interruption::Terminate => String::new(),
            },
            code: self.code(),
        }
    }
}

/// Waits for the first SIGINT or SIGTERM; after it, a second one ends the process at
/// once. Waits forever where the signals cannot be caught.
pub async fn first() -> Interruption {
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        tracing::warn!("cannot catch SIGINT and SIGTERM: an interrupted run is not cleaned up");
        return std::future::pending().await;
    };
    let first = tokio::select! {
        _ = int.recv() => Interruption::Interrupt,
        _ = term.recv() => Interruption::Terminate,
    };
    tokio::spawn(async move {
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
        }
        std::process::exit(first.code());
    });
    first
}
