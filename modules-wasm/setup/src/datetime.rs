//! `date_time`: the node's local date and time (its time zone comes from the host
//! interface: the shim's `TZ` and `/etc/localtime`), in the strings ansible-core gives.

use sandball_guest_sdk::host;
use sandball_guest_sdk::prelude::*;
use std::time::{SystemTime, UNIX_EPOCH};

const WEEKDAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

/// A broken-down time.
#[derive(Debug, PartialEq, Eq)]
struct Civil {
    year: i64,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
    /// 0 = Sunday.
    weekday: u32,
    /// Day of the year, 0-based.
    yday: u32,
}

/// The civil time `secs` seconds after the epoch (proleptic Gregorian calendar).
fn civil(secs: i64) -> Civil {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (year, month, day) = sandball_guest_sdk::civil::civil_from_days(days);
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    const BEFORE: [u32; 12] = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];
    let yday = BEFORE[month as usize - 1] + day - 1 + u32::from(leap && month > 2);
    Civil {
        year,
        month,
        day,
        hour: (rem / 3600) as u32,
        minute: (rem % 3600 / 60) as u32,
        second: (rem % 60) as u32,
        weekday: (days + 4).rem_euclid(7) as u32,
        yday,
    }
}

/// `%z`: `+0100`.
fn offset_text(offset: i32) -> String {
    let sign = if offset < 0 { '-' } else { '+' };
    let a = offset.unsigned_abs();
    format!("{sign}{:02}{:02}", a / 3600, a % 3600 / 60)
}

/// The `date_time` fact for the instant `secs` + `micros`.
fn date_time(secs: i64, micros: u32, zone: &host::Zone) -> Value {
    let local = civil(secs + i64::from(zone.offset));
    let utc = civil(secs);
    // %W: weeks starting on Monday; days before the first Monday are week 0.
    let monday_based = (local.weekday + 6) % 7;
    let week = (local.yday + 7 - monday_based) / 7;
    let date = format!("{:04}-{:02}-{:02}", local.year, local.month, local.day);
    let time = format!("{:02}:{:02}:{:02}", local.hour, local.minute, local.second);
    let basic_short = format!(
        "{:04}{:02}{:02}T{:02}{:02}{:02}",
        local.year, local.month, local.day, local.hour, local.minute, local.second
    );
    let utc_text = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        utc.year, utc.month, utc.day, utc.hour, utc.minute, utc.second
    );
    json!({
        "year": format!("{:04}", local.year),
        "month": format!("{:02}", local.month),
        "weekday": WEEKDAYS[local.weekday as usize],
        "weekday_number": local.weekday.to_string(),
        "weeknumber": format!("{week:02}"),
        "day": format!("{:02}", local.day),
        "hour": format!("{:02}", local.hour),
        "minute": format!("{:02}", local.minute),
        "second": format!("{:02}", local.second),
        "epoch": secs.to_string(),
        "epoch_int": secs.to_string(),
        "date": date,
        "time": time,
        "iso8601_micro": format!("{utc_text}.{micros:06}Z"),
        "iso8601": format!("{utc_text}Z"),
        "iso8601_basic": format!("{basic_short}{micros:06}"),
        "iso8601_basic_short": basic_short,
        "tz": zone.name,
        "tz_dst": zone.daylight_name,
        "tz_offset": offset_text(zone.offset),
    })
}

/// Adds `date_time`.
pub fn collect(facts: &mut Map<String, Value>) {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let secs = i64::try_from(now.as_secs()).unwrap_or(i64::MAX);
    let zone = host::local_zone(secs);
    facts.insert(
        "date_time".into(),
        date_time(secs, now.subsec_micros(), &zone),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_times_and_weeks() {
        let c = civil(1_795_474_142);
        assert_eq!(
            (
                c.year, c.month, c.day, c.hour, c.minute, c.second, c.weekday
            ),
            (2026, 11, 23, 22, 49, 2, 1)
        );
        let zone = host::Zone {
            offset: 3600,
            name: "CET".into(),
            dst: false,
            standard_name: "CET".into(),
            daylight_name: "CEST".into(),
        };
        let dt = date_time(1_795_474_142, 171_902, &zone);
        assert_eq!(dt["weeknumber"], json!("47"));
        assert_eq!(dt["hour"], json!("23"));
        assert_eq!(dt["iso8601"], json!("2026-11-23T22:49:02Z"));
        assert_eq!(dt["iso8601_basic"], json!("20261123T234902171902"));
        assert_eq!(dt["tz_offset"], json!("+0100"));
        assert_eq!(dt["tz_dst"], json!("CEST"));
        // 2024-01-01 was a Monday: week 01; 2023-01-01 a Sunday: week 00.
        assert_eq!(
            date_time(1_704_067_200, 0, &host::Zone::default())["weeknumber"],
            json!("01")
        );
        assert_eq!(
            date_time(1_672_531_200, 0, &host::Zone::default())["weeknumber"],
            json!("00")
        );
        assert_eq!(offset_text(-19_800), "-0530");
        let leap = civil(1_709_164_800); // 2024-02-29
        assert_eq!((leap.month, leap.day, leap.yday), (2, 29, 59));
    }
}
