//! Ansible's arithmetic filters: `log` (natural, or in a `base`), `pow` and `root`
//! (square, or of a `base`), on numbers only, with Python's `math` results and errors.

use crate::template::undefined::Plugins;
use minijinja::value::{Kwargs, ValueKind};
use minijinja::{Error, ErrorKind, Value};

pub(super) fn register(env: &mut Plugins<'_>) {
    env.add_filter("log", |x: Value, base: Option<Value>, kwargs: Kwargs| {
        let base = super::positional_or_named(base, &kwargs, "base")?;
        kwargs.assert_all_used()?;
        let x = number(&x, "log")?;
        let value = match base {
            None => x.ln(),
            Some(base) => {
                let base = number(&base, "log")?;
                if base == 10.0 {
                    x.log10()
                } else {
                    if base == 1.0 {
                        return Err(invalid("float division by zero"));
                    }
                    x.ln() / base.ln()
                }
            }
        };
        finite(value)
    });
    env.add_filter("pow", |x: Value, y: Value| {
        finite(number(&x, "pow")?.powf(number(&y, "pow")?))
    });
    env.add_filter("root", |x: Value, base: Option<Value>, kwargs: Kwargs| {
        let base = super::positional_or_named(base, &kwargs, "base")?;
        kwargs.assert_all_used()?;
        let x = number(&x, "root")?;
        let value = match base {
            None => x.sqrt(),
            Some(base) => {
                let base = number(&base, "root")?;
                if base == 2.0 {
                    x.sqrt()
                } else {
                    x.powf(1.0 / base)
                }
            }
        };
        // Python's math raises ValueError where the result is not a real number, and
        // ansible-core reports that as it reports a value of the wrong type.
        finite(value).map_err(|_| invalid("root() can only be used on numbers"))
    });
}

fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::InvalidOperation, message.into())
}

/// The value as a number (Python's bool is one); anything else is the filter's
/// `can only be used on numbers` error.
fn number(value: &Value, filter: &str) -> Result<f64, Error> {
    match value.kind() {
        ValueKind::Number => f64::try_from(value.clone()).map_err(|e| invalid(e.to_string())),
        ValueKind::Bool => Ok(if value.is_true() { 1.0 } else { 0.0 }),
        _ => Err(invalid(format!("{filter}() can only be used on numbers"))),
    }
}

/// A result Python's `math` returns, or its `math domain error` where it has none.
fn finite(value: f64) -> Result<Value, Error> {
    if value.is_nan() || value.is_infinite() {
        Err(invalid("math domain error"))
    } else {
        Ok(Value::from(value))
    }
}

#[cfg(test)]
mod tests {
    use crate::template::filters::testing::{error, eval};
    use serde_json::json;

    #[test]
    fn logarithms_powers_and_roots() {
        assert_eq!(eval("1 | log"), json!(0.0));
        assert_eq!(eval("100 | log(10)"), json!(2.0));
        assert_eq!(eval("8 | log(2)"), json!(3.0));
        assert_eq!(eval("2 | pow(4)"), json!(16.0));
        assert_eq!(eval("4 | root"), json!(2.0));
        assert_eq!(eval("27 | root(3)"), json!(3.0));
        assert!(error("'yo' | log").contains("log() can only be used on numbers"));
        assert!(error("'yo' | pow(2)").contains("pow() can only be used on numbers"));
        assert!(error("-4 | root").contains("root() can only be used on numbers"));
        assert!(error("0 | log").contains("math domain error"));
    }
}
