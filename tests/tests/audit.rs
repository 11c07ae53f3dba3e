//! `sandball audit`: a module's sha256, manifest and imports read without running it,
//! and the mismatches between imports and manifest.

use sandball_e2e::{Binaries, Sandbox};
use serde_json::Value;
use sha2::{Digest, Sha256};

fn audit_module(sb: &Sandbox, target: &str) -> (i32, Value, String) {
    let out = sb.sandball(["audit", "module", target, "--json"]).run();
    out.assert_no_panic();
    let report: Value =
        serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{out}"));
    (out.code, report, out.to_string())
}

#[test]
fn every_built_in_module_imports_only_what_its_manifest_covers() {
    let sb = Sandbox::new();
    for module in ["command", "copy", "file", "ping", "slurp", "stat"] {
        let (code, report, out) = audit_module(&sb, module);
        assert_eq!(code, 0, "{module}:\n{out}");
        assert_eq!(report["module"], module, "{out}");
        assert_eq!(report["builtin"], true, "{out}");
        assert_eq!(report["findings"], Value::Array(vec![]), "{module}:\n{out}");
        let path = report["path"].as_str().unwrap();
        let sha = hex::encode(Sha256::digest(std::fs::read(path).unwrap()));
        assert_eq!(report["sha256"], Value::String(sha), "{out}");
        assert_eq!(report["manifest"]["name"], module, "{out}");
        let imports: Vec<&str> = report["imports"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["name"].as_str().unwrap())
            .collect();
        assert!(
            imports.iter().any(|i| i.starts_with("wasi:cli/stdout@")),
            "{module}: {imports:?}"
        );
        // Only the modules that run programs import the process interface.
        assert_eq!(
            imports
                .iter()
                .any(|i| i.starts_with("sandball:host/process@")),
            ["command", "copy", "file"].contains(&module),
            "{module}: {imports:?}"
        );
    }
}

#[test]
fn imports_the_manifest_does_not_cover_are_errors() {
    let sb = Sandbox::new();
    let file = Binaries::fixtures().join("denied_reader.wasm");
    let (code, report, out) = audit_module(&sb, file.to_str().unwrap());
    assert_eq!(code, 2, "{out}");
    assert_eq!(report["builtin"], false, "{out}");
    let errors: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["level"] == "error")
        .map(|f| f["message"].as_str().unwrap())
        .collect();
    for what in ["sandball:host/process", "wasi:filesystem/preopens"] {
        assert!(
            errors.iter().any(|e| e.contains(what)),
            "no error about {what}: {errors:?}"
        );
    }
    // The text form says the same, for people.
    let text = sb
        .sandball(["audit", "module", file.to_str().unwrap()])
        .run();
    text.assert_code(2);
    text.assert_stdout_has("kind:         component (third-party)");
    text.assert_stdout_has("error: imports sandball:host/process@");
}

#[test]
fn unknown_modules_are_clear_errors() {
    let sb = Sandbox::new();
    let out = sb.sandball(["audit", "module", "nosuchmodule"]).run();
    out.assert_code(1);
    out.assert_stderr_has("couldn't resolve module/action 'nosuchmodule'");
}
