//! Build-time facts `sandball --version` reports: the wasmtime release the shims are
//! built with, as the workspace's `Cargo.lock` pins it (`unknown` when built without
//! one).

fn main() {
    let lock = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    let text = std::fs::read_to_string(&lock).unwrap_or_default();
    let versions = locked_versions(&text, "wasmtime");
    let version = if versions.is_empty() {
        "unknown".to_string()
    } else {
        versions.join(", ")
    };
    println!("cargo:rustc-env=SANDBALL_WASMTIME_VERSION={version}");
}

/// The versions of the package `name` in a `Cargo.lock`'s `[[package]]` entries.
fn locked_versions(lock: &str, name: &str) -> Vec<String> {
    let wanted = format!("name = \"{name}\"");
    lock.split("[[package]]")
        .filter(|entry| entry.lines().any(|l| l.trim() == wanted))
        .filter_map(|entry| {
            let line = entry.lines().find(|l| l.starts_with("version = "))?;
            Some(
                line.trim_start_matches("version = ")
                    .trim_matches('"')
                    .to_string(),
            )
        })
        .collect()
}
