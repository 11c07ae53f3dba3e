//! A real OpenSSH server for the SSH tests: host and client keys generated in a
//! temporary directory, a `known_hosts` that records the host key, and
//! `/usr/sbin/sshd -D` on a free loopback port as a child process, killed on drop.
//! `make test` installs openssh-server; without it the tests fail saying so.
//!
//! Every host alias of an inventory points at the same server; each gets its own node
//! cache (`sandball_cache_dir`) so a test can look at what was deployed to which host.

use crate::binaries::{Binaries, target_dir};
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use tempfile::TempDir;

/// Where the server binary is.
pub const SSHD: &str = "/usr/sbin/sshd";

/// A running sshd on 127.0.0.1, stopped when dropped.
pub struct Sshd {
    child: Child,
    dir: TempDir,
    /// The system root the server runs in (`/`, or a test root's chroot).
    root: PathBuf,
    /// The port it listens on.
    pub port: u16,
}

/// The test root `name` (`bullseye-amd64`, `bullseye-arm64`, `bullseye-nopython`) that
/// `make test-roots` makes with tests/roots/make-root.sh: in `$SANDBALL_TEST_ROOTS`,
/// else in `/var/cache/sandball-test-roots`, the Makefile's default.
pub fn test_root(name: &str) -> PathBuf {
    std::env::var_os("SANDBALL_TEST_ROOTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/cache/sandball-test-roots"))
        .join(name)
}

fn run(cmd: &mut Command) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A new ed25519 key pair at `path` (and `path.pub`).
pub fn keygen(path: &Path) {
    run(Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "sandball-test", "-f"])
        .arg(path));
}

/// `path`, a path of this machine inside the system root `root`, as seen from there.
fn seen_in(root: &Path, path: &Path) -> PathBuf {
    let inside = path
        .strip_prefix(root)
        .unwrap_or_else(|_| panic!("{} is not in the root {}", path.display(), root.display()));
    Path::new("/").join(inside)
}

fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    l.local_addr().expect("local address").port()
}

/// The test servers' `MaxStartups`: bursts of parallel logins are taken, not refused.
const MAX_STARTUPS: &str = "500";

impl Sshd {
    /// Generates keys and starts the server, which takes bursts of logins
    /// (`MaxStartups 500`). Panics, naming the fix, when sshd is missing.
    pub fn start() -> Sshd {
        Sshd::start_refusing(MAX_STARTUPS)
    }

    /// [`Sshd::start`] with sshd's `MaxStartups` set to `max_startups`
    /// (`start:rate:full`): how many logins in progress it takes before refusing more.
    pub fn start_refusing(max_startups: &str) -> Sshd {
        Sshd::start_configured(max_startups, "")
    }

    /// [`Sshd::start`] with `lines` added to the server's configuration (`SetEnv
    /// PATH=…`: a node whose commands find other programs).
    pub fn start_with_config(lines: &str) -> Sshd {
        Sshd::start_configured(MAX_STARTUPS, lines)
    }

    /// The server of this machine, with `max_startups` and `lines` in its configuration.
    fn start_configured(max_startups: &str, lines: &str) -> Sshd {
        assert!(
            Path::new(SSHD).is_file(),
            "{SSHD} is missing: install openssh-server (`make test` does it)"
        );
        let dir = tempfile::Builder::new()
            .prefix("sandball-sshd-")
            .tempdir()
            .expect("temporary directory");
        // sshd wants its privilege separation directory (as root).
        let _ = std::fs::create_dir_all("/run/sshd");
        let mut cmd = Command::new(SSHD);
        Sshd::serve(dir, Path::new("/"), &mut cmd, max_startups, lines)
    }

    /// Starts the sshd of the system root `root` (a debootstrapped distribution) in a
    /// chroot there, on a loopback port of this machine: a node of that distribution.
    /// It runs in a mount namespace of its own, where the root's `/proc` and `/dev`
    /// are mounted, so nothing stays mounted once it is stopped, and a UTS namespace
    /// named as the root's `/etc/hostname` says. Panics, naming the fix, when the root
    /// is missing.
    pub fn start_in(root: &Path) -> Sshd {
        assert!(
            root.join("usr/sbin/sshd").is_file(),
            "{} holds no sshd: run `make test-roots` (`make test` does it)",
            root.display()
        );
        let dir = tempfile::Builder::new()
            .prefix("sandball-sshd-")
            .tempdir_in(root.join("tmp"))
            .expect("temporary directory in the root");
        std::fs::create_dir_all(root.join("run/sshd")).expect("the root's /run/sshd");
        let mut cmd = Command::new("unshare");
        cmd.args([
            "--mount",
            "--uts",
            "--propagation",
            "private",
            "--",
            "sh",
            "-c",
        ])
        .arg(
            "hostname \"$(cat \"$1/etc/hostname\")\" && \
                 mount -t proc proc \"$1/proc\" && mount --rbind /dev \"$1/dev\" && \
                 shift && exec chroot \"$@\"",
        )
        .arg("sh")
        .arg(root)
        .arg(root)
        .arg(SSHD);
        Sshd::serve(dir, root, &mut cmd, MAX_STARTUPS, "")
    }

    /// Generates the keys in `dir` (which `root`'s sshd sees at its path under
    /// `root`), writes the server's configuration there, and starts `sshd` with it
    /// (`cmd` runs the server, its arguments to follow; `max_startups` is its
    /// `MaxStartups`; `lines` are added to its configuration).
    fn serve(
        dir: TempDir,
        root: &Path,
        cmd: &mut Command,
        max_startups: &str,
        lines: &str,
    ) -> Sshd {
        let d = dir.path();
        keygen(&d.join("host_key"));
        keygen(&d.join("client_key"));
        keygen(&d.join("stranger_key"));
        std::fs::copy(d.join("client_key.pub"), d.join("authorized_keys"))
            .expect("authorized_keys");
        // The directory as the server sees it.
        let seen = seen_in(root, d);
        let port = free_port();
        let config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\nPidFile none\n\
             AuthorizedKeysFile {d}/authorized_keys\nStrictModes no\nUsePAM no\n\
             PasswordAuthentication yes\nKbdInteractiveAuthentication no\n\
             PermitRootLogin prohibit-password\nMaxStartups {max_startups}\n\
             MaxSessions 100\nLogLevel ERROR\n{lines}\n",
            d = seen.display()
        );
        std::fs::write(d.join("sshd_config"), config).expect("sshd_config");
        let child = cmd
            .arg("-D")
            .arg("-e")
            .arg("-f")
            .arg(seen.join("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
        let sshd = Sshd {
            child,
            dir,
            root: root.to_path_buf(),
            port,
        };
        let start = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "sshd did not listen on 127.0.0.1:{port} within 20 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        sshd.write_known_hosts(&sshd.host_public_key());
        sshd
    }

    /// The server's key directory.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// `path`, a path of this machine inside the server's root, as the node sees it.
    pub fn on_node(&self, path: &Path) -> PathBuf {
        seen_in(&self.root, path)
    }

    /// The client key the server accepts.
    pub fn client_key(&self) -> PathBuf {
        self.dir().join("client_key")
    }

    /// A key the server does not accept.
    pub fn stranger_key(&self) -> PathBuf {
        self.dir().join("stranger_key")
    }

    /// The `known_hosts` file the inventories point at.
    pub fn known_hosts(&self) -> PathBuf {
        self.dir().join("known_hosts")
    }

    /// The server's public host key (`ssh-ed25519 AAAA…`).
    pub fn host_public_key(&self) -> String {
        let text = std::fs::read_to_string(self.dir().join("host_key.pub")).expect("host key");
        text.split_whitespace()
            .take(2)
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Records `key` as the server's in the known_hosts file.
    pub fn write_known_hosts(&self, key: &str) {
        std::fs::write(
            self.known_hosts(),
            format!("[127.0.0.1]:{} {key}\n", self.port),
        )
        .expect("known_hosts");
    }

    /// Records the server's key for `port` too (a proxy in front of it), beside its own.
    pub fn known_also_at(&self, port: u16) {
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(self.known_hosts())
            .expect("known_hosts");
        writeln!(file, "[127.0.0.1]:{port} {}", self.host_public_key()).expect("known_hosts");
    }

    /// An INI inventory line for `alias` pointing at this server, with its node cache in
    /// `cache` and `extra` variables. A node cache of this machine's own sshd, for its
    /// own user, keeps its compiled code with the other tests' (see
    /// [`sharing_compiled_code`]).
    pub fn host_line(&self, alias: &str, cache: &Path, extra: &str) -> String {
        if self.own_login(extra) {
            sharing_compiled_code(cache);
        }
        self.host_line_cold(alias, cache, extra)
    }

    /// [`host_line`](Self::host_line) for a node that also holds the shim the tests
    /// deploy ([`deployable_shim`]), as after an earlier run: for the tests of what a run
    /// does once its sessions are up (faults, interrupts), whose nodes need not each be
    /// sent, and unpack, tens of megabytes first. The tests of deployment use the others.
    pub fn host_line_warm(&self, alias: &str, cache: &Path, extra: &str) -> String {
        let line = self.host_line(alias, cache, extra);
        if self.own_login(extra) {
            holding_the_shim(cache);
        }
        line
    }

    /// Whether a host of this server with `extra` variables logs in as this machine's
    /// own user (not in a chroot, no `ansible_user`), who can write the shared caches.
    fn own_login(&self, extra: &str) -> bool {
        self.root == Path::new("/") && !extra.contains("ansible_user=")
    }

    /// [`host_line`](Self::host_line) for a node that has compiled nothing yet: every
    /// module it runs is uploaded to it (for the tests of what is sent to a node).
    pub fn host_line_cold(&self, alias: &str, cache: &Path, extra: &str) -> String {
        self.host_line_with(alias, cache, &self.known_hosts(), &self.client_key(), extra)
    }

    /// [`host_line`](Self::host_line) with another known_hosts file and client key.
    pub fn host_line_with(
        &self,
        alias: &str,
        cache: &Path,
        known_hosts: &Path,
        key: &Path,
        extra: &str,
    ) -> String {
        format!(
            "{alias} ansible_host=127.0.0.1 ansible_port={port} ansible_ssh_private_key_file={key} \
             ansible_ssh_common_args='-o UserKnownHostsFile={kh}' sandball_cache_dir={cache} {extra}\n",
            port = self.port,
            key = key.display(),
            kh = known_hosts.display(),
            cache = cache.display(),
        )
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Makes `cache`, when it is not there yet and its parent is, a node cache whose
/// `compiled` directory is the local tests' ([`shared_shim_cache`](crate::binaries::shared_shim_cache)), as a
/// node keeps compiled code from one run to the next: the deployed shim is the built
/// one stripped (the same engine), so a module is compiled once per test run rather
/// than once per test and host alias (an unoptimised wasmtime takes seconds a module;
/// the shim's compile lock keeps two sessions from compiling one module at once).
/// Only for the sshd's own user: a login as another could not write there.
fn sharing_compiled_code(cache: &Path) {
    if cache.exists() || !cache.parent().is_some_and(Path::is_dir) {
        return;
    }
    let shared = crate::binaries::shared_shim_cache().join("compiled");
    std::fs::create_dir_all(&shared).expect("the shared shim cache");
    std::fs::create_dir(cache).expect("the node cache");
    std::os::unix::fs::symlink(&shared, cache.join("compiled")).expect("the shared compiled code");
}

/// Puts [`deployable_shim`] into the node cache `cache` where a deployment leaves it (a
/// hard link; a copy where that cannot be).
fn holding_the_shim(cache: &Path) {
    static SHA: OnceLock<String> = OnceLock::new();
    let shim = deployable_shim();
    let sha = SHA.get_or_init(|| crate::binaries::sha256(&shim));
    let dir = cache.join("shim").join(sha);
    std::fs::create_dir_all(&dir).expect("the node's shim directory");
    let dest = dir.join("sandball-shim");
    if !dest.exists() && std::fs::hard_link(&shim, &dest).is_err() {
        std::fs::copy(&shim, &dest).expect("the node's shim");
    }
}

/// The shim the SSH tests deploy: the built one without its symbols and debug
/// information (a debug build carries hundreds of megabytes of them, and every test's
/// node receives it over SSH), made again only when the build is newer
/// (tests run in processes of their own: the first to need it makes it for the others).
pub fn deployable_shim() -> PathBuf {
    static SHIM: OnceLock<PathBuf> = OnceLock::new();
    SHIM.get_or_init(|| {
        let src = &Binaries::get().shim;
        let dir = target_dir().join("e2e-ssh");
        std::fs::create_dir_all(&dir).expect("target/e2e-ssh");
        let dest = dir.join("sandball-shim");
        let modified = |p: &std::path::Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
        if let (Some(made), Some(built)) = (modified(&dest), modified(src))
            && made > built
        {
            return dest;
        }
        let tmp = dir.join(format!(".sandball-shim.{}", std::process::id()));
        run(Command::new("strip")
            .arg("--strip-all")
            .arg("-o")
            .arg(&tmp)
            .arg(src));
        std::fs::rename(&tmp, &dest).expect("rename the stripped shim");
        dest
    })
    .clone()
}
