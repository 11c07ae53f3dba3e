//! Python fork servers: legacy Ansiballz modules run without a Python start-up each.
//!
//! For [`sandball_wire::protocol::Request::RunPython`] the session keeps one Python
//! process per interpreter and environment (`fork_server.py`), started outside the
//! sandbox with the shim's original environment plus the task's, as a pipelined run's
//! interpreter would be. It imports `ansible.module_utils.basic` once, from the first
//! payload a run unpacked, and forks a fresh child per run: each run is a process of
//! its own with the script's `__main__`, empty stdin, its own stdout, stderr and exit
//! status, as `python < script` gives it. A server that cannot start, or dies before
//! it has the script, fails only that request (the controller then runs the module the
//! classic way); one that dies while the module runs fails the run, which is never
//! repeated. The servers end with the session.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// The server's Python code.
const SERVER: &str = include_str!("fork_server.py");

/// How many servers a session keeps (distinct interpreters and environments); the one
/// used longest ago makes way for a new one.
const MAX_SERVERS: usize = 4;

/// Errors of a fork server: the run did not happen (or its answer was lost).
#[derive(Debug, thiserror::Error)]
pub enum ForkError {
    /// The interpreter could not be started.
    #[error("cannot start the Python fork server {interpreter}: {source}")]
    Spawn {
        /// The interpreter.
        interpreter: String,
        /// Why.
        source: std::io::Error,
    },
    /// The server's pipes broke (it died) before it had the whole script: the module
    /// did not run.
    #[error("the Python fork server {interpreter} failed: {detail}")]
    Broken {
        /// The interpreter.
        interpreter: String,
        /// What happened.
        detail: String,
    },
    /// The server had the script but its answer was lost (it died, or answered
    /// nonsense): the module may have run, so it must not be run again.
    #[error("the Python fork server {interpreter} failed while the module ran: {detail}")]
    Lost {
        /// The interpreter.
        interpreter: String,
        /// What happened.
        detail: String,
    },
}

/// What one run gave back.
#[derive(Debug)]
pub struct Ran {
    /// Exit status; minus the signal number when a signal ended it.
    pub rc: i32,
    /// Its stdout.
    pub stdout: Vec<u8>,
    /// Its stderr.
    pub stderr: Vec<u8>,
}

struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: ChildStdout,
    last_used: u64,
    /// The server's process group (it and the module processes it forks), which the
    /// session ends if the controller goes away.
    _group: crate::groups::Recorded,
}

impl Drop for Server {
    fn drop(&mut self) {
        // Between runs the server holds nothing worth a goodbye.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The fork servers of one session.
#[derive(Default)]
pub struct ForkServers {
    servers: BTreeMap<(String, BTreeMap<String, String>), Server>,
    clock: u64,
}

impl ForkServers {
    /// Runs `script` under `interpreter` with `env` added to the shim's original
    /// environment; `modlib` is the payload directory the run unpacks (`~` allowed),
    /// where the server may preload from.
    pub fn run(
        &mut self,
        interpreter: &str,
        env: &BTreeMap<String, String>,
        modlib: Option<&str>,
        script: &[u8],
    ) -> Result<Ran, ForkError> {
        self.clock += 1;
        let key = (interpreter.to_string(), env.clone());
        if !self.servers.contains_key(&key) {
            if self.servers.len() >= MAX_SERVERS
                && let Some(oldest) = self
                    .servers
                    .iter()
                    .min_by_key(|(_, s)| s.last_used)
                    .map(|(k, _)| k.clone())
            {
                self.servers.remove(&oldest);
            }
            let server = start(interpreter, env)?;
            self.servers.insert(key.clone(), server);
        }
        let Some(server) = self.servers.get_mut(&key) else {
            return Err(ForkError::Broken {
                interpreter: interpreter.to_string(),
                detail: "the server is gone".into(),
            });
        };
        server.last_used = self.clock;
        let ran = exchange(server, modlib, script).map_err(|e| match e {
            Exchange::Sending(detail) => ForkError::Broken {
                interpreter: interpreter.to_string(),
                detail,
            },
            Exchange::Answer(detail) => ForkError::Lost {
                interpreter: interpreter.to_string(),
                detail,
            },
        });
        if ran.is_err() {
            self.servers.remove(&key);
        }
        ran
    }
}

/// Where an exchange with the server failed.
enum Exchange {
    /// Sending the request: the script did not reach the server whole.
    Sending(String),
    /// Reading the answer: the module may have run.
    Answer(String),
}

fn start(interpreter: &str, env: &BTreeMap<String, String>) -> Result<Server, ForkError> {
    let spawn = |source| ForkError::Spawn {
        interpreter: interpreter.to_string(),
        source,
    };
    let mut child = Command::new(interpreter)
        .arg("-c")
        .arg(SERVER)
        .env_clear()
        .envs(crate::environment::all_original())
        .envs(env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        // Not the shim's own stderr, which is the session's channel: a server (or a
        // module it forked) outliving a killed shim would hold the channel open, and
        // the controller would not learn that the shim ended until they did. What
        // they write there is passed on while the shim lives.
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(spawn)?;
    let group = crate::groups::Recorded::new(child.id());
    if let Some(mut stderr) = child.stderr.take() {
        std::thread::spawn(move || {
            let _ = std::io::copy(&mut stderr, &mut std::io::stderr());
        });
    }
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(spawn(std::io::Error::other("no pipes to the server")));
    };
    Ok(Server {
        child,
        stdin,
        stdout,
        last_used: 0,
        _group: group,
    })
}

/// Limit on a header of the server's (it is a short JSON object).
const MAX_HEADER: u32 = 4096;

fn exchange(server: &mut Server, modlib: Option<&str>, script: &[u8]) -> Result<Ran, Exchange> {
    let sending = |e: std::io::Error| Exchange::Sending(e.to_string());
    let head = serde_json::json!({ "script": script.len(), "modlib": modlib }).to_string();
    let mut request = Vec::with_capacity(4 + head.len() + script.len());
    request.extend_from_slice(&(head.len() as u32).to_be_bytes());
    request.extend_from_slice(head.as_bytes());
    request.extend_from_slice(script);
    server.stdin.write_all(&request).map_err(sending)?;
    server.stdin.flush().map_err(sending)?;
    let io = |e: std::io::Error| Exchange::Answer(e.to_string());
    let mut len4 = [0u8; 4];
    server.stdout.read_exact(&mut len4).map_err(io)?;
    let len = u32::from_be_bytes(len4);
    if len > MAX_HEADER {
        return Err(Exchange::Answer(format!(
            "its answer's header announces {len} bytes"
        )));
    }
    let mut head = vec![0u8; len as usize];
    server.stdout.read_exact(&mut head).map_err(io)?;
    #[derive(serde::Deserialize)]
    struct Head {
        rc: i32,
        stdout: u64,
        stderr: u64,
    }
    let head: Head = serde_json::from_slice(&head).map_err(|e| Exchange::Answer(e.to_string()))?;
    let mut take = |n: u64| -> Result<Vec<u8>, Exchange> {
        let mut buf = Vec::new();
        (&mut server.stdout)
            .take(n)
            .read_to_end(&mut buf)
            .map_err(io)?;
        if (buf.len() as u64) < n {
            return Err(Exchange::Answer("its answer ended early".into()));
        }
        Ok(buf)
    };
    let stdout = take(head.stdout)?;
    let stderr = take(head.stderr)?;
    Ok(Ran {
        rc: head.rc,
        stdout,
        stderr,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn python() -> Option<&'static str> {
        ["/usr/bin/python3", "/usr/local/bin/python3"]
            .into_iter()
            .find(|p| std::path::Path::new(p).exists())
    }

    #[test]
    fn each_run_is_a_process_of_its_own_with_its_output_and_status() {
        let Some(py) = python() else {
            panic!("the tests need a python3 on the machine");
        };
        let mut servers = ForkServers::default();
        let env = BTreeMap::from([("SANDBALL_T".to_string(), "one".to_string())]);
        let script = b"import os, sys\nprint(os.environ['SANDBALL_T'], os.getpid(), sys.argv, __name__)\nsys.stderr.write('err\\n')\nx = sys.stdin.read()\nsys.exit(3 if x == '' else 4)\n";
        let a = servers.run(py, &env, None, script).unwrap();
        let b = servers.run(py, &env, None, script).unwrap();
        assert_eq!(a.rc, 3, "{:?}", String::from_utf8_lossy(&a.stderr));
        assert_eq!(a.stderr, b"err\n");
        let words = |r: &Ran| {
            String::from_utf8_lossy(&r.stdout)
                .split_whitespace()
                .map(str::to_string)
                .collect::<Vec<_>>()
        };
        let (wa, wb) = (words(&a), words(&b));
        assert_eq!(wa[0], "one");
        assert_eq!(wa[2..], ["['']", "__main__"]);
        assert_ne!(wa[1], wb[1], "each run forks a new process");

        // State does not leak from one run into the next; exceptions and signals end a
        // run as they end a Python process.
        let set = servers
            .run(py, &env, None, b"import json\njson.LEAK = 1\n")
            .unwrap();
        assert_eq!(set.rc, 0);
        let look = servers
            .run(
                py,
                &env,
                None,
                b"import json\nprint(hasattr(json, 'LEAK'))\nraise ValueError('boom')\n",
            )
            .unwrap();
        assert_eq!(look.stdout, b"False\n");
        assert_eq!(look.rc, 1);
        assert!(
            String::from_utf8_lossy(&look.stderr).contains("ValueError: boom"),
            "{:?}",
            look.stderr
        );
        let killed = servers
            .run(
                py,
                &env,
                None,
                b"import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n",
            )
            .unwrap();
        assert_eq!(killed.rc, -9);

        // atexit handlers run, and another environment is another server.
        let other = BTreeMap::from([("SANDBALL_T".to_string(), "two".to_string())]);
        let r = servers
            .run(
                py,
                &other,
                None,
                b"import atexit, os\natexit.register(lambda: print('bye'))\nprint(os.environ['SANDBALL_T'])\n",
            )
            .unwrap();
        assert_eq!(r.stdout, b"two\nbye\n");
        assert_eq!(servers.servers.len(), 2);

        // A server that dies while the module runs loses the run (it must not run
        // again); the next run gets a new server.
        let lost = servers.run(
            py,
            &env,
            None,
            b"import os, signal, time\nos.kill(os.getppid(), signal.SIGKILL)\ntime.sleep(0.2)\n",
        );
        assert!(matches!(lost, Err(ForkError::Lost { .. })), "{lost:?}");
        assert_eq!(
            servers.run(py, &env, None, b"print(1)\n").unwrap().stdout,
            b"1\n"
        );

        let missing = servers.run("/nonexistent/python", &env, None, b"pass\n");
        assert!(
            matches!(missing, Err(ForkError::Spawn { .. })),
            "{missing:?}"
        );
    }

    /// A payload directory as the Ansiballz wrapper leaves it (private, under a private
    /// cache) whose `basic` says `version` and which holds `extra` modules.
    fn payload(cache: &std::path::Path, name: &str, version: u32, extra: &[&str]) -> String {
        use std::os::unix::fs::PermissionsExt;
        let dir = cache.join(name);
        let utils = dir.join("ansible/module_utils");
        std::fs::create_dir_all(&utils).unwrap();
        std::fs::write(dir.join("ansible/__init__.py"), "").unwrap();
        std::fs::write(utils.join("__init__.py"), "").unwrap();
        std::fs::write(utils.join("basic.py"), format!("VERSION = {version}\n")).unwrap();
        for e in extra {
            std::fs::write(utils.join(format!("{e}.py")), format!("NAME = '{e}'\n")).unwrap();
        }
        for d in [cache, dir.as_path()] {
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700)).unwrap();
        }
        dir.display().to_string()
    }

    #[test]
    fn basic_is_imported_once_and_serves_payloads_of_the_same_version_only() {
        let Some(py) = python() else {
            panic!("the tests need a python3 on the machine");
        };
        let tmp = tempfile::tempdir().unwrap();
        let cache = tmp.path().join("cache");
        let first = payload(&cache, "a", 1, &[]);
        let same = payload(&cache, "b", 1, &["extra"]);
        let newer = payload(&cache, "c", 2, &[]);
        let script = |dir: &str, import: &str| {
            format!(
                "import sys\nprint('ansible.module_utils.basic' in sys.modules)\nsys.path.insert(0, {dir:?})\nfrom ansible.module_utils import basic{import}\nprint(basic.VERSION)\n"
            )
            .into_bytes()
        };
        let mut servers = ForkServers::default();
        let env = BTreeMap::new();
        let mut run = |dir: &str, import: &str| {
            let r = servers
                .run(py, &env, Some(dir), &script(dir, import))
                .unwrap();
            assert_eq!(r.rc, 0, "{}", String::from_utf8_lossy(&r.stderr));
            String::from_utf8(r.stdout).unwrap()
        };
        assert_eq!(
            run(&first, ""),
            "False\n1\n",
            "nothing is preloaded before a run"
        );
        assert_eq!(
            run(&first, ""),
            "True\n1\n",
            "preloaded after the first run"
        );
        assert_eq!(
            run(
                &same,
                "\nfrom ansible.module_utils import extra\nprint(extra.NAME)"
            ),
            "True\nextra\n1\n",
            "another payload of the same version finds its own modules"
        );
        assert_eq!(
            run(&newer, ""),
            "False\n2\n",
            "a payload of another version imports its own"
        );
    }
}
