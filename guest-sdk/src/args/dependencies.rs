//! Checks between arguments of one spec level: `required`, `mutually_exclusive`,
//! `required_together`, `required_one_of`, `required_if` and `required_by`, with
//! Ansible's messages. An argument counts as given when its key is present, even with
//! a null value (except for `required_by`, which ignores nulls, as Ansible does).

use super::error::{ArgError, ArgErrorKind, found_in};
use sandball_pycompat::pyfmt::py_str;
use sandball_pycompat::pyops::py_eq;
use sandball_wire::manifest::{ArgSpec, Dependencies};
use serde_json::{Map, Value};

fn count(terms: &[String], params: &Map<String, Value>) -> usize {
    terms
        .iter()
        .filter(|t| params.contains_key(t.as_str()))
        .count()
}

/// `required: true` arguments that are absent.
pub fn check_required(
    spec: &[(String, ArgSpec)],
    params: &Map<String, Value>,
    context: &[String],
) -> Option<ArgError> {
    let mut missing: Vec<&str> = spec
        .iter()
        .filter(|(name, s)| s.required && !params.contains_key(name))
        .map(|(name, _)| name.as_str())
        .collect();
    if missing.is_empty() {
        return None;
    }
    missing.sort_unstable();
    Some(ArgError::new(
        ArgErrorKind::Required,
        format!(
            "missing required arguments: {}{}",
            missing.join(", "),
            found_in(context)
        ),
    ))
}

/// Groups of which more than one argument is given.
pub fn check_mutually_exclusive(
    deps: &Dependencies,
    params: &Map<String, Value>,
    context: &[String],
) -> Option<ArgError> {
    let violated: Vec<String> = deps
        .mutually_exclusive
        .iter()
        .filter(|group| count(group, params) > 1)
        .map(|group| group.join("|"))
        .collect();
    (!violated.is_empty()).then(|| {
        ArgError::new(
            ArgErrorKind::MutuallyExclusive,
            format!(
                "parameters are mutually exclusive: {}{}",
                violated.join(", "),
                found_in(context)
            ),
        )
    })
}

/// The dependency checks that run after type conversion, in Ansible's order; the
/// first violation of each kind is reported.
pub fn check_dependencies(
    deps: &Dependencies,
    params: &Map<String, Value>,
    context: &[String],
) -> Vec<ArgError> {
    [
        check_required_together(deps, params, context),
        check_required_one_of(deps, params, context),
        check_required_if(deps, params, context),
        check_required_by(deps, params, context),
    ]
    .into_iter()
    .flatten()
    .collect()
}

fn check_required_together(
    deps: &Dependencies,
    params: &Map<String, Value>,
    context: &[String],
) -> Option<ArgError> {
    deps.required_together
        .iter()
        .find(|group| {
            let n = count(group, params);
            n > 0 && n < group.len()
        })
        .map(|group| {
            ArgError::new(
                ArgErrorKind::RequiredTogether,
                format!(
                    "parameters are required together: {}{}",
                    group.join(", "),
                    found_in(context)
                ),
            )
        })
}

fn check_required_one_of(
    deps: &Dependencies,
    params: &Map<String, Value>,
    context: &[String],
) -> Option<ArgError> {
    deps.required_one_of
        .iter()
        .find(|group| count(group, params) == 0)
        .map(|group| {
            ArgError::new(
                ArgErrorKind::RequiredOneOf,
                format!(
                    "one of the following is required: {}{}",
                    group.join(", "),
                    found_in(context)
                ),
            )
        })
}

fn check_required_if(
    deps: &Dependencies,
    params: &Map<String, Value>,
    context: &[String],
) -> Option<ArgError> {
    deps.required_if.iter().find_map(|rule| {
        let triggered = params.get(&rule.key).is_some_and(|v| py_eq(v, &rule.value));
        if !triggered {
            return None;
        }
        let missing: Vec<&str> = rule
            .requirements
            .iter()
            .filter(|r| !params.contains_key(r.as_str()))
            .map(String::as_str)
            .collect();
        let violated = if rule.any {
            !missing.is_empty() && missing.len() == rule.requirements.len()
        } else {
            !missing.is_empty()
        };
        violated.then(|| {
            ArgError::new(
                ArgErrorKind::RequiredIf,
                format!(
                    "{} is {} but {} of the following are missing: {}{}",
                    rule.key,
                    py_str(&rule.value),
                    if rule.any { "any" } else { "all" },
                    missing.join(", "),
                    found_in(context)
                ),
            )
        })
    })
}

fn check_required_by(
    deps: &Dependencies,
    params: &Map<String, Value>,
    context: &[String],
) -> Option<ArgError> {
    let given = |name: &str| params.get(name).is_some_and(|v| !v.is_null());
    deps.required_by.iter().find_map(|(key, requirements)| {
        if !given(key) {
            return None;
        }
        let missing: Vec<&str> = requirements
            .iter()
            .filter(|r| !given(r))
            .map(String::as_str)
            .collect();
        (!missing.is_empty()).then(|| {
            ArgError::new(
                ArgErrorKind::RequiredBy,
                format!(
                    "missing parameter(s) required by '{key}': {}{}",
                    missing.join(", "),
                    found_in(context)
                ),
            )
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deps(v: Value) -> Dependencies {
        serde_json::from_value(v).unwrap()
    }

    fn params(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    fn messages(d: &Dependencies, p: Value) -> Vec<String> {
        check_dependencies(d, &params(p), &[])
            .into_iter()
            .map(|e| e.message)
            .collect()
    }

    #[test]
    fn required_arguments_sorted_and_in_context() {
        let spec: Vec<(String, ArgSpec)> = vec![
            (
                "zeta".into(),
                ArgSpec {
                    required: true,
                    ..ArgSpec::default()
                },
            ),
            (
                "alpha".into(),
                ArgSpec {
                    required: true,
                    ..ArgSpec::default()
                },
            ),
            (
                "given".into(),
                ArgSpec {
                    required: true,
                    ..ArgSpec::default()
                },
            ),
        ];
        let e = check_required(
            &spec,
            &params(json!({"given": null})),
            &["top".into(), "sub".into()],
        )
        .unwrap();
        assert_eq!(
            e.message,
            "missing required arguments: alpha, zeta found in top -> sub"
        );
        assert_eq!(e.kind, ArgErrorKind::Required);
    }

    #[test]
    fn mutually_exclusive_lists_every_violated_group() {
        let d = deps(json!({"mutually_exclusive": [["a", "b"], ["c", "d"], ["e", "f"]]}));
        let e = check_mutually_exclusive(
            &d,
            &params(json!({"a": 1, "b": null, "c": 1, "d": 2, "e": 1})),
            &[],
        )
        .unwrap();
        assert_eq!(e.message, "parameters are mutually exclusive: a|b, c|d");
        assert!(check_mutually_exclusive(&d, &params(json!({"a": 1, "c": 1})), &[]).is_none());
    }

    #[test]
    fn required_together_and_one_of() {
        let d = deps(json!({"required_together": [["x", "y"]], "required_one_of": [["p", "q"]]}));
        assert_eq!(
            messages(&d, json!({"x": 1})),
            vec![
                "parameters are required together: x, y",
                "one of the following is required: p, q"
            ]
        );
        assert!(messages(&d, json!({"x": 1, "y": 2, "q": 0})).is_empty());
    }

    #[test]
    fn required_if_three_and_four_element_forms() {
        let d = deps(json!({"required_if": [
            ["state", "link", ["src"]],
            ["state", "present", ["path", "content"], true],
            ["force", true, ["reason", "code"]]
        ]}));
        assert_eq!(
            messages(&d, json!({"state": "link"})),
            vec!["state is link but all of the following are missing: src"]
        );
        assert_eq!(
            messages(&d, json!({"state": "present"})),
            vec!["state is present but any of the following are missing: path, content"]
        );
        assert!(messages(&d, json!({"state": "present", "content": "x"})).is_empty());
        assert_eq!(
            messages(&d, json!({"force": true, "code": 1})),
            vec!["force is True but all of the following are missing: reason"]
        );
        assert!(messages(&d, json!({"force": false})).is_empty());
        assert!(messages(&d, json!({"state": "absent"})).is_empty());
    }

    #[test]
    fn required_by_ignores_nulls() {
        let d = deps(json!({"required_by": {"force": "reason", "path": ["mode", "owner"]}}));
        assert_eq!(
            messages(&d, json!({"force": true})),
            vec!["missing parameter(s) required by 'force': reason"]
        );
        assert_eq!(
            messages(&d, json!({"path": "/x", "owner": null})),
            vec!["missing parameter(s) required by 'path': mode, owner"]
        );
        assert!(messages(&d, json!({"force": null})).is_empty());
        let e = check_dependencies(&d, &params(json!({"force": 1})), &["opts".into()]);
        assert_eq!(
            e[0].message,
            "missing parameter(s) required by 'force': reason found in opts"
        );
    }
}
