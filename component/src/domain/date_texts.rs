//! Date placeholders in the texts of a recurring invoice's runs, resolved for the date of
//! the run: `[YYYY]`, `[YY]`, `[MM]`, `[DD]`, and `[Date.year]`, `[Date.month]`,
//! `[Date.day]`, `[Date.month_name]`, each with an optional offset in days, months or years
//! (`[Date.month_name + 1M]`, `[Date.year - 1Y]`, `[Date.day + 14D]`). Month names are
//! German for a `de` locale, English otherwise. Unknown placeholders stay as written.

use super::date::Date;
use super::schedule;

const MONTHS_EN: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

const MONTHS_DE: [&str; 12] = [
    "Januar",
    "Februar",
    "März",
    "April",
    "Mai",
    "Juni",
    "Juli",
    "August",
    "September",
    "Oktober",
    "November",
    "Dezember",
];

/// `text` with its date placeholders resolved for `date`, month names in `locale`'s
/// language.
pub fn resolve(text: &str, date: Date, locale: &str) -> String {
    if !text.contains('[') {
        return text.to_owned();
    }
    let iso = date.to_string();
    let text = text
        .replace("[YYYY]", &iso[0..4])
        .replace("[YY]", &iso[2..4])
        .replace("[MM]", &iso[5..7])
        .replace("[DD]", &iso[8..10]);
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(start) = rest.find("[Date.") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        match after
            .find(']')
            .and_then(|end| Some((end, value(&after[..end], date, locale)?)))
        {
            Some((end, v)) => {
                out.push_str(&v);
                rest = &after[end + 1..];
            }
            None => {
                out.push('[');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The value of one placeholder (without brackets), `None` when it is not one.
fn value(placeholder: &str, date: Date, locale: &str) -> Option<String> {
    let body = placeholder.strip_prefix("Date.")?;
    let (field, offset) = match body.find(['+', '-']) {
        Some(at) => (body[..at].trim(), Some(body[at..].replace(' ', ""))),
        None => (body.trim(), None),
    };
    let date = match offset {
        Some(o) => shifted(date, &o)?,
        None => date,
    };
    let month = date.month() as usize - 1;
    Some(match field {
        "year" => date.year().to_string(),
        "month" => format!("{:02}", date.month()),
        "day" => format!("{:02}", date.day()),
        "month_name" if locale.to_ascii_lowercase().starts_with("de") => {
            MONTHS_DE[month].to_owned()
        }
        "month_name" => MONTHS_EN[month].to_owned(),
        _ => return None,
    })
}

/// `date` moved by an offset like `+1M`, `-1Y`, `+14D`.
fn shifted(date: Date, offset: &str) -> Option<Date> {
    let (sign, rest) = offset.split_at(1);
    let unit = rest.chars().last()?.to_ascii_uppercase();
    let n: i64 = rest[..rest.len() - 1].parse().ok()?;
    let n = if sign == "-" { -n } else { n };
    match unit {
        'D' => Some(date.add_days(n)),
        'M' => Some(add_months(date, n)),
        'Y' => Some(add_months(date, n.checked_mul(12)?)),
        _ => None,
    }
}

/// `date` moved by whole months, on the same day or the month's last.
fn add_months(date: Date, months: i64) -> Date {
    let index = date.year() as i64 * 12 + date.month() as i64 - 1 + months;
    let (year, month) = (
        index.div_euclid(12) as i32,
        (index.rem_euclid(12) + 1) as u8,
    );
    let day = date.day().min(schedule::days_in_month(year, month));
    Date::parse(&format!("{year:04}-{month:02}-{day:02}")).unwrap_or(date)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn date_placeholders_resolve_with_offsets_in_the_clients_language() {
        let date = Date::parse("2027-01-31").unwrap();
        let check = |text: &str, locale: &str, want: &str| {
            assert_eq!(resolve(text, date, locale), want, "{text}");
        };
        check(
            "Miete [Date.month_name] [Date.year]",
            "de_DE",
            "Miete Januar 2027",
        );
        check(
            "Rent [Date.month_name + 1M] [YYYY]",
            "en_US",
            "Rent February 2027",
        );
        check(
            "[Date.month_name - 1M] [Date.year - 1Y]",
            "de",
            "Dezember 2026",
        );
        check(
            "Due [Date.day + 14D].[Date.month + 14D].",
            "en",
            "Due 14.02.",
        );
        check("[MM]/[YY] [DD]", "en", "01/27 31");
        check(
            "[Date.unknown] [Date.month_name + 1X] [Other]",
            "en",
            "[Date.unknown] [Date.month_name + 1X] [Other]",
        );
        assert_eq!(add_months(date, 1).to_string(), "2027-02-28");
    }
}
