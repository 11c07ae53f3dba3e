//! `sandball module pack`: a manifest embedded in a component built by any tool, or
//! replacing the one it has, checked against the component's imports; what is not a
//! component, or imports what the shim does not provide, is refused and nothing is
//! written.

use sandball_e2e::{Binaries, Sandbox};

/// The example component's manifest with the words a packer changes.
fn manifest(description: &str, capabilities: &str) -> String {
    let text = std::fs::read_to_string(
        sandball_e2e::binaries::workspace_root().join("examples/modules/component/manifest.json"),
    )
    .unwrap();
    let mut m: serde_json::Value = serde_json::from_str(&text).unwrap();
    m["description"] = description.into();
    m["capabilities"] = serde_json::from_str(capabilities).unwrap();
    m.to_string()
}

#[test]
fn pack_replaces_a_components_manifest_and_reports_its_findings() {
    let built = Binaries::example_component().join("json_key.wasm");
    let sb = Sandbox::new();
    let out_dir = sb.dir("packed");
    let packed = out_dir.join("json_key.wasm");
    let full = sb.write(
        "full.json",
        &manifest(
            "Packed again.",
            r#"[{"kind": "fs", "path": "$path", "access": "read-write"}, {"kind": "exec", "program": "$validate[0]"}]"#,
        ),
    );
    let pack = |m: &std::path::Path, input: &std::path::Path, output: &std::path::Path| {
        sb.sandball([
            "module",
            "pack",
            "--manifest",
            m.to_str().unwrap(),
            input.to_str().unwrap(),
            "-o",
            output.to_str().unwrap(),
        ])
        .run()
    };
    let out = pack(&full, &built, &packed);
    out.assert_no_panic().assert_code(0);
    assert!(out.stdout.contains("module json_key"), "{}", out.stdout);
    assert!(!out.stderr.contains("[ERROR]"), "{}", out.stderr);
    let audit = sb
        .sandball(["audit", "module", packed.to_str().unwrap()])
        .run();
    audit.assert_no_panic().assert_code(0);
    assert!(
        audit.stdout.contains("description:  Packed again."),
        "{}",
        audit.stdout
    );

    // A manifest that no longer asks for programs: the component still imports the
    // process interface, which is a finding, as the audit says.
    let narrow = sb.write(
        "narrow.json",
        &manifest(
            "Narrow.",
            r#"[{"kind": "fs", "path": "$path", "access": "read-write"}]"#,
        ),
    );
    let out = pack(&narrow, &packed, &packed);
    out.assert_no_panic().assert_code(0);
    assert!(
        out.stderr
            .contains("[WARNING]: ") && !out.stderr.contains("[ERROR]") && out.stderr.contains("sandball:host/process@0.1.0 (running programs: only granted ones) but the manifest requests no exec capability"),
        "{}",
        out.stderr
    );
    let audit = sb
        .sandball(["audit", "module", packed.to_str().unwrap()])
        .run();
    assert!(
        audit.stdout.contains("description:  Narrow."),
        "{}",
        audit.stdout
    );
    assert_eq!(audit.code, 2, "{}", audit.stdout);

    // Not a component: refused, nothing written.
    let text = sb.write("not.wasm", "hello");
    let nothing = out_dir.join("nothing.wasm");
    let out = pack(&full, &text, &nothing);
    out.assert_no_panic().assert_code(1);
    assert!(
        out.stderr.contains("not.wasm: not a WebAssembly component"),
        "{}",
        out.stderr
    );
    assert!(!nothing.exists());
    // A manifest that is not one: named with its file.
    let bad = sb.write("bad.json", "{\"name\": 3}");
    let out = pack(&bad, &built, &nothing);
    out.assert_code(1);
    assert!(out.stderr.contains("bad.json: "), "{}", out.stderr);
    assert!(!nothing.exists());
}
