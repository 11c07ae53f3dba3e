//! A duration printed as Python's `str(timedelta)` prints it (`0:00:00.001234`,
//! `1 day, 2:03:04`), the form of the `delta` field of Ansible's command results.

use std::time::Duration;

/// Formats `d` as `[D day[s], ]H:MM:SS[.ffffff]`.
pub fn format_delta(d: Duration) -> String {
    let secs = d.as_secs();
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let mut out = match days {
        0 => String::new(),
        1 => "1 day, ".to_string(),
        n => format!("{n} days, "),
    };
    out.push_str(&format!(
        "{}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    ));
    let micros = d.subsec_micros();
    if micros != 0 {
        out.push_str(&format!(".{micros:06}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_python_timedelta() {
        assert_eq!(format_delta(Duration::from_micros(1234)), "0:00:00.001234");
        assert_eq!(format_delta(Duration::from_secs(1)), "0:00:01");
        assert_eq!(format_delta(Duration::from_secs(3 * 3600 + 62)), "3:01:02");
        assert_eq!(format_delta(Duration::from_secs(86_400)), "1 day, 0:00:00");
        assert_eq!(
            format_delta(Duration::from_secs(2 * 86_400 + 5)),
            "2 days, 0:00:05"
        );
    }
}
