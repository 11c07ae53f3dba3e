//! `serial`: a play's hosts split into batches, each running the whole play in turn.

use super::Run;
use crate::playbook::Play;
use crate::template::Vars;
use serde_json::Value;

/// The hosts of a play, split into `serial` batches (a number, a percentage of the
/// play's hosts, or a list of them whose last repeats); one batch without `serial`.
pub(super) fn batches(
    run: &Run,
    play: &Play,
    hosts: &[String],
    vars: &Vars,
) -> Result<Vec<Vec<String>>, String> {
    let Some(serial) = &play.serial else {
        return Ok(vec![hosts.to_vec()]);
    };
    let serial = run
        .templar
        .template(serial, vars)
        .map_err(|e| format!("`serial`: {e}"))?;
    if serial.as_str() == Some(crate::template::OMIT) {
        return Ok(vec![hosts.to_vec()]);
    }
    let steps: Vec<Value> = match serial {
        Value::Array(items) => items,
        one => vec![one],
    };
    let size = |step: &Value| -> Result<usize, String> {
        let text = match step {
            Value::String(s) => s.trim().to_string(),
            other => other.to_string(),
        };
        let n = match text.strip_suffix('%') {
            Some(pct) => {
                let pct: f64 = pct
                    .trim()
                    .parse()
                    .map_err(|_| format!("`serial`: {text} is not a percentage"))?;
                (pct / 100.0 * hosts.len() as f64) as usize
            }
            None => text
                .parse::<usize>()
                .map_err(|_| format!("`serial`: {text} is not a number of hosts"))?,
        };
        // At least one host per batch; 0 means all of them.
        Ok(if n == 0 && !text.ends_with('%') {
            hosts.len()
        } else {
            n.max(1)
        })
    };
    let sizes = steps.iter().map(size).collect::<Result<Vec<_>, _>>()?;
    let mut out = Vec::new();
    let mut rest = hosts;
    let mut i = 0;
    while !rest.is_empty() {
        let n = sizes
            .get(i)
            .or(sizes.last())
            .copied()
            .unwrap_or(rest.len())
            .min(rest.len());
        out.push(rest[..n].to_vec());
        rest = &rest[n..];
        i += 1;
    }
    Ok(out)
}
