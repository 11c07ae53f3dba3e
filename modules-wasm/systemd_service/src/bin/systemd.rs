//! The `systemd` module: ansible-core's other name for `systemd_service` (the same
//! body and manifest), which the `service` action runs where systemd manages services.

sandball_guest_sdk::manifest!("../../manifest.json");

fn main() {
    sandball_guest_sdk::run(MANIFEST, systemd_service::systemd_service);
}
