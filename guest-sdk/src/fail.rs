//! [`Fail`]: how a module reports failure (`failed: true`, a message and any extra
//! fields such as `rc` or `stdout`), with clear messages for host and I/O errors.

use crate::host::HostError;
use serde_json::{Map, Value};
use std::fmt;

/// A module failure: becomes `{"failed": true, "msg": ..., <fields>}`.
#[derive(Clone, Debug, PartialEq)]
pub struct Fail {
    msg: String,
    fields: Map<String, Value>,
}

impl Fail {
    /// A failure with `msg`.
    pub fn new(msg: impl Into<String>) -> Self {
        Fail {
            msg: msg.into(),
            fields: Map::new(),
        }
    }

    /// A refusal of an option or a value this module does not carry out, made before
    /// anything was changed: the controller may hand the task to ansible-core's module
    /// of the same name (see [`sandball_wire::NOT_CARRIED_OUT`]).
    pub fn not_carried_out(msg: impl Into<String>) -> Self {
        Fail::new(msg).as_not_carried_out()
    }

    /// This failure, marked as a refusal made before anything was changed (see
    /// [`Fail::not_carried_out`]).
    pub fn as_not_carried_out(self) -> Self {
        self.with(sandball_wire::NOT_CARRIED_OUT, true)
    }

    /// Adds a field to the failed result (e.g. `rc`, `stdout`, `path`).
    pub fn with(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.fields.insert(key.into(), value.into());
        self
    }

    /// The message.
    pub fn msg(&self) -> &str {
        &self.msg
    }

    /// The extra fields.
    pub fn fields(&self) -> &Map<String, Value> {
        &self.fields
    }

    /// The failed result without `invocation`: `failed`, `msg`, then the fields.
    pub(crate) fn into_result(self) -> Map<String, Value> {
        let mut result = Map::new();
        result.insert("failed".into(), Value::Bool(true));
        result.insert("msg".into(), Value::String(self.msg));
        for (k, v) in self.fields {
            if k != "failed" && k != "msg" {
                result.insert(k, v);
            }
        }
        result
    }
}

impl fmt::Display for Fail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.msg)
    }
}

impl std::error::Error for Fail {}

impl From<HostError> for Fail {
    fn from(e: HostError) -> Self {
        let fail = Fail::new(e.message);
        if e.denied {
            fail.with("denied", true)
        } else if e.errno != 0 {
            fail.with("errno", e.errno)
        } else {
            fail
        }
    }
}

impl From<std::io::Error> for Fail {
    fn from(e: std::io::Error) -> Self {
        Fail::new(crate::io_error::describe_io_error(&e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_follow_the_message() {
        let r = Fail::new("boom")
            .with("rc", 2)
            .with("stdout", "out")
            .into_result();
        assert_eq!(
            Value::Object(r),
            json!({"failed": true, "msg": "boom", "rc": 2, "stdout": "out"})
        );
    }

    #[test]
    fn converts_host_and_io_errors() {
        let f: Fail = HostError {
            denied: true,
            errno: 0,
            message: "exec of rm not granted".into(),
        }
        .into();
        assert_eq!(f.msg(), "exec of rm not granted");
        assert_eq!(f.fields()["denied"], json!(true));
        let f: Fail = std::io::Error::from_raw_os_error(2).into();
        assert!(f.msg().contains("No such file or directory"), "{}", f.msg());
    }
}
