//! The `command` module (see the library): runs one program without a shell.

sandball_guest_sdk::manifest!("../manifest.json");

fn main() {
    sandball_guest_sdk::run_with_paths(MANIFEST, command::command);
}
