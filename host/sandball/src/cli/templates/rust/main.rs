//! @NAME@: makes a file hold the given content. A new sandball module: make it yours
//! (the guest SDK's documentation and docs/WRITING-MODULES.md say what it offers).

use sandball_guest_sdk::prelude::*;

sandball_guest_sdk::manifest!("../manifest.json");

fn main() {
    sandball_guest_sdk::run_with_paths(MANIFEST, body);
}

/// The module's work: `m.params` are the arguments, validated against the manifest.
fn body(m: &mut Module) -> Result<Map<String, Value>, Fail> {
    let path = m.get_str("path").unwrap_or_default().to_string();
    let content = m.get_str("content").unwrap_or_default().to_string();
    let before = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(Fail::new(format!("cannot read {path}: {e}"))),
    };
    let changed = before != content;
    let mut result = json_map!({"changed": changed, "path": path});
    if changed && m.diff_mode() {
        result.insert("diff".into(), json!({"before": before, "after": content}));
    }
    if changed && !m.check_mode() {
        std::fs::write(&path, &content)
            .map_err(|e| Fail::new(format!("cannot write {path}: {e}")))?;
    }
    Ok(result)
}
