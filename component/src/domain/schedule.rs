//! When things fall due: the dates of a series (the k-th run of a recurring, computed from
//! its start and never from the last run, so that it cannot drift), the moment a date's
//! hour begins in a time zone (across DST changes), and the day a moment falls on in a
//! zone. Pure: the zone database is jiff's bundled copy of the IANA database.

use jiff::civil;
use jiff::tz::TimeZone;

use super::date::Date;

/// How often a series runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cycle {
    Daily,
    Weekly,
    Monthly,
    Quarterly,
    Semiyearly,
    Yearly,
}

impl Cycle {
    pub const NAMES: &'static [&'static str] = &[
        "DAILY",
        "WEEKLY",
        "MONTHLY",
        "QUARTERLY",
        "SEMIYEARLY",
        "YEARLY",
    ];

    pub fn parse(s: &str) -> Option<Cycle> {
        Some(match s.trim().to_ascii_uppercase().as_str() {
            "DAILY" => Cycle::Daily,
            "WEEKLY" => Cycle::Weekly,
            "MONTHLY" => Cycle::Monthly,
            "QUARTERLY" => Cycle::Quarterly,
            "SEMIYEARLY" => Cycle::Semiyearly,
            "YEARLY" => Cycle::Yearly,
            _ => return None,
        })
    }

    /// The cycle as days or months: one of the two is 0.
    fn length(self) -> (i64, i64) {
        match self {
            Cycle::Daily => (1, 0),
            Cycle::Weekly => (7, 0),
            Cycle::Monthly => (0, 1),
            Cycle::Quarterly => (0, 3),
            Cycle::Semiyearly => (0, 6),
            Cycle::Yearly => (0, 12),
        }
    }
}

/// The date of run `k` (0 for the first) of a series that starts on `start` and runs every
/// `every` cycles: `start + k × every × cycle`. A day the month lacks falls back to the
/// month's last day (31 Jan, 28 Feb, 31 Mar); with `ultimo` every run of a monthly or
/// longer cycle is the last day of its month.
pub fn run_date(start: Date, cycle: Cycle, every: u32, k: u64, ultimo: bool) -> Date {
    let steps = (k as i64).saturating_mul(every.max(1) as i64);
    match cycle.length() {
        (days, 0) => start.add_days(days.saturating_mul(steps)),
        (_, months) => {
            let months = months.saturating_mul(steps);
            let index = start.year() as i64 * 12 + (start.month() as i64 - 1) + months;
            let (year, month) = (
                index.div_euclid(12) as i32,
                (index.rem_euclid(12) + 1) as u8,
            );
            let last = days_in_month(year, month);
            let day = if ultimo { last } else { start.day().min(last) };
            date_of(year, month, day)
        }
    }
}

fn date_of(year: i32, month: u8, day: u8) -> Date {
    Date::parse(&format!("{year:04}-{month:02}-{day:02}")).unwrap_or(Date::from_julian(0))
}

/// The days of a month of a year.
pub fn days_in_month(year: i32, month: u8) -> u8 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        _ => 28,
    }
}

/// The time zone named `name` (IANA), if the bundled database knows it.
pub fn zone(name: &str) -> Option<TimeZone> {
    jiff::tz::db().get(name.trim()).ok()
}

/// The Unix second at which `hour` begins on `date` in `zone`; in the hour a spring DST
/// change skips, the first moment after it.
pub fn instant(date: Date, hour: u8, zone: &TimeZone) -> i64 {
    let civil = civil::date(date.year() as i16, date.month() as i8, date.day() as i8).at(
        hour.min(23) as i8,
        0,
        0,
        0,
    );
    match zone.to_ambiguous_zoned(civil).compatible() {
        Ok(zoned) => zoned.timestamp().as_second(),
        Err(_) => (date.julian() as i64 - 2_440_588) * 86_400 + hour as i64 * 3600,
    }
}

/// The day `unix` falls on in `zone`.
pub fn day_in(unix: i64, zone: &TimeZone) -> Date {
    let offset = jiff::Timestamp::from_second(unix)
        .map(|t| zone.to_offset(t).seconds() as i64)
        .unwrap_or(0);
    Date::from_unix(unix + offset)
}

/// The next moment after `unix` at which `zone` changes its UTC offset, if it does.
pub fn next_change(unix: i64, zone: &TimeZone) -> Option<i64> {
    let t = jiff::Timestamp::from_second(unix).ok()?;
    zone.following(t)
        .next()
        .map(|tr| tr.timestamp().as_second())
}

/// The seconds `zone` is ahead of UTC at `unix`.
pub fn utc_offset(unix: i64, zone: &TimeZone) -> i32 {
    jiff::Timestamp::from_second(unix)
        .map(|t| zone.to_offset(t).seconds())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Date {
        Date::parse(s).unwrap()
    }

    #[test]
    fn monthly_runs_fall_back_to_the_months_last_day_and_never_drift() {
        let start = d("2027-01-31");
        let runs: Vec<String> = (0..5)
            .map(|k| run_date(start, Cycle::Monthly, 1, k, false).to_string())
            .collect();
        assert_eq!(
            runs,
            [
                "2027-01-31",
                "2027-02-28",
                "2027-03-31",
                "2027-04-30",
                "2027-05-31"
            ]
        );
        // February of a leap year, and ultimo.
        assert_eq!(
            run_date(d("2028-01-30"), Cycle::Monthly, 1, 1, false).to_string(),
            "2028-02-29"
        );
        assert_eq!(
            run_date(d("2028-01-15"), Cycle::Monthly, 1, 1, true).to_string(),
            "2028-02-29"
        );
        assert_eq!(
            run_date(d("2027-11-30"), Cycle::Quarterly, 1, 1, false).to_string(),
            "2028-02-29"
        );
        assert_eq!(
            run_date(d("2027-08-31"), Cycle::Semiyearly, 1, 1, false).to_string(),
            "2028-02-29"
        );
        assert_eq!(
            run_date(d("2028-02-29"), Cycle::Yearly, 1, 1, false).to_string(),
            "2029-02-28"
        );
        assert_eq!(
            run_date(d("2027-01-01"), Cycle::Weekly, 2, 3, false).to_string(),
            "2027-02-12"
        );
        assert_eq!(
            run_date(d("2027-12-30"), Cycle::Daily, 1, 3, false).to_string(),
            "2028-01-02"
        );
    }

    #[test]
    fn an_hour_is_found_in_its_zone_across_both_dst_changes() {
        let berlin = zone("Europe/Berlin").unwrap();
        // Winter: UTC+1; summer: UTC+2.
        let jan = instant(d("2027-01-15"), 2, &berlin);
        let jul = instant(d("2027-07-15"), 2, &berlin);
        assert_eq!(jan % 86_400, 3600, "02:00 CET is 01:00 UTC");
        assert_eq!(jul % 86_400, 0, "02:00 CEST is 00:00 UTC");
        // 28 March 2027: 02:00 does not exist in Berlin; the run is at 03:00 CEST.
        let spring = instant(d("2027-03-28"), 2, &berlin);
        assert_eq!(spring % 86_400, 3600);
        assert_eq!(day_in(spring, &berlin), d("2027-03-28"));
        // 31 October 2027: 02:00 happens twice; the first.
        let autumn = instant(d("2027-10-31"), 2, &berlin);
        assert_eq!(autumn % 86_400, 0);
        let new_york = zone("America/New_York").unwrap();
        assert_eq!(instant(d("2027-01-15"), 23, &new_york) % 86_400, 4 * 3600);
        assert_eq!(
            day_in(instant(d("2027-01-15"), 23, &new_york), &new_york),
            d("2027-01-15")
        );
        assert!(zone("Mars/Olympus").is_none());
    }
}
