//! The `shell` module (see the library): runs a command line through the shell the
//! task names (`executable`), which its manifest grants.

sandball_guest_sdk::manifest!("../../shell.json");

fn main() {
    sandball_guest_sdk::run_with_paths(MANIFEST, command::shell);
}
