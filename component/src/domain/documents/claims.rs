//! What a reminder claims of its invoice, kept true while the reminder is a draft: the
//! invoice's open amount, its number and dates as printed, and the default interest item
//! (§ 288 BGB) up to the reminder's date. Completing a reminder fixes them, makes the
//! earlier reminders of its invoice old and notes it on the invoice. Reminders follow
//! their invoice's payments through `commands` (`follow`), which owns every change.

use rust_decimal::Decimal;

use super::super::clients::{self, CLIENTS};
use super::super::dunning::base_rates;
use super::super::printing::{format_date, format_money, format_number};
use super::super::settings;
use super::super::{Ctx, Error, records};
use super::comments::Comment;
use super::items::Item;
use super::kind::DocKind;
use super::lifecycle::Status;
use super::model::Document;
use super::reminder::{self, Charge, Dunning};
use super::storage;
use crate::caps::{Read, Write};

/// The invoice of a reminder; it must exist in the account.
pub fn invoice_of(txn: &dyn Read, account: u64, reminder: &Document) -> Result<Document, Error> {
    let id = reminder.invoice_id.unwrap_or(0).max(0) as u64;
    storage::load(txn, account, DocKind::Invoice, id)
}

/// Why the invoice cannot be reminded of (it must be OPEN or OVERDUE), if it cannot.
pub fn refusal(invoice: &Document, today: super::super::date::Date) -> Option<String> {
    (invoice.status != Status::Open).then(|| {
        format!(
            "invoice {} is {}: only an OPEN or OVERDUE invoice can be reminded of",
            invoice.id,
            invoice.shown(today).as_str()
        )
    })
}

/// A draft reminder brought up to date with its invoice: the claim (the invoice's open
/// amount), the invoice as printed, and the default interest item, whose amount is
/// recomputed for the reminder's date. Writes the interest item when it changed.
pub fn refresh(ctx: &Ctx, txn: &mut dyn Write, doc: &mut Document) -> Result<(), Error> {
    let account = ctx.account_id;
    let invoice = invoice_of(txn.as_read(), account, doc)?;
    let Some(d) = doc.dunning.as_deref_mut() else {
        return Ok(());
    };
    take_invoice(d, &invoice);
    let mut items = storage::items(txn.as_read(), account, DocKind::Reminder, doc.id)?;
    let Some(item) = items.iter_mut().find(|i| i.charge == Charge::Interest) else {
        return Ok(());
    };
    let client = records::load(txn.as_read(), &CLIENTS, account, doc.client_id)?;
    let defaults = settings::load_stored(txn.as_read(), account)?;
    let rates = base_rates::rates(txn.as_read(), account)?;
    let (price, description) = interest_line(
        d.claim,
        clients::is_consumer(&client),
        &invoice,
        doc.date,
        &rates,
        &doc.currency_code,
        defaults.text("locale"),
    );
    if item.unit_price != price || item.description != description || item.quantity != Decimal::ONE
    {
        item.unit_price = price;
        item.quantity = Decimal::ONE;
        item.description = description;
        item.updated = ctx.now;
        storage::put(txn, account, DocKind::Reminder, item)?;
    }
    Ok(())
}

/// What a reminder takes of its invoice: the open amount it claims, the number and dates
/// it prints.
pub fn take_invoice(d: &mut Dunning, invoice: &Document) {
    d.claim = invoice.open_amount();
    d.invoice_number = invoice.formatted_number.clone();
    d.invoice_date = Some(invoice.date);
    d.invoice_due_date = Some(invoice.due_date);
}

/// The default interest of a claim as an item's amount and description: § 288 BGB, from
/// the day after the invoice's due date to `until`, each stretch at its base rate.
pub fn interest_line(
    claim: Decimal,
    consumer: bool,
    invoice: &Document,
    until: super::super::date::Date,
    rates: &[(super::super::date::Date, Decimal)],
    currency: &str,
    locale: &str,
) -> (Decimal, String) {
    let points = reminder::points(consumer);
    let interest = reminder::interest(claim, points, invoice.due_date, until, rates);
    let mut lines = vec![format!(
        "§ 288 BGB: base rate + {} percentage points on {} for {} days",
        format_number(points, locale),
        format_money(claim, currency, locale),
        interest.days
    )];
    for s in &interest.segments {
        lines.push(format!(
            "{} – {}: {} days at {} % (base rate {} %)",
            format_date(s.from, locale),
            format_date(s.to, locale),
            s.days,
            format_number(s.rate, locale),
            format_number(s.base_rate, locale)
        ));
    }
    (interest.amount, lines.join("\n"))
}

/// After a reminder was completed: the earlier reminders of its invoice are old, and the
/// invoice notes the reminder (REMINDER).
pub fn completed(ctx: &Ctx, txn: &mut dyn Write, doc: &Document) -> Result<(), Error> {
    let account = ctx.account_id;
    let invoice = invoice_of(txn.as_read(), account, doc)?;
    for earlier in storage::reminders_of(txn.as_read(), account, invoice.id)? {
        let Some(d) = earlier.dunning.as_deref() else {
            continue;
        };
        if earlier.id == doc.id || earlier.status == Status::Draft || d.is_old {
            continue;
        }
        let mut old = earlier.clone();
        if let Some(d) = old.dunning.as_deref_mut() {
            d.is_old = true;
        }
        storage::save(txn, account, Some(&earlier), &old)?;
    }
    let level = doc.dunning.as_deref().map_or(0, |d| d.level);
    note_on_invoice(
        ctx,
        txn,
        &invoice,
        &format!(
            "Reminder {} (level {level}) completed: {} due by {}",
            doc.id,
            format_money(doc.total_gross, &doc.currency_code, "en"),
            doc.due_date
        ),
    )
}

/// A REMINDER comment on the invoice of a reminder.
pub fn note_on_invoice(
    ctx: &Ctx,
    txn: &mut dyn Write,
    invoice: &Document,
    text: &str,
) -> Result<(), Error> {
    let mut c = Comment {
        id: 0,
        document_id: invoice.id,
        created: ctx.now,
        user_id: ctx.user_id,
        comment: text.to_owned(),
        actionkey: "REMINDER".to_owned(),
    };
    storage::add(txn, ctx.account_id, DocKind::Invoice, &mut c)
}

/// What a reminder shows as paid when its invoice has `paid` of `total`: the payments
/// since the reminder took its claim, up to the reminder's total.
pub fn paid_since_claim(reminder: &Document, invoice: &Document) -> Decimal {
    let claim = reminder
        .dunning
        .as_deref()
        .map_or(Decimal::ZERO, |d| d.claim);
    let paid_before = invoice.total_gross - claim;
    (invoice.paid_amount - paid_before)
        .clamp(Decimal::ZERO, reminder.total_gross.max(Decimal::ZERO))
}

/// The items of the reminders of an invoice made before this one that carry the flat
/// charge: whether one does (it is charged once per invoice).
pub fn flat_charge_taken(reminders: &[Document], except: u64) -> bool {
    reminders.iter().any(|r| {
        r.id != except
            && r.status != Status::Canceled
            && r.dunning.as_deref().is_some_and(|d| d.flat_charge)
    })
}

/// Whether an item is one the service recomputes (interest).
pub fn is_computed(item: &Item) -> bool {
    item.charge == Charge::Interest
}
