//! `gather_facts`: the facts modules of the host (`ansible_facts_modules`, else the
//! `FACTS_MODULES` setting, `ANSIBLE_FACTS_MODULES`; `smart`, the default, is `setup`:
//! sandball's component, or ansible-core's when the host asks for legacy modules), each
//! with the task's arguments (another module without setup's own), as Ansible's
//! gather_facts action runs them. With more than
//! one module they run at once unless `parallel: false`, and their facts are merged (a
//! later module's fact wins, mappings and lists merged); modules that fail or skip are
//! named in the result.

use super::{Context, ModuleRequest, TaskResult, failed};
use crate::vars::GATHERED;
use futures::future::LocalBoxFuture;
use sandball_pycompat::boolean::truthy;
use serde_json::{Map, Value, json};

/// The `gather_facts` action (its line in [`super::PLUGINS`] says where it works).
pub fn work<'a>(
    ctx: &'a dyn Context,
    mut args: Map<String, Value>,
) -> LocalBoxFuture<'a, TaskResult> {
    Box::pin(async move {
        // The `ansible_facts_parallel` variable wins over the argument, as in ansible-core.
        let parallel = args.remove("parallel");
        let parallel = if ctx.vars().contains("ansible_facts_parallel") {
            match ctx.templar().evaluate("ansible_facts_parallel", ctx.vars()) {
                Ok(v) => Some(v),
                Err(e) => return failed(format!("ansible_facts_parallel: {e}")).into(),
            }
        } else {
            parallel
        };
        let modules = match facts_modules(ctx) {
            Ok(m) => m,
            Err(e) => return failed(e).into(),
        };
        let parallel = match truthy(parallel.as_ref(), modules.len() > 1) {
            Ok(p) => p,
            Err(e) => return failed(format!("parallel: {e}")).into(),
        };
        // As for `omit`, an argument without a value is not passed on.
        args.retain(|_, v| !v.is_null());
        let mut module_args = Vec::new();
        for name in &modules {
            let mut own = if name.as_str() == SMART {
                args.clone()
            } else {
                for_other_module(ctx, name, &args)
            };
            // The module's `module_defaults` fill in what the action's arguments (its
            // own defaults included) do not set, as in ansible-core.
            match ctx.module_defaults(name) {
                Ok(defaults) => {
                    for (k, v) in defaults {
                        own.entry(k).or_insert(v);
                    }
                }
                Err(e) => return failed(e).into(),
            }
            module_args.push(own);
        }
        let runs = modules.iter().zip(module_args).map(|(name, args)| {
            ctx.execute_module(ModuleRequest {
                name: name.as_str(),
                args,
                legacy: false,
                transfers: Vec::new(),
                foreground: false,
            })
        });
        let results = if parallel {
            futures::future::join_all(runs).await
        } else {
            let mut done = Vec::new();
            for run in runs {
                done.push(run.await);
            }
            done
        };
        merge(modules.iter().map(String::as_str).zip(results).collect())
    })
}

/// The module `smart` stands for on a POSIX host.
const SMART: &str = "setup";

/// The facts modules to run: `ansible_facts_modules` (a list, or a comma-separated
/// string), else `ANSIBLE_FACTS_MODULES`, else `smart`.
fn facts_modules(ctx: &dyn Context) -> Result<Vec<String>, String> {
    let configured = if ctx.vars().contains("ansible_facts_modules") {
        ctx.templar()
            .evaluate("ansible_facts_modules", ctx.vars())
            .map_err(|e| format!("ansible_facts_modules: {e}"))?
    } else {
        Value::String(
            crate::config::settings()
                .get("ANSIBLE_FACTS_MODULES")
                .unwrap_or_default()
                .to_string(),
        )
    };
    let names: Vec<String> = match configured {
        Value::String(s) => s
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect(),
        Value::Array(items) => items
            .iter()
            .map(|v| match v {
                Value::String(s) => Ok(s.clone()),
                other => Err(format!(
                    "ansible_facts_modules: {other} is not a module name"
                )),
            })
            .collect::<Result<_, _>>()?,
        Value::Null => Vec::new(),
        other => {
            return Err(format!(
                "ansible_facts_modules must be a list of module names, not {other}"
            ));
        }
    };
    let names: Vec<String> = names
        .into_iter()
        .map(|n| {
            let short = sandball_pycompat::fqcn::short_name(&n);
            if short == "smart" || short == "setup" {
                SMART.to_string()
            } else {
                n
            }
        })
        .collect();
    Ok(if names.is_empty() {
        vec![SMART.to_string()]
    } else {
        names
    })
}

/// What another facts module gets: the task's arguments but setup's own
/// `gather_subset`, `gather_timeout` and `filter`, each left out with a warning (a
/// subset only when it asks for less than `all`), as ansible-core's action does for
/// hosts not reached through a network connection.
fn for_other_module(
    ctx: &dyn Context,
    module: &str,
    args: &Map<String, Value>,
) -> Map<String, Value> {
    let mut args = args.clone();
    let text = sandball_pycompat::pyfmt::py_str;
    if let Some(subset) = args.remove("gather_subset")
        && subset != json!("all")
        && subset != json!(["all"])
    {
        ctx.warning(&format!(
            "Not passing subset({}) to {module}",
            text(&subset)
        ));
    }
    if let Some(timeout) = args.remove("gather_timeout") {
        ctx.warning(&format!(
            "Not passing timeout({}) to {module}",
            text(&timeout)
        ));
    }
    if let Some(filter) = args.remove("filter") {
        ctx.warning(&format!(
            "Not passing filter({}) to {module}",
            text(&filter)
        ));
    }
    args
}

/// Merges a later module's facts into the earlier ones, as ansible-core does: mappings
/// merged key by key, lists appended to (an earlier item the later list has too is
/// dropped from its earlier place), anything else replaced.
fn merge_facts(earlier: &mut Map<String, Value>, later: Map<String, Value>) {
    for (key, value) in later {
        match (earlier.get_mut(&key), value) {
            (Some(Value::Object(old)), Value::Object(new)) => merge_facts(old, new),
            (Some(Value::Array(old)), Value::Array(new)) => {
                old.retain(|item| !new.contains(item));
                old.extend(new);
            }
            (_, value) => {
                earlier.insert(key, value);
            }
        }
    }
}

/// The modules' results merged, as ansible-core's action makes its result (for one
/// module too): facts combined in order and marked gathered, warnings and deprecations
/// collected, failed and skipped modules named.
fn merge(mut results: Vec<(&str, TaskResult)>) -> TaskResult {
    // A host that cannot be reached is unreachable, whatever the other modules did.
    if let Some(i) = results
        .iter()
        .position(|(_, r)| r.get("unreachable") == Some(&Value::Bool(true)))
    {
        return results.swap_remove(i).1;
    }
    let ran = results.len();
    let mut facts = Map::new();
    let mut failed_modules = Map::new();
    let mut skipped_modules = Map::new();
    let mut warnings = Vec::new();
    let mut deprecations = Vec::new();
    let mut deprecations_shown = Vec::new();
    let mut help = std::collections::BTreeMap::new();
    for (name, mut r) in results {
        let flag = |k: &str| r.get(k) == Some(&Value::Bool(true));
        if flag("failed") {
            failed_modules.insert(name.to_string(), Value::Object(r.fields));
            continue;
        }
        if flag("skipped") {
            skipped_modules.insert(name.to_string(), Value::Object(r.fields));
            continue;
        }
        if let Some(Value::Object(f)) = r.remove("ansible_facts") {
            merge_facts(&mut facts, f);
        }
        for (key, into) in [
            ("warnings", &mut warnings),
            ("deprecations", &mut deprecations),
        ] {
            if let Some(Value::Array(items)) = r.remove(key) {
                into.extend(items);
            }
        }
        deprecations_shown.append(&mut r.deprecations_shown);
        help.append(&mut r.warning_help);
    }
    // Facts gathered so (`gathering = smart` gathers a host without them again).
    facts.insert(GATHERED.into(), json!(true));
    let mut out = TaskResult {
        // Not shown with -v: the facts would fill the screen.
        verbose_override: true,
        warning_help: help,
        ..TaskResult::default()
    };
    out.insert("changed".into(), json!(false));
    out.insert("ansible_facts".into(), Value::Object(facts));
    if !warnings.is_empty() {
        out.insert("warnings".into(), Value::Array(warnings));
    }
    if !deprecations.is_empty() {
        out.insert("deprecations".into(), Value::Array(deprecations));
        out.deprecations_shown = deprecations_shown;
    }
    let names = |m: &Map<String, Value>| m.keys().cloned().collect::<Vec<_>>().join(", ");
    if !skipped_modules.is_empty() {
        out.insert(
            "msg".into(),
            json!(format!(
                "The following modules were skipped: {}.",
                names(&skipped_modules)
            )),
        );
        if skipped_modules.len() == ran {
            out.insert("skipped".into(), json!(true));
        }
        out.insert("skipped_modules".into(), Value::Object(skipped_modules));
    }
    if !failed_modules.is_empty() {
        out.insert(
            "msg".into(),
            json!(format!(
                "The following modules failed to execute: {}.",
                names(&failed_modules)
            )),
        );
        out.insert("failed".into(), json!(true));
        out.insert("failed_modules".into(), Value::Object(failed_modules));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::action::testing::{FakeContext, args};
    use serde_json::json;

    #[tokio::test]
    async fn the_modules_defaults_fill_in_what_the_arguments_do_not_set() {
        let mut ctx = FakeContext::default();
        ctx.module_defaults.insert(
            "setup".into(),
            json!({"gather_subset": "!all", "fact_path": "/f"}),
        );
        work(&ctx, args(json!({"gather_subset": ["min"]}))).await;
        let run = ctx.modules.borrow()[0].clone();
        assert_eq!(
            run.args,
            args(json!({"gather_subset": ["min"], "fact_path": "/f"}))
        );
    }

    #[tokio::test]
    async fn runs_setup_without_the_actions_own_arguments() {
        let ctx = FakeContext::default();
        work(
            &ctx,
            args(json!({"parallel": true, "gather_subset": ["min"]})),
        )
        .await;
        let run = ctx.modules.borrow()[0].clone();
        assert_eq!(run.name, "setup");
        assert_eq!(run.args, args(json!({"gather_subset": ["min"]})));
    }

    #[tokio::test]
    async fn every_facts_module_runs_with_what_it_understands() {
        let mut ctx = FakeContext::default();
        ctx.vars
            .set_trusted("ansible_facts_modules", json!(["smart", "my.facts.extra"]));
        let r = work(
            &ctx,
            args(json!({"parallel": false, "gather_subset": ["min"], "filter": ["ansible_os*"], "gather_timeout": null})),
        )
        .await;
        {
            let runs = ctx.modules.borrow();
            assert_eq!(runs[0].name, "setup");
            assert_eq!(runs[0].args["filter"], json!(["ansible_os*"]));
            assert!(!runs[0].args.contains_key("gather_timeout"));
            assert_eq!(runs[1].name, "my.facts.extra");
            assert_eq!(runs[1].args, Map::new());
            assert_eq!(r["changed"], false);
            assert!(r["ansible_facts"].is_object());
        }
        ctx.vars.set_trusted("ansible_facts_modules", json!(7));
        let r = work(&ctx, Map::new()).await;
        assert!(r["msg"].as_str().unwrap().contains("list of module names"));
    }

    #[test]
    fn later_facts_win_with_mappings_and_lists_merged() {
        let mut facts =
            args(json!({"a": 1, "d": {"k1": 1, "k2": 1}, "l": ["one", "three", "five"]}));
        merge_facts(
            &mut facts,
            args(json!({"a": 2, "d": {"k2": 2, "k4": 2}, "l": ["one", "two", "four"]})),
        );
        assert_eq!(
            Value::Object(facts),
            json!({"a": 2, "d": {"k1": 1, "k2": 2, "k4": 2}, "l": ["three", "five", "one", "two", "four"]})
        );
    }

    #[test]
    fn facts_are_merged_and_failures_named() {
        let one = json!({"ansible_facts": {"a": 1, "b": 1}, "warnings": ["w1"]});
        let two = json!({"ansible_facts": {"b": 2}, "changed": false});
        let bad = json!({"failed": true, "msg": "no"});
        let m = |v: Value| {
            let mut r = TaskResult::from(v.as_object().cloned().unwrap());
            if r.contains_key("warnings") {
                r.warning_help("w1", "See w1.");
            }
            r
        };
        let r = merge(vec![("one", m(one.clone())), ("two", m(two))]);
        assert_eq!(
            r["ansible_facts"],
            json!({"a": 1, "b": 2, "_ansible_facts_gathered": true})
        );
        assert_eq!(r["warnings"], json!(["w1"]));
        assert_eq!(json!(r.warning_help), json!({"w1": "See w1."}));
        assert!(r.get("failed").is_none());
        let r = merge(vec![("one", m(one)), ("bad", m(bad.clone()))]);
        assert_eq!(r["failed"], true);
        assert_eq!(r["msg"], "The following modules failed to execute: bad.");
        assert_eq!(r["failed_modules"]["bad"]["msg"], "no");
        // One module's failure is named too.
        let r = merge(vec![("bad", m(bad))]);
        assert_eq!(r["msg"], "The following modules failed to execute: bad.");
        assert!(r.verbose_override);
    }
}
