//! Python's and Ansible's primitives, shared by the wire types, the guest SDK, the
//! shim, the modules and the controller. Pure Rust, for the host and for
//! wasm32-wasip2 alike; it imports nothing of the project.
//!
//! - [`boolean`]: Ansible's boolean, read from text and from a JSON value;
//! - [`fnmatch`]: shell-style patterns as Python's `fnmatch.fnmatchcase` reads them;
//! - [`fqcn`]: short names of fully qualified module and action names;
//! - [`pyfmt`]: Python's text forms of values (`str()`, `repr()`, `json.dumps()`);
//! - [`pyjson`]: Python's `json.loads`, with its errors, as ansible-core reads module
//!   output;
//! - [`pyops`]: Python's truth, `==` and `str.splitlines()`;
//! - [`shell`]: POSIX shell quoting (`shlex.quote`, `shlex.join`);
//! - [`shlex`]: command lines split into words as Python's `shlex.split`.

pub mod boolean;
pub mod fnmatch;
pub mod fqcn;
pub mod pyfmt;
pub mod pyjson;
pub mod pyops;
pub mod shell;
pub mod shlex;
