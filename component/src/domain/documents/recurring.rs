//! The schedule of a recurring invoice: how often it runs, at which hour of the account's
//! zone, from when until when, what each run does with the invoice it makes, and where the
//! series stands (runs made, the next one); and who its EMAIL runs go to (`RECEIVERS`, a
//! record resource named by the recurring). A leaf: plain data and the pure rule that
//! moves a series to its next run (`advance`); the runs themselves are `domain::runs`.

use super::super::date::Date;
use super::super::records::{self, Draft, Filter, Resource, Rules};
use super::super::schedule::{self, Cycle};
use super::super::schema::{Field, Kind, Record, Scalar};
use super::super::{Ctx, Error};
use crate::caps::{Read, Write};
use crate::store::keys;

/// What a run does with the invoice it makes.
pub const ACTIONS: &[&str] = &["CREATE", "COMPLETE", "EMAIL", "MAIL"];

/// A recurring invoice's schedule and state.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Schedule {
    pub name: String,
    /// One of `Cycle::NAMES`.
    pub cycle: String,
    /// Every how many cycles (1 or more).
    pub cycle_number: i64,
    /// One of `ACTIONS`.
    pub action: String,
    /// The hour of the day, in the account's zone (0 to 23).
    pub hour: i64,
    pub start_date: Option<Date>,
    pub end_date: Option<Date>,
    /// Runs after which the series ends; 0: no limit.
    pub iterations: i64,
    /// Runs made.
    pub counter: i64,
    /// The place in the series of the next run: run dates are `start + slot × cycle`.
    pub slot: i64,
    pub last_creation_date: Option<Date>,
    /// The date of the next run; none: stopped or ended.
    pub next_creation_date: Option<Date>,
    /// The Unix second of the next run (its date at its hour in the account's zone).
    pub next_run: Option<i64>,
    /// Every run on the last day of its month.
    pub ultimo: bool,
    /// Days from a made invoice's date to its due date and its cash discount date.
    pub due_days: i64,
    pub discount_days: i64,
    pub email_sender: String,
    pub email_subject: String,
    pub email_message: String,
    pub email_filename: String,
    pub email_bcc: String,
    pub letter_color: bool,
    pub letter_duplex: bool,
    pub letter_paper_weight: i64,
    /// Why the last run's action did not happen (rule ids of a refused completion, ...).
    pub last_error: String,
}

impl Schedule {
    pub fn cycle(&self) -> Cycle {
        Cycle::parse(&self.cycle).unwrap_or(Cycle::Monthly)
    }

    /// The date of the run in place `slot` of the series.
    pub fn date_of(&self, slot: i64) -> Option<Date> {
        let start = self.start_date?;
        Some(schedule::run_date(
            start,
            self.cycle(),
            self.cycle_number.clamp(1, u32::MAX as i64) as u32,
            slot.max(0) as u64,
            self.ultimo,
        ))
    }

    /// Whether the run in place `slot` is still part of the series: before its end date,
    /// within its iterations.
    fn within(&self, date: Date) -> bool {
        self.end_date.is_none_or(|end| date <= end)
            && (self.iterations <= 0 || self.counter < self.iterations)
    }

    /// Sets the next run from `slot` on, in `zone`: its date and moment, or none when the
    /// series has ended.
    pub fn plan(&mut self, zone: &jiff::tz::TimeZone) {
        match self.date_of(self.slot).filter(|d| self.within(*d)) {
            Some(date) => {
                self.next_creation_date = Some(date);
                self.next_run = Some(schedule::instant(date, self.hour.clamp(0, 23) as u8, zone));
            }
            None => self.stop(),
        }
    }

    /// The first place of the series on or after `date` (a next creation date set by hand).
    pub fn slot_from(&self, date: Date) -> i64 {
        let mut slot = 0;
        while self.date_of(slot).is_some_and(|d| d < date) && slot < 100_000 {
            slot += 1;
        }
        slot
    }

    /// No further run until a next creation date is set again.
    pub fn stop(&mut self) {
        self.next_creation_date = None;
        self.next_run = None;
    }

    /// The series after its run in place `slot` made an invoice dated `date`.
    pub fn advance(&mut self, date: Date, zone: &jiff::tz::TimeZone) {
        self.counter += 1;
        self.slot += 1;
        self.last_creation_date = Some(date);
        self.plan(zone);
    }
}

// ---- e-mail receivers ---------------------------------------------------------------------

static RECEIVER_FIELDS: &[Field] = &[
    Field::new("id", Kind::Integer)
        .read_only()
        .doc("Id of the receiver (read only; assigned on create)."),
    Field::new("recurring_id", Kind::Integer)
        .mandatory()
        .doc("Id of the recurring invoice whose EMAIL runs go to the receiver."),
    Field::new("type", Kind::Enum(&["to", "cc", "bcc"]))
        .doc("Whether the address is a to, cc or bcc recipient. Default: to."),
    Field::new("address", Kind::Email)
        .mandatory()
        .doc("The receiver's e-mail address."),
];

/// Who the invoices of a recurring's EMAIL runs go to; without any, the client's address.
pub static RECEIVERS: Resource = Resource::new(
    "recurring-email-receivers",
    "recurring e-mail receiver",
    RECEIVER_FIELDS,
    &ReceiverRules,
)
.filtered(&[Filter::exact("recurring_id", "recurring_id")])
.indexed(&["recurring_id"]);

struct ReceiverRules;

impl Rules for ReceiverRules {
    fn prepare(&self, d: Draft<'_>) -> Result<(), Error> {
        let recurring = d.record.int("recurring_id").unwrap_or(0);
        if recurring < 1
            || d.txn
                .as_read()
                .get(&keys::record(
                    d.ctx.account_id,
                    "recurrings",
                    recurring as u64,
                ))?
                .is_none()
        {
            d.errors
                .push(format!("recurring_id {recurring} does not exist"));
        }
        if d.record.get("type").is_none() {
            d.record.set("type", Some(Scalar::Text("to".into())));
        }
        Ok(())
    }
}

/// The receivers of a recurring, in id order.
pub fn receivers(txn: &dyn Read, account: u64, recurring: u64) -> Result<Vec<Record>, Error> {
    records::children(txn, &RECEIVERS, account, "recurring_id", recurring)
}

/// Deletes the receivers of a recurring, with the recurring.
pub fn remove_receivers(ctx: &Ctx, txn: &mut dyn Write, recurring: u64) -> Result<(), Error> {
    for r in receivers(txn.as_read(), ctx.account_id, recurring)? {
        records::remove(ctx, txn, &RECEIVERS, &r)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Date {
        Date::parse(s).unwrap()
    }

    #[test]
    fn a_series_advances_run_by_run_and_ends_by_its_iterations_or_end_date() {
        let berlin = schedule::zone("Europe/Berlin").unwrap();
        let mut s = Schedule {
            cycle: "MONTHLY".into(),
            cycle_number: 1,
            hour: 2,
            start_date: Some(d("2027-01-31")),
            iterations: 3,
            ..Schedule::default()
        };
        s.plan(&berlin);
        assert_eq!(s.next_creation_date, Some(d("2027-01-31")));
        let mut made = Vec::new();
        while let Some(date) = s.next_creation_date {
            made.push(date.to_string());
            s.advance(date, &berlin);
        }
        assert_eq!(made, ["2027-01-31", "2027-02-28", "2027-03-31"]);
        assert_eq!(s.counter, 3);
        assert_eq!(s.next_run, None);
        let mut until = Schedule {
            cycle: "WEEKLY".into(),
            cycle_number: 2,
            start_date: Some(d("2027-01-04")),
            end_date: Some(d("2027-02-01")),
            ..Schedule::default()
        };
        until.plan(&berlin);
        let mut n = 0;
        while let Some(date) = until.next_creation_date {
            until.advance(date, &berlin);
            n += 1;
        }
        assert_eq!(n, 3, "4 Jan, 18 Jan, 1 Feb");
        assert_eq!(until.slot_from(d("2027-01-10")), 1);
    }
}
