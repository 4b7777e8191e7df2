//! Dunning levels (`/api/reminder-texts`): the texts, the fee and the wait of each level, in
//! the order of their `sorting`. The first reminder of an invoice takes the first level,
//! the next the second, and the last level repeats. A new account starts with three.

use rust_decimal::Decimal;

use super::super::records::{self, Draft, Resource, Rules};
use super::super::schema::{Changes, Field, Kind, Record, Scalar};
use super::super::{Ctx, Error};
use crate::caps::{Read, Write};
use crate::limits;

static FIELDS: &[Field] = &[
    Field::new("id", Kind::Integer)
        .read_only()
        .doc("Id of the level (read only; assigned on create)."),
    Field::new("sorting", Kind::Integer).doc(
        "The level's place: levels are taken in ascending sorting, then id. Default: after the \
         last level.",
    ),
    Field::new("name", Kind::Text)
        .mandatory()
        .doc("Name of the level, e.g. First dunning letter (a reminder's reminder_level_name)."),
    Field::new("subject", Kind::Text).doc(
        "Subject of the level's reminders: their PDF heading and e-mail subject; placeholders \
         such as [Invoice.invoice_number] are resolved.",
    ),
    Field::new("header", Kind::Text)
        .doc("Text above the claim (a reminder's intro); placeholders are resolved."),
    Field::new("footer", Kind::Text)
        .doc("Text below the amount due (a reminder's note); placeholders are resolved."),
    Field::new("charge_name", Kind::Text).doc("Title of the fee item. Default: Dunning fee."),
    Field::new("charge_description", Kind::Text).doc("Description of the fee item."),
    Field::new("charge_amount", Kind::Decimal).doc(
        "The level's fee (0 or more), an item of its reminders with is_charge 1; 0: no fee. \
         Default: 0.",
    ),
    Field::new("days_overdue", Kind::Integer).doc(
        "Days past the previous due date before the level is reached (0 or more): the invoice's \
         due date for the first level, the previous reminder's due date after that; at the \
         earliest the day after it. Automatic dunning runs wait for it. Default: 7.",
    ),
    Field::new("interest", Kind::Bool).doc(
        "1 adds statutory default interest (§ 288 BGB) as an item of the level's reminders. \
         Default: 0.",
    ),
];

pub static LEVELS: Resource = Resource::new("reminder-texts", "reminder text", FIELDS, &LevelRules);

struct LevelRules;

impl Rules for LevelRules {
    fn prepare(&self, d: Draft<'_>) -> Result<(), Error> {
        if let Some(amount) = d.record.get("charge_amount").and_then(Scalar::as_dec)
            && !(Decimal::ZERO..=Decimal::from(limits::AMOUNT_MAX)).contains(&amount)
        {
            d.errors.push(format!(
                "charge_amount must be between 0 and {}, got {amount}",
                limits::AMOUNT_MAX
            ));
        }
        match d.record.int("days_overdue") {
            Some(days) if !(0..=limits::TERM_DAYS_MAX).contains(&days) => d.errors.push(format!(
                "days_overdue must be between 0 and {}, got {days}",
                limits::TERM_DAYS_MAX
            )),
            Some(_) => {}
            None => d.record.set("days_overdue", Some(Scalar::Int(7))),
        }
        if d.record.get("interest").is_none() {
            d.record.set("interest", Some(Scalar::Bool(false)));
        }
        if d.record.get("charge_amount").is_none() {
            d.record
                .set("charge_amount", Some(Scalar::Dec(Decimal::ZERO)));
        }
        if d.record.get("sorting").is_none() {
            let last = levels(d.txn.as_read(), d.ctx.account_id)?
                .iter()
                .filter(|l| l.id() != d.record.id())
                .filter_map(|l| l.int("sorting"))
                .max()
                .unwrap_or(0);
            d.record.set("sorting", Some(Scalar::Int(last + 1)));
        }
        Ok(())
    }
}

/// The account's levels in their order: by sorting, then id.
pub fn levels(txn: &dyn Read, account: u64) -> Result<Vec<Record>, Error> {
    let mut all = records::load_all(txn, &LEVELS, account)?;
    all.sort_by_key(|l| (l.int("sorting").unwrap_or(0), l.id()));
    Ok(all)
}

/// The three levels a new account starts with: a friendly payment reminder without fee,
/// then two dunning letters with a fee and default interest.
pub fn seed(ctx: &Ctx, txn: &mut dyn Write) -> Result<(), Error> {
    let text = |s: &str| Some(Scalar::Text(s.to_owned()));
    let seeds = [
        (
            "Payment reminder",
            "Payment reminder: invoice [Invoice.invoice_number]",
            "Perhaps our invoice [Invoice.invoice_number] of [Invoice.date], due on \
             [Invoice.due_date], has escaped your attention. We kindly ask you to pay the open \
             amount.",
            "If you have paid in the meantime, please disregard this reminder.",
            "0",
            false,
        ),
        (
            "First dunning letter",
            "First dunning letter: invoice [Invoice.invoice_number]",
            "Despite our payment reminder we have not yet received payment of our invoice \
             [Invoice.invoice_number] of [Invoice.date]. You are in default of payment.",
            "Please pay the amount due by the date given.",
            "5",
            true,
        ),
        (
            "Second dunning letter",
            "Second dunning letter: invoice [Invoice.invoice_number]",
            "Our invoice [Invoice.invoice_number] of [Invoice.date] is still unpaid despite \
             our reminders.",
            "If we do not receive payment by the date given, we will hand the claim over for \
             collection without further notice.",
            "10",
            true,
        ),
    ];
    for (i, (name, subject, header, footer, fee, interest)) in seeds.into_iter().enumerate() {
        let changes = Changes {
            values: vec![
                ("sorting", Some(Scalar::Int(i as i64 + 1))),
                ("name", text(name)),
                ("subject", text(subject)),
                ("header", text(header)),
                ("footer", text(footer)),
                ("charge_name", text("Dunning fee")),
                (
                    "charge_amount",
                    Some(Scalar::Dec(fee.parse().expect("seed fees are decimals"))),
                ),
                ("days_overdue", Some(Scalar::Int(7))),
                ("interest", Some(Scalar::Bool(interest))),
            ],
            ..Changes::default()
        };
        records::create(ctx, txn, &LEVELS, &changes)?;
    }
    Ok(())
}
