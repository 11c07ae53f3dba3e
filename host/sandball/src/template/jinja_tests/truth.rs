//! `truthy` and `falsy`: Python truthiness, optionally reading strings like `bool` does.

use minijinja::value::{Kwargs, ValueKind};
use minijinja::{Error, Value};

use crate::template::undefined::Plugins;

pub(super) fn register(env: &mut Plugins<'_>) {
    env.add_test("truthy", is_truthy);
    env.add_test("falsy", |value: &Value, kwargs: Kwargs| {
        is_truthy(value, kwargs).map(|t| !t)
    });
}

/// `truthy(convert_bool=False)`.
fn is_truthy(value: &Value, kwargs: Kwargs) -> Result<bool, Error> {
    let convert_bool = kwargs.get::<Option<bool>>("convert_bool")?.unwrap_or(false);
    kwargs.assert_all_used()?;
    if convert_bool
        && value.kind() == ValueKind::String
        && let Some(word) = sandball_pycompat::boolean::word(value.as_str().unwrap_or_default())
    {
        return Ok(word);
    }
    Ok(value.is_true())
}

#[cfg(test)]
mod tests {
    use crate::template::filters::testing::eval;
    use serde_json::json;

    #[test]
    fn truthiness() {
        assert_eq!(eval("'x' is truthy"), json!(true));
        assert_eq!(eval("'' is truthy"), json!(false));
        assert_eq!(eval("[] is falsy"), json!(true));
        assert_eq!(eval("0 is falsy"), json!(true));
        assert_eq!(eval("'no' is truthy"), json!(true));
        assert_eq!(eval("'no' is truthy(convert_bool=true)"), json!(false));
        assert_eq!(eval("'yes' is falsy(convert_bool=true)"), json!(false));
    }
}
