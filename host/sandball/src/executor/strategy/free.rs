//! The free strategy: each host of the batch goes through the whole play on its own,
//! up to `forks` hosts at a time, without waiting for the others at each task; its
//! handlers run when it is done. What the hosts share ([`FreeRun`]) is the banner shown
//! last (a result is shown under its task's banner, shown again when another task's
//! came in between, as ansible-playbook shows it) and each throttled task's permits,
//! so that `throttle` still bounds how many hosts run it at once.

use super::{Ended, Strategy, Walk};
use crate::executor::lock;
use crate::playbook::Task;
use futures::StreamExt;
use futures::future::LocalBoxFuture;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// `free`.
pub(super) struct Free;

impl Strategy for Free {
    fn run<'a>(
        &self,
        hosts: &'a [String],
        forks: usize,
        walk: &'a Walk<'a>,
    ) -> LocalBoxFuture<'a, Ended> {
        Box::pin(async move {
            let shared = Arc::new(FreeRun::default());
            let ends: Vec<Ended> = futures::stream::iter(hosts.iter())
                .map(|h| walk(std::slice::from_ref(h), Some(shared.clone())))
                .buffer_unordered(forks.max(1))
                .collect()
                .await;
            if let Some(aborted) = ends.iter().find(|e| matches!(e, Ended::Aborted(_))) {
                aborted.clone()
            } else if ends.iter().all(|e| matches!(e, Ended::EveryHostFailed)) {
                Ended::EveryHostFailed
            } else if ends.iter().any(|e| matches!(e, Ended::Play)) {
                Ended::Play
            } else {
                Ended::Normally
            }
        })
    }
}

/// What the hosts of a batch share under the `free` strategy, each running the play on
/// its own.
#[derive(Default)]
pub(crate) struct FreeRun {
    /// The task whose banner was shown last.
    pub(crate) last: Mutex<Option<usize>>,
    /// Each throttled task's permits (by where it is written: an included task is the
    /// same task for every host), so that no more hosts than its `throttle` run it at
    /// once.
    throttles: Mutex<HashMap<String, Arc<tokio::sync::Semaphore>>>,
}

impl FreeRun {
    /// The permits of task `t` under `throttle` (made on first use).
    pub(crate) fn throttle(&self, t: &Task, throttle: usize) -> Arc<tokio::sync::Semaphore> {
        lock(&self.throttles)
            .entry(t.location.to_string())
            .or_insert_with(|| Arc::new(tokio::sync::Semaphore::new(throttle)))
            .clone()
    }
}
