//! The `sandball-shim` binary: parses the command line and runs the chosen command.

use std::process::ExitCode;

fn main() -> ExitCode {
    sandball_shim::cli::main(std::env::args_os().skip(1))
}
