//! The module runner: one module run on a task's target, for the actions that ask for
//! one ([`crate::plugins::action::Context::execute_module`]). It decides whether the
//! module runs as a sandball component or as a legacy module, finds the target's Python
//! when the module needs one, and runs it: a component under the grant policy gives
//! it, in the task's shim session ([`session`]), with controller files sent first
//! ([`transfer`]) — a component that does not carry the task out hands it over to
//! ansible-core's module of that name; a legacy module assembled the classic way
//! ([`legacy`], [`classic`]); either as a background job ([`jobs`]) for `async`. The
//! reply is read as ansible-core reads a module's ([`interpret`], [`output`]) and the
//! run written to the audit log ([`audit`]).

mod audit;
mod classic;
mod component;
mod interpret;
pub(crate) mod jobs;
mod legacy;
mod output;
mod session;
mod transfer;

use super::Run;
use super::context::{TaskContext, report_discovery, target_python, var_value};
use crate::plugins::action::TaskResult;
use crate::plugins::action::{ModuleRequest, failed};
use crate::policy;
use crate::template::Vars;
use serde_json::{Map, Value, json};

/// Runs the module `request` names on the task's target: the task's result.
pub(crate) async fn execute(cx: &TaskContext<'_>, request: ModuleRequest<'_>) -> TaskResult {
    if request.foreground && cx.background.is_some() {
        let foreground = TaskContext {
            background: None,
            ..*cx
        };
        return run(&foreground, request).await;
    }
    run(cx, request).await
}

async fn run(cx: &TaskContext<'_>, request: ModuleRequest<'_>) -> TaskResult {
    let request = if request.legacy {
        legacy_standin(request)
    } else {
        request
    };
    if let Some(user) = removed_user(&request)
        && let Ok(to) = super::context::target(cx.run, cx.kw, cx.host, cx.vars)
    {
        cx.run.sessions.close_user(&to.name, user).await;
    }
    let legacy = runs_legacy(cx.run, request.name, request.legacy, cx.vars);
    if legacy {
        return run_legacy(cx, request).await;
    }
    // A background job's refusal reaches `async_status`, not this task.
    let component = request.name;
    let handover = cx
        .background
        .is_none()
        .then(|| legacy_standin(request.clone()));
    let result = component::run(cx, request).await;
    match handover {
        Some(request) => hand_over(cx, result, component, request).await,
        None => result,
    }
}

/// The account a `user` module run removes (`state: absent`), whose sessions must end
/// first.
fn removed_user<'r>(request: &'r ModuleRequest<'_>) -> Option<&'r str> {
    let removes = sandball_pycompat::fqcn::short_name(request.name) == "user"
        && request.args.get("state").and_then(Value::as_str) == Some("absent");
    let name = request
        .args
        .get("name")
        .or_else(|| request.args.get("user"));
    removes.then(|| name.and_then(Value::as_str)).flatten()
}

/// Runs a legacy module. A Python module needs the host's Python: the first one a host
/// runs finds it (`ansible_python_interpreter`, else discovery, whose fact and warning
/// its result carries, as ansible-core's first module's does); components and modules
/// that are not Python need none, so a host that runs no Python module is never
/// probed for one.
async fn run_legacy(cx: &TaskContext<'_>, request: ModuleRequest<'_>) -> TaskResult {
    let python = if cx
        .run
        .legacy
        .get(request.name)
        .is_ok_and(|m| crate::assemble::legacy::needs_python(&m))
    {
        match target_python(cx).await {
            Ok(p) => Some(p),
            Err(r) => return r.into(),
        }
    } else {
        None
    };
    let path = python.as_ref().map_or("", |p| p.path.as_str());
    let mut result = legacy::run(cx, request, path).await;
    if let Some(python) = python {
        report_discovery(cx, python, &mut result);
    }
    result
}

/// The legacy run that stands for `request`: for the `shell` component, ansible-core's
/// `command` module with `_uses_shell`; any other module is its legacy namesake.
fn legacy_standin(mut request: ModuleRequest<'_>) -> ModuleRequest<'_> {
    if sandball_pycompat::fqcn::short_name(request.name) == SHELL {
        request.name = SHELL_LEGACY;
        request.args.insert("_uses_shell".into(), Value::Bool(true));
    }
    request.legacy = true;
    request
}

/// The legacy module that stands for the component `module` (see [`legacy_standin`]):
/// a library module of that name, not of the component's, takes its place, as in
/// ansible-core, whose `shell` action runs `ansible.legacy.command` — a `library/
/// shell.py` changes nothing there, a `library/command.py` runs instead.
pub(crate) fn legacy_name(module: &str) -> &str {
    if sandball_pycompat::fqcn::short_name(module) == SHELL {
        SHELL_LEGACY
    } else {
        module
    }
}

/// The component that runs a shell line.
const SHELL: &str = "shell";
/// ansible-core's module that runs it otherwise.
const SHELL_LEGACY: &str = "command";

/// A built-in component's result, or, when the component refused before changing
/// anything an option or a value it does not carry out
/// ([`sandball_wire::NOT_CARRIED_OUT`]), the result of ansible-core's module of that
/// name run instead, as policy allows legacy modules on the host. Without that module
/// (no ansible-core on the controller), or when policy refuses it, the refusal stands,
/// saying why.
async fn hand_over(
    cx: &TaskContext<'_>,
    mut result: TaskResult,
    component: &str,
    request: ModuleRequest<'_>,
) -> TaskResult {
    if result.remove(sandball_wire::NOT_CARRIED_OUT) != Some(Value::Bool(true)) {
        return result;
    }
    let (run, host) = (cx.run, cx.host);
    let Ok(module) = run.legacy.get(request.name) else {
        return result;
    };
    let refusal = result
        .get("msg")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .trim_end_matches('.')
        .to_string();
    if let policy::LegacyDecision::Deny(why) =
        policy::legacy_decision(&run.policy, &module.name, host)
    {
        let msg = format!("{refusal}. ansible-core's module would carry it out, but {why}");
        result.insert("msg".into(), Value::String(msg));
        return result;
    }
    run.callback.verbose(
        1,
        Some(host),
        &format!(
            "sandball's {} component does not carry this task out ({refusal}): running {} instead",
            sandball_pycompat::fqcn::short_name(component),
            module.path.display()
        ),
    );
    run_legacy(cx, request).await
}

/// The variable that asks for legacy modules instead of built-in components: a list of
/// names, a comma-separated string, or `all`.
const PREFER_LEGACY_VAR: &str = "sandball_legacy_modules";

/// Whether the task's module runs as a legacy module: there is no built-in component
/// of that name, a library module of that name overrides it, or the task (or
/// `SANDBALL_LEGACY_MODULES`) asks for the legacy one.
pub(crate) fn runs_legacy(run: &Run, module: &str, legacy: bool, vars: &Vars) -> bool {
    let short = sandball_pycompat::fqcn::short_name(module);
    legacy
        || !run.modules.exists(module)
        || run.legacy.in_library(legacy_name(module))
        || python_fallback(run, module)
        || run
            .legacy
            .prefers_legacy(short, var_value(run, vars, PREFER_LEGACY_VAR).as_ref())
}

/// Whether a collection's module (`ns.coll.name`) that is both a component
/// (`plugins/modules/name.wasm`) and a Python module (`name.py`, the one
/// ansible-playbook runs) runs as the Python module: when no rule of the policy takes
/// the component in (by its full name, a glob or its sha256; on any host), as a
/// component nothing grants anything could not do its work. A rule naming it (`manifest
/// = true`, a `grant`) makes the component run in the Python module's place.
pub(crate) fn python_fallback(run: &Run, module: &str) -> bool {
    if crate::assemble::component::collection_name(module).is_none() {
        return false;
    }
    let Ok(component) = run.modules.get(module) else {
        return false;
    };
    if run
        .policy
        .rules
        .iter()
        .any(|r| r.names(&component.name, Some(&component.sha256)))
    {
        return false;
    }
    run.legacy
        .get(module)
        .is_ok_and(|m| m.origin == crate::assemble::finder::Origin::Collection)
}

/// The name a module runs under (`_ansible_module_name`, which its messages show): as
/// the task wrote it for the task's own module, `ansible.legacy.NAME` for a module one
/// of Ansible's action plugins runs (`copy`, `package`…), as ansible-core names them.
fn invoked_name(cx: &TaskContext<'_>, module: &str) -> String {
    let plugin = sandball_pycompat::fqcn::short_name(&cx.task.action);
    if module.contains('.') || !crate::plugins::action::is_builtin_action(plugin) {
        module.to_string()
    } else {
        format!("ansible.legacy.{module}")
    }
}

/// Legacy modules and scripts run outside the WebAssembly sandbox, with the connection
/// user's rights: policy decides whether that may happen on a host. When it asks for a
/// warning: at `-v`, one per name as it first runs; else one line for the playbook at
/// its end (`Run::playbook`).
pub(crate) fn unsandboxed(run: &Run, name: &str, host: &str) -> Result<(), Map<String, Value>> {
    match policy::legacy_decision(&run.policy, name, host) {
        policy::LegacyDecision::Allow => Ok(()),
        policy::LegacyDecision::Warn(msg) => {
            if run.legacy.first_warning(name) && run.options.verbosity >= 1 {
                run.callback.warning(&msg);
            }
            Ok(())
        }
        policy::LegacyDecision::Deny(msg) => Err(failed(msg)),
    }
}

/// Settings that become internal arguments.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ModuleFlags {
    /// `_ansible_check_mode`.
    pub check_mode: bool,
    /// `_ansible_diff`.
    pub diff: bool,
    /// `_ansible_no_log`.
    pub no_log: bool,
    /// `_ansible_verbosity`.
    pub verbosity: u8,
}

impl ModuleFlags {
    /// The task's settings.
    fn of(cx: &TaskContext<'_>) -> ModuleFlags {
        ModuleFlags {
            check_mode: cx.check_mode,
            diff: cx.diff,
            no_log: cx.no_log,
            verbosity: cx.run.options.verbosity,
        }
    }
}

/// The module's arguments plus the internal arguments every module receives.
pub(crate) fn with_internal_args(
    module: &str,
    args: &Map<String, Value>,
    flags: ModuleFlags,
) -> Value {
    let mut all = args.clone();
    let internal = json!({
        "_ansible_check_mode": flags.check_mode,
        "_ansible_no_log": flags.no_log,
        "_ansible_debug": false,
        "_ansible_diff": flags.diff,
        "_ansible_verbosity": flags.verbosity,
        "_ansible_version": crate::compat::core().version(),
        "_ansible_module_name": module,
        "_ansible_syslog_facility": "LOG_USER",
        "_ansible_selinux_special_fs": ["fuse", "nfs", "vboxsf", "ramfs", "9p", "vfat"],
        "_ansible_string_conversion_action": "warn",
        "_ansible_socket": null,
        "_ansible_shell_executable": "/bin/sh",
        "_ansible_keep_remote_files": false,
        "_ansible_tmpdir": null,
        "_ansible_remote_tmp": "~/.ansible/tmp",
        "_ansible_target_log_info": null,
        "_ansible_ignore_unknown_opts": false,
    });
    if let Value::Object(m) = internal {
        all.extend(m);
    }
    Value::Object(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_args_are_added() {
        let a = with_internal_args(
            "ping",
            &Map::new(),
            ModuleFlags {
                check_mode: true,
                ..Default::default()
            },
        );
        assert_eq!(a["_ansible_check_mode"], true);
        assert_eq!(a["_ansible_module_name"], "ping");
    }

    #[test]
    fn the_legacy_shell_is_the_command_module_through_the_shell() {
        let args = json!({"_raw_params": "echo $HOME"});
        let shell = legacy_standin(ModuleRequest::new("shell", args.clone()));
        assert_eq!(shell.name, "command");
        assert!(shell.legacy);
        assert_eq!(shell.args["_uses_shell"], true);
        assert_eq!(shell.args["_raw_params"], "echo $HOME");
        let copy = legacy_standin(ModuleRequest::new("copy", args));
        assert_eq!(copy.name, "copy");
        assert!(copy.legacy);
        assert!(!copy.args.contains_key("_uses_shell"));
    }
}
