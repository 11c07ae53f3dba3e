//! The command line (hand-parsed to keep the shim small):
//!
//! - `sandball-shim serve [--cache-dir DIR]`: one session over stdin/stdout;
//! - `sandball-shim run MODULE.wasm [--args JSON|@FILE] [--grant JSON|@FILE] [--cache-dir DIR]`:
//!   runs a module once, prints its stdout and exits with its exit code;
//! - `sandball-shim job JID --async-dir DIR`: the detached process of a background job
//!   a session started (see [`crate::jobs`]);
//! - `sandball-shim guard`: the guard a serving shim starts, which ends the process
//!   groups the shim leaves when it is killed (see [`crate::groups`]);
//! - `sandball-shim version`.

use crate::cache::Cache;
use crate::error::ShimError;
use crate::runtime::Runtime;
use crate::serve::{self, ServeError};
use sandball_wire::capability::Grant;
use sandball_wire::protocol::Outcome;
use sandball_wire::{PROTOCOL, VERSION};
use serde_json::Value;
use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Usage text, printed with command-line errors.
pub const USAGE: &str = "usage:
  sandball-shim serve [--cache-dir DIR]
  sandball-shim run MODULE.wasm [--args JSON|@FILE] [--grant JSON|@FILE] [--cache-dir DIR]
  sandball-shim job JID --async-dir DIR
  sandball-shim guard
  sandball-shim version";

/// A parsed command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// Serve one session over stdin/stdout.
    Serve {
        /// Cache directory (default `~/.sandball`).
        cache_dir: Option<PathBuf>,
    },
    /// Run a module once.
    Run {
        /// The component file.
        module: PathBuf,
        /// Arguments: JSON text, or `@FILE`.
        args: Option<String>,
        /// Grant: JSON text, or `@FILE`.
        grant: Option<String>,
        /// Cache directory (default `~/.sandball`).
        cache_dir: Option<PathBuf>,
    },
    /// Run a background job a session started.
    Job {
        /// The job id.
        jid: String,
        /// The async directory holding its spec and file.
        async_dir: PathBuf,
    },
    /// Follow a serving shim's process groups on stdin; kill those left when it ends.
    Guard,
    /// Print the version.
    Version,
}

/// A command line that cannot be run.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// No command or an unknown one.
    #[error("unknown command {0:?}")]
    UnknownCommand(String),
    /// No command at all.
    #[error("no command given")]
    NoCommand,
    /// An option without its value.
    #[error("{0} needs a value")]
    MissingValue(String),
    /// An argument the command does not take.
    #[error("unexpected argument {0:?}")]
    Unexpected(String),
    /// An argument that is not UTF-8.
    #[error("argument {0:?} is not valid UTF-8")]
    NotUtf8(OsString),
    /// `run` without a module.
    #[error("run needs a module file")]
    NoModule,
    /// `job` without its id or directory.
    #[error("job needs a job id and --async-dir")]
    NoJob,
    /// `--args` or `--grant` could not be read.
    #[error("cannot read {option} file {path}: {source}")]
    ReadOption {
        /// The option.
        option: &'static str,
        /// Its file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// `--args` or `--grant` is not the JSON expected.
    #[error("{option} is not valid: {source}")]
    BadOption {
        /// The option.
        option: &'static str,
        /// What the JSON parser said (with line and column).
        source: serde_json::Error,
    },
}

/// Parses the arguments after the program name.
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Command, CliError> {
    let mut words = Vec::new();
    for a in args {
        words.push(a.into_string().map_err(CliError::NotUtf8)?);
    }
    let mut it = words.into_iter();
    let command = it.next().ok_or(CliError::NoCommand)?;
    let mut cache_dir = None;
    let mut args = None;
    let mut grant = None;
    let mut module = None;
    while let Some(w) = it.next() {
        let mut value = |flag: &str| {
            it.next()
                .ok_or_else(|| CliError::MissingValue(flag.to_string()))
        };
        match (command.as_str(), w.as_str()) {
            ("serve" | "run", "--cache-dir") => cache_dir = Some(PathBuf::from(value(&w)?)),
            ("run", "--args") => args = Some(value(&w)?),
            ("run", "--grant") => grant = Some(value(&w)?),
            ("run" | "job", m) if module.is_none() && !m.starts_with("--") => {
                module = Some(PathBuf::from(m))
            }
            ("job", "--async-dir") => cache_dir = Some(PathBuf::from(value(&w)?)),
            _ => return Err(CliError::Unexpected(w)),
        }
    }
    match command.as_str() {
        "serve" => Ok(Command::Serve { cache_dir }),
        "run" => Ok(Command::Run {
            module: module.ok_or(CliError::NoModule)?,
            args,
            grant,
            cache_dir,
        }),
        "job" => match (module, cache_dir) {
            (Some(jid), Some(async_dir)) => Ok(Command::Job {
                jid: jid.display().to_string(),
                async_dir,
            }),
            _ => Err(CliError::NoJob),
        },
        "guard" => Ok(Command::Guard),
        "version" | "--version" => Ok(Command::Version),
        other => Err(CliError::UnknownCommand(other.to_string())),
    }
}

/// Reads an option given as JSON text or `@FILE`.
fn json_option<T: serde::de::DeserializeOwned>(
    option: &'static str,
    spec: &str,
) -> Result<T, CliError> {
    let text = match spec.strip_prefix('@') {
        Some(path) => std::fs::read_to_string(path).map_err(|source| CliError::ReadOption {
            option,
            path: path.to_string(),
            source,
        })?,
        None => spec.to_string(),
    };
    serde_json::from_str(&text).map_err(|source| CliError::BadOption { option, source })
}

fn runtime(cache_dir: Option<PathBuf>) -> Result<Runtime, ShimError> {
    let root = Cache::usable_root(cache_dir.unwrap_or_else(Cache::default_root));
    Runtime::new(Cache::open(&root)?)
}

/// Runs the command line; the process exits with the returned code.
pub fn main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    match parse(args) {
        Err(e) => {
            eprintln!("sandball-shim: {e}\n{USAGE}");
            ExitCode::from(2)
        }
        Ok(Command::Version) => {
            println!("sandball-shim {VERSION} (protocol {PROTOCOL})");
            ExitCode::SUCCESS
        }
        Ok(Command::Serve { cache_dir }) => serve_stdio(cache_dir),
        Ok(Command::Guard) => {
            crate::groups::guard(std::io::stdin().lock());
            ExitCode::SUCCESS
        }
        Ok(Command::Run {
            module,
            args,
            grant,
            cache_dir,
        }) => run_once(module, args, grant, cache_dir),
        Ok(Command::Job { jid, async_dir }) => match crate::jobs::run(&jid, &async_dir) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("sandball-shim: job {jid}: {e}");
                ExitCode::FAILURE
            }
        },
    }
}

/// Serves one session. Frames go to the real stdout (a copy of it that programs the
/// shim starts do not inherit), which is then pointed at stderr so that nothing else
/// can ever write between frames.
fn serve_stdio(cache_dir: Option<PathBuf>) -> ExitCode {
    let mut runtime = match runtime(cache_dir) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("sandball-shim: {e}");
            return ExitCode::from(2);
        }
    };
    // Close-on-exec: a program the shim starts must not hold the session's channel
    // open (it would outlive a killed shim and keep the controller waiting).
    let frames = match rustix::io::fcntl_dupfd_cloexec(std::io::stdout(), 0)
        .and_then(|fd| rustix::stdio::dup2_stdout(std::io::stderr()).map(|()| fd))
    {
        Ok(fd) => std::fs::File::from(fd),
        Err(e) => {
            eprintln!("sandball-shim: cannot set up stdout for frames: {e}");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = runtime.cache().sweep_staged() {
        eprintln!("sandball-shim: warning: files staged by earlier sessions not removed: {e}");
    }
    match frames.try_clone() {
        Ok(handle) => runtime.set_watchdog(crate::watchdog::Watchdog::start(
            handle,
            runtime.cache().clone(),
        )),
        Err(e) => eprintln!("sandball-shim: warning: no watchdog for stuck modules: {e}"),
    }
    let mut output = std::io::BufWriter::new(frames);
    match serve::serve(&mut runtime, &mut std::io::stdin().lock(), &mut output) {
        Ok(_) => ExitCode::SUCCESS,
        Err(e @ ServeError::VersionMismatch(_)) => {
            eprintln!("sandball-shim: {e}");
            ExitCode::from(3)
        }
        Err(e) => {
            eprintln!("sandball-shim: {e}");
            ExitCode::FAILURE
        }
    }
}

/// How a run ended, for a person.
fn describe(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Exited { code } => format!("exited with code {code}"),
        Outcome::Trapped { message } => format!("trapped: {message}"),
        Outcome::TimedOut { limit_ms } => format!("timed out (wall-time limit {limit_ms} ms)"),
        Outcome::OutOfMemory { limit_bytes } => {
            format!("ran out of memory (limit {limit_bytes} bytes)")
        }
        Outcome::OutputLimit { limit_bytes } => {
            format!("wrote more than the output limit of {limit_bytes} bytes")
        }
    }
}

fn run_once(
    module: PathBuf,
    args: Option<String>,
    grant: Option<String>,
    cache_dir: Option<PathBuf>,
) -> ExitCode {
    let fail = |message: String| {
        eprintln!("sandball-shim: {message}");
        ExitCode::from(2)
    };
    let args: Value = match args.map(|a| json_option("--args", &a)).transpose() {
        Ok(a) => a.unwrap_or_else(|| Value::Object(Default::default())),
        Err(e) => return fail(e.to_string()),
    };
    let grant: Grant = match grant.map(|g| json_option("--grant", &g)).transpose() {
        Ok(g) => g.unwrap_or_default(),
        Err(e) => return fail(e.to_string()),
    };
    let bytes = match std::fs::read(&module) {
        Ok(b) => b,
        Err(e) => return fail(format!("cannot read {}: {e}", module.display())),
    };
    let name = module
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "module".to_string());
    let out = match runtime(cache_dir).and_then(|mut rt| {
        let sha = rt.load(&name, &bytes)?;
        rt.run(0, &sha, &name, &args, &grant)
    }) {
        Ok(out) => out,
        Err(e) => return fail(e.to_string()),
    };
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_all(&out.stdout).and_then(|()| stdout.flush()) {
        return fail(format!("cannot write the module's output: {e}"));
    }
    eprint!("{}", out.result.stderr);
    for d in &out.result.denials {
        eprintln!(
            "sandball-shim: {name}: denied {}: {}",
            d.capability, d.reason
        );
    }
    if out.result.denials_omitted > 0 {
        eprintln!(
            "sandball-shim: {name}: {} more denials not shown",
            out.result.denials_omitted
        );
    }
    match out.result.outcome {
        Outcome::Exited { code } => {
            if code != 0 {
                eprintln!("sandball-shim: {name}: {}", describe(&out.result.outcome));
            }
            ExitCode::from(u8::try_from(code).unwrap_or(1))
        }
        ref other => {
            eprintln!("sandball-shim: {name}: {}", describe(other));
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_words(words: &[&str]) -> Result<Command, CliError> {
        parse(words.iter().map(OsString::from))
    }

    #[test]
    fn commands_and_options_parse() {
        assert_eq!(
            parse_words(&["serve"]).unwrap(),
            Command::Serve { cache_dir: None }
        );
        assert_eq!(
            parse_words(&["serve", "--cache-dir", "/c"]).unwrap(),
            Command::Serve {
                cache_dir: Some("/c".into())
            }
        );
        assert_eq!(
            parse_words(&["run", "m.wasm", "--args", "{}", "--grant", "@g.json"]).unwrap(),
            Command::Run {
                module: "m.wasm".into(),
                args: Some("{}".into()),
                grant: Some("@g.json".into()),
                cache_dir: None
            }
        );
        assert_eq!(parse_words(&["version"]).unwrap(), Command::Version);
        assert_eq!(parse_words(&["guard"]).unwrap(), Command::Guard);
    }

    #[test]
    fn bad_command_lines_are_refused() {
        assert!(matches!(parse_words(&[]), Err(CliError::NoCommand)));
        assert!(matches!(
            parse_words(&["fly"]),
            Err(CliError::UnknownCommand(_))
        ));
        assert!(matches!(parse_words(&["run"]), Err(CliError::NoModule)));
        assert!(matches!(
            parse_words(&["run", "a", "b"]),
            Err(CliError::Unexpected(_))
        ));
        assert!(matches!(
            parse_words(&["serve", "--args", "{}"]),
            Err(CliError::Unexpected(_))
        ));
        assert!(matches!(
            parse_words(&["serve", "--cache-dir"]),
            Err(CliError::MissingValue(_))
        ));
    }

    #[test]
    fn json_options_come_inline_or_from_files() {
        let v: Value = json_option("--args", r#"{"a": 1}"#).unwrap();
        assert_eq!(v["a"], 1);
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("g.json");
        std::fs::write(&file, r#"{"exec": ["ls"]}"#).unwrap();
        let g: Grant = json_option("--grant", &format!("@{}", file.display())).unwrap();
        assert_eq!(g.exec[0].program, "ls");
        assert_eq!(g.exec[0].args, None);
        let e = json_option::<Grant>("--grant", "{").unwrap_err();
        assert!(e.to_string().starts_with("--grant is not valid"), "{e}");
    }
}
