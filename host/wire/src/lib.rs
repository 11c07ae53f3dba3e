//! Types shared by the sandball controller, the node-side shim and guest modules.
//!
//! - [`frame`]: how messages travel over a session's byte stream (a JSON header plus a
//!   raw binary payload, never base64);
//! - [`protocol`]: the requests the controller sends and the responses the shim returns;
//! - [`manifest`]: what a module says about itself (argument spec, check mode,
//!   capabilities it needs), embedded in the component's `sandball:manifest` section;
//! - [`capability`]: the capability vocabulary, the requests a manifest makes in terms
//!   of module arguments, and the concrete grants the shim enforces;
//! - [`ssh`]: OpenSSH's host patterns, which the known_hosts module and the
//!   controller's ssh connection both match.

pub mod capability;
pub mod frame;
pub mod manifest;
pub mod protocol;
pub mod ssh;
pub mod tables;

/// Version of the sandball project, carried in the handshake so a controller never
/// talks to a shim of another build by mistake.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Version of the frame protocol. Bumped whenever a request or response changes shape.
pub const PROTOCOL: u32 = 8;

/// The field a built-in component's failed result carries when it refused, before
/// changing anything, an option or a value it does not carry out (including a
/// parameter its argument spec does not know): the controller may then run
/// ansible-core's module of that name instead, as policy allows legacy modules.
pub const NOT_CARRIED_OUT: &str = "_sandball_not_carried_out";

/// Name of the custom section that holds a module's manifest (JSON).
pub const MANIFEST_SECTION: &str = "sandball:manifest";
