//! Calendar dates and timestamps as the API writes them.

use serde::{Deserialize, Serialize};

/// A calendar date (YYYY-MM-DD), stored as its Julian day number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Date(i32);

impl Date {
    /// Parses exactly `YYYY-MM-DD` and refuses dates that do not exist (2026-02-30).
    pub fn parse(s: &str) -> Option<Date> {
        let b = s.as_bytes();
        if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
            return None;
        }
        let digits = |r: std::ops::Range<usize>| -> Option<i32> {
            s.get(r.clone())
                .filter(|p| p.bytes().all(|c| c.is_ascii_digit()))?
                .parse()
                .ok()
        };
        let year = digits(0..4)?;
        let month = u8::try_from(digits(5..7)?).ok()?;
        let day = u8::try_from(digits(8..10)?).ok()?;
        let month = time::Month::try_from(month).ok()?;
        let date = time::Date::from_calendar_date(year, month, day).ok()?;
        Some(Date(date.to_julian_day()))
    }

    /// The UTC date of a Unix timestamp.
    pub fn from_unix(secs: i64) -> Date {
        let days = secs.div_euclid(86_400);
        // 2440588 is the Julian day of 1970-01-01.
        Date((days + 2_440_588) as i32)
    }

    pub fn add_days(self, days: i64) -> Date {
        Date((self.0 as i64 + days) as i32)
    }

    /// Days from `earlier` to `self`.
    pub fn days_since(self, earlier: Date) -> i64 {
        self.0 as i64 - earlier.0 as i64
    }

    pub fn julian(self) -> i32 {
        self.0
    }

    pub fn year(self) -> i32 {
        self.to_time().year()
    }

    pub fn month(self) -> u8 {
        self.to_time().month() as u8
    }

    pub fn day(self) -> u8 {
        self.to_time().day()
    }

    /// The ISO 8601 week (weeks start on Monday): its year and number.
    pub fn iso_week(self) -> (i32, u8) {
        let (year, week, _) = self.to_time().to_iso_week_date();
        (year, week)
    }

    fn to_time(self) -> time::Date {
        time::Date::from_julian_day(self.0).unwrap_or(time::Date::MIN)
    }
}

impl std::fmt::Display for Date {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let d = self.to_time();
        write!(f, "{:04}-{:02}-{:02}", d.year(), d.month() as u8, d.day())
    }
}

/// ISO 8601 with a UTC offset, as every `datetime` element is written.
pub fn format_datetime(unix: i64) -> String {
    let t =
        time::OffsetDateTime::from_unix_timestamp(unix).unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}+00:00",
        t.year(),
        t.month() as u8,
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, expected: Option<&str>) {
        assert_eq!(
            Date::parse(input).map(|d| d.to_string()).as_deref(),
            expected,
            "{input}"
        );
    }

    #[test]
    fn dates_parse_strictly() {
        check("2026-11-21", Some("2026-11-21"));
        check("2024-02-29", Some("2024-02-29"));
        check("2026-02-30", None);
        check("2026-13-01", None);
        check("2026-1-01", None);
        check("26-11-21", None);
        check("2026-11-21T00:00", None);
        check("+026-11-21", None);
        check("", None);
    }

    #[test]
    fn iso_weeks_cross_year_boundaries() {
        let week = |s: &str| Date::parse(s).unwrap().iso_week();
        assert_eq!(week("2026-12-31"), (2026, 53));
        assert_eq!(week("2027-01-03"), (2026, 53));
        assert_eq!(week("2027-01-04"), (2027, 1));
        assert_eq!(week("2024-12-30"), (2025, 1));
    }

    #[test]
    fn timestamps_format_in_utc() {
        assert_eq!(format_datetime(0), "1970-01-01T00:00:00+00:00");
        assert_eq!(Date::from_unix(86_399).to_string(), "1970-01-01");
        assert_eq!(Date::from_unix(1_795_000_000).to_string(), "2026-11-18");
    }
}
