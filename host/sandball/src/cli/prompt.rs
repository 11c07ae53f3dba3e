//! Asking the user for a secret on the terminal (`-K`), without echoing it.

use std::io::{BufRead, BufReader, Write};
use std::process::Command;

/// Prints `prompt` on the terminal and reads one line from it with echo turned off.
pub fn hidden(prompt: &str) -> Result<String, String> {
    let tty = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .map_err(|e| format!("cannot ask for the password: no terminal (/dev/tty: {e})"))?;
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
    stty("-echo")?;
    let mut line = String::new();
    let read = BufReader::new(&tty).read_line(&mut line);
    stty("echo")?;
    let _ = writeln!(out);
    read.map_err(|e| format!("cannot read the password: {e}"))?;
    Ok(line.trim_end_matches(['\r', '\n']).to_string())
}
