//! The `sandball-shim` binary: parses the command line and runs the chosen command.

use std::process::ExitCode;

fn main() -> ExitCode {
    // Before anything else (and before any thread starts): nothing of the
    // controller's or the login's environment stays readable in the process.
    sandball_shim::environment::scrub();
    // Nothing the shim inherited reaches the programs it runs.
    sandball_shim::environment::close_inherited_descriptors();
    sandball_shim::cli::main(std::env::args_os().skip(1))
}
