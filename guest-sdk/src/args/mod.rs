//! Argument handling, the `AnsibleModule` argument spec of this world: type coercion,
//! validation and dependencies, `no_log` masking, deprecations and Ansible's internal
//! `_ansible_*` arguments. The spec types are [`sandball_wire::manifest`]'s, so the
//! controller can validate with the same code (a role's `argument_specs`, say).

mod coerce;
mod context;
mod dependencies;
mod deprecation;
mod error;
mod internal;
pub mod no_log;
mod path;
mod size;
mod validate;

pub use coerce::type_label;
pub use context::{Context, StringConversion};
pub use deprecation::Deprecation;
pub use error::{ArgError, ArgErrorKind};
pub use internal::InternalArgs;
pub use path::relative_from;
pub use size::human_to_number;
pub use validate::{Validation, validate};
