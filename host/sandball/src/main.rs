//! The `sandball` command.

fn main() {
    std::process::exit(sandball::cli::main());
}
