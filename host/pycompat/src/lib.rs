//! Python's and Ansible's primitives, shared by the wire types, the guest SDK, the
//! shim, the modules and the controller. Pure Rust, for the host and for
//! wasm32-wasip2 alike; it imports nothing of the project.
//!
//! - [`boolean`]: Ansible's boolean, read from text and from a JSON value;
//! - [`expand`]: `$VAR`, `${VAR}` and `~` expanded as `os.path.expandvars` and
//!   `expanduser` do;
//! - [`fnmatch`]: shell-style patterns as Python's `fnmatch.fnmatchcase` reads them;
//! - [`fqcn`]: short names of fully qualified module and action names;
//! - [`literal`]: Python's `ast.literal_eval`, as the INI inventory reads values;
//! - [`merge`]: mappings merged as ansible-core's `merge_hash` merges them;
//! - [`pyfmt`]: Python's text forms of values (`str()`, `repr()`, `json.dumps()`);
//! - [`pyjson`]: Python's `json.loads`, with its errors, as ansible-core reads module
//!   output;
//! - [`pyops`]: Python's truth, `==` and `str.splitlines()`;
//! - [`shell`]: POSIX shell quoting (`shlex.quote`, `shlex.join`);
//! - [`shlex`]: command lines split into words as Python's `shlex.split`.

pub mod boolean;
pub mod expand;
pub mod fnmatch;
pub mod fqcn;
pub mod literal;
pub mod merge;
pub mod pyfmt;
pub mod pyjson;
pub mod pyops;
pub mod shell;
pub mod shlex;
