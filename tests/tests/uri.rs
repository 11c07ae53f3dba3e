//! The `uri` component against ansible-core 2.19's `uri` module: one playbook of
//! scenarios (methods, bodies, headers, status codes, redirects, cookies, Basic
//! authentication, gzip, JSON, HTTPS with and without verification, `dest`,
//! `creates`/`removes`, timeouts, connection failures) against a test server on
//! 127.0.0.1, run by both tools; each task's whole result is compared (the server's
//! `Date`, `Last-Modified` and `elapsed` left out), then the files saved with `dest`.
//! Then what only the sandbox does: a URL whose `host:port` a `capabilities:`
//! narrowing leaves out is denied, a redirect to another port is denied, and the
//! refused options say so.

use crate::http;

use http::{same_results, sandball_only, sandbox_with_server};
use sandball_e2e::compare::{both_run, result};

const PLAY: &str = r##"
- hosts: all
  gather_facts: false
  vars:
    base: "http://127.0.0.1:PORT"
  tasks:
    - name: get text
      uri: {url: "{{ base }}/text", return_content: true}
    - name: get json
      uri: {url: "{{ base }}/json"}
    - name: vendor json with charset
      uri: {url: "{{ base }}/vnd", return_content: true}
    - name: json that does not parse
      uri: {url: "{{ base }}/notjson"}
    - name: not found
      uri: {url: "{{ base }}/status/404"}
      ignore_errors: true
    - name: not found with content
      uri: {url: "{{ base }}/status/404", return_content: true}
      ignore_errors: true
    - name: not found expected
      uri: {url: "{{ base }}/status/404", status_code: [200, 404]}
    - name: server error
      uri: {url: "{{ base }}/status/503", status_code: 200}
      ignore_errors: true
    - name: created
      uri: {url: "{{ base }}/status/201", method: PUT, status_code: [201]}
    - name: follow a redirect
      uri: {url: "{{ base }}/redirect"}
    - name: follow a relative redirect
      uri: {url: "{{ base }}/redirect-rel", return_content: true}
    - name: do not follow
      uri: {url: "{{ base }}/redirect", follow_redirects: none}
      ignore_errors: true
    - name: do not follow but expect it
      uri: {url: "{{ base }}/redirect", follow_redirects: none, status_code: 302}
    - name: safe does not follow a post
      uri: {url: "{{ base }}/redirect", method: POST, body: x}
      ignore_errors: true
    - name: all follows a post as a get
      uri: {url: "{{ base }}/redirect", method: POST, body: x, follow_redirects: all}
    - name: urllib2 follows a post
      uri: {url: "{{ base }}/redirect", method: POST, body: x, follow_redirects: urllib2}
    - name: 307 keeps the method and body
      uri: {url: "{{ base }}/redirect307", method: POST, body: kept, follow_redirects: all}
    - name: redirect loop
      uri: {url: "{{ base }}/redirect-loop"}
      ignore_errors: true
    - name: post json
      uri:
        url: "{{ base }}/echo"
        method: POST
        body_format: json
        body: {name: x, list: [1, 2], nested: {t: true}}
    - name: post a json string
      uri: {url: "{{ base }}/echo", method: POST, body_format: json, body: '{"raw": 1}'}
    - name: post a form
      uri:
        url: "{{ base }}/echo"
        method: POST
        body_format: form-urlencoded
        body: {name: a b, sym: "&=?", many: [1, 2]}
    - name: post a form as a list
      uri:
        url: "{{ base }}/echo"
        method: POST
        body_format: form-urlencoded
        body: [[k, v1], [k, v2]]
    - name: headers and content type kept
      uri:
        url: "{{ base }}/echo"
        method: PATCH
        body: plain
        headers: {X-Test: yes-it-is, Content-Type: text/x-mine}
        http_agent: my-agent
    - name: force sends no-cache
      uri: {url: "{{ base }}/echo", force: true}
    - name: cookies
      uri: {url: "{{ base }}/cookies"}
    - name: cookies across a redirect
      uri: {url: "{{ base }}/cookie-redirect"}
    - name: basic auth after a challenge
      uri: {url: "{{ base }}/auth", url_username: user, url_password: pass, return_content: true}
    - name: basic auth forced
      uri: {url: "{{ base }}/echo", user: user, password: pass, force_basic_auth: true}
    - name: wrong password
      uri: {url: "{{ base }}/auth", url_username: user, url_password: wrong}
      ignore_errors: true
    - name: gzip
      uri: {url: "{{ base }}/gzip", return_content: true}
    - name: gzip kept
      uri: {url: "{{ base }}/gzip", decompress: false}
    - name: latin-1
      uri: {url: "{{ base }}/latin1", return_content: true}
    - name: no content length
      uri: {url: "{{ base }}/nolength", return_content: true}
    - name: head
      uri: {url: "{{ base }}/text", method: HEAD}
    - name: unredirected header
      uri:
        url: "{{ base }}/cookie-redirect"
        headers: {X-Drop: gone, X-Test: stays}
        unredirected_headers: [x-drop]
    - name: lowercase method
      uri: {url: "{{ base }}/text", method: get}
      ignore_errors: true
    - name: two words
      uri: {url: "{{ base }}/text", method: "GET X"}
      ignore_errors: true
    - name: save to a file
      uri: {url: "{{ base }}/text", dest: "{{ work }}/saved.txt"}
    - name: save to a directory
      uri: {url: "{{ base }}/disposition", dest: "{{ work }}"}
    - name: save with a mode
      uri: {url: "{{ base }}/json", dest: "{{ work }}/data.json", mode: "0600"}
    - name: creates exists
      uri: {url: "{{ base }}/text", creates: "{{ work }}/saved.txt"}
    - name: removes missing
      uri: {url: "{{ base }}/text", removes: "{{ work }}/nothing-here"}
    - name: timeout
      uri: {url: "{{ base }}/slow", timeout: 1}
      ignore_errors: true
    - name: connection refused
      uri: {url: "http://127.0.0.1:1/"}
      ignore_errors: true
    - name: tls without verification
      uri: {url: "https://127.0.0.1:TLS/json", validate_certs: false}
    - name: tls with the ca
      uri: {url: "https://127.0.0.1:TLS/text", ca_path: "CACERT", return_content: true}
    - name: tls self-signed refused
      uri: {url: "https://127.0.0.1:TLS/text"}
      ignore_errors: true
    - name: check mode
      uri: {url: "{{ base }}/text"}
      check_mode: true
"##;

/// Tasks whose whole results are compared.
const SAME: &[&str] = &[
    "get text",
    "get json",
    "vendor json with charset",
    "json that does not parse",
    "not found",
    "not found with content",
    "not found expected",
    "server error",
    "created",
    "follow a redirect",
    "follow a relative redirect",
    "do not follow",
    "do not follow but expect it",
    "safe does not follow a post",
    "all follows a post as a get",
    "urllib2 follows a post",
    "307 keeps the method and body",
    "redirect loop",
    "post json",
    "post a json string",
    "post a form",
    "post a form as a list",
    "headers and content type kept",
    "force sends no-cache",
    "cookies",
    "cookies across a redirect",
    "basic auth after a challenge",
    "basic auth forced",
    "wrong password",
    "gzip",
    "gzip kept",
    "latin-1",
    "no content length",
    "head",
    "unredirected header",
    "lowercase method",
    "two words",
    "save to a file",
    "save to a directory",
    "save with a mode",
    "creates exists",
    "removes missing",
    "connection refused",
    "timeout",
    "tls without verification",
    "tls with the ca",
    "check mode",
];

/// Tasks whose failure text comes from the TLS library (OpenSSL there, rustls
/// here): only the shape is compared.
const SAME_SHAPE: &[(&str, &str)] = &[(
    "tls self-signed refused",
    "Status code was -1 and not [200]: Request failed: <urlopen error ",
)];

#[test]
fn uri_matches_ansible_core() {
    let (sb, server, bin) = sandbox_with_server();
    let (ours, theirs, ours_work, theirs_work) = both_run(&sb, &bin, &server.fill(PLAY), &[]);
    let results = same_results(&ours, &theirs, &ours_work, &theirs_work, SAME);
    // The comparison is not vacuous: the server was reached and answered.
    assert_eq!(results[1]["json"]["b"], serde_json::json!([1, 2]));
    assert_eq!(results[0]["content"], "hello\n");
    for (task, prefix) in SAME_SHAPE {
        for (out, work) in [(&ours, &ours_work), (&theirs, &theirs_work)] {
            let r = result(out, task, work);
            assert_eq!(r["status"], -1, "{task}: {r}");
            let msg = r["msg"].as_str().unwrap_or_default();
            assert!(msg.starts_with(prefix), "{task}: {msg}");
        }
    }
    for name in ["saved.txt", "named.txt", "data.json"] {
        let a = std::fs::read(ours_work.join(name)).unwrap();
        let b = std::fs::read(theirs_work.join(name)).unwrap();
        assert_eq!(a, b, "{name}");
    }
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: std::path::PathBuf| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(ours_work.join("data.json")), 0o600);
    assert_eq!(mode(theirs_work.join("data.json")), 0o600);
}

const DENIED: &str = r##"
- hosts: all
  gather_facts: false
  tasks:
    - name: a port the grant leaves out
      uri: {url: "http://127.0.0.1:PORT/text"}
      capabilities: {only: [{kind: net, address: "127.0.0.1:OTHER"}]}
      ignore_errors: true
    - name: a redirect to another port
      uri: {url: "http://127.0.0.1:PORT/redirect-other"}
      ignore_errors: true
    - name: a redirect to a granted port
      uri: {url: "http://127.0.0.1:PORT/redirect-other"}
      capabilities: [{kind: net, address: "127.0.0.1:OTHER"}]
    - name: multipart refused
      uri: {url: "http://127.0.0.1:PORT/echo", method: POST, body_format: form-multipart, body: {a: b}}
      ignore_errors: true
    - name: unix socket refused
      uri: {url: "http://127.0.0.1:PORT/echo", unix_socket: /run/x.sock}
      ignore_errors: true
"##;

#[test]
fn uri_reaches_only_granted_peers() {
    let (sb, server, _) = sandbox_with_server();
    let (out, work) = sandball_only(&sb, &server, DENIED);
    let peer = |port: u16| format!("127.0.0.1:{port}");

    let r = result(&out, "a port the grant leaves out", &work);
    assert_eq!(r["status"], -1, "{r}");
    let msg = r["msg"].as_str().unwrap();
    assert!(
        msg.contains(&format!("denied net {}", peer(server.port))),
        "{msg}"
    );
    assert!(msg.contains("kind: net"), "{msg}");
    assert_eq!(
        r["denials"][0]["capability"],
        format!("net {}", peer(server.port))
    );

    let r = result(&out, "a redirect to another port", &work);
    let msg = r["msg"].as_str().unwrap();
    let target = format!("http://{}/json", peer(server.other));
    assert!(
        msg.contains(&format!("redirect to {target} denied")),
        "{msg}"
    );
    assert!(
        msg.contains(&format!("net {}", peer(server.other))),
        "{msg}"
    );

    let r = result(&out, "a redirect to a granted port", &work);
    assert_eq!(r["status"], 200, "{r}");
    assert_eq!(r["url"], target, "{r}");
    assert_eq!(r["redirected"], true, "{r}");

    let r = result(&out, "multipart refused", &work);
    assert!(
        r["msg"]
            .as_str()
            .unwrap()
            .contains("form-multipart is not supported"),
        "{r}"
    );
    let r = result(&out, "unix socket refused", &work);
    assert!(
        r["msg"]
            .as_str()
            .unwrap()
            .contains("unix_socket is not supported"),
        "{r}"
    );
}
