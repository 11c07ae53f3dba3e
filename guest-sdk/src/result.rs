//! The one JSON object a module prints: the body's result (or its failure) with
//! `changed`, `invocation`, `warnings` and `deprecations` added, and every `no_log`
//! secret masked.

use crate::args::no_log::mask_result;
use crate::fail::Fail;
use crate::module::Module;
use serde_json::{Map, Value, json};

/// A finished module run.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// The JSON object to print.
    pub result: Map<String, Value>,
    /// Whether the run failed (exit code 1).
    pub failed: bool,
}

impl Outcome {
    /// A failure before there is a module to speak of (bad manifest, unreadable stdin).
    pub fn early_failure(msg: impl Into<String>) -> Self {
        Outcome {
            result: Fail::new(msg).into_result(),
            failed: true,
        }
    }

    /// The process exit code: 1 when failed.
    pub fn exit_code(&self) -> i32 {
        i32::from(self.failed)
    }

    /// Completes the body's outcome with what the module collected.
    pub fn finish(mut module: Module, body: Result<Map<String, Value>, Fail>) -> Self {
        let (mut result, failed) = match body {
            Ok(mut map) => {
                let failed = map.get("failed") == Some(&Value::Bool(true));
                if !failed {
                    map.entry("changed").or_insert(Value::Bool(false));
                }
                (map, failed)
            }
            Err(fail) => (fail.into_result(), true),
        };
        let (mut warnings, mut deprecations) = module.take_report();
        match result.shift_remove("warnings") {
            Some(Value::Array(items)) => {
                warnings.extend(items.iter().map(sandball_pycompat::pyfmt::py_str))
            }
            Some(Value::String(w)) => warnings.push(w),
            _ => {}
        }
        let mut deprecation_values: Vec<Value> = match result.shift_remove("deprecations") {
            Some(Value::Array(items)) => items,
            _ => Vec::new(),
        };
        deprecation_values.splice(
            0..0,
            deprecations
                .drain(..)
                .map(|d| serde_json::to_value(d).unwrap_or(Value::Null)),
        );
        result
            .entry("invocation")
            .or_insert_with(|| json!({"module_args": module.params()}));
        if !warnings.is_empty() {
            result.insert("warnings".into(), Value::from(warnings));
        }
        if !deprecation_values.is_empty() {
            result.insert("deprecations".into(), Value::Array(deprecation_values));
        }
        mask_result(&mut result, module.no_log_values());
        Outcome { result, failed }
    }
}
