//! The end-to-end test harness: runs the real `sandball` and `sandball-shim` binaries
//! (and, for comparison, `ansible-playbook`) on playbooks written to a temporary
//! directory, and reads what they reported.
//!
//! - [`binaries`]: where the built binaries, modules and test fixtures are; a missing
//!   one fails the test with the command that builds it;
//! - [`compare`]: one playbook under sandball and ansible-playbook, results compared;
//! - [`sandbox`]: a temporary directory with an inventory, playbooks and the shim's
//!   cache, and the commands run in it;
//! - [`output`]: running a command with a time limit and what it printed;
//! - [`recap`]: the PLAY RECAP counters per host;
//! - [`recording`]: recorded runs of ansible-core, replayed for the tests whose reference
//!   runs depend on their inputs alone;
//! - [`sshd`]: a real OpenSSH server on loopback for the SSH tests;
//! - [`targets`]: ansible-core's integration targets, laid out and run as ansible-test
//!   runs them, under both tools;
//! - [`tree`]: a snapshot of a directory tree, to show a run left it alone;
//! - [`users`]: the unprivileged user the become tests switch to.
//!
//! The tests themselves are in `tests/`.

pub mod binaries;
pub mod compare;
pub mod output;
pub mod processes;
pub mod proxy;
pub mod recap;
pub mod recording;
pub mod sandbox;
pub mod sshd;
pub mod targets;
pub mod tree;
pub mod users;

pub use binaries::Binaries;
pub use output::Output;
pub use recap::{HostRecap, parse_recap};
pub use sandbox::{Invocation, Sandbox};
pub use sshd::Sshd;
