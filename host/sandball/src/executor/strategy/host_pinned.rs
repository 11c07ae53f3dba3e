//! The host_pinned strategy: in ansible-core, the free strategy with each host pinned
//! to its worker until it is done, so that no more than `forks` hosts are under way at
//! once. sandball's free strategy already runs a host to its end before another takes
//! its place among the forks, so host_pinned walks the play as free does.

use super::free::Free;
use super::{Ended, Strategy, Walk};
use futures::future::LocalBoxFuture;

/// `host_pinned`.
pub(super) struct HostPinned;

impl Strategy for HostPinned {
    fn run<'a>(
        &self,
        hosts: &'a [String],
        forks: usize,
        walk: &'a Walk<'a>,
    ) -> LocalBoxFuture<'a, Ended> {
        Free.run(hosts, forks, walk)
    }
}
