//! Programs that run other programs (`find -exec`, `xargs`, `env`, shells,
//! interpreters, `sudo`…). An exec grant of one with unrestricted arguments grants, in
//! effect, every program the node user may run: `sandball audit` and a run under `-v`
//! warn of such a grant, naming it and how to narrow it.

use super::{Adjustment, Policy, Subject};
use sandball_pycompat::fnmatch::fnmatch;
use sandball_wire::capability::{CapabilityRequest, ExecGrant};
use sandball_wire::manifest::Manifest;

/// Programs (their file names, shell globs) that can be told, by their arguments, to
/// run another program or arbitrary code.
const LAUNCHERS: &[&str] = &[
    // Shells.
    "sh",
    "bash",
    "dash",
    "zsh",
    "ksh",
    "mksh",
    "csh",
    "tcsh",
    "fish",
    "busybox",
    // Interpreters.
    "python*",
    "perl*",
    "ruby*",
    "php*",
    "node",
    "nodejs",
    "lua*",
    "tclsh*",
    "expect",
    "awk",
    "gawk",
    "mawk",
    "nawk",
    "sed",
    "gdb",
    // Programs whose arguments name a program to run.
    "env",
    "xargs",
    "find",
    "nice",
    "nohup",
    "timeout",
    "stdbuf",
    "setsid",
    "ionice",
    "taskset",
    "chroot",
    "unshare",
    "nsenter",
    "flock",
    "time",
    "watch",
    "strace",
    "ltrace",
    "script",
    "parallel",
    "systemd-run",
    "at",
    "batch",
    "make",
    "ssh",
    "rsync",
    "tar",
    "git",
    // Programs that run others as another user.
    "sudo",
    "su",
    "doas",
    "runuser",
    "pkexec",
    "setpriv",
];

/// Whether `program` (a path or a name) can run other programs.
pub fn runs_others(program: &str) -> bool {
    let name = program.rsplit('/').next().unwrap_or(program);
    LAUNCHERS.iter().any(|p| fnmatch(p, name))
}

/// Whether an exec grant lets the program take any arguments: none are listed, or a
/// `**` element matches whatever follows.
pub fn unrestricted(e: &ExecGrant) -> bool {
    e.args.as_ref().is_none_or(|a| a.iter().any(|p| p == "**"))
}

/// The warning for an exec grant `whence` gives (`the policy rule at policy.toml:3`,
/// `the grant of module x`), when it lets a program that runs others take any
/// arguments.
pub fn warning(e: &ExecGrant, whence: &str) -> Option<String> {
    (unrestricted(e) && runs_others(&e.program)).then(|| {
        let name = e.program.rsplit('/').next().unwrap_or(&e.program);
        format!(
            "{whence} grants `{e}`: {name} may be given any arguments, and it can run other programs (as `find -exec`, `env`, `xargs`, a shell or an interpreter do): whoever chooses its arguments can run anything the node user can. List the arguments it may take instead: `args = [...]`, one pattern per argument and no `**`"
        )
    })
}

/// The warnings for what `policy` grants `subject`: its rules' grants, the manifest of
/// a third-party module a rule grants by manifest, and what `adjustments` (a task's
/// `capabilities:`) add; with `allowed`, also what the rules allow that keyword to add
/// (`sandball audit`, before any task asks). Built-in modules' own manifests are not
/// policy: their requests are scoped to each task's arguments.
pub fn policy_warnings(
    policy: &Policy,
    subject: &Subject<'_>,
    manifest: &Manifest,
    adjustments: &[Adjustment],
    allowed: bool,
) -> Vec<String> {
    let mut out = Vec::new();
    let mut check = |caps: &[CapabilityRequest], whence: &str| {
        for c in caps {
            if let CapabilityRequest::Exec(e) = c
                && let Some(w) = warning(e, whence)
                && !out.contains(&w)
            {
                out.push(w);
            }
        }
    };
    for r in policy.rules_for(subject) {
        let at = format!("the policy rule at {}", policy.rule_location(r));
        check(&r.grant, &at);
        if allowed {
            check(&r.allow, &format!("{at} (as what `capabilities:` may add)"));
        }
        if r.manifest && !subject.builtin {
            check(
                &manifest.capabilities,
                &format!(
                    "the manifest of module {}, granted by {at},",
                    subject.module
                ),
            );
        }
    }
    for adj in adjustments {
        check(&adj.add, "the task's `capabilities:`");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exec(program: &str, args: Option<&[&str]>) -> ExecGrant {
        ExecGrant {
            program: program.to_string(),
            args: args.map(|a| a.iter().map(|s| s.to_string()).collect()),
        }
    }

    #[test]
    fn programs_that_run_others_with_any_arguments_are_warned_of() {
        for program in [
            "find",
            "/usr/bin/find",
            "python3.11",
            "/bin/sh",
            "sudo",
            "env",
        ] {
            let w = warning(&exec(program, None), "the policy rule at p.toml:2")
                .unwrap_or_else(|| panic!("{program} was not warned of"));
            assert!(
                w.starts_with("the policy rule at p.toml:2 grants `exec"),
                "{w}"
            );
            assert!(w.contains("can run other programs"), "{w}");
            assert!(warning(&exec(program, Some(&["-x", "**"])), "r").is_some());
        }
    }

    #[test]
    fn listed_arguments_or_other_programs_are_not() {
        assert_eq!(
            warning(&exec("find", Some(&["/var/log", "-name", "*.log"])), "r"),
            None
        );
        assert_eq!(warning(&exec("/bin/echo", None), "r"), None);
        assert_eq!(warning(&exec("systemctl", Some(&["**"])), "r"), None);
        assert_eq!(warning(&exec("findmnt", None), "r"), None);
    }
}
