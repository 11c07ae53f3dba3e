//! The `uri` module: one HTTP or HTTPS exchange, as Ansible's `uri` module makes it
//! (method, body as raw, JSON or form-urlencoded, headers, Basic authentication,
//! redirects, expected status codes), with its result: the response's headers (names
//! lowercased, `-` turned into `_`), `status`, `msg`, `url`, `redirected`, `cookies`,
//! `content` and `json` when asked or useful, and the body saved to `dest` when
//! given. It reaches the network through the SDK's `http` client: only the URL's
//! `host:port` is granted, so a redirect to another one is denied unless a
//! `capabilities:` entry or policy grants it.

#[cfg(all(test, unix))]
mod module_tests;

use sandball_guest_sdk::describe_io_error;
use sandball_guest_sdk::files::{atomic_write, sha1_file};
use sandball_guest_sdk::http::{self, FetchArgs};
use sandball_guest_sdk::prelude::*;
use sandball_pycompat::pyfmt::{json_dumps, py_str};
use std::path::Path;
use std::time::Instant;

sandball_guest_sdk::manifest!("../manifest.json");

fn main() {
    sandball_guest_sdk::run_with_paths(MANIFEST, uri);
}

/// Options this module parses but cannot honour: refused when set.
fn refuse_unsupported(m: &Module) -> Result<(), Fail> {
    http::refuse_unsupported(m)?;
    if m.get_str("body_format") == Some("form-multipart") {
        return Err(Fail::not_carried_out(
            "body_format form-multipart is not supported by sandball's uri module: use raw, json or form-urlencoded",
        ));
    }
    Ok(())
}

/// Python's `urllib.parse.quote_plus` of `text`.
fn quote_plus(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'.' | b'-' | b'~' => {
                out.push(char::from(b))
            }
            b' ' => out.push('+'),
            other => out.push_str(&format!("%{other:02X}")),
        }
    }
    out
}

/// A body mapping or list as `application/x-www-form-urlencoded`, as Ansible's
/// `form_urlencoded` (a list value repeats its key; `null` values are left out).
fn form_urlencoded(body: &Value) -> Result<String, Fail> {
    let pairs: Vec<(String, &Value)> = match body {
        Value::String(s) => return Ok(s.clone()),
        Value::Object(map) => map.iter().map(|(k, v)| (k.clone(), v)).collect(),
        Value::Array(items) => {
            let mut pairs = Vec::new();
            for item in items {
                match item.as_array().map(Vec::as_slice) {
                    Some([k, v]) => pairs.push((py_str(k), v)),
                    _ => {
                        return Err(Fail::new(format!(
                            "failed to parse body as form_urlencoded: cannot convert {} to a key and value",
                            py_str(item)
                        ))
                        .with("elapsed", 0));
                    }
                }
            }
            pairs
        }
        other => return Ok(py_str(other)),
    };
    let mut out = Vec::new();
    for (key, value) in pairs {
        let values: Vec<&Value> = match value {
            Value::Array(items) => items.iter().collect(),
            Value::Object(map) => map.keys().map(|_| value).collect(),
            v => vec![v],
        };
        for v in values.into_iter().filter(|v| !v.is_null()) {
            out.push(format!("{}={}", quote_plus(&key), quote_plus(&py_str(v))));
        }
    }
    Ok(out.join("&"))
}

/// The request body and headers from `body`, `body_format` and `src`.
fn request_body(m: &Module, headers: &mut Vec<(String, String)>) -> Result<Option<Vec<u8>>, Fail> {
    let has_type = |h: &Vec<(String, String)>| {
        h.iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("content-type"))
    };
    if let Some(src) = m.get_str("src") {
        return match std::fs::read(src) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(_) => {
                Err(Fail::new(format!("Unable to open source file {src}")).with("elapsed", 0))
            }
        };
    }
    let body = m.get("body").filter(|b| !b.is_null());
    let text = match m.get_str("body_format").unwrap_or("raw") {
        "json" => {
            if !has_type(headers) {
                headers.push(("Content-Type".into(), "application/json".into()));
            }
            body.map(|b| match b {
                Value::String(s) => s.clone(),
                other => json_dumps(other),
            })
        }
        "form-urlencoded" => {
            if !has_type(headers) {
                headers.push((
                    "Content-Type".into(),
                    "application/x-www-form-urlencoded".into(),
                ));
            }
            body.map(form_urlencoded).transpose()?
        }
        _ => body.map(|b| match b {
            Value::String(s) => s.clone(),
            other => py_str(other),
        }),
    };
    Ok(text.map(String::into_bytes))
}

/// The module body.
fn uri(m: &mut Module) -> Result<Map<String, Value>, Fail> {
    refuse_unsupported(m)?;
    let url = m.get_str("url").unwrap_or_default().to_string();
    let method = m.get_str("method").unwrap_or("GET").to_ascii_uppercase();
    if method.is_empty() || !method.chars().all(|c| c.is_ascii_uppercase()) {
        return Err(Fail::new(
            "Parameter 'method' needs to be a single word in uppercase, like GET or POST.",
        ));
    }
    let status_codes: Vec<i64> = m
        .get_list("status_code")
        .map(|l| l.iter().filter_map(Value::as_i64).collect())
        .unwrap_or_else(|| vec![200]);
    let mut headers: Vec<(String, String)> = m
        .get("headers")
        .and_then(Value::as_object)
        .map(|h| h.iter().map(|(k, v)| (k.clone(), py_str(v))).collect())
        .unwrap_or_default();
    let body = request_body(m, &mut headers)?;

    if let Some(creates) = m.get_str("creates")
        && Path::new(creates).exists()
    {
        return Ok(
            json_map!({"stdout": format!("skipped, since '{creates}' exists"), "changed": false}),
        );
    }
    if let Some(removes) = m.get_str("removes")
        && !Path::new(removes).exists()
    {
        return Ok(
            json_map!({"stdout": format!("skipped, since '{removes}' does not exist"), "changed": false}),
        );
    }

    let dest = m.get_str("dest").map(str::to_string);
    if matches!(m.get_str("follow_redirects"), Some("yes" | "no")) {
        m.deprecate(
            "Using 'yes' or 'no' for 'follow_redirects' parameter is deprecated.",
            Some("2.22"),
            None,
            Some("ansible.builtin"),
        );
    }
    let started = Instant::now();
    let (outcome, mut info) = http::fetch_url(
        m,
        FetchArgs {
            url: url.clone(),
            method,
            body,
            headers,
            last_modified_of: dest.clone(),
            force: m.get_bool("force"),
            default_redirects: "safe",
        },
    )?;
    let elapsed = started.elapsed().as_secs();
    let masked = http::mask_url(&url);
    let decompress = m.get("decompress").is_none_or(|v| v != &json!(false));
    let response = outcome.as_ref().ok().map(|f| &f.response);
    let final_url = outcome
        .as_ref()
        .ok()
        .map(|f| f.url.clone())
        .unwrap_or_default();
    let status = info.get("status").and_then(Value::as_i64).unwrap_or(-1);
    let (content_type, charset) = match response {
        Some(r) => r.content_type(),
        None => ("application/octet-stream".to_string(), "utf-8".to_string()),
    };
    let sub_type = content_type.split('/').nth(1).unwrap_or_default();
    let sub_type = sub_type
        .split_once('+')
        .map_or(sub_type, |(_, suffix)| suffix);
    let maybe_json = ["json", "javascript"].contains(&sub_type);
    let maybe_output =
        maybe_json || m.get_bool("return_content") || !status_codes.contains(&status);
    let content: Option<Vec<u8>> = match response {
        Some(r) if maybe_output || dest.is_some() => {
            if maybe_output {
                info.remove("body");
            }
            Some(
                r.decoded_body(decompress)
                    .map_err(|e| Fail::new(format!("HTTP Error while fetching {masked}: {e}")))?,
            )
        }
        None if maybe_output => Some(Vec::new()),
        _ => None,
    };

    let mut resp = Map::new();
    resp.insert(
        "redirected".into(),
        json!(info.get("url").and_then(Value::as_str) != Some(masked.as_str())),
    );
    resp.extend(info);
    resp.insert("elapsed".into(), json!(elapsed));
    resp.insert("status".into(), json!(status));
    resp.insert("changed".into(), json!(false));

    if let (Some(r), Some(dest)) = (response, &dest) {
        let mut dest = dest.clone();
        if Path::new(&dest).is_dir() {
            let name = r
                .filename(&final_url)
                .unwrap_or_else(|| "index.html".to_string());
            dest = format!("{}/{name}", dest.trim_end_matches('/'));
        }
        if status_codes.contains(&status) && status != 304 {
            write_file(&dest, content.as_deref().unwrap_or_default())?;
            let args = m.file_args();
            let changed = m.set_fs_attributes_if_different(&args, &dest, true, None)?;
            resp.insert("changed".into(), json!(changed));
        }
        resp.insert("path".into(), json!(dest));
    }

    let mut result = Map::new();
    for (key, value) in resp {
        result.insert(key.replace('-', "_").to_lowercase(), value);
    }
    if let Some(location) = result.get("location").and_then(Value::as_str)
        && let Ok(base) = http::Url::parse(&masked)
    {
        let joined = base.join(location);
        result.insert("location".into(), json!(joined));
    }
    sandball_guest_sdk::files::add_path_info(&mut result);
    let text = content.as_deref().map(|c| decode_text(c, &charset));
    if maybe_json
        && let Some(t) = &text
        && let Ok(js) = serde_json::from_str::<Value>(t)
    {
        result.insert("json".into(), js);
    }
    let return_content = m.get_bool("return_content");
    if return_content {
        result.insert("content".into(), json!(text.unwrap_or_default()));
    }
    if !status_codes.contains(&status) {
        let codes: Vec<String> = status_codes.iter().map(i64::to_string).collect();
        let msg = format!(
            "Status code was {status} and not [{}]: {}",
            codes.join(", "),
            result
                .get("msg")
                .and_then(Value::as_str)
                .unwrap_or_default()
        );
        let mut fail = Fail::new(msg);
        for (k, v) in result {
            if k != "msg" {
                fail = fail.with(k, v);
            }
        }
        return Err(fail);
    }
    Ok(result)
}

/// The body as text in its charset (UTF-8, or Latin-1 when it says so; anything
/// else is read as UTF-8, undecodable bytes replaced).
fn decode_text(bytes: &[u8], charset: &str) -> String {
    match charset {
        "iso-8859-1" | "latin-1" | "latin1" => bytes.iter().map(|&b| char::from(b)).collect(),
        _ => String::from_utf8_lossy(bytes).into_owned(),
    }
}

/// Writes the body to `dest` when it differs from what is there (atomically), as
/// Ansible's `write_file`.
fn write_file(dest: &str, content: &[u8]) -> Result<(), Fail> {
    let current = sha1_file(dest).ok();
    let new = sandball_guest_sdk::files::digest_reader(
        content,
        sandball_guest_sdk::files::HashAlgorithm::Sha1,
    )
    .ok();
    if current.is_some() && current == new {
        return Ok(());
    }
    atomic_write(dest, content).map_err(|e| {
        Fail::new(format!(
            "failed to copy the response body to {dest}: {}",
            describe_io_error(&e)
        ))
    })
}
