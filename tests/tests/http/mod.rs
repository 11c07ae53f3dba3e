//! The HTTP server the `uri` and `get_url` comparisons talk to (`server.py`, run by
//! the ansible-core venv's Python on 127.0.0.1: an HTTP port, a second one to
//! redirect to, and an HTTPS one with a self-signed certificate made by `openssl`),
//! and the comparison of task results between the two tools, volatile fields left
//! out.

use sandball_e2e::compare::{ansible_bin, result};
use sandball_e2e::{Output, Sandbox};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// A running test server; killed when dropped.
pub struct Server {
    child: Child,
    /// The HTTP port.
    pub port: u16,
    /// A second HTTP port (a redirect target on another `host:port`).
    pub other: u16,
    /// The HTTPS port.
    pub tls: u16,
    /// The CA certificate (PEM) that signed the server's, for `ca_path`.
    pub ca: PathBuf,
}

impl Server {
    /// Starts the server with `python`, its files in `dir`.
    pub fn start(python: &Path, dir: &Path) -> Server {
        // A CA (for `ca_path`) and the server's certificate, signed by it.
        let ca = dir.join("ca.pem");
        let ca_key = dir.join("ca-key.pem");
        let cert = dir.join("cert.pem");
        let key = dir.join("key.pem");
        let csr = dir.join("cert.csr");
        let ext = dir.join("ext.cnf");
        std::fs::write(
            &ext,
            "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n",
        )
        .unwrap();
        let openssl = |args: &[&std::ffi::OsStr]| {
            let made = Command::new("openssl")
                .args(args)
                .output()
                .expect("openssl runs");
            assert!(made.status.success(), "openssl {args:?}: {made:?}");
        };
        let os = |s: &'static str| std::ffi::OsStr::new(s);
        openssl(&[
            os("req"),
            os("-x509"),
            os("-newkey"),
            os("rsa:2048"),
            os("-nodes"),
            os("-days"),
            os("2"),
            os("-subj"),
            os("/CN=sandball test CA"),
            os("-keyout"),
            ca_key.as_os_str(),
            os("-out"),
            ca.as_os_str(),
        ]);
        openssl(&[
            os("req"),
            os("-new"),
            os("-newkey"),
            os("rsa:2048"),
            os("-nodes"),
            os("-subj"),
            os("/CN=127.0.0.1"),
            os("-keyout"),
            key.as_os_str(),
            os("-out"),
            csr.as_os_str(),
        ]);
        openssl(&[
            os("x509"),
            os("-req"),
            os("-in"),
            csr.as_os_str(),
            os("-CA"),
            ca.as_os_str(),
            os("-CAkey"),
            ca_key.as_os_str(),
            os("-CAcreateserial"),
            os("-days"),
            os("2"),
            os("-extfile"),
            ext.as_os_str(),
            os("-out"),
            cert.as_os_str(),
        ]);
        let ports = dir.join("ports");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/http/server.py");
        let child = Command::new(python)
            .arg(script)
            .arg(&ports)
            .arg(&cert)
            .arg(&key)
            .spawn()
            .expect("the test server starts");
        let start = Instant::now();
        let text = loop {
            if let Ok(t) = std::fs::read_to_string(&ports) {
                break t;
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "the test server did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        let p: Vec<u16> = text
            .split_whitespace()
            .map(|w| w.parse().unwrap())
            .collect();
        Server {
            child,
            port: p[0],
            other: p[1],
            tls: p[2],
            ca,
        }
    }

    /// `play` with `PORT`, `OTHER`, `TLS` and `CACERT` replaced by the server's.
    pub fn fill(&self, play: &str) -> String {
        play.replace("PORT", &self.port.to_string())
            .replace("OTHER", &self.other.to_string())
            .replace("TLS", &self.tls.to_string())
            .replace("CACERT", &self.ca.display().to_string())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A sandbox with the test server started in it, and the ansible-core venv's bin dir.
pub fn sandbox_with_server() -> (Sandbox, Server, PathBuf) {
    let bin = ansible_bin("ANSIBLE_BIN_DIR", "venv");
    let sb = Sandbox::new();
    let server = Server::start(&bin.join("python"), &sb.dir("server"));
    (sb, server, bin)
}

/// Runs `play` (its ports filled in) under sandball alone, its components only;
/// returns the output and the work directory.
pub fn sandball_only(sb: &Sandbox, server: &Server, play: &str) -> (Output, PathBuf) {
    sb.inventory(&["localhost"]);
    let pb = sb.write("sandball-only.yml", &server.fill(play));
    let work = sb.dir("work");
    // No ansible-core to hand over to: what the components refuse stays refused.
    let out = sb
        .play(&pb, &work, &["-v"])
        .env("SANDBALL_ANSIBLE_CORE", sb.dir("no-ansible-core"))
        .run();
    out.assert_no_panic();
    (out, work)
}

/// Result fields that differ between any two runs, or between the tools by design
/// (`invocation`: module arguments as each tool prints them; `src`: get_url's
/// temporary file, which sandball's does not make, holding the download in memory).
const VOLATILE: &[&str] = &["date", "elapsed", "invocation", "last_modified", "src"];

/// Compares each task's whole result between the two runs (volatile fields left out)
/// and returns sandball's results.
pub fn same_results(
    ours: &Output,
    theirs: &Output,
    ours_work: &Path,
    theirs_work: &Path,
    tasks: &[&str],
) -> Vec<Value> {
    let mut out = Vec::new();
    for task in tasks {
        let strip = |mut v: Value| {
            if let Value::Object(m) = &mut v {
                m.retain(|k, _| !VOLATILE.contains(&k.as_str()) && !k.starts_with("_ansible"));
            }
            v
        };
        let a = strip(result(ours, task, ours_work));
        let b = strip(result(theirs, task, theirs_work));
        assert_eq!(
            a, b,
            "task {task:?}: sandball gave\n{a:#}\nansible-playbook gave\n{b:#}"
        );
        out.push(a);
    }
    out
}
