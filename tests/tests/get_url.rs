//! The `get_url` component against ansible-core 2.19's `get_url` module: one
//! playbook of scenarios (a download, the same again, a directory destination named
//! by Content-Disposition or the URL, `checksum` as a digest and as a checksum-file
//! URL, a wrong checksum, `force`, `backup`, modes, check mode, HTTP errors, a
//! redirect, gzip, HTTPS, `tmp_dest`) against a test server on 127.0.0.1, run by
//! both tools; each task's whole result is compared (`elapsed` and `src`, the path
//! of Ansible's temporary file, left out; `backup_file` names hold a random part),
//! then the downloaded files byte for byte. Then what only the sandbox does: a
//! checksum URL on a port the grant leaves out is denied.

use crate::http;

use http::{same_results, sandball_only, sandbox_with_server};
use sandball_e2e::compare::{both_run, result};
use sha2::Digest;

const PLAY: &str = r##"
- hosts: all
  gather_facts: false
  vars:
    base: "http://127.0.0.1:PORT"
    sum: "sha256:DATASUM"
  tasks:
    - name: download
      get_url: {url: "{{ base }}/files/data.bin", dest: "{{ work }}/data.bin"}
    - name: download again
      get_url: {url: "{{ base }}/files/data.bin", dest: "{{ work }}/data.bin"}
    - name: checksum matches without a request
      get_url: {url: "{{ base }}/files/data.bin", dest: "{{ work }}/data.bin", checksum: "{{ sum }}"}
    - name: checksum matches and a mode
      get_url: {url: "{{ base }}/files/data.bin", dest: "{{ work }}/data.bin", checksum: "{{ sum }}", mode: "0640"}
    - name: checksum from a url
      get_url: {url: "{{ base }}/files/data.bin", dest: "{{ work }}/summed.bin", checksum: "sha256:{{ base }}/files/sha256sums"}
    - name: checksum file without the name
      get_url: {url: "{{ base }}/text", dest: "{{ work }}/nosum.txt", checksum: "sha256:{{ base }}/files/sha256sums"}
      ignore_errors: true
    - name: wrong checksum
      get_url: {url: "{{ base }}/text", dest: "{{ work }}/wrong.txt", checksum: "sha1:0123456789abcdef"}
      ignore_errors: true
    - name: bad checksum format
      get_url: {url: "{{ base }}/text", dest: "{{ work }}/wrong.txt", checksum: "sha1"}
      ignore_errors: true
    - name: into a directory by disposition
      get_url: {url: "{{ base }}/disposition", dest: "{{ work }}/"}
    - name: into a directory by url
      get_url: {url: "{{ base }}/files/data.bin", dest: "{{ work }}/"}
    - name: force with a backup
      get_url: {url: "{{ base }}/text", dest: "{{ work }}/named.txt", force: true, backup: true}
    - name: check mode new file
      get_url: {url: "{{ base }}/text", dest: "{{ work }}/later.txt"}
      check_mode: true
    - name: check mode same file
      get_url: {url: "{{ base }}/files/data.bin", dest: "{{ work }}/data.bin"}
      check_mode: true
    - name: not found
      get_url: {url: "{{ base }}/status/404", dest: "{{ work }}/404.txt"}
      ignore_errors: true
    - name: created is not ok
      get_url: {url: "{{ base }}/status/201", dest: "{{ work }}/201.txt"}
      ignore_errors: true
    - name: redirect
      get_url: {url: "{{ base }}/redirect", dest: "{{ work }}/redirected.json"}
    - name: gzip
      get_url: {url: "{{ base }}/gzip", dest: "{{ work }}/unzipped.txt"}
    - name: gzip kept
      get_url: {url: "{{ base }}/gzip", dest: "{{ work }}/zipped.gz", decompress: false}
    - name: basic auth
      get_url: {url: "{{ base }}/auth", dest: "{{ work }}/auth.txt", username: user, password: pass}
    - name: missing directory
      get_url: {url: "{{ base }}/text", dest: "{{ work }}/no/such/file"}
      ignore_errors: true
    - name: tmp_dest missing
      get_url: {url: "{{ base }}/text", dest: "{{ work }}/t.txt", tmp_dest: "{{ work }}/nope"}
      ignore_errors: true
    - name: tls
      get_url: {url: "https://127.0.0.1:TLS/text", dest: "{{ work }}/tls.txt", validate_certs: false}
    - name: connection refused
      get_url: {url: "http://127.0.0.1:1/x", dest: "{{ work }}/refused.txt"}
      ignore_errors: true
"##;

const SAME: &[&str] = &[
    "download",
    "download again",
    "checksum matches without a request",
    "checksum matches and a mode",
    "checksum from a url",
    "checksum file without the name",
    "bad checksum format",
    "into a directory by disposition",
    "into a directory by url",
    "check mode new file",
    "check mode same file",
    "not found",
    "created is not ok",
    "redirect",
    "gzip",
    "gzip kept",
    "basic auth",
    "tmp_dest missing",
    "tls",
];

/// Left out of the whole-result comparison: Ansible's temporary file (`src`, and
/// its path inside the checksum message) and the backup's random part.
const DIFFERENT: &[&str] = &[
    "wrong checksum",
    "force with a backup",
    "connection refused",
];

#[test]
fn get_url_matches_ansible_core() {
    let (sb, server, bin) = sandbox_with_server();
    let data: Vec<u8> = (0..4).flat_map(|_| 0u8..=255).collect();
    let play = server
        .fill(PLAY)
        .replace("DATASUM", &hex::encode(sha2::Sha256::digest(&data)));
    let (ours, theirs, ours_work, theirs_work) = both_run(&sb, &bin, &play, &[]);
    let results = same_results(&ours, &theirs, &ours_work, &theirs_work, SAME);
    assert_eq!(std::fs::read(ours_work.join("data.bin")).unwrap(), data);
    assert_eq!(results[0]["changed"], true);
    assert_eq!(results[1]["changed"], false);
    assert_eq!(results[2]["msg"], "file already exists");
    for task in DIFFERENT {
        let a = result(&ours, task, &ours_work);
        let b = result(&theirs, task, &theirs_work);
        for field in [
            "changed",
            "failed",
            "checksum_src",
            "checksum_dest",
            "dest",
            "status_code",
            "md5sum",
            "size",
            "mode",
        ] {
            assert_eq!(a[field], b[field], "task {task}, field {field}: {a} / {b}");
        }
        let (ma, mb) = (
            a["msg"].as_str().unwrap_or(""),
            b["msg"].as_str().unwrap_or(""),
        );
        let cut = |m: &str| m.split(" did not match").nth(1).map(str::to_string);
        assert_eq!(cut(ma), cut(mb), "{task}: {ma} / {mb}");
        if *task == "missing directory" {
            assert!(ma.contains("WORK/no/such/file"), "{ma}");
        }
        assert_eq!(
            a["backup_file"].is_string(),
            b["backup_file"].is_string(),
            "{task}"
        );
    }
    let files = |dir: &std::path::Path| {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| !n.contains('~'))
            .collect();
        names.sort();
        names
    };
    assert_eq!(files(&ours_work), files(&theirs_work));
    for name in files(&ours_work) {
        let a = std::fs::read(ours_work.join(&name)).unwrap();
        let b = std::fs::read(theirs_work.join(&name)).unwrap();
        assert_eq!(a, b, "{name}");
    }
}

const DENIED: &str = r##"
- hosts: all
  gather_facts: false
  tasks:
    - name: a checksum url on a port left out
      get_url:
        url: "http://127.0.0.1:PORT/files/data.bin"
        dest: "{{ work }}/data.bin"
        checksum: "sha256:http://127.0.0.1:OTHER/files/sha256sums"
      capabilities: {only: [{kind: net, address: "127.0.0.1:PORT"}, {kind: fs, path: "{{ work }}/data.bin", access: read-write}]}
      ignore_errors: true
"##;

#[test]
fn get_url_reaches_only_granted_peers() {
    let (sb, server, _) = sandbox_with_server();
    let (out, work) = sandball_only(&sb, &server, DENIED);
    let r = result(&out, "a checksum url on a port left out", &work);
    let msg = r["msg"].as_str().unwrap();
    assert!(
        msg.contains(&format!("net 127.0.0.1:{}", server.other)),
        "{msg}"
    );
    assert!(!work.join("data.bin").exists());
}
