//! Dunning: payment reminders made level after level for an invoice that is not paid,
//! with the level's texts and fee, statutory default interest and the flat charge of
//! § 288 BGB, by hand (`create`) or by the automatic dunning runs (`run`).
//!
//! A reminder is a document (`DocKind::Reminder`) of its invoice; what it claims is kept
//! by `documents::claims`. The level of a new reminder is one past the highest level of
//! the invoice's completed reminders that are not canceled; the last level repeats.
//!
//! An automatic run makes, for one OVERDUE invoice, the reminder of the next level once
//! that level's `days_overdue` have passed since the previous due date (the invoice's,
//! then the previous reminder's), and does the settings' `dunning_action` with it. The
//! run claims the invoice's level (`claim_key`) in the transaction that makes the
//! reminder: a second host, or a retry after a crash, finds the level claimed and makes
//! nothing. A reminder is dated the day of its run, so one run makes one level at most:
//! after an outage the next level is made, not a backlog of levels.

pub mod base_rates;
pub mod levels;

use rust_decimal::Decimal;

use super::clients::{self, CLIENTS};
use super::date::Date;
use super::dispatch::{self, Dispatch};
use super::documents::reminder::{Charge, FLAT_CHARGE_EUR};
use super::documents::{DocKind, Document, Status, claims, commands, items::Item, storage};
use super::emails::{self, EmailRequest, LetterRequest};
use super::schema::{Changes, Record, Scalar};
use super::{Ctx, Error, records, settings};
use crate::caps::{Pdf, Random, Read, Write};
use crate::store::{self, keys};

/// The levels and settings a reminder is made by.
struct Plan {
    level: i64,
    text: Record,
    /// The day the level waits from (the previous due date) and how many days.
    since: Date,
    wait: i64,
}

/// The next reminder of `invoice` given its `reminders`: the level one past the highest
/// completed one that is not canceled, its level record (the last one repeats), and
/// when it is reached. `repeat_days` is the wait of a repeated last level (0: none);
/// `None` when the account has no levels, or, with `automatic`, past the last level
/// without repeats.
fn plan(
    levels: &[Record],
    invoice: &Document,
    reminders: &[Document],
    repeat_days: i64,
    automatic: bool,
) -> Option<Plan> {
    let previous = reminders
        .iter()
        .filter(|r| !matches!(r.status, Status::Draft | Status::Canceled))
        .max_by_key(|r| (r.dunning.as_deref().map_or(0, |d| d.level), r.id));
    let level = previous
        .and_then(|r| r.dunning.as_deref())
        .map_or(0, |d| d.level)
        + 1;
    let repeated = level as usize > levels.len();
    if automatic && repeated && repeat_days <= 0 {
        return None;
    }
    let text = levels.get(level as usize - 1).or(levels.last())?.clone();
    let wait = if repeated {
        repeat_days
    } else {
        text.int("days_overdue").unwrap_or(7)
    };
    Some(Plan {
        level,
        since: previous.map_or(invoice.due_date, |r| r.due_date),
        wait,
        text,
    })
}

fn int_of(c: &Changes, name: &str) -> Option<i64> {
    c.get(name)
        .and_then(|v| v.as_ref())
        .and_then(Scalar::as_int)
}

/// `POST /api/reminders`: a draft reminder of an OPEN or OVERDUE invoice. Without a
/// `reminder_text_id` it takes the invoice's next level; it takes the level's subject and
/// texts for those the request does not give, and adds the level's fee, the flat charge
/// (once per invoice, where the settings and the client call for it) and the default
/// interest (where the level calls for it) after the request's own items.
pub fn create(
    ctx: &Ctx,
    txn: &mut dyn Write,
    changes: &Changes,
    new_items: &[Changes],
) -> Result<Document, Error> {
    let account = ctx.account_id;
    let mut errors = changes.errors();
    let invoice = match changes.get("invoice_id") {
        Some(Some(Scalar::Int(id))) => {
            match storage::load(
                txn.as_read(),
                account,
                DocKind::Invoice,
                (*id).max(0) as u64,
            ) {
                Ok(invoice) => Some(invoice),
                Err(Error::NotFound(_)) => {
                    errors.push(format!("invoice_id {id} does not exist"));
                    None
                }
                Err(e) => return Err(e),
            }
        }
        _ => {
            if !changes.invalid.iter().any(|(n, _)| *n == "invoice_id") {
                errors.push("invoice_id is mandatory".into());
            }
            None
        }
    };
    let Some(invoice) = invoice else {
        return Err(Error::Invalid(errors));
    };
    if let Some(problem) = claims::refusal(&invoice, ctx.today()) {
        errors.push(problem);
        return Err(Error::Invalid(errors));
    }
    let levels = levels::levels(txn.as_read(), account)?;
    let reminders = storage::reminders_of(txn.as_read(), account, invoice.id)?;
    let Some(mut plan) = plan(&levels, &invoice, &reminders, 0, false) else {
        errors
            .push("the account has no dunning levels: add one at /api/reminder-texts first".into());
        return Err(Error::Invalid(errors));
    };
    if let Some(id) = int_of(changes, "reminder_text_id") {
        match levels.iter().find(|l| l.id() as i64 == id) {
            Some(text) => plan.text = text.clone(),
            None => {
                errors.push(format!("reminder_text_id {id} does not exist"));
                return Err(Error::Invalid(errors));
            }
        }
    }
    make(ctx, txn, &invoice, &reminders, &plan, changes, new_items)
}

/// Makes the reminder of `plan` for `invoice`: the request's fields over the level's and
/// the invoice's, the request's items, then the fee, flat charge and interest items.
fn make(
    ctx: &Ctx,
    txn: &mut dyn Write,
    invoice: &Document,
    reminders: &[Document],
    plan: &Plan,
    changes: &Changes,
    new_items: &[Changes],
) -> Result<Document, Error> {
    let account = ctx.account_id;
    let defaults = settings::load_stored(txn.as_read(), account)?;
    let client = records::load(txn.as_read(), &CLIENTS, account, invoice.client_id)?;
    let basis = Basis {
        invoice,
        reminders,
        text: &plan.text,
        defaults: &defaults,
        client: &client,
        date: match changes.get("date") {
            Some(Some(Scalar::Date(d))) => *d,
            _ => ctx.today(),
        },
    };
    let values = fields(&basis, changes);
    let charges = charges(txn.as_read(), account, &basis)?;
    let mut lines: Vec<Changes> = new_items.to_vec();
    lines.extend(charges.lines);
    let made = commands::create(
        ctx,
        txn,
        DocKind::Reminder,
        &Changes {
            values,
            ..Changes::default()
        },
        &lines,
    )?;
    // What the request could not say: the level, the claim, which items are damages.
    let doc = with_dunning(&made, plan, invoice, charges.flat);
    storage::save(ctx, txn, Some(&made), &doc)?;
    mark_charges(ctx, txn, doc.id, charges.kinds)?;
    commands::refresh(ctx, txn, DocKind::Reminder, doc.id)
}

/// What a reminder is made from: its invoice and the invoice's other reminders, the
/// level's texts, the settings, the client and the reminder's date.
struct Basis<'a> {
    invoice: &'a Document,
    reminders: &'a [Document],
    text: &'a Record,
    defaults: &'a Record,
    client: &'a Record,
    date: Date,
}

/// The reminder's fields: the request's, then the invoice's and the level's for those
/// the request does not give, then the ones every reminder has: the invoice's currency
/// and quote, net prices, no reduction and the level's text.
fn fields(basis: &Basis, changes: &Changes) -> Vec<(&'static str, Option<Scalar>)> {
    let (invoice, text) = (basis.invoice, basis.text);
    let given = |name: &str| changes.get(name).is_some();
    let mut values: Vec<(&'static str, Option<Scalar>)> = changes
        .values
        .iter()
        .filter(|(name, _)| *name != "reminder_text_id")
        .cloned()
        .collect();
    let mut default = |name: &'static str, value: Option<Scalar>| {
        if !given(name) {
            values.push((name, value));
        }
    };
    let words = |s: &str| (!s.is_empty()).then(|| Scalar::Text(s.to_owned()));
    default("invoice_id", Some(Scalar::Int(invoice.id as i64)));
    default("client_id", Some(Scalar::Int(invoice.client_id as i64)));
    default("contact_id", invoice.contact_id.map(Scalar::Int));
    default("address", words(&invoice.address));
    default("label", words(&invoice.label));
    default("subject", words(text.text("subject")));
    default("intro", words(text.text("header")));
    default("note", words(text.text("footer")));
    default(
        "due_days",
        Some(Scalar::Int(
            basis.defaults.int("reminder_due_days").unwrap_or(10),
        )),
    );
    values.push(("currency_code", words(&invoice.currency_code)));
    values.push(("net_gross", Some(Scalar::Text("NET".into()))));
    values.push(("quote", Some(Scalar::Dec(invoice.quote))));
    values.push(("reduction", None));
    values.push(("reminder_text_id", Some(Scalar::Int(text.id() as i64))));
    values
}

/// The items a reminder adds after the request's own, and what each one claims.
struct Charges {
    lines: Vec<Changes>,
    kinds: Vec<Charge>,
    /// Whether the flat charge of § 288 BGB is among them.
    flat: bool,
}

/// The reminder's charges: the level's fee, the flat charge (once per invoice, with a
/// fee, where the settings and the client call for it, in EUR) and the default interest
/// (where the level calls for it).
fn charges(txn: &dyn Read, account: u64, basis: &Basis) -> Result<Charges, Error> {
    let (invoice, text) = (basis.invoice, basis.text);
    let mut lines = Vec::new();
    let mut kinds = Vec::new();
    let fee = text
        .get("charge_amount")
        .and_then(Scalar::as_dec)
        .unwrap_or_default();
    if fee > Decimal::ZERO {
        let name = match text.text("charge_name").trim() {
            "" => "Dunning fee",
            n => n,
        };
        lines.push(line(
            name.to_owned(),
            text.text("charge_description").to_owned(),
            fee,
        ));
        kinds.push(Charge::Fee);
    }
    let flat = fee > Decimal::ZERO
        && basis.defaults.bool("dunning_flat_charge")
        && !clients::is_consumer(basis.client)
        && invoice.currency_code == "EUR"
        && !claims::flat_charge_taken(basis.reminders, 0);
    if flat {
        lines.push(line(
            "Flat charge for late payment".to_owned(),
            "§ 288 (5) BGB".to_owned(),
            FLAT_CHARGE_EUR,
        ));
        kinds.push(Charge::FlatCharge);
    }
    if text.bool("interest") {
        let rates = base_rates::rates(txn, account)?;
        let (amount, description) = claims::interest_line(
            invoice.open_amount(),
            clients::is_consumer(basis.client),
            invoice,
            basis.date,
            &rates,
            &invoice.currency_code,
            basis.defaults.text("locale"),
        );
        lines.push(line("Default interest".to_owned(), description, amount));
        kinds.push(Charge::Interest);
    }
    Ok(Charges { lines, kinds, flat })
}

/// An item of one unit at `price`.
fn line(title: String, description: String, price: Decimal) -> Changes {
    Changes {
        values: vec![
            ("title", Some(Scalar::Text(title))),
            ("description", Some(Scalar::Text(description))),
            ("quantity", Some(Scalar::Dec(Decimal::ONE))),
            ("unit_price", Some(Scalar::Dec(price))),
        ],
        ..Changes::default()
    }
}

/// The reminder as made, with its level, whether it takes the flat charge, and what it
/// claims of the invoice.
fn with_dunning(made: &Document, plan: &Plan, invoice: &Document, flat: bool) -> Document {
    let mut doc = made.clone();
    let d = doc
        .dunning
        .as_deref_mut()
        .expect("a reminder has its dunning data");
    d.level = plan.level;
    d.level_name = plan.text.text("name").to_owned();
    d.flat_charge = flat;
    claims::take_invoice(d, invoice);
    doc
}

/// Marks the reminder's last items, the charges it added, with what each one claims.
fn mark_charges(
    ctx: &Ctx,
    txn: &mut dyn Write,
    id: u64,
    charges: Vec<Charge>,
) -> Result<(), Error> {
    let items: Vec<Item> = storage::items(txn.as_read(), ctx.account_id, DocKind::Reminder, id)?;
    let first_made = items.len() - charges.len();
    for (item, charge) in items[first_made..].iter().zip(charges) {
        let mut item = item.clone();
        item.charge = charge;
        storage::put(ctx, txn, DocKind::Reminder, &item)?;
    }
    Ok(())
}

/// The key of the claim of an invoice's dunning levels: its value is the highest level an
/// automatic run made.
fn claim_key(account: u64, invoice: u64) -> Vec<u8> {
    keys::record(account, "dunning-claims", invoice)
}

fn claimed(txn: &dyn Read, account: u64, invoice: u64) -> Result<i64, Error> {
    Ok(match txn.get(&claim_key(account, invoice))? {
        Some(bytes) => store::u64_of(&bytes, "dunning claim")? as i64,
        None => 0,
    })
}

/// The key of the day the last automatic dunning run of an account finished.
fn pass_key(account: u64) -> Vec<u8> {
    keys::singleton(account, "dunning-pass")
}

/// Whether the account's automatic dunning runs are on and today's has not finished yet.
pub fn pass_due(txn: &dyn Read, account: u64, today: Date) -> Result<bool, Error> {
    if !settings::load_stored(txn, account)?.bool("dunning_run") {
        return Ok(false);
    }
    let done = txn
        .get(&pass_key(account))?
        .and_then(|b| <[u8; 4]>::try_from(b.as_slice()).ok())
        .map(|b| Date::from_julian(i32::from_be_bytes(b)));
    Ok(done != Some(today))
}

/// Records that today's run of the account finished: later runs of the day find nothing
/// new (every condition of a run changes with the day) and are skipped.
pub fn pass_done(txn: &mut dyn Write, account: u64, today: Date) -> Result<(), Error> {
    txn.put(&pass_key(account), &today.julian().to_be_bytes())?;
    Ok(())
}

/// The invoices an automatic run looks at today: every OVERDUE one.
pub fn candidates(txn: &dyn Read, account: u64, today: Date) -> Result<Vec<u64>, Error> {
    storage::overdue_invoices(txn, account, today)
}

/// What an automatic run made: the reminder, and the message or letter to hand over after
/// the commit.
#[derive(Debug)]
pub struct Made {
    pub reminder: u64,
    pub dispatch: Option<(u64, Dispatch)>,
}

/// The automatic run for one invoice, today: the next level's reminder when it is due and
/// not yet claimed, with the settings' action. `None` when there is nothing to make.
pub fn run(
    ctx: &Ctx,
    txn: &mut dyn Write,
    pdf: &dyn Pdf,
    random: &dyn Random,
    invoice: u64,
) -> Result<Option<Made>, Error> {
    let account = ctx.account_id;
    let today = ctx.today();
    let invoice = match storage::load(txn.as_read(), account, DocKind::Invoice, invoice) {
        Ok(i) => i,
        Err(Error::NotFound(_)) => return Ok(None),
        Err(e) => return Err(e),
    };
    if invoice.status != Status::Open || invoice.due_date >= today {
        return Ok(None);
    }
    let client = records::load(txn.as_read(), &CLIENTS, account, invoice.client_id)?;
    if !clients::in_dunning_runs(&client) {
        return Ok(None);
    }
    let reminders = storage::reminders_of(txn.as_read(), account, invoice.id)?;
    if reminders.iter().any(|r| r.status == Status::Draft) {
        // A draft waits for its user.
        return Ok(None);
    }
    let defaults = settings::load_stored(txn.as_read(), account)?;
    let levels = levels::levels(txn.as_read(), account)?;
    let repeat = defaults.int("dunning_repeat_days").unwrap_or(0);
    let Some(plan) = plan(&levels, &invoice, &reminders, repeat, true) else {
        return Ok(None);
    };
    let reached = plan.since.add_days(plan.wait.max(1));
    if today < reached || claimed(txn.as_read(), account, invoice.id)? >= plan.level {
        return Ok(None);
    }
    txn.put(
        &claim_key(account, invoice.id),
        &(plan.level as u64).to_be_bytes(),
    )?;
    let reminder = make(
        ctx,
        txn,
        &invoice,
        &reminders,
        &plan,
        &Changes::default(),
        &[],
    )?;
    let dispatch = act(
        ctx,
        txn,
        pdf,
        random,
        &reminder,
        defaults.text("dunning_action"),
    )?;
    Ok(Some(Made {
        reminder: reminder.id,
        dispatch,
    }))
}

/// The run's action on the reminder it made; a send that cannot happen (no recipient) is
/// noted on the reminder, which stays completed.
fn act(
    ctx: &Ctx,
    txn: &mut dyn Write,
    pdf: &dyn Pdf,
    random: &dyn Random,
    reminder: &Document,
    action: &str,
) -> Result<Option<(u64, Dispatch)>, Error> {
    if !matches!(action, "COMPLETE" | "EMAIL" | "MAIL") {
        return Ok(None);
    }
    commands::complete(ctx, txn, pdf, random, DocKind::Reminder, reminder.id, None)?;
    let parcel = match action {
        "EMAIL" => {
            // To the reminder's contact, else to the client's address.
            let mut req = EmailRequest::default();
            if reminder.contact_id.is_none() {
                let client =
                    records::load(txn.as_read(), &CLIENTS, ctx.account_id, reminder.client_id)?;
                let email = client.text("email").trim();
                if !email.is_empty() {
                    req.to.push(email.to_owned());
                }
            }
            emails::send(ctx, txn.as_read(), DocKind::Reminder, reminder.id, req)
        }
        "MAIL" => emails::post(
            ctx,
            txn.as_read(),
            DocKind::Reminder,
            reminder.id,
            LetterRequest::default(),
        ),
        _ => return Ok(None),
    };
    match parcel {
        Ok(d) => Ok(Some(dispatch::record(txn, d, ctx.now)?)),
        Err(Error::Invalid(problems)) => {
            let reminder = storage::load(
                txn.as_read(),
                ctx.account_id,
                DocKind::Reminder,
                reminder.id,
            )?;
            commands::note(
                ctx,
                txn,
                &reminder,
                "REMINDER",
                &format!(
                    "The dunning run completed the reminder but did not send it: {}",
                    problems.join("; ")
                ),
            )?;
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Notes on an invoice that today's automatic run could not make its reminder.
pub fn note_failure(
    ctx: &Ctx,
    txn: &mut dyn Write,
    invoice: u64,
    problems: &[String],
) -> Result<(), Error> {
    let invoice = storage::load(txn.as_read(), ctx.account_id, DocKind::Invoice, invoice)?;
    claims::note_on_invoice(
        ctx,
        txn,
        &invoice,
        &format!("The dunning run made no reminder: {}", problems.join("; ")),
    )
}

/// Gives a new account its dunning levels and the published base rates.
pub fn seed(ctx: &Ctx, txn: &mut dyn Write) -> Result<(), Error> {
    levels::seed(ctx, txn)?;
    base_rates::seed(ctx, txn)
}

/// Whether an account has neither levels nor base rates (an account from before dunning).
pub fn unseeded(txn: &dyn Read, account: u64) -> Result<bool, Error> {
    Ok(records::load_all(txn, &levels::LEVELS, account)?.is_empty()
        && records::load_all(txn, &base_rates::BASE_RATES, account)?.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::documents::reminder::Dunning;

    fn level(id: i64, days: i64) -> Record {
        let mut r = Record::default();
        r.set("id", Some(Scalar::Int(id)));
        r.set("days_overdue", Some(Scalar::Int(days)));
        r
    }

    fn doc(id: u64, status: Status, level: i64, due: &str) -> Document {
        Document {
            id,
            status,
            due_date: Date::parse(due).unwrap(),
            dunning: Some(Box::new(Dunning {
                level,
                ..Dunning::default()
            })),
            ..Document::blank(DocKind::Reminder, Date::from_julian(2_460_000))
        }
    }

    #[test]
    fn the_next_level_follows_the_highest_completed_one_and_the_last_repeats() {
        let levels = [level(1, 7), level(2, 14), level(3, 21)];
        let invoice = doc(9, Status::Open, 0, "2027-01-10");
        let p = plan(&levels, &invoice, &[], 0, true).unwrap();
        assert_eq!((p.level, p.wait, p.since), (1, 7, invoice.due_date));
        let made = [
            doc(1, Status::Open, 1, "2027-01-27"),
            doc(2, Status::Canceled, 2, "2027-02-10"),
            doc(3, Status::Draft, 2, "2027-02-12"),
        ];
        let p = plan(&levels, &invoice, &made, 0, true).unwrap();
        assert_eq!(
            (p.level, p.wait),
            (2, 14),
            "canceled and draft reminders do not count"
        );
        assert_eq!(p.since, Date::parse("2027-01-27").unwrap());
        let all = [doc(4, Status::Paid, 3, "2027-03-01")];
        assert!(
            plan(&levels, &invoice, &all, 0, true).is_none(),
            "no repeats"
        );
        let again = plan(&levels, &invoice, &all, 30, true).unwrap();
        assert_eq!((again.level, again.wait, again.text.id()), (4, 30, 3));
        let by_hand = plan(&levels, &invoice, &all, 0, false).unwrap();
        assert_eq!((by_hand.level, by_hand.text.id()), (4, 3));
        assert!(plan(&[], &invoice, &[], 0, false).is_none());
    }
}
