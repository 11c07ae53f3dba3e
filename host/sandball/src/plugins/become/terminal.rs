//! `su` with a password, answered on a terminal: su asks for the password on a
//! pseudo-terminal, not on a pipe. The command su runs sets that terminal raw and
//! silent (`stty raw -echo`), prints a marker line and only then starts the real
//! command, so everything before the marker is su's (its prompt, the newline after the
//! password, its refusal) and everything after it is the command's, byte for byte (a
//! raw terminal changes nothing in either direction: the shim session's frames and
//! uploaded files pass through it).
//!
//! The connection runs the line, hands its output streams and the terminal to
//! [`Terminal::answer`], which writes the password when a prompt shows and returns once
//! the marker has come; a wrong password is an error in ansible-core's words. The
//! password is only ever written to the terminal: never on a command line, and it is
//! masked in any output quoted in an error.

use crate::plugins::connection::{ConnectionError, Secret};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// How long su may take to ask for the password and start the command (ansible-core's
/// `become_success_timeout`).
const TIMEOUT: Duration = Duration::from_secs(10);

/// What su prints when the password is wrong.
const REFUSALS: &[&str] = &["Authentication failure"];

/// The word su's prompt starts with, in the languages su speaks (matched without case,
/// followed by a colon).
const PROMPTS: &[&str] = &[
    "Password",
    "Passwort",
    "Mot de passe",
    "Contraseña",
    "Contrasenya",
    "Senha",
    "Parola",
    "Parool",
    "Passord",
    "Adgangskode",
    "Lösenord",
    "Salasana",
    "Wachtwoord",
    "Hasło",
    "Heslo",
    "Jelszó",
    "Pasahitza",
    "Sandi",
    "Mật khẩu",
    "Пароль",
    "Парола",
    "Лозинка",
    "ססמה",
    "गुप्तशब्द",
    "शब्दकूट",
    "సంకేతపదము",
    "හස්පදය",
    "암호",
    "パスワード",
    "密码",
    "密碼",
    "口令",
];

fn prompt() -> &'static regex::bytes::Regex {
    static PROMPT: std::sync::OnceLock<regex::bytes::Regex> = std::sync::OnceLock::new();
    PROMPT.get_or_init(|| {
        let words: Vec<String> = PROMPTS.iter().map(|p| regex::escape(p)).collect();
        regex::bytes::Regex::new(&format!("(?i)(?:{})\\s*[:：]", words.join("|")))
            .unwrap_or_else(|e| panic!("the su prompt pattern: {e}"))
    })
}

/// The answers for one su command run on a terminal.
#[derive(Clone, Debug)]
pub struct Terminal {
    password: Secret,
    marker: String,
}

/// What the command had written when su handed over to it.
#[derive(Debug, Default)]
pub struct Answered {
    /// Its stdout after the marker line.
    pub stdout: Vec<u8>,
    /// Its stderr after su's prompt (when stderr is a stream of its own).
    pub stderr: Vec<u8>,
}

impl Terminal {
    /// Answers for a command that must prove it runs by printing a fresh marker.
    pub fn new(password: Secret) -> Terminal {
        let marker = format!("BECOME-SUCCESS-{:032x}", rand::random::<u128>());
        Terminal { password, marker }
    }

    /// The shell code su runs: the terminal made raw and silent, the marker, then
    /// `tail` (which runs the command).
    pub fn script(&self, tail: &str) -> String {
        format!("stty raw -echo && echo {} && {tail}", self.marker)
    }

    /// Reads `stdout` (and `stderr`, when it is not merged into stdout) until the marker
    /// line, writing the password to `terminal` when su asks for it. Fails, in
    /// ansible-core's words, when the streams end before the marker (su refused) or it
    /// takes too long. `plugin` is the connection's name (ansible-core's `ssh` names a
    /// wrong password; its `local` quotes what su said).
    pub async fn answer<O, E, T>(
        &self,
        plugin: &str,
        stdout: &mut O,
        mut stderr: Option<&mut E>,
        terminal: &mut T,
    ) -> Result<Answered, ConnectionError>
    where
        O: AsyncRead + Unpin + ?Sized,
        E: AsyncRead + Unpin + ?Sized,
        T: AsyncWrite + Unpin + ?Sized,
    {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let mut sent = false;
        let mut open = (true, stderr.is_some());
        let line = format!("{}\n", self.marker).into_bytes();
        let waited = tokio::time::timeout(TIMEOUT, async {
            loop {
                if let Some(at) = find(&out, &line) {
                    return Ok(at + line.len());
                }
                if !open.0 && !open.1 {
                    return Err(false);
                }
                if !sent && (prompt().is_match(&out) || prompt().is_match(&err)) {
                    let mut answer = self.password.0.clone().into_bytes();
                    answer.push(b'\n');
                    let wrote = terminal.write_all(&answer).await;
                    if wrote.is_err() || terminal.flush().await.is_err() {
                        return Err(false);
                    }
                    sent = true;
                }
                let mut a = [0u8; 4096];
                let mut b = [0u8; 4096];
                let err_open = open.1;
                let on_err = async {
                    match stderr.as_deref_mut() {
                        Some(e) if err_open => e.read(&mut b).await,
                        _ => std::future::pending().await,
                    }
                };
                tokio::select! {
                    n = stdout.read(&mut a), if open.0 => match n {
                        Ok(n) if n > 0 => out.extend_from_slice(&a[..n]),
                        _ => open.0 = false,
                    },
                    n = on_err => match n {
                        Ok(n) if n > 0 => err.extend_from_slice(&b[..n]),
                        _ => open.1 = false,
                    },
                }
            }
        })
        .await;
        match waited {
            Ok(Ok(end)) => Ok(Answered {
                stdout: out[end..].to_vec(),
                stderr: after_prompt(&err).to_vec(),
            }),
            Ok(Err(_)) => Err(self.failure(plugin, "Premature end of stream", sent, &out, &err)),
            Err(_) => Err(self.failure(plugin, "Timed out", sent, &out, &err)),
        }
    }

    /// ansible-core's error for a su that did not start the command: "Incorrect su
    /// password" over ssh when su said so, else why the wait ended and what su said.
    fn failure(
        &self,
        plugin: &str,
        why: &str,
        sent: bool,
        out: &[u8],
        err: &[u8],
    ) -> ConnectionError {
        let said = |b: &[u8]| {
            let text = String::from_utf8_lossy(b).into_owned();
            if self.password.0.is_empty() {
                text
            } else {
                text.replace(&self.password.0, "********")
            }
        };
        let (out, err) = (said(out), said(err));
        let refused = REFUSALS.iter().any(|r| out.contains(r) || err.contains(r));
        if plugin == "ssh" && refused {
            return ConnectionError::Become("Incorrect su password".into());
        }
        let mut msg = format!("{why} waiting for become success");
        if !sent {
            msg.push_str(" or become password prompt");
        }
        msg.push('.');
        if !out.is_empty() {
            msg.push_str(&format!("\n>>> Standard Output\n{out}"));
        }
        if !err.is_empty() {
            msg.push_str(&format!("\n>>> Standard Error\n{err}"));
        }
        ConnectionError::Become(msg.trim_end().to_string())
    }
}

/// Writes a command's input to its terminal, once su has handed over, while `read`
/// reads its output; writing stops when the output ends, for a command that does not
/// read all of its input leaves the rest unread (a raw terminal would wait for a reader
/// for ever).
pub async fn feed_while<T, R>(terminal: &mut T, input: &[u8], read: R) -> R::Output
where
    T: AsyncWrite + Unpin + ?Sized,
    R: std::future::Future,
{
    let feed = async {
        if terminal.write_all(input).await.is_ok() {
            let _ = terminal.flush().await;
        }
    };
    tokio::pin!(feed, read);
    let mut writing = true;
    loop {
        tokio::select! {
            () = &mut feed, if writing => writing = false,
            out = &mut read => return out,
        }
    }
}

/// `data` after the first prompt and the whitespace that follows it (su's newline after
/// the password); all of it when there was no prompt.
fn after_prompt(data: &[u8]) -> &[u8] {
    match prompt().find(data) {
        Some(m) => {
            let rest = &data[m.end()..];
            let blank = rest.iter().take_while(|b| b.is_ascii_whitespace()).count();
            &rest[blank..]
        }
        None => data,
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    fn terminal() -> Terminal {
        Terminal {
            password: Secret("s3cret".into()),
            marker: "BECOME-SUCCESS-x".into(),
        }
    }

    /// Plays su and its command on the local connection: `said` on stderr (in pieces),
    /// then, when the password typed is right, the marker and `then` on stdout.
    async fn play(
        said: &'static [&'static [u8]],
        then: &'static [u8],
    ) -> (Result<Answered, ConnectionError>, Vec<u8>) {
        let (mut out_w, mut out_r) = tokio::io::duplex(1 << 16);
        let (mut err_w, mut err_r) = tokio::io::duplex(1 << 16);
        let (mut tty_w, mut tty_r) = tokio::io::duplex(1 << 16);
        let su = tokio::spawn(async move {
            for piece in said {
                err_w.write_all(piece).await.unwrap();
                tokio::task::yield_now().await;
            }
            let mut typed = [0u8; 64];
            let n = tty_r.read(&mut typed).await.unwrap();
            let typed = typed[..n].to_vec();
            if typed == b"s3cret\n" {
                err_w.write_all(b"\n").await.unwrap();
                out_w.write_all(b"BECOME-SUCCESS-x\n").await.unwrap();
                out_w.write_all(then).await.unwrap();
            } else {
                err_w
                    .write_all(b"\nsu: Authentication failure\n")
                    .await
                    .unwrap();
            }
            typed
        });
        let t = terminal();
        let answered = t
            .answer("local", &mut out_r, Some(&mut err_r), &mut tty_w)
            .await;
        drop(tty_w);
        (answered, su.await.unwrap())
    }

    #[tokio::test]
    async fn the_password_answers_the_prompt_and_the_output_starts_after_the_marker() {
        let (answered, typed) = play(&[b"Pass", b"wort: "], b"\x00\x0d\x03frames").await;
        assert_eq!(typed, b"s3cret\n");
        let answered = answered.unwrap();
        assert_eq!(answered.stderr, b"");
        // What the command wrote after the marker may already be there, unchanged.
        assert!(b"\x00\x0d\x03frames".starts_with(&answered.stdout));
    }

    #[tokio::test]
    async fn a_refusal_is_worded_as_ansible_core_words_it() {
        let t = terminal();
        let (mut out_w, mut out_r) = tokio::io::duplex(1024);
        let (mut err_w, mut err_r) = tokio::io::duplex(1024);
        let (mut tty_w, _tty_r) = tokio::io::duplex(1024);
        err_w
            .write_all(b"Password: \nsu: Authentication failure\n")
            .await
            .unwrap();
        drop((out_w.shutdown().await, err_w));
        let e = t
            .answer("local", &mut out_r, Some(&mut err_r), &mut tty_w)
            .await
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "Task failed: Premature end of stream waiting for become success.\n>>> Standard Error\nPassword: \nsu: Authentication failure"
        );
        // Over ssh the streams are one (the terminal's) and the error is ssh's.
        let (mut tty_w, _tty_r) = tokio::io::duplex(1024);
        let mut merged: &[u8] = b"Password: s3cret\r\nsu: Authentication failure\r\n";
        let e = t
            .answer("ssh", &mut merged, None::<&mut &[u8]>, &mut tty_w)
            .await
            .unwrap_err();
        assert_eq!(e.to_string(), "Task failed: Incorrect su password");
        // The password never shows, even when a terminal echoed it.
        let mut merged: &[u8] = b"Mot de passe : s3cret\r\nsu: failed\r\n";
        let e = t
            .answer("ssh", &mut merged, None::<&mut &[u8]>, &mut tty_w)
            .await
            .unwrap_err()
            .to_string();
        assert!(!e.contains("s3cret") && e.contains("********"), "{e}");
    }

    #[tokio::test]
    async fn a_wrong_password_is_typed_once() {
        let t = Terminal {
            password: Secret("wrong".into()),
            ..terminal()
        };
        let (mut out_w, mut out_r) = tokio::io::duplex(1024);
        let (mut err_w, mut err_r) = tokio::io::duplex(1024);
        let (mut tty_w, mut tty_r) = tokio::io::duplex(1024);
        let su = tokio::spawn(async move {
            err_w.write_all(b"Password: ").await.unwrap();
            let mut typed = [0u8; 64];
            let n = tty_r.read(&mut typed).await.unwrap();
            err_w
                .write_all(b"\nsu: Authentication failure\n")
                .await
                .unwrap();
            let _ = out_w.shutdown().await;
            typed[..n].to_vec()
        });
        let e = t
            .answer("ssh", &mut out_r, Some(&mut err_r), &mut tty_w)
            .await
            .unwrap_err();
        assert_eq!(su.await.unwrap(), b"wrong\n");
        assert_eq!(e.to_string(), "Task failed: Incorrect su password");
    }

    #[test]
    fn prompts_in_other_languages_are_recognised() {
        for p in [
            "Password: ",
            "passwort:",
            "Contraseña: ",
            "密码：",
            "Mot de passe :",
        ] {
            assert!(prompt().is_match(p.as_bytes()), "{p}");
        }
        assert!(!prompt().is_match(b"Last login: today"));
        assert_eq!(after_prompt(b"Password: \nwarning\n"), b"warning\n");
        assert!(
            terminal()
                .script("id")
                .starts_with("stty raw -echo && echo BECOME-SUCCESS-x && id")
        );
    }
}
