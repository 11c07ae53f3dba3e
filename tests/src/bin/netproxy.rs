//! `netproxy`: the test harness's loopback proxy ([`sandball_e2e::proxy`]) as a
//! command, for the benchmarks' shell scripts: a network between the controller and a
//! server on this machine, with delay, jitter, a bandwidth limit and random cuts.
//!
//! `netproxy TARGET_PORT COUNT [delay_ms=D] [jitter_ms=J] [mbit=R] [cut_share=F]
//! [cut_within_ms=T]` starts COUNT proxies to `127.0.0.1:TARGET_PORT`, prints their
//! ports one per line, and runs until its standard input closes; it then prints, to
//! standard error, a line per port: the port, how many of its connections its random
//! cuts cut, and the bytes it carried to the server and from it (`PORT CUTS UP DOWN`).

use sandball_e2e::proxy::{Proxy, Shape};
use std::io::{Read, Write};
use std::process::ExitCode;
use std::time::Duration;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("netproxy: {e}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [target, count, options @ ..] = args.as_slice() else {
        return Err("usage: netproxy TARGET_PORT COUNT [delay_ms=D] [jitter_ms=J] [mbit=R] [cut_share=F] [cut_within_ms=T]".into());
    };
    let number = |name: &str, text: &str| -> Result<f64, String> {
        text.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| format!("{name} must be a number ≥ 0, not {text:?}"))
    };
    let target: u16 = target
        .parse()
        .map_err(|_| format!("TARGET_PORT must be a port number, not {target:?}"))?;
    let count = number("COUNT", count)? as usize;
    let mut shape = Shape::default();
    for option in options {
        let (name, value) = option
            .split_once('=')
            .ok_or_else(|| format!("an option is name=value, not {option:?}"))?;
        let v = number(name, value)?;
        match name {
            "delay_ms" => shape.delay = Duration::from_secs_f64(v / 1000.0),
            "jitter_ms" => shape.jitter = Duration::from_secs_f64(v / 1000.0),
            "mbit" => shape.rate = Some((v * 1_000_000.0 / 8.0) as u64),
            "cut_share" if v <= 1.0 => shape.cut_share = v,
            "cut_within_ms" => shape.cut_within = Duration::from_secs_f64(v / 1000.0),
            _ => {
                return Err(format!(
                    "unknown option {name} (or its value {value} is out of range)"
                ));
            }
        }
    }
    let proxies: Vec<Proxy> = (0..count)
        .map(|_| Proxy::start_with(target, shape.clone()))
        .collect();
    let mut out = std::io::stdout().lock();
    for p in &proxies {
        writeln!(out, "{}", p.port()).map_err(|e| e.to_string())?;
    }
    out.flush().map_err(|e| e.to_string())?;
    drop(out);
    let mut sink = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut sink);
    for p in &proxies {
        let (up, down) = p.bytes();
        eprintln!("{} {} {up} {down}", p.port(), p.random_cuts());
    }
    Ok(())
}
