//! ansible-core 2.19's summaries in a task result — a module's error summary, its
//! warning and deprecation summaries, ansible-core's own deprecations — as ansible-core
//! registers them and the default callback shows them.

use super::{TaskResult, push_warning};
use serde_json::{Map, Value, json};

/// Where a result keeps the error that the error shown before it says: an ansible-core
/// 2.19 module's `msg` and the causes its `exception` chains to it (a module's own
/// failure, not a crash).
pub const ERROR_MESSAGE: &str = "_ansible_error_message";

/// An ansible-core 2.19 module's `fail_json(exception=…)`: its `exception` is an error
/// summary, the message and the chain of its causes. As ansible-core keeps it, the
/// result's `exception` becomes the traceback (when the module captured one), and the
/// error shown before the result says the chain, each cause after its effect
/// (`Error executing command: [Errno 2] No such file or directory: …`).
pub(crate) fn error_summary(m: &mut Map<String, Value>) {
    let Some(Value::Object(summary)) = m.get("exception") else {
        return;
    };
    if summary.get("__ansible_type").and_then(Value::as_str) != Some("ErrorSummary") {
        return;
    }
    let Some(event) = summary.get("event") else {
        return;
    };
    let message = brief_message(event);
    let traceback = event
        .get("formatted_traceback")
        .and_then(Value::as_str)
        .unwrap_or(super::NO_TRACEBACK)
        .to_string();
    m.insert("exception".into(), Value::String(traceback));
    // A summary alone (an exception the module did not handle, reported by
    // ansible-core 2.19's loader) is the module's failure, said as its message.
    if !m.contains_key("msg") {
        m.insert(
            "msg".into(),
            Value::String(format!("Task failed: Module failed: {message}")),
        );
    }
    m.insert(ERROR_MESSAGE.into(), Value::String(message));
}

/// An ansible-core 2.19 module's `warnings` are summaries (an event, with its help
/// text): each becomes its text, as ansible-core registers it, the help text kept for
/// the default callback to show after it.
pub(crate) fn warning_summaries(m: &mut TaskResult) {
    let mut help = Vec::new();
    if let Some(Value::Array(warnings)) = m.get_mut("warnings") {
        for w in warnings.iter_mut() {
            if w.get("__ansible_type").and_then(Value::as_str) != Some("WarningSummary") {
                continue;
            }
            let Some(event) = w.get("event") else {
                continue;
            };
            let text = brief_message(event);
            if let Some(h) = event.get("help_text").and_then(Value::as_str) {
                help.push((text.clone(), h.to_string()));
            }
            *w = Value::String(text);
        }
    }
    for (text, h) in help {
        m.warning_help(&text, &h);
    }
}

/// A module's `deprecations` as ansible-core 2.19 registers them, whether the module
/// sent ansible-core 2.19 summaries (an event, its deprecator, `version` or `date`) or
/// the older `{msg, version|date, collection_name}`: each `{msg, collection_name,
/// deprecator: {resolved_name, type} | null}` and its `date`, else its `version` (null
/// when it has neither); the line the default callback shows for each is kept beside
/// them ([`TaskResult::deprecations_shown`]). An item that is neither is dropped with a
/// warning, as ansible-core drops it.
pub(crate) fn deprecations(m: &mut TaskResult) {
    let Some(Value::Array(items)) = m.remove("deprecations") else {
        return;
    };
    let mut registered = Vec::new();
    let mut shown = Vec::new();
    let mut invalid = Vec::new();
    for item in items {
        match deprecation(&item) {
            Some((entry, line)) => {
                registered.push(entry);
                shown.push(line);
            }
            None => invalid.push(item),
        }
    }
    m.insert("deprecations".into(), Value::Array(registered));
    m.deprecations_shown = shown;
    // Why, as Python's error says it.
    for item in invalid {
        let why = match &item {
            Value::Object(_) => "'msg'".to_string(),
            Value::Null => "'NoneType' object has no attribute 'pop'".to_string(),
            other => format!(
                "'{}' object has no attribute 'pop'",
                sandball_pycompat::pyfmt::short_type_name(other)
            ),
        };
        push_warning(
            m,
            format!("Task result `deprecations` contained an invalid item: {why}"),
        );
    }
}

/// A deprecation of ansible-core's own that reading or templating the playbook gave,
/// registered and shown as a module's of the same words is, its detail (where, and
/// what instead) after the line.
pub(crate) fn core_deprecation(d: &crate::template::Deprecation) -> Option<(Value, String)> {
    let item = json!({"msg": d.msg, "version": d.version, "collection_name": "ansible.builtin"});
    deprecation(&item).map(|(entry, line)| (entry, line + &d.detail))
}

/// Adds ansible-core's `deprecations` to a result's own, as ansible-core registers them.
pub(crate) fn register_deprecations(
    result: &mut Map<String, Value>,
    deprecations: &[crate::template::Deprecation],
) {
    let entries: Vec<Value> = deprecations
        .iter()
        .filter_map(|d| core_deprecation(d).map(|(entry, _)| entry))
        .collect();
    if entries.is_empty() {
        return;
    }
    match result.get_mut("deprecations") {
        Some(Value::Array(own)) => own.extend(entries),
        _ => {
            result.insert("deprecations".into(), Value::Array(entries));
        }
    }
}

/// One deprecation, registered and as shown; none when it is not one.
fn deprecation(item: &Value) -> Option<(Value, String)> {
    let summary = item.get("__ansible_type").and_then(Value::as_str) == Some("DeprecationSummary");
    let (event, deprecator) = if summary {
        let deprecator = item.get("deprecator").filter(|d| !d.is_null()).map(|d| {
            let name = d.get("resolved_name").cloned().unwrap_or(Value::Null);
            let kind = d.get("type").map(|t| t.get("value").unwrap_or(t).clone());
            json!({"resolved_name": name, "type": kind.unwrap_or(Value::Null)})
        });
        (item.get("event")?.clone(), deprecator)
    } else {
        let deprecator = item
            .get("collection_name")
            .and_then(Value::as_str)
            .map(|c| json!({"resolved_name": c, "type": null}));
        (json!({"msg": item.get("msg")?.as_str()?}), deprecator)
    };
    let head = event.get("msg")?.as_str()?;
    let msg = brief_message(&event);
    let text = |k: &str| item.get(k).and_then(Value::as_str);
    let (version, date) = (text("version"), text("date"));
    let collection = deprecator.as_ref().and_then(|d| {
        let name = d.get("resolved_name")?.as_str()?;
        let mut parts = name.splitn(3, '.');
        Some(format!("{}.{}", parts.next()?, parts.next()?))
    });
    let mut entry = json!({"msg": msg, "collection_name": collection, "deprecator": deprecator});
    match date {
        Some(d) => entry["date"] = json!(d),
        None => entry["version"] = json!(version),
    }
    // The line: the message, when and from what the feature goes, then the causes the
    // message chains to and its help text.
    let head = head.trim_end_matches('.');
    let mut line = format!("{head}. This feature will be removed");
    match &deprecator {
        None => line.push_str(" in the future"),
        Some(d) => {
            let name = d["resolved_name"].as_str().unwrap_or_default();
            let collection = collection.as_deref().unwrap_or(name);
            let from = if collection == "ansible.builtin" {
                "ansible-core".to_string()
            } else {
                format!("collection '{collection}'")
            };
            match d["type"].as_str() {
                Some(kind) => {
                    let short = name.rsplit('.').next().unwrap_or(name);
                    let kind = if kind == "module" {
                        kind.to_string()
                    } else {
                        format!("{kind} plugin")
                    };
                    line.push_str(&format!(" from {kind} '{short}' in {from}"));
                }
                None => line.push_str(&format!(" from {from}")),
            }
            match (version, date) {
                (_, Some(d)) => line.push_str(&format!(" in a release after {d}")),
                (Some(v), None) => line.push_str(&format!(" version {v}")),
                (None, None) => line.push_str(" in a future release"),
            }
        }
    }
    match msg.strip_prefix(head).filter(|causes| !causes.is_empty()) {
        Some(causes) => line.push_str(causes),
        None => line.push('.'),
    }
    if let Some(help) = event.get("help_text").and_then(Value::as_str) {
        line.push(' ');
        line.push_str(help);
    }
    Some((entry, line))
}

/// An event's message followed by those of the causes it chains to (while the chain
/// says to follow it), a cause already quoted at the end of its effect said once, as
/// ansible-core 2.19 writes an error briefly.
pub(crate) fn brief_message(event: &Value) -> String {
    let mut parts = Vec::new();
    let mut next = Some(event);
    while let Some(e) = next {
        parts.push(e.get("msg").and_then(Value::as_str).unwrap_or_default());
        next = e
            .get("chain")
            .filter(|c| c.get("follow").and_then(Value::as_bool) == Some(true))
            .and_then(|c| c.get("event"));
    }
    let mut parts = parts.into_iter().rev();
    let mut message = parts.next().unwrap_or_default().to_string();
    for part in parts {
        message = if part.ends_with(&message) {
            part.to_string()
        } else {
            format!("{}: {message}", part.trim_end_matches(['.', ' ']))
        };
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deprecations of both forms are registered and shown as ansible-core 2.19
    /// registers and shows them (the lines ansible-playbook printed for these items).
    #[test]
    fn deprecations_are_registered_and_shown_as_ansible_core_does() {
        let summary = |deprecator: Value, event: Value, when: Value| {
            let mut d = json!({"__ansible_type": "DeprecationSummary", "deprecator": deprecator, "event": event});
            d.as_object_mut()
                .unwrap()
                .extend(when.as_object().unwrap().clone());
            d
        };
        let plugin = |name: &str, kind: Option<&str>| {
            json!({"__ansible_type": "PluginInfo", "resolved_name": name,
                   "type": kind.map(|k| json!({"__ansible_type": "PluginType", "value": k}))})
        };
        let event = |msg: &str| json!({"__ansible_type": "Event", "msg": msg});
        let mut m = json!({"deprecations": [
            summary(plugin("ns.col", None), event("this thing is old"), json!({"version": "2.0.0"})),
            summary(plugin("ansible.legacy.depmod", Some("module")), event("d only"), json!({"date": "2027-01-01"})),
            summary(plugin("ansible.builtin", None), event("builtin v"), json!({"version": "2.21"})),
            summary(plugin("ansible.builtin.copy", Some("module")), event("bm"), json!({"version": "2.22"})),
            summary(plugin("community.general.thing", Some("lookup")), event("cl"), json!({})),
            summary(Value::Null, json!({"msg": "nodep", "help_text": "Use x."}), json!({"version": "3.0"})),
            summary(Value::Null, json!({"msg": "chained", "chain": {"follow": true, "event": event("inner")}}), json!({})),
            {"msg": "ends with dot.", "version": "1.0", "collection_name": "ns.col"},
            {"msg": "old date", "date": "2027-02-02"},
            "a string",
        ]});
        let mut r = TaskResult::from(m.as_object().unwrap().clone());
        deprecations(&mut r);
        let shown = &json!(r.deprecations_shown);
        m = Value::Object(r.fields);
        assert_eq!(
            shown,
            &json!([
                "this thing is old. This feature will be removed from collection 'ns.col' version 2.0.0.",
                "d only. This feature will be removed from module 'depmod' in collection 'ansible.legacy' in a release after 2027-01-01.",
                "builtin v. This feature will be removed from ansible-core version 2.21.",
                "bm. This feature will be removed from module 'copy' in ansible-core version 2.22.",
                "cl. This feature will be removed from lookup plugin 'thing' in collection 'community.general' in a future release.",
                "nodep. This feature will be removed in the future. Use x.",
                "chained. This feature will be removed in the future: inner",
                "ends with dot. This feature will be removed from collection 'ns.col' version 1.0.",
                "old date. This feature will be removed in the future.",
            ])
        );
        let registered = &m["deprecations"];
        assert_eq!(
            registered[1],
            json!({"collection_name": "ansible.legacy", "date": "2027-01-01", "msg": "d only",
                   "deprecator": {"resolved_name": "ansible.legacy.depmod", "type": "module"}})
        );
        assert_eq!(
            registered[4],
            json!({"collection_name": "community.general", "version": null, "msg": "cl",
                   "deprecator": {"resolved_name": "community.general.thing", "type": "lookup"}})
        );
        assert_eq!(
            registered[6],
            json!({"collection_name": null, "deprecator": null, "msg": "chained: inner", "version": null})
        );
        assert_eq!(
            registered[7],
            json!({"collection_name": "ns.col", "version": "1.0", "msg": "ends with dot.",
                   "deprecator": {"resolved_name": "ns.col", "type": null}})
        );
        assert_eq!(registered.as_array().unwrap().len(), 9);
        assert_eq!(
            m["warnings"],
            json!([
                "Task result `deprecations` contained an invalid item: 'str' object has no attribute 'pop'"
            ])
        );
    }
}
