//! What a payment reminder holds beyond a document (`Dunning`: its level, the level's name
//! and subject, the claim it takes from its invoice), which of its items are damages the
//! service made (`Charge`), and the statutory default interest of § 288 BGB (`interest`).
//! A leaf: plain data and pure computation; the levels and base rates are records
//! (`domain::dunning`), and making reminders is `commands` and `domain::dunning`.

use rust_decimal::Decimal;

use super::super::date::Date;
use super::super::money::round_commercial_2;

/// A reminder's dunning data.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Dunning {
    /// The level (of /api/reminder-texts) whose texts and fee the reminder took.
    pub reminder_text_id: i64,
    /// 1 for the first reminder of its invoice; the last level repeats with counting on.
    pub level: i64,
    pub level_name: String,
    pub subject: String,
    /// The invoice's open amount the reminder claims: taken while it is a draft, fixed
    /// when it is completed.
    pub claim: Decimal,
    /// The invoice as the reminder prints it: its number, date and due date.
    pub invoice_number: String,
    pub invoice_date: Option<Date>,
    pub invoice_due_date: Option<Date>,
    /// A later reminder of the same invoice was completed.
    pub is_old: bool,
    /// The reminder carries the flat charge of § 288 (5) BGB (once per invoice).
    pub flat_charge: bool,
}

/// What an item of a reminder is, when the service made it: the level's fee, the flat
/// charge or the default interest (recomputed while the reminder is a draft). Items a
/// user adds are `None`, or `Fee` when marked `is_charge`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Charge {
    #[default]
    None,
    Fee,
    FlatCharge,
    Interest,
}

impl Charge {
    pub const fn as_str(self) -> &'static str {
        match self {
            Charge::None => "",
            Charge::Fee => "FEE",
            Charge::FlatCharge => "FLAT_CHARGE",
            Charge::Interest => "INTEREST",
        }
    }

    pub fn parse(s: &str) -> Charge {
        [Charge::Fee, Charge::FlatCharge, Charge::Interest]
            .into_iter()
            .find(|c| c.as_str() == s)
            .unwrap_or(Charge::None)
    }

    /// The charge a stored item names.
    pub fn parse_owned(s: String) -> Charge {
        Charge::parse(&s)
    }

    /// Whether the wire shows the item as a charge (`is_charge` 1): a fee.
    pub fn is_charge(self) -> bool {
        matches!(self, Charge::Fee | Charge::FlatCharge)
    }
}

/// The flat charge of § 288 (5) BGB for a business debtor in default, in EUR.
pub const FLAT_CHARGE_EUR: Decimal = Decimal::from_parts(40, 0, 0, false, 0);

/// Percentage points above the base rate of § 288 BGB: (2) for business debtors, (1) for
/// consumers.
pub fn points(consumer: bool) -> Decimal {
    if consumer {
        Decimal::from(5)
    } else {
        Decimal::from(9)
    }
}

/// One stretch of days at one base rate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    pub from: Date,
    pub to: Date,
    pub days: i64,
    /// The base rate valid on those days, and the interest rate (base rate plus points,
    /// never below 0).
    pub base_rate: Decimal,
    pub rate: Decimal,
}

/// Default interest on an amount over a stretch of days.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interest {
    pub amount: Decimal,
    pub days: i64,
    pub segments: Vec<Segment>,
}

/// The base rate valid on `day`: the one of the latest change on or before it (0 before
/// the first one known). `rates` are sorted by day.
fn rate_on(rates: &[(Date, Decimal)], day: Date) -> Decimal {
    match rates.partition_point(|(from, _)| *from <= day) {
        0 => Decimal::ZERO,
        n => rates[n - 1].1,
    }
}

/// Default interest (§ 288 BGB) on `open` for the days from the day after `due` up to and
/// including `until`: each day at the base rate valid on it plus `points`, a year of 365
/// days, summed exactly and rounded half up to the cent once. `rates` are the base
/// rates (valid from, rate) sorted by day.
pub fn interest(
    open: Decimal,
    points: Decimal,
    due: Date,
    until: Date,
    rates: &[(Date, Decimal)],
) -> Interest {
    let mut segments: Vec<Segment> = Vec::new();
    let first = due.add_days(1);
    if until < first || open <= Decimal::ZERO {
        return Interest {
            amount: Decimal::ZERO,
            days: 0,
            segments,
        };
    }
    let mut day = first;
    while day <= until {
        let base_rate = rate_on(rates, day);
        // The segment runs to the day before the next change, or to `until`.
        let next_change = rates
            .iter()
            .map(|(from, _)| *from)
            .find(|from| *from > day)
            .unwrap_or(until.add_days(1));
        let to = next_change.add_days(-1).min(until);
        segments.push(Segment {
            from: day,
            to,
            days: to.days_since(day) + 1,
            base_rate,
            rate: (base_rate + points).max(Decimal::ZERO),
        });
        day = to.add_days(1);
    }
    let exact: Decimal = segments
        .iter()
        .map(|s| open * s.rate * Decimal::from(s.days) / Decimal::from(36_500))
        .sum();
    Interest {
        amount: round_commercial_2(exact),
        days: until.days_since(due),
        segments,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Date {
        Date::parse(s).unwrap()
    }

    fn dec(s: &str) -> Decimal {
        s.parse().unwrap()
    }

    #[test]
    fn interest_counts_each_day_at_its_base_rate_and_rounds_once() {
        let rates = vec![
            (d("2025-01-01"), dec("2.27")),
            (d("2025-07-01"), dec("1.27")),
        ];
        // 1000 EUR due 2025-06-20: 10 days in June at 2.27 + 9, 15 days in July at 1.27 + 9.
        let i = interest(
            dec("1000"),
            points(false),
            d("2025-06-20"),
            d("2025-07-15"),
            &rates,
        );
        assert_eq!(i.days, 25);
        assert_eq!(i.segments.len(), 2);
        assert_eq!((i.segments[0].days, i.segments[1].days), (10, 15));
        assert_eq!(i.segments[0].rate, dec("11.27"));
        assert_eq!(i.segments[1].rate, dec("10.27"));
        // 1000 × (11.27 × 10 + 10.27 × 15) / 36500 = 7.3082… → 7.31
        assert_eq!(i.amount, dec("7.31"));
        let consumer = interest(
            dec("1000"),
            points(true),
            d("2025-06-20"),
            d("2025-07-15"),
            &rates,
        );
        // 1000 × (7.27 × 10 + 6.27 × 15) / 36500 = 4.5684… → 4.57
        assert_eq!(consumer.amount, dec("4.57"));
    }

    #[test]
    fn no_interest_before_the_day_after_the_due_date() {
        let rates = vec![(d("2025-01-01"), dec("2.27"))];
        let on_due = interest(
            dec("100"),
            points(false),
            d("2025-03-01"),
            d("2025-03-01"),
            &rates,
        );
        assert_eq!((on_due.amount, on_due.days), (Decimal::ZERO, 0));
        let one_day = interest(
            dec("100"),
            points(false),
            d("2025-03-01"),
            d("2025-03-02"),
            &rates,
        );
        assert_eq!(one_day.days, 1);
        // 100 × 11.27 / 36500 = 0.0308… → 0.03
        assert_eq!(one_day.amount, dec("0.03"));
    }

    #[test]
    fn a_negative_base_rate_lowers_the_rate_but_never_below_zero() {
        let rates = vec![(d("2016-07-01"), dec("-0.88"))];
        let i = interest(
            dec("365"),
            points(false),
            d("2017-01-01"),
            d("2017-01-11"),
            &rates,
        );
        assert_eq!(i.segments[0].rate, dec("8.12"));
        assert_eq!(i.amount, dec("0.81"), "365 × 8.12 % × 10 / 365 = 0.812");
        let absurd = vec![(d("2016-07-01"), dec("-10"))];
        let j = interest(
            dec("365"),
            points(true),
            d("2017-01-01"),
            d("2017-01-11"),
            &absurd,
        );
        assert_eq!(j.amount, Decimal::ZERO);
    }
}
