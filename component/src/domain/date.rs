//! Calendar dates and timestamps as the API writes them.

/// A calendar date (YYYY-MM-DD), stored as its Julian day number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
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

    /// The date of a Julian day number (as `julian` gives it).
    pub fn from_julian(day: i32) -> Date {
        Date(day)
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

    /// The date as the `time` crate has it, which e-invoices (`faktura_einvoice`) use.
    /// A date outside the years it holds (±9999) is its earliest, as `year`, `month` and
    /// `day` read it too.
    pub fn to_time(self) -> time::Date {
        time::Date::from_julian_day(self.0).unwrap_or(time::Date::MIN)
    }

    pub fn from_time(date: time::Date) -> Date {
        Date(date.to_julian_day())
    }
}

impl Date {
    /// Appends `YYYY-MM-DD`.
    pub fn push_to(self, out: &mut Vec<u8>) {
        let mut text = *b"0000-00-00";
        if self.fill(&mut text) {
            // A copy of constant length: stores, not a call out of the sandbox.
            out.extend_from_slice(&text);
        } else {
            let (year, month, day) = self.to_time().to_calendar_date();
            out.extend_from_slice(format!("{year:04}-{:02}-{day:02}", month as u8).as_bytes());
        }
    }

    /// Writes the digits of `YYYY-MM-DD` into `text`; false outside years 0–9999.
    fn fill(self, text: &mut [u8; 10]) -> bool {
        let (year @ 0..=9999, month, day) = self.civil() else {
            return false;
        };
        digits_into(text, 4, year as u64, 4);
        digits_into(text, 7, month.into(), 2);
        digits_into(text, 10, day.into(), 2);
        true
    }

    /// Year, month and day in the proleptic Gregorian calendar, by integer arithmetic
    /// alone (Howard Hinnant's `civil_from_days`): every response writes several dates
    /// per record.
    fn civil(self) -> (i64, u8, u8) {
        // Days since 0000-03-01, so that a leap day ends its year.
        let z = self.0 as i64 - 2_440_588 + 719_468;
        let era = z.div_euclid(146_097);
        let day_of_era = z - era * 146_097;
        let year_of_era =
            (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
        let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
        let month_from_march = (5 * day_of_year + 2) / 153;
        let day = (day_of_year - (153 * month_from_march + 2) / 5 + 1) as u8;
        let month = if month_from_march < 10 {
            month_from_march + 3
        } else {
            month_from_march - 9
        } as u8;
        let year = year_of_era + era * 400 + i64::from(month <= 2);
        (year, month, day)
    }
}

/// Appends the decimal digits of `n`, zero-padded to at least `width`.
pub fn push_digits(out: &mut Vec<u8>, n: u64, width: usize) {
    let mut digits = [0u8; 20];
    let at = digits_into(&mut digits, 20, n, width.min(20));
    out.extend_from_slice(&digits[at..]);
}

/// Writes ASCII that a `push_to` appended (`Display` of the formatted values).
pub fn write_ascii(f: &mut std::fmt::Formatter<'_>, ascii: &[u8]) -> std::fmt::Result {
    f.write_str(std::str::from_utf8(ascii).map_err(|_| std::fmt::Error)?)
}

/// Writes the decimal digits of `n` (zero-padded to `width`) to end at `buf[end]`;
/// returns where they start.
pub fn digits_into(buf: &mut [u8], mut end: usize, mut n: u64, width: usize) -> usize {
    let least = end - width;
    loop {
        end -= 1;
        buf[end] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 && end <= least {
            return end;
        }
    }
}

impl std::fmt::Display for Date {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut s = Vec::with_capacity(10);
        self.push_to(&mut s);
        write_ascii(f, &s)
    }
}

/// ISO 8601 with a UTC offset, as every `datetime` element is written.
pub fn format_datetime(unix: i64) -> String {
    DateTime(unix).to_string()
}

/// Unix seconds, displayed as `format_datetime` writes them.
#[derive(Debug, Clone, Copy)]
pub struct DateTime(pub i64);

impl DateTime {
    /// Appends `YYYY-MM-DDThh:mm:ss+00:00`; instants outside years 0–9999 as the epoch.
    pub fn push_to(self, out: &mut Vec<u8>) {
        const FIRST: i64 = -62_167_219_200; // 0000-01-01T00:00:00Z
        const LAST: i64 = 253_402_300_799; // 9999-12-31T23:59:59Z
        let secs = if (FIRST..=LAST).contains(&self.0) {
            self.0
        } else {
            0
        };
        let mut text = *b"0000-00-00T00:00:00+00:00";
        let mut date = *b"0000-00-00";
        let in_range = Date::from_unix(secs).fill(&mut date);
        debug_assert!(in_range, "years 0–9999 by the bounds above");
        text[..10].copy_from_slice(&date);
        let of_day = secs.rem_euclid(86_400) as u64;
        digits_into(&mut text, 13, of_day / 3600, 2);
        digits_into(&mut text, 16, of_day / 60 % 60, 2);
        digits_into(&mut text, 19, of_day % 60, 2);
        out.extend_from_slice(&text);
    }
}

impl std::fmt::Display for DateTime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut s = Vec::with_capacity(25);
        self.push_to(&mut s);
        write_ascii(f, &s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates_are_the_calendar_dates_of_the_time_crate() {
        let first = time::Date::from_calendar_date(0, time::Month::January, 1)
            .unwrap()
            .to_julian_day();
        let last = time::Date::from_calendar_date(9999, time::Month::December, 31)
            .unwrap()
            .to_julian_day();
        let modern = Date::parse("1600-01-01").unwrap().0..Date::parse("2400-01-01").unwrap().0;
        let mut day = first;
        while day <= last {
            let date = Date(day);
            let (year, month, d) = date.to_time().to_calendar_date();
            assert_eq!(date.civil(), (i64::from(year), month as u8, d), "{day}");
            day += if modern.contains(&day) { 1 } else { 7 };
        }
        // Outside years 0–9999 dates are written as before: the time crate's (which
        // clamps after 9999).
        let written = |day| {
            let mut out = Vec::new();
            Date(day).push_to(&mut out);
            String::from_utf8(out).unwrap()
        };
        assert_eq!(written(first - 1), "-001-12-31");
        assert_eq!(written(last + 1), "-9999-01-01");
        assert_eq!(written(last), "9999-12-31");
    }

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
        assert_eq!(format_datetime(-1), "1969-12-31T23:59:59+00:00");
        assert_eq!(
            format_datetime(-62_167_219_200),
            "0000-01-01T00:00:00+00:00"
        );
        assert_eq!(
            format_datetime(253_402_300_799),
            "9999-12-31T23:59:59+00:00"
        );
        // Beyond what four digits of year hold: the epoch, as before.
        assert_eq!(
            format_datetime(253_402_300_800),
            "1970-01-01T00:00:00+00:00"
        );
        assert_eq!(format_datetime(i64::MIN), "1970-01-01T00:00:00+00:00");
    }

    proptest::proptest! {
        /// The hand-written formatting agrees with the calendar of the `time` crate.
        #[test]
        fn timestamps_format_as_the_calendar_says(secs in -62_167_219_200i64..=253_402_300_799) {
            let t = time::OffsetDateTime::from_unix_timestamp(secs).unwrap();
            let expected = format!(
                "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}+00:00",
                t.year(),
                t.month() as u8,
                t.day(),
                t.hour(),
                t.minute(),
                t.second()
            );
            proptest::prop_assert_eq!(format_datetime(secs), expected);
        }
    }
}
