//! The `systemd_service` module (see the library).

sandball_guest_sdk::manifest!("../manifest.json");

fn main() {
    sandball_guest_sdk::run(MANIFEST, systemd_service::systemd_service);
}
