//! Become plugins: running commands and the shim session as another user on the node,
//! with `sudo` or `su`.
//!
//! The settings come, later winning, from the command line (`-b`, `--become-user`,
//! `--become-method`, `-K`), the play, the enclosing blocks, the task, and the
//! `ansible_become*` variables. sudo's password only ever travels on the command's
//! stdin, su's on the terminal su runs on ([`terminal`]); never in a command line, a
//! log or a result. Before sudo's password is sent, a non-interactive attempt finds out
//! whether one is needed at all.

pub mod terminal;

use crate::plugins::connection::{Connection, ConnectionError, ExecOutput, Secret};
use crate::template::{Templar, Vars};
use sandball_pycompat::shell::quote;
use serde_json::Value;
use terminal::Terminal;

/// The become keywords of one level (play, block or task).
#[derive(Clone, Copy, Debug, Default)]
pub struct Keywords<'a> {
    /// `become`.
    pub become_: Option<&'a Value>,
    /// `become_user`.
    pub user: Option<&'a Value>,
    /// `become_method`.
    pub method: Option<&'a Value>,
    /// `become_flags`.
    pub flags: Option<&'a Value>,
    /// `become_exe`.
    pub exe: Option<&'a Value>,
}

/// Become settings from the command line.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// `-b/--become`.
    pub become_: bool,
    /// `--become-user`.
    pub user: Option<String>,
    /// `--become-method`.
    pub method: Option<String>,
    /// The password typed at `-K/--ask-become-pass`.
    pub password: Option<Secret>,
}

/// A become method: one row of [`METHODS`].
#[derive(Debug)]
pub struct Method {
    /// Its name, as `become_method` writes it (or with `ansible.builtin.`); its own
    /// variables are `ansible_<name>_user`, `_pass`, `_flags`, `_exe`.
    pub name: &'static str,
    /// The command line that runs a command as the become user; `prompt` says whether
    /// it may ask for the password on stdin (else it must fail rather than ask).
    wrap: fn(&Become, cmd: &str, prompt: bool) -> String,
    /// Whether it asks for the password on a terminal (su) rather than on stdin.
    on_terminal: bool,
}

impl PartialEq for Method {
    fn eq(&self, other: &Method) -> bool {
        self.name == other.name
    }
}

impl Eq for Method {}

/// The become methods sandball has.
pub const METHODS: &[Method] = &[
    Method {
        name: "sudo",
        wrap: sudo,
        on_terminal: false,
    },
    Method {
        name: "su",
        wrap: su,
        on_terminal: true,
    },
];

/// sudo: the password (when it takes one) on stdin after an empty prompt.
fn sudo(b: &Become, cmd: &str, prompt: bool) -> String {
    let exe = b.exe.as_deref().unwrap_or("sudo");
    let flags = b.flags.as_deref().unwrap_or("-H -S -n");
    let flags = if prompt {
        // Ansible's way: drop -n, keep -S, and an empty prompt.
        let kept: Vec<&str> = flags.split_whitespace().filter(|f| *f != "-n").collect();
        format!("{} -p ''", kept.join(" "))
    } else {
        flags.to_string()
    };
    format!("{exe} {flags} -u {} /bin/sh -c {}", b.user, quote(cmd))
}

/// su: the password on the terminal it runs on (see [`terminal`]).
fn su(b: &Become, cmd: &str, _prompt: bool) -> String {
    let exe = b.exe.as_deref().unwrap_or("su");
    let flags = b.flags.as_deref().unwrap_or("");
    format!("{exe} {flags} {} -c {}", b.user, quote(cmd)).replace("  ", " ")
}

/// Become settings of one task on one host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Become {
    /// `become_method`.
    pub method: &'static Method,
    /// `become_user`.
    pub user: String,
    /// `become_flags` (method default when `None`).
    pub flags: Option<String>,
    /// `become_exe` (the method's name when `None`).
    pub exe: Option<String>,
    /// `ansible_become_password`.
    pub password: Option<Secret>,
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

impl Become {
    /// The task's become settings, `None` when it does not become anyone.
    pub fn resolve<'a>(
        templar: &Templar,
        vars: &Vars,
        layers: &[Keywords<'a>],
        cli: &Options,
    ) -> Result<Option<Become>, String> {
        let template = |v: &Value| templar.template(v, vars).map_err(|e| e.to_string());
        let variable = |name: &str| -> Result<Option<Value>, String> {
            if !vars.contains(name) {
                return Ok(None);
            }
            template(&Value::String(format!("{{{{ {name} }}}}"))).map(Some)
        };
        // As ansible-core reads a plugin's variables: the last of them that is set (and
        // not null) wins, the method's own last; then the keywords.
        let last_set = |var_names: &[&str]| -> Result<Option<Value>, String> {
            let mut found = None;
            for name in var_names {
                match variable(name)? {
                    None | Some(Value::Null) => {}
                    Some(v) => found = Some(v),
                }
            }
            Ok(found)
        };
        let pick = |field: fn(&Keywords<'a>) -> Option<&'a Value>,
                    var_names: &[&str]|
         -> Result<Option<Value>, String> {
            if let Some(v) = last_set(var_names)? {
                return Ok(Some(v));
            }
            match layers.iter().rev().find_map(field) {
                Some(v) => template(v).map(Some),
                None => Ok(None),
            }
        };
        let on = match pick(|k| k.become_, &["ansible_become"])? {
            Some(v) => sandball_pycompat::boolean::truthy(Some(&v), false)?,
            None => cli.become_,
        };
        if !on {
            return Ok(None);
        }
        let name = pick(|k| k.method, &["ansible_become_method"])?
            .map(|v| text(&v))
            .or_else(|| cli.method.clone())
            .unwrap_or_else(|| "sudo".into());
        let short = name.strip_prefix("ansible.builtin.").unwrap_or(&name);
        let Some(method) = METHODS.iter().find(|m| m.name == short) else {
            let supported: Vec<&str> = METHODS.iter().map(|m| m.name).collect();
            return Err(format!(
                "the '{name}' become method is not supported (supported: {})",
                supported.join(", ")
            ));
        };
        // The method's own variable for a setting (`ansible_sudo_user`, `ansible_su_pass`).
        let own = |setting: &str| format!("ansible_{}_{setting}", method.name);
        let user = pick(|k| k.user, &["ansible_become_user", &own("user")])?
            .map(|v| text(&v))
            .or_else(|| cli.user.clone())
            .unwrap_or_else(|| "root".into());
        if user.is_empty()
            || !user
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
        {
            return Err(format!("become_user {user:?} is not a valid user name"));
        }
        let flags = pick(|k| k.flags, &["ansible_become_flags", &own("flags")])?.map(|v| text(&v));
        let exe = pick(|k| k.exe, &["ansible_become_exe", &own("exe")])?.map(|v| text(&v));
        let password = last_set(&[
            "ansible_become_password",
            "ansible_become_pass",
            &own("pass"),
        ])?
        .map(|v| Secret(text(&v)));
        let password = password.or_else(|| cli.password.clone());
        Ok(Some(Become {
            method,
            user,
            flags,
            exe,
            password,
        }))
    }

    /// `cmd` run as the become user; `prompt` says whether the method may ask for the
    /// password on stdin (else it must fail rather than ask).
    pub fn wrap(&self, cmd: &str, prompt: bool) -> String {
        (self.method.wrap)(self, cmd, prompt)
    }

    fn describe(&self) -> String {
        format!("become ({} to {})", self.method.name, self.user)
    }

    /// Whether the node wants the password for this become: a non-interactive attempt
    /// fails. When it does, the password is checked once. A refusal is an error that
    /// says what the node answered. su given a password is not tried: it runs on a
    /// terminal, which answers its prompt if it shows one (from root it shows none), and
    /// a failed su attempt costs the node's delay after a failed login.
    pub async fn needs_password(&self, conn: &dyn Connection) -> Result<bool, ConnectionError> {
        if self.terminal(true).is_some() {
            return Ok(true);
        }
        let probe = conn.exec_command(&self.wrap("exit 0", false), None).await?;
        if probe.rc == 0 {
            return Ok(false);
        }
        let Some(password) = &self.password else {
            return Err(self.refused(
                &probe,
                "a password may be needed: set ansible_become_password or use -K",
            ));
        };
        let input = format!("{}\n", password.0).into_bytes();
        let check = conn
            .exec_command(&self.wrap("exit 0", true), Some(&input))
            .await?;
        if check.rc != 0 {
            return Err(self.refused(&check, "is the become password right?"));
        }
        Ok(true)
    }

    /// The answers of a su that runs on a terminal: su given a password, when
    /// [`Become::needs_password`] found one needed.
    fn terminal(&self, needs_password: bool) -> Option<Terminal> {
        match &self.password {
            Some(password) if self.method.on_terminal && needs_password => {
                Some(Terminal::new(password.clone()))
            }
            _ => None,
        }
    }

    /// The su line of a command run on `terminal`: `tail` runs the command once the
    /// terminal is ready (see [`terminal`]).
    fn on_terminal(&self, terminal: &Terminal, tail: &str) -> String {
        self.wrap(&terminal.script(tail), false)
    }

    /// The command line that runs `cmd` as the become user and what must be written to
    /// its stdin first, given what [`Become::needs_password`] found.
    fn line(&self, cmd: &str, needs_password: bool) -> (String, Vec<u8>) {
        match (&self.password, needs_password) {
            (Some(password), true) => (
                self.wrap(cmd, true),
                format!("{}\n", password.0).into_bytes(),
            ),
            _ => (self.wrap(cmd, false), vec![]),
        }
    }

    /// How the long-lived command `cmd` (a shim session) starts as the become user: the
    /// command line, what its stdin starts with (sudo's password), and the terminal's
    /// answers when su runs on one. Finds out with a non-interactive attempt whether a
    /// password is needed. On a terminal, the command's stderr goes nowhere: over ssh it
    /// would be mixed into its stdout.
    pub async fn session_line(
        &self,
        conn: &dyn Connection,
        cmd: &str,
    ) -> Result<(String, Vec<u8>, Option<Terminal>), ConnectionError> {
        let needs = self.needs_password(conn).await?;
        Ok(match self.terminal(needs) {
            Some(t) => {
                let tail = format!("exec /bin/sh -c {} 2>/dev/null", quote(cmd));
                (self.on_terminal(&t, &tail), vec![], Some(t))
            }
            None => {
                let (line, stdin) = self.line(cmd, needs);
                (line, stdin, None)
            }
        })
    }

    fn refused(&self, out: &ExecOutput, hint: &str) -> ConnectionError {
        ConnectionError::Remote(format!(
            "{} failed: {} (rc={}); {hint}",
            self.describe(),
            String::from_utf8_lossy(&out.stderr).trim(),
            out.rc
        ))
    }
}

/// Runs `cmd` on the node, as the become user when there is one.
pub async fn exec_command(
    conn: &dyn Connection,
    become_: Option<&Become>,
    cmd: &str,
    stdin: Option<&[u8]>,
) -> Result<ExecOutput, ConnectionError> {
    exec_command_known(conn, become_, None, cmd, stdin).await
}

/// [`exec_command`] when it may already be known whether the become needs the password
/// (`needs_password`; `None`: find out first).
pub async fn exec_command_known(
    conn: &dyn Connection,
    become_: Option<&Become>,
    needs_password: Option<bool>,
    cmd: &str,
    stdin: Option<&[u8]>,
) -> Result<ExecOutput, ConnectionError> {
    let Some(b) = become_ else {
        return conn.exec_command(cmd, stdin).await;
    };
    let needs = match needs_password {
        Some(n) => n,
        None => b.needs_password(conn).await?,
    };
    if let Some(t) = b.terminal(needs) {
        // The input is counted off the raw terminal, which has no end of file.
        let input = stdin.unwrap_or_default();
        let tail = match input.len() {
            0 => format!("exec /bin/sh -c {} </dev/null", quote(cmd)),
            n => format!("head -c {n} | /bin/sh -c {}", quote(cmd)),
        };
        return conn
            .exec_on_terminal(&b.on_terminal(&t, &tail), &t, input)
            .await;
    }
    let (line, mut input) = b.line(cmd, needs);
    input.extend_from_slice(stdin.unwrap_or_default());
    conn.exec_command(&line, Some(&input)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sudo() -> Become {
        Become {
            method: &METHODS[0],
            user: "app".into(),
            flags: None,
            exe: None,
            password: Some(Secret("s3cret".into())),
        }
    }

    #[test]
    fn commands_are_wrapped_as_ansible_does() {
        let b = sudo();
        assert_eq!(
            b.wrap("id -un", false),
            "sudo -H -S -n -u app /bin/sh -c 'id -un'"
        );
        assert_eq!(
            b.wrap("id -un", true),
            "sudo -H -S -p '' -u app /bin/sh -c 'id -un'"
        );
        let su = Become {
            method: &METHODS[1],
            ..sudo()
        };
        assert_eq!(su.wrap("id", false), "su app -c id");
        assert!(!format!("{b:?}").contains("s3cret"));
        // su given a password runs on a terminal; the password is not on its line.
        let t = su.terminal(true).unwrap();
        let line = su.on_terminal(&t, "exec /bin/sh -c id </dev/null");
        assert!(
            line.starts_with("su app -c 'stty raw -echo && echo BECOME-SUCCESS-"),
            "{line}"
        );
        assert!(
            line.ends_with(" && exec /bin/sh -c id </dev/null'"),
            "{line}"
        );
        assert!(!line.contains("s3cret") && !format!("{t:?}").contains("s3cret"));
        assert!(su.terminal(false).is_none() && b.terminal(true).is_none());
    }

    #[test]
    fn settings_come_from_keywords_vars_and_cli() {
        let templar = Templar::new();
        let mut vars = Vars::new();
        let yes = Value::Bool(true);
        let user = Value::String("{{ who }}".into());
        vars.set_trusted("who", Value::String("deploy".into()));
        let play = Keywords {
            become_: Some(&yes),
            ..Default::default()
        };
        let task = Keywords {
            user: Some(&user),
            ..Default::default()
        };
        let cli = Options::default();
        let b = Become::resolve(&templar, &vars, &[play, task], &cli)
            .unwrap()
            .unwrap();
        assert_eq!((b.user.as_str(), b.method.name), ("deploy", "sudo"));
        assert!(
            Become::resolve(&templar, &vars, &[], &cli)
                .unwrap()
                .is_none()
        );

        vars.set_trusted("ansible_become_user", Value::String("other".into()));
        vars.set_trusted("ansible_become_password", Value::String("pw".into()));
        let b = Become::resolve(&templar, &vars, &[play, task], &cli)
            .unwrap()
            .unwrap();
        assert_eq!(b.user, "other");
        assert_eq!(b.password, Some(Secret("pw".into())));
        // The last password variable set wins, the method's own last.
        vars.set_trusted("ansible_become_pass", Value::String("pass".into()));
        let b = Become::resolve(&templar, &vars, &[play, task], &cli)
            .unwrap()
            .unwrap();
        assert_eq!(b.password, Some(Secret("pass".into())));
        vars.set_trusted("ansible_su_pass", Value::String("su-pw".into()));
        let su = Value::String("su".into());
        let su_play = Keywords {
            method: Some(&su),
            ..play
        };
        let b = Become::resolve(&templar, &vars, &[su_play, task], &cli)
            .unwrap()
            .unwrap();
        assert_eq!(b.password, Some(Secret("su-pw".into())));
        let b = Become::resolve(&templar, &vars, &[play, task], &cli)
            .unwrap()
            .unwrap();
        assert_eq!(
            b.password,
            Some(Secret("pass".into())),
            "sudo reads not su's"
        );
        // So do the user, the flags and the program: the method's own variable last.
        vars.set_trusted("ansible_sudo_user", Value::String("sudoer".into()));
        vars.set_trusted("ansible_su_user", Value::String("suer".into()));
        vars.set_trusted("ansible_su_exe", Value::String("/bin/su".into()));
        vars.set_trusted("ansible_sudo_flags", Value::String("-H".into()));
        let b = Become::resolve(&templar, &vars, &[play, task], &cli)
            .unwrap()
            .unwrap();
        assert_eq!(
            (b.user.as_str(), b.flags.as_deref(), b.exe.as_deref()),
            ("sudoer", Some("-H"), None)
        );
        let b = Become::resolve(&templar, &vars, &[su_play, task], &cli)
            .unwrap()
            .unwrap();
        assert_eq!(
            (b.user.as_str(), b.flags.as_deref(), b.exe.as_deref()),
            ("suer", None, Some("/bin/su"))
        );

        let bad = Value::String("doas".into());
        let m = Keywords {
            method: Some(&bad),
            ..play
        };
        let e = Become::resolve(&templar, &vars, &[m], &cli).unwrap_err();
        assert!(e.contains("'doas' become method"), "{e}");
    }
}
