//! The audit log's entry for one module run, made in one place for every kind of run
//! (a component in the foreground or as a background job, a legacy module): what ran,
//! where, for which task, with which arguments and grant, and what came back.

use crate::executor::context::TaskContext;
use sandball_wire::capability::Grant;
use sandball_wire::manifest::Manifest;
use serde_json::{Map, Value};

/// What ran, as the audit log names it.
pub(super) struct Ran<'a> {
    /// The module.
    pub module: &'a str,
    /// Its sha256 (of the component, or of the legacy module's file).
    pub sha256: &'a str,
    /// Its manifest; legacy modules have none.
    pub manifest: Option<&'a Manifest>,
}

/// Whether the run keeps an audit log (what an entry needs is only made then).
pub(super) fn wanted(cx: &TaskContext<'_>) -> bool {
    cx.run.audit_log.is_some()
}

/// Writes one module run to the audit log, when there is one; a failed write is a
/// warning, never a failed task. `grant` is `None` for a legacy module, which runs
/// unsandboxed.
pub(super) fn record(
    cx: &TaskContext<'_>,
    ran: &Ran<'_>,
    args: &Map<String, Value>,
    grant: Option<&Grant>,
    result: &Map<String, Value>,
) {
    let Some(log) = &cx.run.audit_log else {
        return;
    };
    let entry = crate::policy::audit_log::Entry {
        host: cx.host,
        task: cx.plain_name(),
        module: ran.module,
        sha256: ran.sha256,
        manifest: ran.manifest,
        args,
        no_log: cx.no_log,
        grant,
        result,
    };
    if let Err(e) = log.record(&entry) {
        cx.run
            .callback
            .warning(&format!("cannot write to the audit log: {e}"));
    }
}
