//! File helpers for modules, as Ansible's `AnsibleModule` offers them: the file common
//! arguments ([`FileArgs`]) and [`set_fs_attributes_if_different`], modes in octal or
//! symbolic form, checksums, encodings, atomic writes, backups, `validate` commands,
//! `path_info`, `stat_fields` and `realpath`.

mod args;
mod atomic;
mod attributes;
mod backup;
mod chattr;
mod checksum;
mod encoding;
mod fill;
mod mode;
mod normpath;
mod path_info;
mod realpath;
mod stat_fields;
mod validate;

pub use args::{FileArgs, common_arg_spec};
pub use atomic::{atomic_write, random_u64};
pub use attributes::{carry_owner, mode_text, set_fs_attributes_if_different};
pub use backup::backup_local;
pub use chattr::{file_attributes, set_attributes_if_different};
pub use checksum::{HashAlgorithm, digest_file, digest_reader, sha1_file};
pub use encoding::Encoding;
pub use fill::fill;
pub use mode::{ModeError, resolve_mode, symbolic_mode};
pub use normpath::{abspath, join, normpath};
pub use path_info::{add_path_info, existing_kind, path_info};
pub use realpath::{read_link, realpath};
pub use stat_fields::stat_fields;
pub use validate::{read_text, run_validation, write_validated};
