//! Running a program as Ansible's `AnsibleModule.run_command` does, for modules that
//! drive a node's tool (`git`, `apt-get`, `systemctl`): text output, an optional
//! parsable locale, and `check_rc` failures carrying `cmd`, `rc`, `stdout` and `stderr`.

use crate::fail::Fail;
use crate::host;
use sandball_pycompat::shell;

/// The locale variables Ansible's modules set (`C`) before they read a tool's output.
pub const C_LOCALE: &[(&str, &str)] = &[
    ("LANG", "C"),
    ("LC_ALL", "C"),
    ("LC_MESSAGES", "C"),
    ("LC_CTYPE", "C"),
    ("LANGUAGE", "C"),
];

/// What a program printed and how it ended.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ran {
    /// The exit code.
    pub rc: i32,
    /// Standard output, as text.
    pub stdout: String,
    /// Standard error, as text.
    pub stderr: String,
}

/// Runs `argv` in `cwd` (left as it is when `None`) with `env` added. A program that
/// cannot start fails as `run_command` does: `rc` the OS error, empty output, `cmd`
/// the quoted command line, the host's message; a denial by the grant says so.
pub fn run_command(argv: &[String], cwd: Option<&str>, env: &[(&str, &str)]) -> Result<Ran, Fail> {
    let outcome = host::run(host::Command {
        argv: argv.to_vec(),
        cwd: cwd.map(str::to_string),
        stdin: None,
        env: env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    });
    match outcome {
        Ok(out) => Ok(Ran {
            rc: out.rc,
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }),
        Err(e) => {
            let program = argv.first().map(String::as_str).unwrap_or_default();
            let msg = if e.denied {
                format!("running '{program}' was denied by the grant: {}", e.message)
            } else {
                e.message
            };
            Err(Fail::new(msg)
                .with("rc", if e.errno != 0 { e.errno } else { 126 })
                .with("stdout", "")
                .with("stderr", "")
                .with("cmd", shell::join(argv)))
        }
    }
}

/// [`run_command`] with `check_rc`: a non-zero exit fails with the standard error
/// (trailing whitespace removed) as the message.
pub fn run_checked(argv: &[String], cwd: Option<&str>, env: &[(&str, &str)]) -> Result<Ran, Fail> {
    let ran = run_command(argv, cwd, env)?;
    if ran.rc != 0 {
        return Err(Fail::new(ran.stderr.trim_end())
            .with("cmd", shell::join(argv))
            .with("rc", ran.rc)
            .with("stdout", ran.stdout)
            .with("stderr", ran.stderr));
    }
    Ok(ran)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split(' ').map(str::to_string).collect()
    }

    #[test]
    fn output_and_failures_read_as_run_command_reports_them() {
        let argv = ["sh".to_string(), "-c".into(), "echo $LC_ALL".into()];
        let ran = run_command(&argv, None, C_LOCALE);
        assert_eq!(ran.unwrap().stdout, "C\n");
        let fail = run_checked(
            &[
                "sh".into(),
                "-c".into(),
                "echo out; echo err >&2; exit 3".into(),
            ],
            None,
            &[],
        )
        .unwrap_err();
        assert_eq!(fail.msg(), "err");
        assert_eq!(fail.fields()["rc"], 3);
        assert_eq!(fail.fields()["stdout"], "out\n");
        assert_eq!(
            fail.fields()["cmd"],
            "sh -c 'echo out; echo err >&2; exit 3'"
        );
        let fail = run_command(&words("/no/such/program-x"), None, &[]).unwrap_err();
        assert_eq!(fail.fields()["rc"], 2);
        assert!(fail.msg().contains("/no/such/program-x"), "{}", fail.msg());
    }
}
