//! Loops: `loop:`, and the `with_*` loops, each its lookup (`template/lookups/`),
//! turned into the list of items a task runs over, with the variables each item's run
//! sees (`loop_control`); the items' `(item=…)` labels; and a task run over its items,
//! each reported, into the loop's result.

use super::attempt::{NO_TRACEBACK, bind_result, registered, sets_facts, with_failed_flag};
use super::keywords::{all_true, when_stops};
use super::reports::{Banner, CENSORED_ITEM, origin, show_banner, show_warnings, shown};
use super::retries::run_once;
use crate::executor::Run;
use crate::executor::coerce::{keyword_bool, keyword_float};
use crate::playbook::{Chain, Keyword, LoopKind, Task};
use crate::plugins::action::TaskResult;
use crate::plugins::action::{self, Cause, Failure, TaskFailure, raised};
use crate::plugins::callback::{Report, Status};
use crate::template::Vars;
use crate::template::lookups::LookupContext;
use sandball_pycompat::boolean::truthy;
use sandball_pycompat::pyops::py_truth;
use serde_json::{Map, Value, json};

/// Whether [`items`] can expand loops of this kind: a `with_<lookup>` needs the lookup
/// (`Ok(false)` when there is none; an error when none can be looked for).
pub fn supported(kind: &LoopKind) -> Result<bool, String> {
    match kind {
        LoopKind::WithLookup(name) => crate::template::lookups::available(name),
        _ => Ok(true),
    }
}

/// Turns a templated loop value into items, as the loop keyword asks; `ctx` serves the
/// lookup of a `with_<lookup>` loop.
pub fn items(kind: &LoopKind, value: Value, ctx: &dyn LookupContext) -> Result<Vec<Value>, String> {
    // Every `with_*` loop is its lookup, run on the loop's value as terms.
    let lookup = match kind {
        LoopKind::Loop => {
            return match value {
                Value::Array(v) => Ok(v),
                other => Err(format!(
                    "Invalid data passed to 'loop', it requires a list, got this instead: {other}. Hint: If you passed a list/dict of just one element, try adding wantlist=True to your lookup invocation or use q/query instead of lookup."
                )),
            };
        }
        LoopKind::WithList => "list",
        LoopKind::WithItems => "items",
        LoopKind::WithIndexedItems => "indexed_items",
        LoopKind::WithDict => "dict",
        LoopKind::WithSequence => "sequence",
        LoopKind::WithNested => "nested",
        LoopKind::WithTogether => "together",
        LoopKind::WithSubelements => "subelements",
        LoopKind::WithLookup(name) => name,
    };
    crate::template::lookups::run(
        lookup,
        &crate::template::lookups::as_terms(value),
        &serde_json::Map::new(),
        ctx,
    )
    .map_err(|e| format!("The lookup plugin '{lookup}' failed: {e}"))
}

/// The `(item=…)` label: text as is, anything else as Python shows it
/// (`[1, 'x']`, `{'name': 'a'}`), as Ansible prints it.
pub fn label(item: &Value) -> String {
    match item {
        Value::String(s) => s.clone(),
        other => sandball_pycompat::pyfmt::py_str(other),
    }
}

/// A loop's items (`spec` templated, then expanded as its `loop`/`with_*` keyword says),
/// each with the variables its run sees (the item's [`LoopItem::loop_vars`] over the
/// task's).
pub(crate) fn loop_items(
    run: &Run,
    t: &Task,
    vars: &Vars,
    spec: &Value,
) -> Result<Vec<LoopItem>, TaskFailure> {
    let templated = match (t.loop_kind.lookup(), spec) {
        // `with_first_found` passes over the undefined values in its terms, at any
        // depth (a mapping loses the key), as ansible-core's does; terms that are
        // undefined as a whole are the error they are.
        (Some("first_found"), _) => match run.templar.template_omitting_undefined(spec, vars) {
            Ok(Some(terms)) => Ok(terms),
            Ok(None) => run.templar.template(spec, vars),
            Err(e) => Err(e),
        },
        _ => run.templar.template(spec, vars),
    };
    let items = templated
        // Worded as ansible-core 2.19 words a loop's failure, which comes from the
        // loop's value.
        .map_err(|e| match e {
            crate::template::TemplateError::Undefined { .. } => TaskFailure {
                msg: format!("Task failed: {}", e.cause()),
                cause: Cause::loop_value(
                    &e,
                    t.loop_kind
                        .lookup()
                        .map_or_else(|| "loop".into(), |l| format!("with_{l}")),
                ),
            },
            _ => e.cause().into(),
        })
        .and_then(|v| {
            let ctx = crate::template::lookups::TaskLookup {
                templar: &run.templar,
                vars,
                loop_action: Some(&t.action),
            };
            items(&t.loop_kind, v, &ctx).map_err(TaskFailure::from)
        })?;
    let mut control = t.loop_control.clone().unwrap_or_default();
    // `loop_var` and `index_var` may be templated.
    let name = |n: &str| -> Result<String, String> {
        run.templar
            .template(&Value::String(n.to_string()), vars)
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
            .map_err(|e| e.to_string())
    };
    control.loop_var = name(&control.loop_var)?;
    if let Some(iv) = &control.index_var {
        control.index_var = Some(name(iv)?);
    }
    let flag = |v: &Option<Value>, default: bool| match v {
        None => Ok(default),
        Some(v) => run
            .templar
            .template(v, vars)
            .map_err(|e| e.to_string())
            .and_then(|v| truthy(Some(&v), default)),
    };
    let extended = flag(&control.extended, false)?;
    let allitems = flag(&control.extended_allitems, true)?;
    let mut values = loop_values(run, &t.loop_kind, spec, vars, &items).into_iter();
    Ok((0..items.len())
        .map(|index| {
            let mut loop_vars = Map::new();
            loop_vars.insert(control.loop_var.clone(), items[index].clone());
            if let Some(iv) = &control.index_var {
                loop_vars.insert(iv.clone(), json!(index));
                loop_vars.insert("ansible_index_var".into(), Value::String(iv.clone()));
            }
            loop_vars.insert(
                "ansible_loop_var".into(),
                Value::String(control.loop_var.clone()),
            );
            if extended {
                let len = items.len();
                let mut info = json!({
                    "index": index + 1,
                    "index0": index,
                    "revindex": len - index,
                    "revindex0": len - index - 1,
                    "first": index == 0,
                    "last": index + 1 == len,
                    "length": len,
                });
                if allitems {
                    info["allitems"] = Value::Array(items.clone());
                }
                if index > 0 {
                    info["previtem"] = items[index - 1].clone();
                }
                if index + 1 < len {
                    info["nextitem"] = items[index + 1].clone();
                }
                loop_vars.insert("ansible_loop".into(), info);
            }
            let mut item_vars = vars.clone();
            for (name, value) in &loop_vars {
                item_vars.set_data(name, value.clone());
            }
            item_vars.set_trusted(&control.loop_var, values.next().unwrap_or(Value::Null));
            LoopItem {
                item: items[index].clone(),
                vars: item_vars,
                loop_vars,
            }
        })
        .collect())
}

/// The values of the loop variable, one per item, their text marked untrusted where
/// ansible-core 2.19 has it untrusted: text templating made (see
/// [`crate::template::Templar::mark_untrusted`]); a `loop` list written out, or named
/// by `{{ path }}` in a trusted variable (a registered loop's `results`, whose items
/// keep their own trust), is followed item by item; a value passed through unchanged
/// (by `with_list` or `with_items`) stays trusted; what other lookups give is data.
fn loop_values(
    run: &Run,
    kind: &LoopKind,
    spec: &Value,
    vars: &Vars,
    items: &[Value],
) -> Vec<Value> {
    let followed = || match run
        .templar
        .mark_untrusted(spec, &Value::Array(items.to_vec()), vars)
    {
        Value::Array(marked) if marked.len() == items.len() => Some(marked),
        _ => None,
    };
    let marked = match (kind, spec) {
        (LoopKind::Loop, Value::Array(raw)) if raw.len() == items.len() => Some(
            raw.iter()
                .zip(items)
                .map(|(raw, item)| run.templar.mark_untrusted(raw, item, vars))
                .collect(),
        ),
        (LoopKind::Loop, Value::String(_)) => followed(),
        (LoopKind::WithList | LoopKind::WithItems, spec)
            if run.templar.passes_trust(spec, vars) =>
        {
            Some(items.to_vec())
        }
        _ => None,
    };
    marked.unwrap_or_else(|| {
        items
            .iter()
            .cloned()
            .map(crate::template::untrusted)
            .collect()
    })
}

/// One item of a task's loop.
pub(crate) struct LoopItem {
    /// The item.
    pub item: Value,
    /// The variables its run sees.
    pub vars: Vars,
    /// What the loop adds to them: the item under `loop_var`, `index_var`,
    /// `ansible_loop_var`, and `ansible_loop` when `extended`.
    pub loop_vars: Map<String, Value>,
}

/// Where a loop's result says whether its unreachable host is ignored: under
/// ansible-core 2.19 when every unreachable item's `ignore_unreachable` held, under
/// 2.21 when any item's did (dropped with the other `_ansible_` keys before it is
/// registered or shown).
pub(super) const IGNORE_UNREACHABLE: &str = "_ansible_ignore_unreachable";

/// Where a loop's result says, under ansible-core 2.21, whether `ignore_errors` held
/// for any item (read with the item's variables): then the whole task's errors are
/// ignored.
pub(super) const IGNORE_ERRORS: &str = "_ansible_ignore_errors";

/// Runs a task's loop and returns its result; `items` receives, for each item run, the
/// loop variable's value as the item's run saw it (its text marked where it is
/// untrusted), which its registered result keeps as `item`; `last_vars` the variables
/// the last item run saw.
#[allow(clippy::too_many_arguments)]
pub(super) async fn run_loop(
    run: &Run,
    t: &Task,
    kw: &Chain<'_>,
    host: &str,
    vars: &Vars,
    spec: &Value,
    no_log: bool,
    banner: Option<Banner<'_>>,
    items_seen: &mut Vec<Value>,
    last_vars: Option<&mut Option<Vars>>,
) -> TaskResult {
    let items = match loop_items(run, t, vars, spec) {
        Ok(items) => items,
        // A loop that cannot be templated is skipped when the task's `when` (without
        // an item) does not hold, as in Ansible.
        Err(e) => {
            return match when_stops(run, kw, vars) {
                Some(r) if r.get("skipped").is_some_and(py_truth) => r,
                _ => e.result(),
            };
        }
    };
    if items.is_empty() {
        let mut r = action::ok_with(json!({
            "skipped": true,
            "skipped_reason": "No items in the list",
            "results": [],
        }));
        // ansible-core 2.21 gives the reason as any skipped task's too.
        if crate::compat::core().at_least(21) {
            r.insert("skip_reason".into(), json!("No items in the list"));
        }
        return r.into();
    }
    let control = t.loop_control.clone().unwrap_or_default();
    // Read around the task's runs: an error is the loop's, as in ansible-core.
    let pause = match control
        .pause
        .as_ref()
        .map(|p| keyword_float(run, vars, "pause", p))
    {
        None => 0.0,
        Some(Ok(secs)) if secs >= 0.0 => secs,
        Some(Ok(secs)) => {
            return raised(
                Failure::RaisedByLoop,
                format!("loop_control.pause must be a number of seconds, got {secs}"),
            )
            .into();
        }
        Some(Err(e)) => return raised(Failure::RaisedByLoop, e.to_string()).into(),
    };
    let mut results = Vec::with_capacity(items.len());
    let (mut changed, mut any_failed, mut all_skipped) = (false, false, !items.is_empty());
    // Whether an item was unreachable, and (ansible-core 2.19) whether every
    // unreachable item's `ignore_unreachable` (read with the item's variables) held:
    // then the loop's is ignored.
    let mut unreachable: Option<bool> = None;
    // ansible-core 2.21 reads both keywords for every item and ignores the task's
    // errors, or its unreachable host, when any item's held.
    let follows_2_21 = crate::compat::core().at_least(21);
    let mut ignore_errors = AnyItem::new(Keyword::IgnoreErrors);
    let mut ignore_unreachable = AnyItem::new(Keyword::IgnoreUnreachable);
    // The warnings of labels that could not be templated (ansible-core 2.21).
    let mut label_warnings = Vec::new();
    // What earlier items left for the later ones, as Ansible updates the loop's
    // variables after each item: facts they returned, the registered result.
    let mut carried = Carried::default();
    // The last item run (`break_when` may end the loop early), whose variables the
    // register projections see.
    let mut last_ran = 0;
    for (
        index,
        LoopItem {
            item,
            vars,
            loop_vars,
        },
    ) in items.iter().enumerate()
    {
        last_ran = index;
        // `pause` waits between items, not before the first.
        if index > 0 && pause > 0.0 {
            tokio::time::sleep(std::time::Duration::from_secs_f64(pause)).await;
        }
        let mut with_carried;
        let item_vars = if carried.facts.is_empty()
            && carried.registered.is_none()
            && !super::implicit::enabled()
        {
            vars
        } else {
            with_carried = vars.clone();
            crate::vars::add_facts(&mut with_carried, &carried.facts);
            if let (Some(name), Some(r)) = (&t.register, &carried.registered) {
                with_carried.set_data(name, Value::Object(r.clone()));
            }
            if super::implicit::enabled() {
                let so_far = results
                    .iter()
                    .map(|r| match r {
                        Value::Object(r) => Value::Object(registered(r)),
                        other => other.clone(),
                    })
                    .collect();
                super::implicit::before_item(&mut with_carried, t, so_far);
            }
            &with_carried
        };
        let mut r = run_once(run, t, kw, host, item_vars, no_log).await;
        carry(t, &r, &mut carried);
        // The result says which item it was for: the loop's own variables.
        for (name, value) in loop_vars {
            r.insert(name.clone(), value.clone());
        }
        // The label sees the item's result under `register`, as in Ansible; one that
        // cannot be templated fails the item, which is then shown by its value.
        let label = match &control.label {
            Some(l) => {
                let mut label_vars = item_vars.clone();
                bind_result(&mut label_vars, t, &r);
                match run.templar.template(l, &label_vars) {
                    Ok(v) => label(&v),
                    // ansible-core 2.21 warns, and the item keeps its result and is
                    // shown by its value; the loop's result keeps the warning too.
                    Err(e) if follows_2_21 => {
                        let warning =
                            format!("Failed to template loop_control label: {}", e.detail());
                        action::push_warning(&mut r, warning.clone());
                        label_warnings.push(warning);
                        label(item)
                    }
                    Err(e) => {
                        r.remove("skipped");
                        r.insert("failed".into(), Value::Bool(true));
                        r.insert(
                            "msg".into(),
                            Value::String(format!(
                                "Failed to template loop_control.label: {}",
                                e.detail()
                            )),
                        );
                        label(item)
                    }
                }
            }
            None => label(item),
        };
        // `break_when` ends the loop after an item, seeing its result under `register`.
        let break_when = |r: &Map<String, Value>| {
            let mut check_vars = item_vars.clone();
            bind_result(&mut check_vars, t, r);
            all_true(run, &control.break_when, &check_vars)
        };
        // ansible-core 2.21 judges it before the item is reported, and the item's result
        // says what it gave (`break_when_result`); one that cannot be evaluated fails the
        // item and ends the loop, keeping the loop's result.
        let judged = crate::compat::core().at_least(21) && !control.break_when.is_empty();
        let early_stop = judged.then(|| {
            let stop = break_when(&r);
            match &stop {
                Ok(b) => {
                    r.insert("break_when_result".into(), Value::Bool(*b));
                }
                Err(e) => {
                    if r.get("failed").is_some_and(py_truth) {
                        let hidden = r
                            .get("exception")
                            .cloned()
                            .unwrap_or_else(|| Value::String(NO_TRACEBACK.into()));
                        r.insert("break_when_suppressed_exception".into(), hidden);
                    }
                    r.insert(
                        "break_when_result".into(),
                        Value::String(e.conditional_error()),
                    );
                    r.insert("failed".into(), Value::Bool(true));
                    r.entry("exception")
                        .or_insert_with(|| Value::String(NO_TRACEBACK.into()));
                }
            }
            stop.unwrap_or(true)
        });
        if follows_2_21 {
            ignore_errors.read(run, item_vars, kw);
            ignore_unreachable.read(run, item_vars, kw);
        }
        let mut status = Status::of(&r);
        if status == Status::Unreachable {
            // (Under 2.21 the loop's is `ignore_unreachable`'s, read for every item.)
            let ignored = follows_2_21
                || keyword_bool(run, item_vars, kw, Keyword::IgnoreUnreachable, false)
                    .unwrap_or_default();
            unreachable = Some(unreachable.unwrap_or(true) && ignored);
            // An unreachable item is shown failed, the loop unreachable.
            status = Status::Failed;
        }
        changed |= status == Status::Changed || r.get("changed").is_some_and(py_truth);
        // The loop's result is failed when an item's is, whatever `failed_when` made of
        // the item's status (it still decides the task's), as in ansible-core.
        any_failed |= r.get("failed").is_some_and(py_truth);
        all_skipped &= status == Status::Skipped;
        let shown = shown(no_log, &r);
        // A hidden result's item is hidden too: it may be the secret.
        let label = if shown.contains_key("censored") {
            CENSORED_ITEM.to_string()
        } else {
            label
        };
        show_banner(run, banner);
        show_warnings(run, Some(&t.location));
        run.callback.result(&Report {
            host,
            action: &t.action,
            status,
            result: &shown,
            item: Some(&label),
            ignored: false,
            looped: false,
            origin: Some(origin(run, t, kw, vars)),
        });
        let stop = match early_stop {
            Some(stop) => Ok(stop),
            None if control.break_when.is_empty() => Ok(false),
            None => break_when(&r),
        };
        let mut kept = r;
        with_failed_flag(&mut kept);
        results.push(Value::Object(kept.shown()));
        items_seen.push(match vars.get(&control.loop_var) {
            Some(crate::template::Var::Trusted(seen)) => seen.clone(),
            _ => crate::template::untrusted(item.clone()),
        });
        match stop {
            Ok(false) => {}
            Ok(true) => break,
            Err(e) => return raised(Failure::RaisedByLoop, e.conditional_error()).into(),
        }
    }
    let mut m = Map::new();
    m.insert("changed".into(), Value::Bool(changed));
    m.insert(
        "msg".into(),
        Value::String(
            if any_failed {
                "One or more items failed"
            } else if all_skipped {
                "All items skipped"
            } else {
                "All items completed"
            }
            .into(),
        ),
    );
    if any_failed {
        m.insert("failed".into(), Value::Bool(true));
    }
    if follows_2_21 {
        m.insert(IGNORE_ERRORS.into(), Value::Bool(ignore_errors.held));
    }
    for warning in label_warnings {
        action::push_warning(&mut m, warning);
    }
    if let Some(all_ignored) = unreachable {
        m.insert("unreachable".into(), Value::Bool(true));
        let ignored = if follows_2_21 {
            ignore_unreachable.held
        } else {
            all_ignored
        };
        m.insert(IGNORE_UNREACHABLE.into(), Value::Bool(ignored));
    }
    // ansible-core 2.21 leaves `skipped` out when it would be false.
    if all_skipped || !crate::compat::core().at_least(21) {
        m.insert("skipped".into(), Value::Bool(all_skipped));
    }
    if let Some(last) = last_vars {
        *last = items.get(last_ran).map(|item| item.vars.clone());
    }
    m.insert("results".into(), Value::Array(results));
    m.into()
}

/// A keyword ansible-core 2.21 reads with each loop item's variables, holding for the
/// whole task when it held for any item (`ignore_errors`, `ignore_unreachable`); a
/// value that cannot be read as a boolean does not hold.
struct AnyItem {
    keyword: Keyword,
    held: bool,
}

impl AnyItem {
    fn new(keyword: Keyword) -> AnyItem {
        AnyItem {
            keyword,
            held: false,
        }
    }

    /// Reads the keyword with an item's variables, until it has held once.
    fn read(&mut self, run: &Run, vars: &Vars, kw: &Chain<'_>) {
        if !self.held {
            self.held = keyword_bool(run, vars, kw, self.keyword, false).unwrap_or_default();
        }
    }
}

/// What earlier loop items give the later ones.
#[derive(Default)]
struct Carried {
    /// The facts they returned, seen as the host's facts are (never a setting).
    facts: Map<String, Value>,
    /// The last one's result, under `register`.
    registered: Option<Map<String, Value>>,
}

/// Keeps what one loop item's result gives the items after it: its facts and, under
/// `register`, the result itself.
fn carry(t: &Task, r: &Map<String, Value>, carried: &mut Carried) {
    if sets_facts(t)
        && let Some(Value::Object(facts)) = r.get("ansible_facts")
    {
        for (k, v) in facts {
            carried.facts.insert(k.clone(), v.clone());
        }
    }
    if t.register.is_some() {
        carried.registered = Some(r.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::lookups::TaskLookup;
    use crate::template::{Templar, Vars};
    use serde_json::json;

    /// No variables: loops that need no lookup.
    fn ctx() -> TaskLookup<'static> {
        static TEMPLAR: std::sync::LazyLock<Templar> = std::sync::LazyLock::new(Templar::new);
        static VARS: std::sync::LazyLock<Vars> = std::sync::LazyLock::new(Vars::new);
        TaskLookup {
            templar: &TEMPLAR,
            vars: &VARS,
            loop_action: None,
        }
    }

    #[test]
    fn with_items_flattens_one_level_and_loop_requires_a_list() {
        assert_eq!(
            items(&LoopKind::WithItems, json!([1, [2, [3]]]), &ctx()).unwrap(),
            vec![json!(1), json!(2), json!([3])]
        );
        assert!(items(&LoopKind::Loop, json!("x"), &ctx()).is_err());
        assert_eq!(
            items(&LoopKind::WithDict, json!({"a": 1}), &ctx()).unwrap(),
            vec![json!({"key": "a", "value": 1})]
        );
    }

    #[test]
    fn sequences_nested_together_and_subelements() {
        let seq = |t: &str| items(&LoopKind::WithSequence, json!(t), &ctx()).unwrap();
        assert_eq!(
            seq("start=1 end=5 stride=2 format=host%02d"),
            vec![json!("host01"), json!("host03"), json!("host05")]
        );
        assert_eq!(seq("count=3"), vec![json!("1"), json!("2"), json!("3")]);
        assert_eq!(seq("2-4"), vec![json!("2"), json!("3"), json!("4")]);
        assert_eq!(
            seq("start=5 end=1 stride=-2"),
            vec![json!("5"), json!("3"), json!("1")]
        );
        assert!(items(&LoopKind::WithSequence, json!("start=5 end=1"), &ctx()).is_err());
        assert_eq!(
            items(&LoopKind::WithNested, json!([[1, 2], ["x"]]), &ctx()).unwrap(),
            vec![json!([1, "x"]), json!([2, "x"])]
        );
        assert_eq!(
            items(&LoopKind::WithTogether, json!([[1, 2], ["x"]]), &ctx()).unwrap(),
            vec![json!([1, "x"]), json!([2, null])]
        );
        let users = json!([[{"n": "a", "k": [1, 2]}, {"n": "c"}], "k", {"skip_missing": true}]);
        assert_eq!(
            items(&LoopKind::WithSubelements, users, &ctx()).unwrap(),
            vec![json!([{"n": "a"}, 1]), json!([{"n": "a"}, 2])]
        );
        assert_eq!(label(&json!([1, "x", null])), "[1, 'x', None]");
    }
}
