//! What an action plugin may ask of the executor ([`Context`]), for one task on one
//! host: the task's context answers (variables, modes, target, environment), the
//! module runner runs modules and asks after background jobs ([`super::module_run`]),
//! a command line goes over the target's connection as the task's become user, and
//! the run changes its inventory and shows lines.

use super::context::{TaskContext, become_for, connect_failure, environment, target};
use super::module_run;
use crate::plugins::action::TaskResult;
use crate::plugins::action::{Context, ModuleRequest, failed};
use crate::plugins::connection::ExecOutput;
use crate::template::{Templar, Vars};
use futures::future::LocalBoxFuture;
use serde_json::{Map, Value};

impl Context for TaskContext<'_> {
    fn templar(&self) -> &Templar {
        &self.run.templar
    }

    fn vars(&self) -> &Vars {
        self.vars
    }

    fn verbosity(&self) -> u8 {
        self.run.options.verbosity
    }

    fn check_mode(&self) -> bool {
        self.check_mode
    }

    fn diff(&self) -> bool {
        self.diff
    }

    fn background(&self) -> Option<(u64, u64)> {
        self.background.map(|b| (b.limit_s, b.poll_s))
    }

    fn execute_module<'a>(&'a self, request: ModuleRequest<'a>) -> LocalBoxFuture<'a, TaskResult> {
        Box::pin(module_run::execute(self, request))
    }

    fn host(&self) -> &str {
        self.host
    }

    fn task_name(&self) -> String {
        self.plain_name().to_string()
    }

    fn action(&self) -> &str {
        &self.task.action
    }

    fn display(&self, text: &str) {
        self.run.callback.verbose(0, None, text);
    }

    fn warning(&self, text: &str) {
        self.run.callback.warning(text);
    }

    fn has_module(&self, name: &str) -> bool {
        self.run.modules.exists(name) || self.run.legacy.get(name).is_ok()
    }

    fn runs_legacy(&self, name: &str) -> bool {
        module_run::runs_legacy(self.run, name, false, self.vars)
    }

    fn change_inventory(&self, change: &crate::inventory::Change) -> Result<bool, String> {
        self.run.change_inventory(change).map_err(|e| e.to_string())
    }

    fn allow_unsandboxed(&self, what: &str) -> Result<(), Map<String, Value>> {
        module_run::unsandboxed(self.run, what, self.host)
    }

    fn job_status<'a>(&'a self, jid: &'a str, cleanup: bool) -> LocalBoxFuture<'a, TaskResult> {
        Box::pin(module_run::jobs::status(self, jid, cleanup))
    }

    fn local_connection(&self) -> bool {
        target(self.run, self.kw, self.host, self.vars).is_ok_and(|to| to.transport.local())
    }

    fn reset_connection(&self) -> LocalBoxFuture<'_, ()> {
        Box::pin(async move {
            let name = target(self.run, self.kw, self.host, self.vars)
                .map(|to| to.name)
                .unwrap_or_else(|_| self.host.to_string());
            self.run.sessions.reset(&name).await;
        })
    }

    fn environment(&self) -> Result<Map<String, Value>, String> {
        environment(self.run, self.kw, self.vars)
    }

    fn module_defaults(&self, module: &str) -> Result<Map<String, Value>, String> {
        super::task::keywords::module_defaults(self.run, self.kw, module, self.vars)
    }

    fn exec_command<'a>(
        &'a self,
        line: &'a str,
        stdin: Option<&'a [u8]>,
    ) -> LocalBoxFuture<'a, Result<ExecOutput, Map<String, Value>>> {
        Box::pin(async move {
            let become_ = become_for(self.run, self.task, self.kw, self.vars)?;
            let to = target(self.run, self.kw, self.host, self.vars).map_err(connect_failure)?;
            let conn = self
                .run
                .sessions
                .connection(&to.name, &to.transport)
                .await
                .map_err(connect_failure)?;
            crate::plugins::r#become::exec_command(&*conn, become_.as_ref(), line, stdin)
                .await
                .map_err(|e| failed(e.to_string()))
        })
    }
}
