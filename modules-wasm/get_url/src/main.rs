//! The `get_url` module: downloads a URL to a file on the node, as Ansible's
//! `get_url` does: nothing is fetched when `dest` exists and `checksum` matches it
//! (unless `force`); a download replaces `dest` atomically only when its sha1
//! differs, after checking `checksum` (`ALGORITHM:HEX` or `ALGORITHM:URL` of a
//! checksum file), with `backup` and file attributes; check mode asks with `HEAD`.
//! The download is held in memory, not staged in a temporary file. The network is
//! reached through the SDK's `http` client: only the URL's `host:port` (and the
//! checksum URL's) is granted.

#[cfg(all(test, unix))]
mod module_tests;

use sandball_guest_sdk::describe_io_error;
use sandball_guest_sdk::files::{
    HashAlgorithm, add_path_info, atomic_write, backup_local, digest_file, digest_reader,
};
use sandball_guest_sdk::http::{self, FetchArgs};
use sandball_guest_sdk::prelude::*;
use sandball_pycompat::pyfmt::py_str;
use std::path::Path;
use std::time::Instant;

sandball_guest_sdk::manifest!("../manifest.json");

fn main() {
    sandball_guest_sdk::run_with_paths(MANIFEST, get_url);
}

/// `result` with `dest`'s path information added, as Ansible's `exit_json` and
/// `fail_json` add it.
fn with_path_info(mut result: Map<String, Value>) -> Map<String, Value> {
    add_path_info(&mut result);
    result
}

/// A failure carrying `result`'s fields.
fn fail(msg: impl Into<String>, result: &Map<String, Value>) -> Fail {
    let mut f = Fail::new(msg);
    for (k, v) in with_path_info(result.clone()) {
        f = f.with(k, v);
    }
    f
}

/// The last component of a URL's path, `index.html` when empty (Ansible's
/// `url_filename`).
fn url_filename(url: &str) -> String {
    let path = http::Url::parse(url)
        .map(|u| u.path_with_query)
        .unwrap_or_default();
    let path = path.split('?').next().unwrap_or_default();
    match path.rsplit('/').next() {
        Some(name) if !name.is_empty() => name.to_string(),
        _ => "index.html".to_string(),
    }
}

/// `(digest, file name)` pairs of a checksum file: one bare digest (for
/// `filename`), or BSD (`SHA256 (name) = hex`) and GNU (`hex  name`, `hex *name`)
/// lines, as Ansible's `parse_digest_lines`.
fn parse_digest_lines(filename: &str, lines: &[&str]) -> Vec<(String, String)> {
    if lines.len() == 1 && lines[0].split_whitespace().count() == 1 {
        return vec![(lines[0].to_string(), filename.to_string())];
    }
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == '.';
    let mut out = Vec::new();
    for line in lines {
        // BSD: ALGO (path) = digest
        if let Some((head, digest)) = line.rsplit_once(") = ").or_else(|| line.rsplit_once(")= "))
            && let Some((algo, path)) = head.split_once('(')
            && !algo.trim_end().is_empty()
            && algo
                .trim_end()
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_')
            && !digest.is_empty()
            && digest.chars().all(word)
        {
            out.push((digest.to_string(), path.to_string()));
            continue;
        }
        // GNU: digest, whitespace, an optional `*`, `./` or `.`, the path.
        let digest: String = line.chars().take_while(|&c| word(c)).collect();
        let rest = &line[digest.len()..];
        let path = rest.trim_start();
        if digest.is_empty() || rest.len() == path.len() || path.is_empty() {
            continue;
        }
        let path = path
            .strip_prefix('*')
            .or_else(|| path.strip_prefix("./"))
            .unwrap_or(path);
        out.push((digest, path.trim_start_matches(['.', '/']).to_string()));
    }
    out
}

/// What a download brought: the body and `fetch_url`'s info.
struct Download {
    body: Vec<u8>,
    info: Map<String, Value>,
    /// The final URL (after redirects).
    url: String,
    response: http::Response,
}

/// Ansible's `url_get`: fetches `url`; a 304 ends the module (unchanged), no
/// response or another status than 200 fails it.
fn url_get(
    m: &Module,
    url: &str,
    dest: &str,
    method: &str,
    last_modified_of: Option<String>,
    force: bool,
) -> Result<Result<Download, Map<String, Value>>, Fail> {
    let started = Instant::now();
    let headers = m
        .get("headers")
        .and_then(Value::as_object)
        .map(|h| h.iter().map(|(k, v)| (k.clone(), py_str(v))).collect())
        .unwrap_or_default();
    let (outcome, info) = http::fetch_url(
        m,
        FetchArgs {
            url: url.to_string(),
            method: method.to_string(),
            body: None,
            headers,
            last_modified_of,
            force,
            default_redirects: "urllib2",
        },
    )?;
    let elapsed = started.elapsed().as_secs();
    let status = info.get("status").and_then(Value::as_i64).unwrap_or(-1);
    let msg = info.get("msg").cloned().unwrap_or(json!(""));
    let base = json_map!({"url": http::mask_url(url), "dest": dest, "elapsed": elapsed});
    if status == 304 {
        let mut done = base;
        done.insert("changed".into(), json!(false));
        done.insert("msg".into(), msg);
        done.insert("status_code".into(), json!(status));
        return Ok(Err(with_path_info(done)));
    }
    let fetched = match outcome {
        Ok(f) if status == 200 => f,
        _ if status == -1 => {
            return Err(fail(msg.as_str().unwrap_or_default(), &base));
        }
        _ => {
            let mut fields = base;
            fields.insert("status_code".into(), json!(status));
            fields.insert("response".into(), msg);
            return Err(fail("Request failed", &fields));
        }
    };
    if let Some(tmp) = m.get_str("tmp_dest")
        && !Path::new(tmp).is_dir()
    {
        let msg = if Path::new(tmp).exists() {
            format!("{tmp} is a file but should be a directory.")
        } else {
            format!("{tmp} directory does not exist.")
        };
        return Err(Fail::new(msg).with("elapsed", elapsed));
    }
    let decompress = m.get("decompress").is_none_or(|v| v != &json!(false));
    let body = fetched
        .response
        .decoded_body(decompress)
        .map_err(|e| Fail::new(format!("failed to create temporary content file: {e}")))?;
    let gzip = fetched
        .response
        .header("content-encoding")
        .is_some_and(|e| e == "gzip");
    if !m.check_mode()
        && (!gzip || !decompress)
        && let Some(cl) = fetched
            .response
            .header("content-length")
            .and_then(|c| c.trim().parse::<usize>().ok())
        && cl != body.len()
    {
        return Err(Fail::new(format!(
            "Incomplete read, (cl={cl}, size={}) failed to read remaining {} bytes",
            body.len(),
            cl.saturating_sub(body.len())
        )));
    }
    Ok(Ok(Download {
        body,
        info,
        url: fetched.url,
        response: fetched.response,
    }))
}

/// The module body.
fn get_url(m: &mut Module) -> Result<Map<String, Value>, Fail> {
    http::refuse_unsupported(m)?;
    let url = m.get_str("url").unwrap_or_default().to_string();
    let mut dest = m.get_str("dest").unwrap_or_default().to_string();
    let mut force = m.get_bool("force");
    let mut result = json_map!({
        "changed": false,
        "checksum_dest": null,
        "checksum_src": null,
        "dest": dest.clone(),
        "elapsed": 0,
        "url": http::mask_url(&url),
    });
    let dest_is_dir = Path::new(&dest).is_dir();

    let mut expected: Option<(HashAlgorithm, String)> = None;
    if let Some(checksum) = m.get_str("checksum").filter(|c| !c.is_empty()) {
        let Some((algorithm, value)) = checksum.split_once(':') else {
            return Err(fail(
                "The checksum parameter has to be in format <algorithm>:<checksum>",
                &result,
            ));
        };
        let mut value = value.to_string();
        let scheme = value.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
        if matches!(scheme.as_deref(), Some("http" | "https")) {
            let sums = match url_get(m, &value, &dest, "GET", None, force)? {
                Ok(d) => d,
                Err(done) => return Ok(done),
            };
            let text = String::from_utf8_lossy(&sums.body).into_owned();
            let lines: Vec<&str> = text.split('\n').filter(|l| !l.is_empty()).collect();
            let filename = url_filename(&url);
            match parse_digest_lines(&filename, &lines)
                .into_iter()
                .find(|(_, f)| *f == filename)
            {
                Some((digest, _)) => value = digest,
                None => {
                    return Err(Fail::new(format!(
                        "Unable to find a checksum for file '{filename}' in '{}'",
                        http::mask_url(&value)
                    )));
                }
            }
        } else if matches!(scheme.as_deref(), Some("ftp" | "file")) {
            return Err(fail(
                format!(
                    "checksum URLs other than http and https are not supported by sandball's get_url module: {value}"
                ),
                &result,
            )
            .as_not_carried_out());
        }
        let value: String = value
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == '_')
            .collect::<String>()
            .to_lowercase();
        if value.is_empty() || !value.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(fail("The checksum format is invalid", &result));
        }
        let algo = algorithm.parse::<HashAlgorithm>().map_err(|_| {
            Fail::new(format!(
                "Could not hash file '{dest}' with algorithm '{algorithm}'. Available algorithms: md5, sha1, sha224, sha256, sha384, sha512"
            ))
        })?;
        expected = Some((algo, value));
    }

    let mut last_modified_of = None;
    if !dest_is_dir && Path::new(&dest).exists() {
        let mut mismatch = false;
        if !force && let Some((algo, value)) = &expected {
            let have = digest_of(&dest, *algo)?;
            mismatch = have != *value;
        }
        if !force && expected.is_some() && !mismatch {
            let changed = m.set_fs_attributes_if_different(&m.file_args(), &dest, false, None)?;
            result.insert("changed".into(), json!(changed));
            let msg = if changed {
                "file already exists but file attributes changed"
            } else {
                "file already exists"
            };
            result.insert("msg".into(), json!(msg));
            return Ok(with_path_info(result));
        }
        last_modified_of = Some(dest.clone());
        if mismatch {
            force = true;
        }
    }

    let started = Instant::now();
    let method = if m.check_mode() { "HEAD" } else { "GET" };
    let download = match url_get(m, &url, &dest, method, last_modified_of, force)? {
        Ok(d) => d,
        Err(done) => return Ok(done),
    };
    result.insert("elapsed".into(), json!(started.elapsed().as_secs()));
    if dest_is_dir {
        let filename = download
            .response
            .filename(&download.url)
            .filter(|_| download.response.header("content-disposition").is_some())
            .unwrap_or_else(|| url_filename(&download.url));
        dest = format!("{}/{filename}", dest.trim_end_matches('/'));
        result.insert("dest".into(), json!(dest));
    }
    let checksum_src = digest_reader(&download.body[..], HashAlgorithm::Sha1)
        .map_err(|e| Fail::new(format!("cannot checksum the download: {e}")))?;
    result.insert("checksum_src".into(), json!(checksum_src));
    let dest_path = Path::new(&dest);
    if dest_path.exists() {
        result.insert(
            "checksum_dest".into(),
            json!(digest_of(&dest, HashAlgorithm::Sha1)?),
        );
    } else {
        let parent = dest_path
            .parent()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        let parent = if parent.is_empty() {
            ".".to_string()
        } else {
            parent
        };
        if !Path::new(&parent).exists() {
            return Err(fail(
                format!("Destination {parent} does not exist"),
                &result,
            ));
        }
    }
    let msg = download.info.get("msg").cloned().unwrap_or(json!(""));
    if m.check_mode() {
        let changed = result.get("checksum_src") != result.get("checksum_dest");
        result.insert("changed".into(), json!(changed));
        result.insert("msg".into(), msg);
        return Ok(with_path_info(result));
    }
    if let Some((algo, value)) = &expected {
        let got = digest_reader(&download.body[..], *algo)
            .map_err(|e| Fail::new(format!("cannot checksum the download: {e}")))?;
        if got != *value {
            return Err(fail(
                format!("The checksum for {dest} did not match {value}; it was {got}."),
                &result,
            ));
        }
    }
    let mut backup_file = None;
    let mut changed = false;
    if result.get("checksum_src") != result.get("checksum_dest") {
        if m.get_bool("backup") && dest_path.exists() {
            backup_file = Some(backup_local(&dest)?);
        }
        atomic_write(&dest, &download.body).map_err(|e| {
            fail(
                format!(
                    "failed to copy the download to {dest}: {}",
                    describe_io_error(&e)
                ),
                &result,
            )
        })?;
        changed = true;
    }
    let changed = m.set_fs_attributes_if_different(&m.file_args(), &dest, changed, None)?;
    result.insert("changed".into(), json!(changed));
    result.insert(
        "md5sum".into(),
        json!(digest_of(&dest, HashAlgorithm::Md5)?),
    );
    if let Some(b) = backup_file {
        result.insert("backup_file".into(), json!(b));
    }
    result.insert("msg".into(), msg);
    result.insert(
        "status_code".into(),
        download.info.get("status").cloned().unwrap_or(json!("")),
    );
    Ok(with_path_info(result))
}

/// The hex digest of a file on the node.
fn digest_of(path: &str, algorithm: HashAlgorithm) -> Result<String, Fail> {
    digest_file(path, algorithm)
        .map_err(|e| Fail::new(format!("cannot read {path}: {}", describe_io_error(&e))))
}
