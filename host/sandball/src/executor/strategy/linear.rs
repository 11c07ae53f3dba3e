//! The linear strategy, ansible-core's default: the batch's hosts walk the play
//! together, every host finishing a task before the next task starts (the play runs
//! each task on up to `forks` of them at a time).

use super::{Ended, Strategy, Walk};
use futures::future::LocalBoxFuture;

/// `linear`.
pub(super) struct Linear;

impl Strategy for Linear {
    fn run<'a>(
        &self,
        hosts: &'a [String],
        _forks: usize,
        walk: &'a Walk<'a>,
    ) -> LocalBoxFuture<'a, Ended> {
        walk(hosts, None)
    }
}
