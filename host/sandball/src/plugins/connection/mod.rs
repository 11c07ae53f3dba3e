//! Connection plugins: how the controller reaches a node and opens its shim session.
//!
//! Every connection ends in the same place: a [`session::Session`] speaking wire frames
//! to one `sandball-shim serve` process that stays up for the whole run.

pub mod local;
pub mod pool;
pub mod session;

pub use session::{RunReply, Session, SessionError};
