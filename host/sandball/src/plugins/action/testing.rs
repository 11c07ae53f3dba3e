//! A [`Context`] for unit tests of action plugins: no node; commands run through the
//! local connection, module runs are recorded and answered with their own request.

use super::*;
use crate::plugins::action::TaskResult;
use crate::plugins::connection::Connection;
use crate::plugins::connection::local::Local;
use std::cell::RefCell;

/// A module run a plugin asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    pub name: String,
    pub args: Map<String, Value>,
    pub legacy: bool,
    pub transfers: Vec<Transfer>,
}

/// A JSON object as task arguments.
pub fn args(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

/// A playbook directory holding `files` (path, text), and a context whose
/// `playbook_dir` is it.
pub fn project(files: &[(&str, &str)]) -> (tempfile::TempDir, FakeContext) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    for (name, text) in files {
        let path = dir.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("a directory");
        }
        std::fs::write(path, text).expect("a file");
    }
    let mut ctx = FakeContext::default();
    ctx.vars.set_data(
        "playbook_dir",
        serde_json::json!(dir.path().display().to_string()),
    );
    (dir, ctx)
}

#[derive(Default)]
pub struct FakeContext {
    pub templar: Templar,
    pub vars: Vars,
    pub check_mode: bool,
    pub diff: bool,
    pub verbosity: u8,
    pub modules: RefCell<Vec<Recorded>>,
    pub host: String,
    pub changes: RefCell<Vec<Change>>,
    /// `job_status` calls: job id, cleanup.
    pub jobs: RefCell<Vec<(String, bool)>>,
    /// Whether the fake target is the controller (its commands run here either way).
    pub local: bool,
    /// How many times the connection was reset.
    pub resets: std::cell::Cell<usize>,
    /// The modules that run as legacy modules.
    pub legacy: Vec<String>,
    /// The task's `module_defaults`, by module name.
    pub module_defaults: Map<String, Value>,
    /// The task's `environment`.
    pub environment: Map<String, Value>,
    /// The task's action as written.
    pub action: &'static str,
}

impl Context for FakeContext {
    fn templar(&self) -> &Templar {
        &self.templar
    }
    fn vars(&self) -> &Vars {
        &self.vars
    }
    fn verbosity(&self) -> u8 {
        self.verbosity
    }
    fn check_mode(&self) -> bool {
        self.check_mode
    }
    fn diff(&self) -> bool {
        self.diff
    }
    fn execute_module<'a>(&'a self, request: ModuleRequest<'a>) -> LocalBoxFuture<'a, TaskResult> {
        self.modules.borrow_mut().push(Recorded {
            name: request.name.to_string(),
            args: request.args,
            legacy: request.legacy,
            transfers: request.transfers,
        });
        Box::pin(std::future::ready(
            ok_with(serde_json::json!({"ran": request.name})).into(),
        ))
    }
    fn host(&self) -> &str {
        &self.host
    }
    fn task_name(&self) -> String {
        "a task".into()
    }
    fn action(&self) -> &str {
        self.action
    }
    fn display(&self, _text: &str) {}
    fn warning(&self, _text: &str) {}
    fn has_module(&self, name: &str) -> bool {
        ["systemd", "apt", "dnf", "fakesvc"].contains(&name)
    }
    fn runs_legacy(&self, name: &str) -> bool {
        self.legacy.contains(&name.to_string())
    }
    fn change_inventory(&self, change: &Change) -> Result<bool, String> {
        let mut changes = self.changes.borrow_mut();
        let new = !changes.contains(change);
        changes.push(change.clone());
        Ok(new)
    }
    fn allow_unsandboxed(&self, _what: &str) -> Result<(), Map<String, Value>> {
        Ok(())
    }
    fn job_status<'a>(&'a self, jid: &'a str, cleanup: bool) -> LocalBoxFuture<'a, TaskResult> {
        self.jobs.borrow_mut().push((jid.to_string(), cleanup));
        Box::pin(async { failed("no node here").into() })
    }
    fn local_connection(&self) -> bool {
        self.local
    }
    fn reset_connection(&self) -> LocalBoxFuture<'_, ()> {
        self.resets.set(self.resets.get() + 1);
        Box::pin(async {})
    }
    fn environment(&self) -> Result<Map<String, Value>, String> {
        Ok(self.environment.clone())
    }
    fn module_defaults(&self, module: &str) -> Result<Map<String, Value>, String> {
        Ok(self
            .module_defaults
            .get(module)
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default())
    }

    fn exec_command<'a>(
        &'a self,
        line: &'a str,
        stdin: Option<&'a [u8]>,
    ) -> LocalBoxFuture<'a, Result<ExecOutput, Map<String, Value>>> {
        Box::pin(async move {
            Local
                .exec_command(line, stdin)
                .await
                .map_err(|e| failed(e.to_string()))
        })
    }
}
