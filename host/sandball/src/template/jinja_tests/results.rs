//! Tests on task results: `failed`, `succeeded`, `changed`, `skipped`, `unreachable`,
//! `reachable`, `timedout`, and `finished`/`started` of async jobs (and the other
//! names `failure`, `success`, `successful`, `change`, `skip`).

use minijinja::value::ValueKind;
use minijinja::{Error, ErrorKind, State, Value};

use crate::template::convert::ensure_defined;
use crate::template::undefined::Plugins;

pub(super) fn register(env: &mut Plugins<'_>) {
    env.add_test("failed", failed);
    env.add_test("failure", failed);
    env.add_test("succeeded", succeeded);
    env.add_test("success", succeeded);
    env.add_test("successful", succeeded);
    env.add_test("timedout", |state: &State, result: &Value| {
        ensure_defined(state, result)?;
        let period = result
            .get_item(&Value::from("timedout"))?
            .get_item(&Value::from("period"))
            .unwrap_or_default();
        Ok::<_, Error>(period.is_true())
    });
    // A result that is not an async job's counts as started and finished.
    env.add_test("finished", |state: &State, result: &Value| {
        async_flag(state, result, "finished")
    });
    env.add_test("started", |state: &State, result: &Value| {
        async_flag(state, result, "started")
    });
    env.add_test("changed", changed);
    env.add_test("change", changed);
    env.add_test("skipped", skipped);
    env.add_test("skip", skipped);
    env.add_test("unreachable", unreachable);
    env.add_test("reachable", |state: &State, result: &Value| {
        unreachable(state, result).map(|u| !u)
    });
}

/// The value of `flag` in a result, which must be a dictionary.
fn flag(state: &State, result: &Value, flag: &str, test: &str) -> Result<bool, Error> {
    ensure_defined(state, result)?;
    if result.kind() != ValueKind::Map {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            format!("The '{test}' test expects a dictionary"),
        ));
    }
    Ok(result.get_item(&Value::from(flag))?.is_true())
}

fn async_flag(state: &State, result: &Value, name: &str) -> Result<bool, Error> {
    let set = flag(state, result, name, name)?;
    let present = !result.get_item(&Value::from(name))?.is_undefined();
    Ok(set || !present)
}

fn failed(state: &State, result: &Value) -> Result<bool, Error> {
    flag(state, result, "failed", "failed")
}

fn succeeded(state: &State, result: &Value) -> Result<bool, Error> {
    flag(state, result, "failed", "succeeded").map(|failed| !failed)
}

fn skipped(state: &State, result: &Value) -> Result<bool, Error> {
    flag(state, result, "skipped", "skipped")
}

fn unreachable(state: &State, result: &Value) -> Result<bool, Error> {
    flag(state, result, "unreachable", "unreachable")
}

/// `changed`: the result's flag; for a loop result without one, whether any item changed.
fn changed(state: &State, result: &Value) -> Result<bool, Error> {
    let changed = flag(state, result, "changed", "changed")?;
    let own_flag = !result.get_item(&Value::from("changed"))?.is_undefined();
    if own_flag {
        return Ok(changed);
    }
    let results = result.get_item(&Value::from("results"))?;
    if results.kind() != ValueKind::Seq {
        return Ok(false);
    }
    for item in results.try_iter()?.checked() {
        let item = item?;
        if item.kind() == ValueKind::Map && item.get_item(&Value::from("changed"))?.is_true() {
            return Ok(true);
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use crate::template::filters::testing::{error, eval};
    use serde_json::json;

    #[test]
    fn result_flags() {
        assert_eq!(eval("{'failed': true} is failed"), json!(true));
        assert_eq!(eval("{'failed': false} is failed"), json!(false));
        assert_eq!(eval("{} is failed"), json!(false));
        assert_eq!(eval("{} is succeeded"), json!(true));
        assert_eq!(eval("{'failed': true} is success"), json!(false));
        assert_eq!(eval("{'changed': true} is changed"), json!(true));
        assert_eq!(eval("{'changed': false} is change"), json!(false));
        assert_eq!(eval("{'skipped': true} is skipped"), json!(true));
        assert_eq!(eval("{} is skip"), json!(false));
        assert_eq!(eval("{'unreachable': true} is unreachable"), json!(true));
        assert_eq!(eval("{} is reachable"), json!(true));
        assert_eq!(eval("{'failed': false} is successful"), json!(true));
        assert_eq!(eval("{'timedout': {'period': 3}} is timedout"), json!(true));
        assert_eq!(eval("{} is timedout"), json!(false));
        assert_eq!(eval("{'finished': 0} is finished"), json!(false));
        assert_eq!(eval("{'finished': true} is finished"), json!(true));
        assert_eq!(eval("{} is started"), json!(true));
        assert_eq!(
            eval("{'results': [{'changed': false}, {'changed': true}]} is changed"),
            json!(true)
        );
        assert_eq!(
            eval("{'results': [{'changed': false}]} is changed"),
            json!(false)
        );
        assert!(error("'x' is failed").contains("expects a dictionary"));
        assert!(error("nope is failed").contains("'nope' is undefined"));
    }
}
