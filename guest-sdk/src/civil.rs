//! Calendar date and time of day for a moment since the Unix epoch, printed as
//! Python's `str(datetime)` prints it (`2024-01-02 03:04:05.000012`), which is how
//! Ansible's modules report `start`/`end` times and name backup files.
//!
//! WASI 0.2 gives a module no time zone, so times are UTC.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A UTC calendar date and time of day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DateTime {
    /// Year (e.g. 2024).
    pub year: i64,
    /// Month, 1–12.
    pub month: u32,
    /// Day of the month, 1–31.
    pub day: u32,
    /// Hour, 0–23.
    pub hour: u32,
    /// Minute, 0–59.
    pub minute: u32,
    /// Second, 0–59.
    pub second: u32,
    /// Microseconds, 0–999999.
    pub micro: u32,
}

impl DateTime {
    /// The date and time `t` after the Unix epoch.
    pub fn from_unix(t: Duration) -> DateTime {
        let secs = t.as_secs();
        let days = (secs / 86_400) as i64;
        let rem = (secs % 86_400) as u32;
        let (year, month, day) = civil_from_days(days);
        DateTime {
            year,
            month,
            day,
            hour: rem / 3600,
            minute: rem % 3600 / 60,
            second: rem % 60,
            micro: t.subsec_micros(),
        }
    }
}

/// Time since the Unix epoch by the wall clock (zero if the clock reads earlier).
pub fn since_epoch() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
}

/// Year, month and day of the day `days` after 1970-01-01 (proleptic Gregorian).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    // Shift to a calendar whose years start on March 1st, so the leap day is last.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

impl fmt::Display for DateTime {
    /// Python's `str(datetime)`: microseconds only when there are some.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )?;
        if self.micro != 0 {
            write!(f, ".{:06}", self.micro)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_epoch_seconds_to_calendar_dates() {
        let d = DateTime::from_unix(Duration::ZERO);
        assert_eq!((d.year, d.month, d.day, d.hour), (1970, 1, 1, 0));
        // 2000-02-29 12:34:56 UTC, a leap day in a century leap year.
        let d = DateTime::from_unix(Duration::from_secs(951_827_696));
        assert_eq!(
            (d.year, d.month, d.day, d.hour, d.minute, d.second),
            (2000, 2, 29, 12, 34, 56)
        );
        // 2024-12-31 23:59:59 UTC.
        let d = DateTime::from_unix(Duration::from_secs(1_735_689_599));
        assert_eq!((d.year, d.month, d.day, d.second), (2024, 12, 31, 59));
    }

    #[test]
    fn prints_like_python_datetime() {
        let d = DateTime::from_unix(Duration::from_secs(1_704_164_645));
        assert_eq!(d.to_string(), "2024-01-02 03:04:05");
        let d = DateTime::from_unix(Duration::new(1_704_164_645, 12_000));
        assert_eq!(d.to_string(), "2024-01-02 03:04:05.000012");
    }
}
