//! The module's own logic, run natively through the SDK's `execute` (where there is
//! no HTTP transport, so a request ends as Ansible's connection failures do): body
//! encodings, argument checks, refused options, `creates`/`removes`, dates, and the
//! failure result's shape. Exchanges with a server are compared with ansible-core's
//! module end to end (`tests/tests/uri.rs`).

use super::{MANIFEST, form_urlencoded, quote_plus, uri};
use serde_json::json;

sandball_guest_sdk::module_test_helpers!(MANIFEST, uri);

#[test]
fn forms_are_encoded_as_pythons_urlencode() {
    assert_eq!(quote_plus("a b&c=d/é~"), "a+b%26c%3Dd%2F%C3%A9~");
    assert_eq!(
        form_urlencoded(&json!({"a": "x y", "n": [1, 2], "skip": null, "t": true})).unwrap(),
        "a=x+y&n=1&n=2&t=True"
    );
    assert_eq!(
        form_urlencoded(&json!([["k", "v1"], ["k", "v2"]])).unwrap(),
        "k=v1&k=v2"
    );
    assert_eq!(form_urlencoded(&json!("as=is")).unwrap(), "as=is");
    let bad = form_urlencoded(&json!([["k"]])).unwrap_err();
    assert!(
        bad.msg()
            .starts_with("failed to parse body as form_urlencoded"),
        "{bad}"
    );
}

#[test]
fn bad_arguments_and_unsupported_options_are_refused() {
    let msg = fails(json!({"url": "http://127.0.0.1:1/", "method": "get x"}));
    assert_eq!(
        msg,
        "Parameter 'method' needs to be a single word in uppercase, like GET or POST."
    );
    for (args, word) in [
        (json!({"unix_socket": "/run/s.sock"}), "unix_socket"),
        (json!({"client_cert": "/c.pem"}), "client_cert/client_key"),
        (json!({"use_gssapi": true}), "use_gssapi"),
        (json!({"ciphers": ["AES"]}), "ciphers"),
        (
            json!({"body_format": "form-multipart", "body": {"a": 1}}),
            "form-multipart",
        ),
    ] {
        let mut args = args;
        args["url"] = json!("http://127.0.0.1:1/");
        let msg = fails(args);
        assert!(msg.contains(word) && msg.contains("not supported"), "{msg}");
    }
    let msg = fails(json!({"url": "http://127.0.0.1:1/", "body": "x", "src": "/etc/hostname"}));
    assert!(msg.contains("mutually exclusive"), "{msg}");
}

#[test]
fn creates_and_removes_skip_before_any_request() {
    let tmp = tempfile::tempdir().unwrap();
    let here = tmp.path().to_str().unwrap();
    let r = ok(json!({"url": "http://127.0.0.1:1/", "creates": here}));
    assert_eq!(
        r["stdout"],
        json!(format!("skipped, since '{here}' exists"))
    );
    assert_eq!(r["changed"], json!(false));
    let gone = format!("{here}/gone");
    let r = ok(json!({"url": "http://127.0.0.1:1/", "removes": gone}));
    assert_eq!(
        r["stdout"],
        json!(format!("skipped, since '{gone}' does not exist"))
    );
}

#[test]
fn a_failed_request_has_ansibles_shape() {
    let (r, failed) = run(
        json!({"url": "http://u:secret@127.0.0.1:1/x", "status_code": [200, 204], "return_content": true}),
    );
    assert!(failed);
    let msg = r["msg"].as_str().unwrap();
    assert!(
        msg.starts_with("Status code was -1 and not [200, 204]: Request failed: <urlopen error "),
        "{msg}"
    );
    assert_eq!(r["status"], json!(-1));
    assert_eq!(r["url"], json!("http://u:********@127.0.0.1:1/x"));
    assert_eq!(r["redirected"], json!(false));
    assert_eq!(r["content"], json!(""));
    assert_eq!(r["changed"], json!(false));
    assert!(r["elapsed"].is_u64());
}
