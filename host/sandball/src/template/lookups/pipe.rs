//! The lookups that run commands on the controller: `pipe` (a command's output) and
//! `lines` (its lines).

use serde_json::Value as Json;

use super::{LookupContext, LookupError, Options, text, texts};

/// `pipe`: each command's output (`/bin/sh -c` on the controller), its trailing
/// whitespace removed; a command that fails fails the lookup.
pub(super) fn pipe(
    terms: &[Json],
    _options: &Options,
    _ctx: &dyn LookupContext,
) -> Result<Vec<Json>, LookupError> {
    let ran: Result<Vec<Json>, String> = texts(terms)
        .iter()
        .map(|cmd| {
            let out = std::process::Command::new("/bin/sh")
                .envs(crate::config::settings().from_file())
                .arg("-c")
                .arg(cmd)
                .output()
                .map_err(|e| format!("could not run {cmd}: {e}"))?;
            if !out.status.success() {
                return Err(format!(
                    "lookup_plugin.pipe({cmd}) returned {}",
                    out.status.code().unwrap_or(-1)
                ));
            }
            Ok(Json::String(
                String::from_utf8_lossy(&out.stdout).trim_end().to_string(),
            ))
        })
        .collect();
    Ok(ran?)
}

/// `lines`: each line of each command's output.
pub(super) fn lines(
    terms: &[Json],
    options: &Options,
    ctx: &dyn LookupContext,
) -> Result<Vec<Json>, LookupError> {
    let mut out = Vec::new();
    for cmd in texts(terms) {
        for line in pipe(&[Json::String(cmd)], options, ctx)? {
            out.extend(text(&line).lines().map(|l| Json::String(l.to_string())));
        }
    }
    Ok(out)
}
