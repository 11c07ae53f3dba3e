//! `python` and `python_version`: the node's Python 3, when it has one. ansible-core
//! describes the interpreter that ran its `setup`; no interpreter runs this component,
//! so it describes the one ansible-core would discover on the node (`/usr/bin/python3`,
//! else `/usr/libexec/platform-python`), by running it once with `-I -S` and a fixed
//! script (the manifest grants exactly these two command lines). A node without one
//! gets neither fact.

use sandball_guest_sdk::host;
use sandball_guest_sdk::prelude::*;
use std::sync::OnceLock;

/// The interpreters tried, in order.
const INTERPRETERS: [&str; 2] = ["/usr/bin/python3", "/usr/libexec/platform-python"];

/// What the interpreter prints: ansible-core's `python` fact, as JSON (one line, so
/// that the grant reads well in an audit; `has_sslcontext` is whether the `ssl`
/// module's C part is there).
const SCRIPT: &str = "import sys,json,importlib.util as u;v=sys.version_info;print(json.dumps(dict(executable=sys.executable,has_sslcontext=u.find_spec('_ssl') is not None,type=sys.implementation.name,version=dict(major=v.major,minor=v.minor,micro=v.micro,releaselevel=v.releaselevel,serial=v.serial),version_info=list(v))))";

/// The `python` fact of the node's interpreter, found once per run.
fn described() -> Option<&'static Value> {
    static FACT: OnceLock<Option<Value>> = OnceLock::new();
    FACT.get_or_init(|| {
        INTERPRETERS.iter().find_map(|python| {
            let out = host::run(host::Command {
                argv: vec![
                    python.to_string(),
                    "-I".into(),
                    "-S".into(),
                    "-c".into(),
                    SCRIPT.into(),
                ],
                ..host::Command::default()
            })
            .ok()
            .filter(|o| o.rc == 0)?;
            serde_json::from_slice::<Value>(&out.stdout)
                .ok()
                .filter(Value::is_object)
        })
    })
    .as_ref()
}

/// Adds `python`.
pub fn collect(facts: &mut Map<String, Value>) {
    if let Some(fact) = described() {
        facts.insert("python".into(), fact.clone());
    }
}

/// `python_version` (of the platform collector): `3.11.2`.
pub fn version(facts: &mut Map<String, Value>) {
    let Some(v) = described().map(|f| &f["version"]) else {
        return;
    };
    let text = format!("{}.{}.{}", v["major"], v["minor"], v["micro"]);
    facts.insert("python_version".into(), json!(text));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_fits_the_manifests_exact_argument_pattern() {
        // Argument patterns treat `*`, `?` and `[` specially: the script has none.
        assert!(!SCRIPT.contains(['*', '?', '[']));
        let manifest: Value = serde_json::from_str(crate::MANIFEST).unwrap();
        // The interpreters; the local fact scripts are granted apart.
        let fact_scripts = json!({"kind": "exec", "program": "$fact_path/*.fact"});
        let capabilities = manifest["capabilities"].as_array().unwrap();
        assert!(capabilities.contains(&fact_scripts));
        let granted: Vec<&Value> = capabilities
            .iter()
            .filter(|c| c["kind"] == "exec" && **c != fact_scripts)
            .collect();
        assert_eq!(granted.len(), INTERPRETERS.len());
        for (grant, python) in granted.iter().zip(INTERPRETERS) {
            assert_eq!(grant["program"], json!(python));
            assert_eq!(grant["args"], json!(["-I", "-S", "-c", SCRIPT]));
        }
    }
}
