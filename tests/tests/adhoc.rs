//! The ad-hoc command, `sandball run PATTERN -m MODULE [-a ARGS]`, printing results
//! as `ansible` does.

use sandball_e2e::Sandbox;

#[test]
fn ping_localhost_without_an_inventory() {
    let sb = Sandbox::new();
    let out = sb.sandball(["run", "localhost", "-m", "ping"]).run();
    out.assert_no_panic().assert_code(0);
    out.assert_stdout_has("localhost | SUCCESS => {")
        .assert_stdout_has("\"ping\": \"pong\"");
}

#[test]
fn a_change_and_a_failure_are_reported_like_ansible() {
    let sb = Sandbox::new();
    let inv = sb.inventory(&["localhost"]);
    let work = sb.dir("work");
    let target = work.join("adhoc");
    let inv = inv.display().to_string();

    let touch = format!("path={} state=touch", target.display());
    let out = sb
        .sandball(["run", "all", "-i", &inv, "-m", "file", "-a", &touch])
        .run();
    out.assert_no_panic().assert_code(0);
    out.assert_stdout_has("localhost | CHANGED => {")
        .assert_stdout_has("\"changed\": true");
    assert!(target.is_file(), "{out}");

    let missing = format!("path={} state=file", work.join("missing").display());
    let out = sb
        .sandball(["run", "all", "-i", &inv, "-m", "file", "-a", &missing])
        .run();
    out.assert_no_panic().assert_code(2);
    out.assert_stdout_has("localhost | FAILED! => {")
        .assert_stdout_has("is absent, cannot continue");
    assert!(!work.join("missing").exists());
}
