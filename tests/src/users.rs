//! The unprivileged users the become tests switch to, created when the tests run as root.

use std::process::Command;

/// The user's name.
pub const BECOME_USER: &str = "sandball-become";

/// Whether the become tests can run here (root, sudo installed); creates the user when
/// missing. Says why not on stderr.
pub fn become_user_ready() -> bool {
    let uid = Command::new("id").arg("-u").output().unwrap();
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        eprintln!("skipping the become test: it creates a user, which needs root");
        return false;
    }
    if Command::new("sudo").arg("-V").output().is_err() {
        eprintln!("skipping the become test: sudo is not installed (`make test` installs it)");
        return false;
    }
    ensure_user(BECOME_USER);
    true
}

/// Creates the user `name` (with a home and `/bin/sh`, both its own) when missing, or
/// leaves it as an earlier run made it; needs root.
pub fn ensure_user(name: &str) {
    let exists = || {
        Command::new("id")
            .arg(name)
            .output()
            .unwrap()
            .status
            .success()
    };
    if !exists() {
        // `-p '*'`: no password, but not a locked account (`!`, useradd's default),
        // to which sshd without PAM refuses every login, keys included.
        let made = Command::new("useradd")
            .args(["-m", "-s", "/bin/sh", "-p", "*", name])
            .output()
            .unwrap();
        // Tests run in processes of their own: another may have made the user meanwhile.
        assert!(
            made.status.success() || exists(),
            "useradd: {}",
            String::from_utf8_lossy(&made.stderr)
        );
        // A home an earlier account of the name left (removed without its home) is
        // kept by useradd with its old owner: the user could not write in it.
        let entry = Command::new("getent")
            .args(["passwd", name])
            .output()
            .unwrap();
        let entry = String::from_utf8_lossy(&entry.stdout);
        let home = entry.trim_end().split(':').nth(5).unwrap_or_default();
        let owned = Command::new("chown")
            .args(["-R", &format!("{name}:"), home])
            .output()
            .unwrap();
        assert!(
            owned.status.success(),
            "chown {home}: {}",
            String::from_utf8_lossy(&owned.stderr)
        );
    }
}

/// Sets the password of the user `name` (`chpasswd`); needs root.
pub fn set_password(name: &str, password: &str) {
    let set = Command::new("sh")
        .args(["-c", &format!("echo '{name}:{password}' | chpasswd")])
        .output()
        .unwrap();
    assert!(
        set.status.success(),
        "chpasswd: {}",
        String::from_utf8_lossy(&set.stderr)
    );
}

/// The user's uid.
pub fn become_uid() -> u32 {
    let out = Command::new("id")
        .args(["-u", BECOME_USER])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}
