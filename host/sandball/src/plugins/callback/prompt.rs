//! Asking the user on the terminal: secrets (`-K`, private `vars_prompt`) without
//! echoing them, other answers (`vars_prompt` with `private: false`) echoed.

use std::io::{BufRead, BufReader, Write};
use std::process::Command;

/// Prints `prompt` on the terminal and reads one line from it, with echo turned off
/// when the answer is `private`.
pub fn ask(prompt: &str, private: bool) -> Result<String, String> {
    let tty = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .map_err(|e| format!("cannot ask: no terminal (/dev/tty: {e})"))?;
    let stty = |arg: &str| {
        let input = tty.try_clone().map_err(|e| e.to_string())?;
        Command::new("stty")
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
    read.map_err(|e| format!("cannot read the answer: {e}"))?;
    Ok(line.trim_end_matches(['\r', '\n']).to_string())
}
