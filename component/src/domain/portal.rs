//! The customer portal's rules: what a link opens (one document, or for a client's session
//! that client's documents) and nothing else of the account, whether it still works, what
//! its page shows, and what a client may do there: answer an offer, write a comment. Every
//! view of a document is noted on it, at most once an hour.
//!
//! Finds links through `links` and changes documents only through `documents::commands`;
//! knows nothing of HTML or HTTP (`http::portal` writes the pages).

use rust_decimal::Decimal;

use super::clients::CLIENTS;
use super::date::Date;
use super::documents::comments::Comment;
use super::documents::{DocKind, Document, Lifecycle, Shown, Status, commands, storage};
use super::links::{self, Link, Target};
use super::schema::Record;
use super::{Ctx, Error, clock, einvoice, girocode, printing, records, settings};
use crate::caps::{PdfDocument, Random, Read, Write};
use crate::limits;

/// How long a document's link keeps working once the document is no longer open (paid,
/// canceled, answered), if its own days have run out by then.
pub const CLOSED_GRACE_SECS: i64 = 30 * 86_400;

/// The seller as a page names it: whom to contact.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Seller {
    pub name: String,
    /// Street, then post code and city: the lines that are given.
    pub address: Vec<String>,
    pub email: String,
    pub phone: String,
    pub vat_number: String,
}

impl Seller {
    fn of(settings: &Record) -> Seller {
        let zip_city = format!(
            "{} {}",
            settings.text("company_zip"),
            settings.text("company_city")
        );
        Seller {
            name: settings.text("company_name").trim().to_owned(),
            address: [settings.text("company_street"), zip_city.as_str()]
                .iter()
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect(),
            email: settings.text("company_email").trim().to_owned(),
            phone: settings.text("company_phone").trim().to_owned(),
            vat_number: settings.text("company_vat_number").trim().to_owned(),
        }
    }
}

/// Why a link opens nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Closed {
    /// No such link (unknown, replaced, malformed, or its document deleted).
    NotFound,
    /// The link worked once and no longer does: whom to contact, in the client's locale.
    Expired { seller: Seller, locale: String },
}

/// What the bank transfer of an open document asks for, amounts and dates written as the
/// PDF writes them (the account's locale).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Payment {
    pub amount: String,
    pub due_date: String,
    pub owner: String,
    pub iban: String,
    pub bic: String,
    pub reference: String,
    /// The cash discount while it still applies: until when, and the amount to pay then.
    pub discount: Option<(String, String)>,
}

/// Where an offer stands for its client; dates as the PDF writes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OfferState {
    /// OPEN and valid until the day: it takes an answer.
    Answerable(String),
    /// OPEN, but its validity ended that day.
    Lapsed(String),
    /// Answered, or otherwise no longer open: its status says how.
    Settled,
}

/// A document's page.
#[derive(Debug, Clone, PartialEq)]
pub struct DocumentPage {
    pub doc: Document,
    /// The document as its PDF shows it (meta, items, totals, the GiroCode).
    pub printed: PdfDocument,
    /// Its introduction and note, placeholders resolved.
    pub intro: String,
    pub note: String,
    pub shown: Shown,
    /// The client's locale (else the account's).
    pub locale: String,
    pub seller: Seller,
    /// The e-invoice a download gives: the profile the client receives, when its XML was
    /// issued.
    pub einvoice: Option<faktura_einvoice::Profile>,
    pub payment: Option<Payment>,
    /// The version of the GiroCode that pays what is open, when the page shows one
    /// (`girocode::Transfer::version`; the code itself is [`girocode`]).
    pub girocode: Option<String>,
    pub offer: Option<OfferState>,
    /// What the client wrote here before: when (the account's day and time), and the text.
    pub comments: Vec<(String, String)>,
}

/// One document of a client's session.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    pub kind: DocKind,
    pub title: String,
    /// As the PDF writes it.
    pub date: String,
    pub shown: Shown,
    pub total: String,
    pub url: String,
}

/// A client's session: the client's documents with a link, newest first.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientPage {
    pub client_name: String,
    pub locale: String,
    pub seller: Seller,
    /// When the session ends (the account's day and time).
    pub expires: String,
    pub documents: Vec<Listed>,
}

/// What a link opens.
#[derive(Debug, Clone, PartialEq)]
pub enum Opened {
    Document(Box<DocumentPage>),
    Client(Box<ClientPage>),
}

/// The locale a client reads in: its own, else the account's.
fn locale_of(client: &Record, settings: &Record) -> String {
    match client.text("locale").trim() {
        "" => settings.text("locale").to_owned(),
        own => own.to_owned(),
    }
}

/// The moment a document's link stops working; none while the document is open. A link
/// works `portal_link_days` from when it was made, and at least `CLOSED_GRACE_SECS` past
/// the document's last change once it is no longer open (a completed document changes
/// only by its status and payments).
pub fn expires_at(link: &Link, doc: &Document, settings: &Record) -> Option<i64> {
    if doc.status == Status::Open {
        return None;
    }
    let days = settings.int("portal_link_days").unwrap_or(90);
    Some((link.issued + days * 86_400).max(doc.updated + CLOSED_GRACE_SECS))
}

/// The document a link opens, when it opens one and still works.
pub fn document_of(
    txn: &dyn Read,
    ctx: &Ctx,
    link: &Link,
) -> Result<Result<Document, Closed>, Error> {
    Ok(opened(txn, ctx, link)?.map(|(doc, _)| doc))
}

/// Whether a portal page reads the setting `name`: the seller's (`company_…`), the
/// language, whether a GiroCode is shown and delivery notes priced, how long links work.
/// A page copies only these out of the stored settings (a sixth of a page's work when it
/// copied all of them); `http::portal_tests::pages_read_no_setting_they_do_not_load`
/// renders every kind of page with these and with all settings alike.
fn shown_setting(name: &str) -> bool {
    name.starts_with("company_")
        || matches!(
            name,
            "delivery_note_prices" | "girocode" | "locale" | "portal_link_days"
        )
}

#[cfg(test)]
thread_local! {
    /// Set by a test: pages load every setting, to compare with what `shown_setting` loads.
    pub(crate) static EVERY_SETTING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The settings of `account` that a page reads (`shown_setting`).
fn page_settings(txn: &dyn Read, account: u64) -> Result<Record, Error> {
    #[cfg(test)]
    if EVERY_SETTING.get() {
        return settings::load_stored(txn, account);
    }
    settings::load_some(txn, account, shown_setting)
}

/// The document a link opens, with its account's settings, when it opens one and still
/// works.
fn opened(
    txn: &dyn Read,
    ctx: &Ctx,
    link: &Link,
) -> Result<Result<(Document, Record), Closed>, Error> {
    let Target::Document(kind, id) = link.target else {
        return Ok(Err(Closed::NotFound));
    };
    let doc = match storage::load(txn, link.account, kind, id) {
        Ok(doc) => doc,
        Err(Error::NotFound(_)) => return Ok(Err(Closed::NotFound)),
        Err(e) => return Err(e),
    };
    let settings = page_settings(txn, link.account)?;
    if expires_at(link, &doc, &settings).is_some_and(|at| ctx.now >= at) {
        let client = records::load(txn, &CLIENTS, link.account, doc.client_id)?;
        return Ok(Err(Closed::Expired {
            seller: Seller::of(&settings),
            locale: locale_of(&client, &settings),
        }));
    }
    Ok(Ok((doc, settings)))
}

/// The credit transfer a document's page shows as a GiroCode: what is open of an open
/// document that carries a code (`girocode::transfer` says which kinds do). `None` for
/// every other document.
fn transfer_shown(doc: &Document, settings: &Record) -> Option<girocode::Transfer> {
    (doc.status == Status::Open)
        .then(|| girocode::transfer(doc, settings, doc.open_amount()))
        .flatten()
}

/// The GiroCode of the page `link` opens, as the page shows it (`DocumentPage::girocode`).
pub fn girocode(
    txn: &dyn Read,
    ctx: &Ctx,
    link: &Link,
) -> Result<Result<Option<girocode::Transfer>, Closed>, Error> {
    Ok(opened(txn, ctx, link)?.map(|(doc, settings)| transfer_shown(&doc, &settings)))
}

/// The keys an answer of `link` reads first: its account's clock and settings, the linked
/// document and the list of its e-invoices issued, and the portal key its page's forms are
/// signed with (a download, which has no form, leaves that one unread). A caller fetches
/// them in one call (`caps::Prefetched`).
pub fn first_reads(link: &Link) -> Vec<Vec<u8>> {
    let account = link.account;
    let mut first = vec![
        clock::key(account),
        settings::key(account),
        links::secret_key(account),
    ];
    if let Target::Document(kind, id) = link.target {
        first.push(storage::key(account, kind, id));
        if kind.spec().einvoices {
            first.push(einvoice::issued_key(account, kind, id));
        }
    }
    first
}

/// What `link` shows at `ctx.now`. Reads only.
pub fn open(txn: &dyn Read, ctx: &Ctx, link: &Link) -> Result<Result<Opened, Closed>, Error> {
    if let Target::Client { id, expires } = link.target {
        return client_page(txn, ctx, link.account, id, expires);
    }
    let (doc, settings) = match opened(txn, ctx, link)? {
        Ok(opened) => opened,
        Err(closed) => return Ok(Err(closed)),
    };
    let account = link.account;
    let client = records::load(txn, &CLIENTS, account, doc.client_id)?;
    let items = storage::items(txn, account, doc.kind, doc.id)?;
    let values = printing::values_of(&doc, &client, &settings);
    let printed = printing::page(&doc, &items, &client, &settings, &values);
    let today = ctx.today();
    let shown = doc.shown(today);
    let einvoice = einvoice_offered(txn, account, &doc, &client)?;
    let locale = settings.text("locale");
    let payment = payment_asked(&doc, &settings, today);
    let offer = offer_state(&doc, today, locale);
    let comments = storage::children::<Comment>(txn, account, doc.kind, doc.id)?
        .into_iter()
        .filter(|c| c.actionkey == "PORTAL_COMMENT")
        .map(|c| (moment(ctx, c.created, locale), c.comment))
        .collect();
    let (intro, note) = (values.resolve(&doc.intro), values.resolve(&doc.note));
    drop(values);
    Ok(Ok(Opened::Document(Box::new(DocumentPage {
        intro,
        note,
        printed,
        shown,
        locale: locale_of(&client, &settings),
        seller: Seller::of(&settings),
        einvoice,
        girocode: transfer_shown(&doc, &settings).map(|t| t.version()),
        payment,
        offer,
        comments,
        doc,
    }))))
}

/// The e-invoice profile a document's page offers for download: the one its client
/// receives, when the document's XML of it was issued.
fn einvoice_offered(
    txn: &dyn Read,
    account: u64,
    doc: &Document,
    client: &Record,
) -> Result<Option<faktura_einvoice::Profile>, Error> {
    if !doc.kind.spec().einvoices {
        return Ok(None);
    }
    let profile = einvoice::profile_of(client);
    Ok(einvoice::issued_as_xml(txn, account, doc.kind, doc.id, profile)?.then_some(profile))
}

/// The transfer a document's page asks for: what is open of an open payable document,
/// with its cash discount while that applies, or a reminder's whole claim. `None` for
/// every other document.
fn payment_asked(doc: &Document, settings: &Record, today: Date) -> Option<Payment> {
    let locale = settings.text("locale");
    let money = |d: Decimal| printing::format_money(d, &doc.currency_code, locale);
    let date = |d: Date| printing::format_date(d, locale);
    let owner = match settings.text("company_bank_account_owner").trim() {
        "" => settings.text("company_name").trim().to_owned(),
        owner => owner.to_owned(),
    };
    let transfer = |amount: Decimal, reference: &str, discount| Payment {
        amount: money(amount),
        due_date: date(doc.due_date),
        owner,
        iban: settings.text("company_bank_iban").to_owned(),
        bic: settings.text("company_bank_bic").to_owned(),
        reference: reference.to_owned(),
        discount,
    };
    if doc.kind.spec().payable && doc.status == Status::Open && doc.open_amount() > Decimal::ZERO {
        let discount = (!doc.discount_rate.is_zero()
            && doc.paid_amount.is_zero()
            && doc.discount_date >= today)
            .then(|| {
                (
                    date(doc.discount_date),
                    money(doc.total_gross - doc.discount_amount()),
                )
            });
        Some(transfer(doc.open_amount(), &doc.formatted_number, discount))
    } else if let Some(dunning) = doc.dunning.as_deref()
        && doc.status == Status::Open
        && doc.total_gross > Decimal::ZERO
    {
        // A reminder asks for its claim with fees and interest, paid as its invoice is:
        // the invoice's number is the reference that matches the payment to it.
        Some(transfer(doc.total_gross, &dunning.invoice_number, None))
    } else {
        None
    }
}

/// Where an offer stands for its client on `today`; `None` for other kinds.
fn offer_state(doc: &Document, today: Date, locale: &str) -> Option<OfferState> {
    let date = |d: Date| printing::format_date(d, locale);
    (doc.kind.lifecycle() == Lifecycle::Offer).then(|| match doc.status {
        Status::Open if doc.validity_date >= today => {
            OfferState::Answerable(date(doc.validity_date))
        }
        Status::Open => OfferState::Lapsed(date(doc.validity_date)),
        Status::Draft
        | Status::Paid
        | Status::Canceled
        | Status::Won
        | Status::Lost
        | Status::Cleared
        | Status::Completed
        | Status::Created => OfferState::Settled,
    })
}

/// A moment as the account's day and time, the day in `locale`'s way.
fn moment(ctx: &Ctx, at: i64, locale: &str) -> String {
    let local = at + i64::from(ctx.utc_offset);
    format!(
        "{} {:02}:{:02}",
        printing::format_date(Date::from_unix(local), locale),
        local.rem_euclid(86_400) / 3600,
        local.rem_euclid(3600) / 60
    )
}

/// A client's session: every completed document of the client that has a link.
fn client_page(
    txn: &dyn Read,
    ctx: &Ctx,
    account: u64,
    client_id: u64,
    expires: i64,
) -> Result<Result<Opened, Closed>, Error> {
    let settings = page_settings(txn, account)?;
    let client = match records::load(txn, &CLIENTS, account, client_id) {
        Ok(client) => client,
        Err(Error::NotFound(_)) => return Ok(Err(Closed::NotFound)),
        Err(e) => return Err(e),
    };
    let locale = locale_of(&client, &settings);
    if ctx.now >= expires {
        return Ok(Err(Closed::Expired {
            seller: Seller::of(&settings),
            locale,
        }));
    }
    let today = ctx.today();
    let mut documents = Vec::new();
    for kind in DocKind::ALL.into_iter().filter(|k| k.spec().portal) {
        let ids = storage::of_client(txn, account, client_id, kind)?;
        for doc in storage::load_many(txn, account, kind, &ids)? {
            if doc.portal_url.is_empty() || doc.status == Status::Draft {
                continue;
            }
            let listed = Listed {
                kind,
                title: match (doc.title.trim(), doc.formatted_number.as_str()) {
                    ("", "") => doc.kind.title().to_owned(),
                    ("", number) => number.to_owned(),
                    (title, number) => format!("{title} {number}").trim_end().to_owned(),
                },
                date: printing::format_date(doc.date, settings.text("locale")),
                shown: doc.shown(today),
                total: printing::format_money(
                    doc.total_gross,
                    &doc.currency_code,
                    settings.text("locale"),
                ),
                url: doc.portal_url.clone(),
            };
            documents.push(((doc.date, doc.created), listed));
        }
    }
    documents.sort_by_key(|d| std::cmp::Reverse(d.0));
    Ok(Ok(Opened::Client(Box::new(ClientPage {
        client_name: client.text("name").to_owned(),
        locale,
        seller: Seller::of(&settings),
        expires: moment(ctx, expires, settings.text("locale")),
        documents: documents.into_iter().map(|(_, listed)| listed).collect(),
    }))))
}

/// Notes a view of the document `link` opens, unless one was noted within the hour: a
/// PORTAL_VIEW comment. Writes only when one is due (`links::view_due` first, in a read).
pub fn note_view(ctx: &Ctx, txn: &mut dyn Write, link: &Link) -> Result<(), Error> {
    let Target::Document(kind, id) = link.target else {
        return Ok(());
    };
    if !links::note_view(txn, link, ctx.now)? {
        return Ok(());
    }
    let doc = storage::load(txn.as_read(), link.account, kind, id)?;
    commands::note(
        ctx,
        txn,
        &doc,
        "PORTAL_VIEW",
        "Viewed in the customer portal",
    )
}

/// What a client may do on a document's page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Act {
    Accept(String),
    Decline(String),
    Comment(String),
}

/// Does `act` on the document `link` opens, which must still work.
pub fn act(ctx: &Ctx, txn: &mut dyn Write, link: &Link, act: &Act) -> Result<(), Error> {
    let doc = match document_of(txn.as_read(), ctx, link)? {
        Ok(doc) => doc,
        Err(Closed::NotFound) => return Err(Error::NotFound("no such link".into())),
        Err(Closed::Expired { .. }) => {
            return Err(Error::invalid("this link has expired"));
        }
    };
    match act {
        Act::Accept(name) | Act::Decline(name) => {
            if doc.kind.lifecycle() != Lifecycle::Offer {
                return Err(Error::invalid(format!(
                    "only an offer can be accepted or declined; this is a {}",
                    doc.kind.label()
                )));
            }
            let name = name.trim();
            if name.is_empty() {
                return Err(Error::invalid("name is mandatory: who answers the offer"));
            }
            if name.chars().count() > limits::PORTAL_NAME_CHARS_MAX {
                return Err(Error::invalid(format!(
                    "name is longer than {} characters",
                    limits::PORTAL_NAME_CHARS_MAX
                )));
            }
            let accepted = matches!(act, Act::Accept(_));
            commands::answer_offer(ctx, txn, doc.kind, doc.id, accepted, name).map(drop)
        }
        Act::Comment(text) => {
            let text = text.trim();
            if text.is_empty() {
                return Err(Error::invalid("comment is mandatory"));
            }
            if text.chars().count() > limits::PORTAL_COMMENT_CHARS_MAX {
                return Err(Error::invalid(format!(
                    "comment is longer than {} characters",
                    limits::PORTAL_COMMENT_CHARS_MAX
                )));
            }
            commands::comment_from_portal(ctx, txn, &doc, text).map(drop)
        }
    }
}

/// Opens a session for client `id` of the caller's account: a link to the client's
/// documents that works for `links::SESSION_SECS`; its address and end.
pub fn open_session(
    ctx: &Ctx,
    txn: &mut dyn Write,
    random: &dyn Random,
    id: u64,
) -> Result<(String, i64), Error> {
    records::load(txn.as_read(), &CLIENTS, ctx.account_id, id)?;
    let settings = settings::load_stored(txn.as_read(), ctx.account_id)?;
    let public_url = settings::public_url(&settings);
    if public_url.is_empty() {
        return Err(Error::invalid(
            "portal sessions need the address clients reach this service at: set the \
             settings' public_url",
        ));
    }
    let expires = ctx.now + links::SESSION_SECS;
    let target = Target::Client { id, expires };
    let url = links::issue(txn, random, public_url, ctx.account_id, target, ctx.now)?;
    Ok((url, expires))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::documents::model_sample;
    use crate::domain::schema::Scalar;

    fn link(issued: i64) -> Link {
        Link {
            hash: [0; 32],
            account: 1,
            target: Target::Document(DocKind::Invoice, 2),
            issued,
            last_view: 0,
        }
    }

    #[test]
    fn an_open_document_keeps_its_link_until_a_month_after_it_closed() {
        let mut settings = Record::default();
        settings.set("portal_link_days", Some(Scalar::Int(90)));
        let day = 86_400;
        let mut doc = model_sample(DocKind::Invoice, 2);
        doc.status = Status::Open;
        assert_eq!(expires_at(&link(0), &doc, &settings), None);
        // Paid on day 10: the link's own 90 days count.
        doc.status = Status::Paid;
        doc.updated = 10 * day;
        assert_eq!(expires_at(&link(0), &doc, &settings), Some(90 * day));
        // Paid on day 200: 30 days more from then.
        doc.updated = 200 * day;
        assert_eq!(expires_at(&link(0), &doc, &settings), Some(230 * day));
        // A link renewed on day 300 works 90 days from then.
        assert_eq!(
            expires_at(&link(300 * day), &doc, &settings),
            Some(390 * day)
        );
    }
}
