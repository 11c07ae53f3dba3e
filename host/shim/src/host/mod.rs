//! The sandball host interface (`sandball:host`, world `module` of
//! `guest-sdk/wit/sandball.wit`): what a module may ask of the node beyond WASI.
//! Every call is checked against the run's grant; a refusal is returned to the
//! module as an error with `denied` set, whose message names the capability and how
//! to grant it, and is recorded as a denial for the run's result (a bounded record,
//! [`Denials`]).
//!
//! - [`exec`]: which programs a grant allows, found the way a shell finds them;
//! - [`process`]: `process.run`, bounded by the run's deadline and output limit;
//! - [`confine`]: resolving `posix` paths inside the granted directories;
//! - [`posix`]: `posix.*` (stat, chmod, chown, symlink, set-times, users, umask);
//! - [`system`]: `system.*` (uname, ids, time zone, addresses, mount and route tables);
//! - [`users`]: the password and group databases;
//! - [`arguments`]: `arguments.*`, the Rust SDK's argument handling for modules in
//!   other languages.

pub mod arguments;
pub mod confine;
pub mod exec;
pub mod posix;
pub mod process;
pub mod system;
pub mod users;

use crate::limits::Denials;
use crate::paths::Places;
use crate::sandbox::regions::Region;
use confine::Confinement;
use sandball_wire::capability::ExecGrant;
use std::time::Instant;

wasmtime::component::bindgen!({
    path: "../../guest-sdk/wit",
    world: "module",
    imports: {
        // Reaching the run's deadline inside `process.run` interrupts the module.
        "sandball:host/process.run": trappable,
    },
});

pub use sandball::host::types::Error as HostError;

/// Per-run state of the host interface.
pub struct HostState {
    confinement: Confinement,
    exec: Vec<ExecGrant>,
    /// The environment variables the grant passes through.
    env: Vec<String>,
    /// The task's `environment`, from the controller: set for every program run.
    task_env: Vec<(String, String)>,
    deadline: Instant,
    output_limit: usize,
    denials: Denials,
    dns: bool,
    /// The module between `arguments.start` and `arguments.finish`.
    module: Option<sandball_guest_sdk::Module>,
}

impl HostState {
    /// State for one run: the granted directories, programs and environment
    /// variables, the instant the run's wall time ends, and the output limit (per
    /// stream) of the programs it runs.
    pub fn new(
        regions: Vec<Region>,
        exec: Vec<ExecGrant>,
        env: Vec<String>,
        places: Places,
        deadline: Instant,
        output_limit: u64,
    ) -> Self {
        // An argument pattern written from the home directory (`~/x`, the module's
        // `path` as the task gave it) matches the argument the module expanded.
        let exec = exec
            .into_iter()
            .map(|mut g| {
                if let Some(args) = &mut g.args {
                    for a in args.iter_mut().filter(|a| *a == "~" || a.starts_with("~/")) {
                        *a = places.join(a).to_string_lossy().into_owned();
                    }
                }
                g
            })
            .collect();
        HostState {
            confinement: Confinement::new(regions, places),
            exec,
            env,
            task_env: Vec::new(),
            deadline,
            output_limit: usize::try_from(output_limit).unwrap_or(usize::MAX),
            denials: Denials::default(),
            dns: false,
            module: None,
        }
    }

    /// Sets the task's `environment` (the playbook's, which the controller sends in
    /// the module's arguments) for every program the module runs. Unlike a module's
    /// own variables it may set any name, `PATH` included: it is the playbook's
    /// author who sets it, as for any Ansible module.
    pub fn set_task_environment(&mut self, vars: Vec<(String, String)>) {
        self.task_env = vars;
    }

    /// Allows (or not) the name lookups of the host interface (`system.fqdn`), as the
    /// grant's `dns` does for WASI's.
    pub fn allow_dns(&mut self, dns: bool) {
        self.dns = dns;
    }

    /// Takes the denials recorded so far.
    pub fn take_denials(&mut self) -> Denials {
        std::mem::take(&mut self.denials)
    }
}

/// Records a denial of `capability` and returns the error the module sees.
fn deny(denials: &mut Denials, capability: String, message: String) -> HostError {
    denials.push(capability, message.clone());
    HostError {
        denied: true,
        errno: 0,
        message,
    }
}

/// An error that is not a denial: the call failed on the node.
fn failure(errno: i32, message: String) -> HostError {
    HostError {
        denied: false,
        errno,
        message,
    }
}

/// An OS error of a call, with what was being done.
fn os_failure(context: impl std::fmt::Display, e: &std::io::Error) -> HostError {
    failure(e.raw_os_error().unwrap_or(0), format!("{context}: {e}"))
}

impl sandball::host::types::Host for HostState {}

/// Quotes a list of granted items for a denial message: `[a, b]`, or `[]`.
fn listing<'a>(items: impl Iterator<Item = &'a str>) -> String {
    format!("[{}]", items.collect::<Vec<_>>().join(", "))
}
