//! The `ping` module: proves the host is reachable and runs modules, returning
//! `ping: <data>` (`pong` by default). `data: crash` makes it fail, to test how a
//! playbook handles a failing module. It needs no capability at all.

use sandball_guest_sdk::prelude::*;

sandball_guest_sdk::manifest!("../manifest.json");

/// The module body.
fn ping(m: &mut Module) -> Result<Map<String, Value>, Fail> {
    let data = m.get("data").cloned().unwrap_or(Value::Null);
    if data == "crash" {
        return Err(Fail::new("boom").with("exception", "Exception: boom"));
    }
    Ok(json_map!({ "ping": data }))
}

fn main() {
    sandball_guest_sdk::run(MANIFEST, ping)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ping_with(args: &str) -> sandball_guest_sdk::Outcome {
        sandball_guest_sdk::execute(MANIFEST, args.as_bytes(), &|_| None, ping)
    }

    #[test]
    fn pongs_by_default_and_echoes_data() {
        let out = ping_with("{}");
        assert_eq!(
            Value::Object(out.result),
            json!({"ping": "pong", "changed": false, "invocation": {"module_args": {"data": "pong"}}})
        );
        let out = ping_with(r#"{"data": "hello", "_ansible_check_mode": true}"#);
        assert_eq!(out.result["ping"], json!("hello"));
        assert!(!out.failed);
    }

    #[test]
    fn crash_fails() {
        let out = ping_with(r#"{"data": "crash"}"#);
        assert!(out.failed);
        assert_eq!(out.result["msg"], json!("boom"));
        assert_eq!(out.result["failed"], json!(true));
    }

    #[test]
    fn rejects_unknown_arguments() {
        let out = ping_with(r#"{"date": "x"}"#);
        assert_eq!(
            out.result["msg"],
            json!(
                "Unsupported parameters for (ping) module: date. Supported parameters include: data."
            )
        );
    }
}
