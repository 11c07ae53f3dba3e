//! Asking the user on the terminal: secrets (`-K`, private `vars_prompt`) without
//! echoing them, other answers (`vars_prompt` with `private: false`) echoed; and
//! `--step`'s question, answered on stdin.

use std::io::{BufRead, BufReader, Write};
use std::process::Command;

/// Prints `prompt` on the terminal and reads one line from it, with echo turned off
/// when the answer is `private`; without a terminal, reads stdin after a warning, as
/// ansible's prompts do. The end of the input is an empty answer.
pub fn ask(prompt: &str, private: bool) -> Result<String, String> {
    ask_answered(prompt, private).map(Option::unwrap_or_default)
}

/// As [`ask`], `None` at the end of the input (no answer at all, as from a closed
/// stdin or a terminal's `^D`).
pub fn ask_answered(prompt: &str, private: bool) -> Result<Option<String>, String> {
    let Ok(tty) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
    else {
        // Without a terminal, as Python's getpass: said on stderr, then read from stdin
        // (nothing there is an empty answer).
        let mut err = std::io::stderr();
        if private {
            let _ = writeln!(err, "Warning: Password input may be echoed.");
        }
        return Ok(stdin_line(&mut err, prompt));
    };
    let stty = |arg: &str| {
        let input = tty.try_clone().map_err(|e| e.to_string())?;
        Command::new("stty")
            .envs(crate::config::settings().from_file())
            .arg(arg)
            .stdin(input)
            .status()
            .map_err(|e| format!("cannot run stty: {e}"))
    };
    let mut out = tty.try_clone().map_err(|e| e.to_string())?;
    let _ = write!(out, "{prompt}");
    let _ = out.flush();
    if private {
        stty("-echo")?;
    }
    let mut line = String::new();
    let read = BufReader::new(&tty).read_line(&mut line);
    if private {
        stty("echo")?;
        let _ = writeln!(out);
    }
    if read.map_err(|e| format!("cannot read the answer: {e}"))? == 0 {
        return Ok(None);
    }
    Ok(Some(line.trim_end_matches(['\r', '\n']).to_string()))
}

/// Prints `prompt` on stdout and reads one line from stdin, as Python's `input()` does
/// (for `--step`, whose answers may come from a pipe); `None` at the end of the input.
pub fn ask_line(prompt: &str) -> Option<String> {
    stdin_line(&mut std::io::stdout(), prompt)
}

/// Writes `prompt` to `out`, then reads one line from stdin (`None` at its end).
fn stdin_line(out: &mut dyn Write, prompt: &str) -> Option<String> {
    let _ = write!(out, "{prompt}");
    let _ = out.flush();
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim_end_matches(['\r', '\n']).to_string()),
    }
}
