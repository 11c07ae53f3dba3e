//! The `sandball` command.

fn main() {
    let code = sandball::cli::main();
    if code == 128 + libc::SIGTERM {
        // A run SIGTERM ended (after closing its sessions) ends as a process SIGTERM
        // killed, as ansible-playbook does.
        // SAFETY: two plain system calls, with constant arguments; the process ends
        // here either way.
        unsafe {
            libc::signal(libc::SIGTERM, libc::SIG_DFL);
            libc::raise(libc::SIGTERM);
        }
    }
    std::process::exit(code);
}
