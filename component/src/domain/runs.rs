//! The runs of recurring invoices: run k of a recurring makes one invoice dated on its
//! scheduled day (not the day the run happened), its texts' date placeholders resolved
//! for that day, then does the recurring's action (complete it, e-mail it, post it). The
//! run is claimed by the recurring's place in its series, which moves in the same
//! transaction as the invoice is made: a run that finds the place moved (another host
//! made it, or a retry after a conflict) makes nothing. What leaves the transaction
//! (e-mail, letters) is recorded in it (`dispatch`) and handed over after the commit.

use super::date::Date;
use super::dispatch::{self, Dispatch};
use super::documents::recurring::{Schedule, receivers};
use super::documents::{DocKind, Document, commands, items::Item, storage};
use super::emails::{self, EmailRequest, LetterRequest};
use super::records;
use super::schema::{Changes, Scalar};
use super::{Ctx, Error, clients, clock, date_texts, schedule};
use crate::caps::{Pdf, Random, Read, Write};

/// Runs of one recurring in one pass of the scheduler, at most: a series far behind
/// catches up over several passes, oldest first.
pub const CATCH_UP_MAX: usize = 24;

/// What a run made: the invoice, and the message or letter to hand over after the commit.
#[derive(Debug)]
pub struct Made {
    pub invoice: u64,
    pub dispatch: Option<(u64, Dispatch)>,
}

/// Makes run of recurring `id` that is due at `ctx.now`, if one is: the invoice, the
/// action, the series moved on. `None` when nothing is due (already made).
pub fn run(
    ctx: &Ctx,
    txn: &mut dyn Write,
    pdf: &dyn Pdf,
    random: &dyn Random,
    id: u64,
) -> Result<Option<Made>, Error> {
    let account = ctx.account_id;
    let recurring = storage::load(txn.as_read(), account, DocKind::Recurring, id)?;
    let Some(s) = recurring.schedule.as_deref() else {
        return Ok(None);
    };
    let (Some(at), Some(date)) = (s.next_run, s.next_creation_date) else {
        return Ok(None);
    };
    if at > ctx.now {
        return Ok(None);
    }
    let client = records::load(
        txn.as_read(),
        &clients::CLIENTS,
        account,
        recurring.client_id,
    )?;
    let locale = match client.text("locale") {
        "" => super::settings::load_stored(txn.as_read(), account)?
            .text("locale")
            .to_owned(),
        l => l.to_owned(),
    };
    let items = storage::items(txn.as_read(), account, DocKind::Recurring, id)?;
    let invoice = make_invoice(ctx, txn, &recurring, &items, date, &locale)?;
    let mut after = recurring.clone();
    let schedule = after
        .schedule
        .as_deref_mut()
        .expect("a recurring has its schedule");
    let (outcome, problem) = act(ctx, txn, pdf, random, &recurring, &invoice, &locale)?;
    schedule.last_error = problem;
    let zone = clock::load(txn.as_read(), account)?.zone;
    let zone = schedule::zone(&zone).unwrap_or(jiff::tz::TimeZone::UTC);
    schedule.advance(date, &zone);
    after.updated = ctx.now;
    storage::save(ctx, txn, Some(&recurring), &after)?;
    Ok(Some(Made {
        invoice: invoice.id,
        dispatch: outcome,
    }))
}

/// The invoice of a run: the recurring's fields and items, dated `date`, its texts'
/// placeholders resolved for it; named as made by the recurring, with a comment saying so.
fn make_invoice(
    ctx: &Ctx,
    txn: &mut dyn Write,
    r: &Document,
    items: &[Item],
    date: Date,
    locale: &str,
) -> Result<Document, Error> {
    let s = r.schedule.as_deref().expect("a recurring has its schedule");
    let changes = invoice_changes(r, s, date, locale);
    let lines: Vec<Changes> = items
        .iter()
        .map(|i| item_changes(i, date, locale))
        .collect();
    let made = commands::create(ctx, txn, DocKind::Invoice, &changes, &lines)?;
    let mut invoice = made.clone();
    invoice.recurring_id = Some(r.id as i64);
    storage::save(ctx, txn, Some(&made), &invoice)?;
    let name = match s.name.trim() {
        "" => format!("recurring invoice {}", r.id),
        n => format!("recurring invoice {} ({n})", r.id),
    };
    commands::note(
        ctx,
        txn,
        &invoice,
        "CREATE_FROM_RECURRING",
        &format!(
            "Invoice created by {name}, run {}, for {date}",
            s.counter + 1
        ),
    )?;
    Ok(invoice)
}

/// The recurring `r` with its schedule `s` as the fields of the invoice of a run dated
/// `date`: due and discount dates by the schedule's terms, texts' date placeholders
/// resolved, an empty address left to the client's.
fn invoice_changes(r: &Document, s: &Schedule, date: Date, locale: &str) -> Changes {
    let text = |t: &str| Some(Scalar::Text(date_texts::resolve(t, date, locale)));
    let int = |v: Option<i64>| v.map(Scalar::Int);
    let mut values: Vec<(&'static str, Option<Scalar>)> = vec![
        ("client_id", Some(Scalar::Int(r.client_id as i64))),
        ("contact_id", int(r.contact_id)),
        ("template_id", int(r.template_id)),
        ("currency_code", Some(Scalar::Text(r.currency_code.clone()))),
        ("label", text(&r.label)),
        ("intro", text(&r.intro)),
        ("note", text(&r.note)),
        ("reduction", Some(Scalar::Text(r.reduction.clone()))),
        ("net_gross", Some(Scalar::Text(r.net_gross.clone()))),
        ("quote", Some(Scalar::Dec(r.quote))),
        ("payment_types", Some(Scalar::Text(r.payment_types.clone()))),
        ("discount_rate", Some(Scalar::Dec(r.discount_rate))),
        (
            "buyer_reference",
            Some(Scalar::Text(r.buyer_reference.clone())),
        ),
        (
            "order_reference",
            Some(Scalar::Text(r.order_reference.clone())),
        ),
        (
            "contract_reference",
            Some(Scalar::Text(r.contract_reference.clone())),
        ),
        ("offer_id", int(r.offer_id)),
        ("confirmation_id", int(r.confirmation_id)),
        ("date", Some(Scalar::Date(date))),
        ("due_date", Some(Scalar::Date(date.add_days(s.due_days)))),
        (
            "discount_date",
            Some(Scalar::Date(date.add_days(s.discount_days))),
        ),
    ];
    if !r.supply_date_type.is_empty() {
        values.push((
            "supply_date_type",
            Some(Scalar::Text(r.supply_date_type.clone())),
        ));
    }
    // An empty address is the client's at the run.
    if !r.address.trim().is_empty() {
        values.push(("address", text(&r.address)));
    }
    Changes {
        values: values.into_iter().filter(|(_, v)| v.is_some()).collect(),
        ..Changes::default()
    }
}

/// A recurring's item as an item of the invoice of a run dated `date`.
fn item_changes(i: &Item, date: Date, locale: &str) -> Changes {
    let text = |t: &str| Some(Scalar::Text(date_texts::resolve(t, date, locale)));
    let plain = |t: &str| Some(Scalar::Text(t.to_owned()));
    let values = vec![
        ("article_id", i.article_id.map(Scalar::Int)),
        ("unit", plain(&i.unit)),
        ("quantity", Some(Scalar::Dec(i.quantity))),
        ("unit_price", Some(Scalar::Dec(i.unit_price))),
        ("tax_name", plain(&i.tax_name)),
        ("tax_rate", Some(Scalar::Dec(i.tax_rate))),
        ("title", text(&i.title)),
        ("description", text(&i.description)),
        ("reduction", plain(&i.reduction)),
        ("type", plain(&i.product_type)),
        ("unit_code", plain(&i.unit_code)),
        ("tax_category", plain(&i.tax_category)),
        ("tax_exemption_reason", plain(&i.tax_exemption_reason)),
    ];
    Changes {
        values: values
            .into_iter()
            .filter(|(_, v)| !matches!(v, Some(Scalar::Text(t)) if t.is_empty()))
            .filter(|(_, v)| v.is_some())
            .collect(),
        ..Changes::default()
    }
}

/// The recurring's action on the invoice of its run: what to hand over after the commit,
/// and why the action did not happen (the last error; empty when it did).
fn act(
    ctx: &Ctx,
    txn: &mut dyn Write,
    pdf: &dyn Pdf,
    random: &dyn Random,
    r: &Document,
    invoice: &Document,
    locale: &str,
) -> Result<(Option<(u64, Dispatch)>, String), Error> {
    let s = r.schedule.as_deref().expect("a recurring has its schedule");
    if s.action == "CREATE" || s.action.is_empty() {
        return Ok((None, String::new()));
    }
    let refused = super::einvoice::refusals(txn.as_read(), ctx.account_id, invoice)?;
    if !refused.is_empty() {
        return Ok((
            None,
            format!(
                "invoice {} was left a draft: its completion is refused by {}",
                invoice.id,
                refused.join("; ")
            ),
        ));
    }
    commands::complete(ctx, txn, pdf, random, DocKind::Invoice, invoice.id, None)?;
    let parcel = match s.action.as_str() {
        "EMAIL" => {
            let req = email_request(txn.as_read(), ctx.account_id, r, s, invoice.date, locale)?;
            if req.to.is_empty()
                && req.cc.is_empty()
                && req.bcc.is_empty()
                && r.contact_id.is_none()
            {
                return Ok((
                    None,
                    format!(
                        "invoice {} was completed but not e-mailed: no recipient (the recurring \
                         has no receivers and the client no e-mail address)",
                        invoice.id
                    ),
                ));
            }
            emails::send(ctx, txn.as_read(), DocKind::Invoice, invoice.id, req)
        }
        "MAIL" => emails::post(
            ctx,
            txn.as_read(),
            DocKind::Invoice,
            invoice.id,
            letter_request(s),
        ),
        _ => return Ok((None, String::new())),
    };
    hand_over(ctx, txn, invoice, parcel)
}

/// The letter of a run, as the recurring's schedule `s` asks for it.
fn letter_request(s: &Schedule) -> LetterRequest {
    LetterRequest {
        color: s.letter_color,
        duplex: s.letter_duplex,
        paper_weight: s.letter_paper_weight.clamp(0, u32::MAX as i64) as u32,
        attachments: Vec::new(),
    }
}

/// Records the dispatch of a run's e-mail or letter, to hand over after the commit; a
/// `parcel` refused as invalid is why the invoice was not sent.
fn hand_over(
    ctx: &Ctx,
    txn: &mut dyn Write,
    invoice: &Document,
    parcel: Result<Dispatch, Error>,
) -> Result<(Option<(u64, Dispatch)>, String), Error> {
    match parcel {
        Ok(d) => Ok((Some(dispatch::record(txn, d, ctx.now)?), String::new())),
        Err(Error::Invalid(problems)) => Ok((
            None,
            format!(
                "invoice {} was completed but not sent: {}",
                invoice.id,
                problems.join("; ")
            ),
        )),
        Err(e) => Err(e),
    }
}

/// The e-mail of a run: the recurring's receivers (else the client's address), subject,
/// message, sender, file name and blind copies.
fn email_request(
    txn: &dyn Read,
    account: u64,
    r: &Document,
    s: &Schedule,
    date: Date,
    locale: &str,
) -> Result<EmailRequest, Error> {
    // The run's date placeholders first; the invoice's are resolved when it is sent.
    let text = |t: &str| (!t.trim().is_empty()).then(|| date_texts::resolve(t, date, locale));
    let mut req = EmailRequest {
        from: (!s.email_sender.trim().is_empty()).then(|| s.email_sender.trim().to_owned()),
        subject: text(&s.email_subject),
        body: text(&s.email_message),
        filename: text(&s.email_filename),
        ..EmailRequest::default()
    };
    for receiver in receivers(txn, account, r.id)? {
        let address = receiver.text("address").trim().to_owned();
        match receiver.text("type") {
            "cc" => req.cc.push(address),
            "bcc" => req.bcc.push(address),
            _ => req.to.push(address),
        }
    }
    req.bcc.extend(
        s.email_bcc
            .split(',')
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .map(str::to_owned),
    );
    if req.to.is_empty() && r.contact_id.is_none() {
        let client = records::load(txn, &clients::CLIENTS, account, r.client_id)?;
        let email = client.text("email").trim();
        if !email.is_empty() {
            req.to.push(email.to_owned());
        }
    }
    Ok(req)
}
