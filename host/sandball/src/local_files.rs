//! Files sandball writes on the controller (fetched files, inventory output, callback
//! reports): always whole, through a temporary file renamed into place.

use std::io::Write;
use std::path::Path;

/// Writes `data` to `dest` through a temporary file in the same directory (created with
/// its parents when missing), renamed into place; the file keeps its mode, a new one is
/// readable by all (0644).
pub fn write_atomically(dest: &Path, data: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let dir = match dest.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir)?;
    let mode = std::fs::metadata(dest).map_or(0o644, |m| m.permissions().mode() & 0o7777);
    let mut tmp = tempfile::Builder::new()
        .prefix(".sandball-")
        .tempfile_in(dir)?;
    tmp.write_all(data)?;
    tmp.flush()?;
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(mode))?;
    tmp.persist(dest).map_err(|e| e.error)?;
    Ok(())
}
