//! An example binary module: Ansible hands a binary module the path of a JSON file of
//! arguments as its only argument and reads one JSON object from its stdout.
//!
//! Arguments: `suffix` (optional). Returns the node's kernel name (`sysname`, from
//! `/proc/sys/kernel/ostype`) with the suffix appended, and whether check mode was on.

use serde_json::{Value, json};

fn main() {
    let result = match run() {
        Ok(v) => v,
        Err(msg) => json!({"failed": true, "msg": msg}),
    };
    println!("{result}");
    if result.get("failed") == Some(&Value::Bool(true)) {
        std::process::exit(1);
    }
}

fn run() -> Result<Value, String> {
    let path = std::env::args()
        .nth(1)
        .ok_or("no arguments file was given")?;
    let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {path}: {e}"))?;
    let args: Value =
        serde_json::from_str(&text).map_err(|e| format!("arguments are not JSON: {e}"))?;
    let suffix = args.get("suffix").and_then(Value::as_str).unwrap_or("");
    let sysname = std::fs::read_to_string("/proc/sys/kernel/ostype")
        .map_err(|e| format!("cannot read the kernel name: {e}"))?;
    Ok(json!({
        "changed": false,
        "sysname": format!("{}{suffix}", sysname.trim()),
        "check_mode": args.get("_ansible_check_mode").cloned().unwrap_or(Value::Bool(false)),
    }))
}
