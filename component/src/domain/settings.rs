//! Account settings: one record per account holding the defaults of documents and clients
//! (currency, number ranges, texts, payment terms, company address). Unset fields read as
//! their defaults; the `*_next` fields are computed from the number ranges.

use rust_decimal::Decimal;

use super::codes::is_email;
use super::date::Date;
use super::schema::{Changes, Field, Kind, Record, Scalar, check_not_cleared};
use super::{Ctx, Error};
use super::{numbering, records};
use crate::caps::{Read, Write};
use crate::limits;
use crate::store;

/// What an automatic dunning run does with a reminder it makes.
pub const DUNNING_ACTIONS: &[&str] = &["CREATE", "COMPLETE", "EMAIL", "MAIL"];

/// Payment types a document may accept.
pub const PAYMENT_TYPES: &[&str] = &[
    "CREDIT_NOTE",
    "BANK_CARD",
    "BANK_TRANSFER",
    "DEBIT",
    "CASH",
    "PAYPAL",
    "CREDIT_CARD",
    "COUPON",
    "MISC",
];

/// The settings of the account and of invoices and credit notes, in response order.
static HEAD: &[Field] = &[
    Field::new("currency_code", Kind::Currency).mandatory().doc(
        "The account's currency: documents of clients without a currency_code are in it. Default: \
         EUR.",
    ),
    Field::new("locale", Kind::Text).mandatory().doc(
        "Locale of PDFs, e-mails and e-invoice texts: de_* writes dates as DD.MM.YYYY and German \
         standard texts; it sets the decimal mark. Default: de_DE.",
    ),
    Field::new("time_zone", Kind::Text).doc(
        "The account's time zone, an IANA name such as Europe/Berlin or America/New_York: the \
         day it is (document dates, due dates, OVERDUE) and the hour recurring invoices run at \
         follow it. Default: Europe/Berlin.",
    ),
    Field::new("net_gross", Kind::Enum(&["NET", "GROSS"]))
        .mandatory()
        .doc(
            "Price basis of new documents whose client says SETTINGS: NET prices get tax added, \
             GROSS prices include it. Default: NET.",
        ),
    Field::new("invoice_number_pre", Kind::Text).doc(
        "Number prefix of new invoices; may hold [YYYY], [YY], [MM] and [DD], resolved from the \
         invoice date. Default: INV-.",
    ),
    Field::new("invoice_number_length", Kind::Integer).doc(
        "Minimum digits of new invoice numbers, padded with leading zeros (0 to 20). Default: 5.",
    ),
    Field::new("invoice_number_next", Kind::Integer)
        .read_only()
        .doc(
            "The number the next invoice dated today gets: one past the highest held under \
             invoice_number_pre with its date placeholders resolved for today (read only; \
             computed).",
        ),
    Field::new("credit_note_number_pre", Kind::Text).doc(
        "Number prefix of new credit notes; may hold [YYYY], [YY], [MM] and [DD], resolved from \
         the credit note date. Default: CN-.",
    ),
    Field::new("credit_note_number_length", Kind::Integer).doc(
        "Minimum digits of new credit note numbers, padded with leading zeros (0 to 20). Default: \
         5.",
    ),
    Field::new("credit_note_number_next", Kind::Integer)
        .read_only()
        .doc(
            "The number the next credit note dated today gets: one past the highest held under \
             credit_note_number_pre with its date placeholders resolved for today (read only; \
             computed).",
        ),
    Field::new("client_number_pre", Kind::Text)
        .doc("Number prefix of new clients. Default: empty."),
    Field::new("client_number_length", Kind::Integer).doc(
        "Minimum digits of new client numbers, padded with leading zeros (0 to 20). Default: 0.",
    ),
    Field::new("client_number_next", Kind::Integer)
        .read_only()
        .doc("The number the next client with client_number_pre gets (read only; computed)."),
    Field::new("invoice_intro", Kind::Text)
        .doc("Introductory text of new invoices; placeholders are resolved in the PDF."),
    Field::new("invoice_note", Kind::Text)
        .doc("Closing note of new invoices; placeholders are resolved in the PDF."),
    Field::new("invoice_label", Kind::Text).doc("Label of new invoices."),
    Field::new("invoice_filename", Kind::Text).doc(
        "Name of invoice PDFs without .pdf; placeholders such as [Invoice.invoice_number] are \
         resolved at completion. Empty: invoice_<id>.",
    ),
    Field::new("invoice_email_subject", Kind::Text).doc(
        "Subject of invoice e-mails that give none and use no e-mail template; placeholders are \
         resolved. Default: Invoice [Invoice.invoice_number].",
    ),
    Field::new("invoice_email_body", Kind::Text).doc(
        "Body of invoice e-mails that give none and use no e-mail template; placeholders are \
         resolved. Default: a short covering letter.",
    ),
    Field::new("credit_note_intro", Kind::Text)
        .doc("Introductory text of new credit notes; placeholders are resolved in the PDF."),
    Field::new("credit_note_note", Kind::Text)
        .doc("Closing note of new credit notes; placeholders are resolved in the PDF."),
    Field::new("credit_note_label", Kind::Text).doc("Label of new credit notes."),
    Field::new("credit_note_filename", Kind::Text).doc(
        "Name of credit note PDFs without .pdf; placeholders are resolved at completion. Empty: \
         credit_note_<id>.",
    ),
    Field::new("credit_note_email_subject", Kind::Text).doc(
        "Subject of credit note e-mails that give none and use no e-mail template; placeholders \
         are resolved. Default: Credit note [CreditNote.credit_note_number].",
    ),
    Field::new("credit_note_email_body", Kind::Text).doc(
        "Body of credit note e-mails that give none and use no e-mail template; placeholders are \
         resolved. Default: a short covering letter.",
    ),
];

/// The settings of a kind of document beyond invoices and credit notes: number range,
/// texts, file name and e-mail texts, named by the kind's range (`offer_intro`).
macro_rules! kind_settings {
    ($range:literal, $label:literal, $pre:literal, $placeholder:literal) => {
        [
            Field::new(concat!($range, "_number_pre"), Kind::Text).doc(concat!(
                "Number prefix of new ",
                $label,
                "s; may hold [YYYY], [YY], [MM] and [DD], \
                 resolved from the ",
                $label,
                " date. Default: ",
                $pre,
                "."
            )),
            Field::new(concat!($range, "_number_length"), Kind::Integer).doc(concat!(
                "Minimum digits of new ",
                $label,
                " numbers, padded with leading zeros (0 to 20). \
                 Default: 5."
            )),
            Field::new(concat!($range, "_number_next"), Kind::Integer)
                .read_only()
                .doc(concat!(
                    "The number the next ",
                    $label,
                    " dated today gets: one past the highest \
                     held under ",
                    $range,
                    "_number_pre with its date placeholders resolved for \
                     today (read only; computed)."
                )),
            Field::new(concat!($range, "_intro"), Kind::Text).doc(concat!(
                "Introductory text of new ",
                $label,
                "s; placeholders are resolved in the PDF."
            )),
            Field::new(concat!($range, "_note"), Kind::Text).doc(concat!(
                "Closing note of new ",
                $label,
                "s; placeholders are resolved in the PDF."
            )),
            Field::new(concat!($range, "_label"), Kind::Text).doc(concat!(
                "Label of new ",
                $label,
                "s."
            )),
            Field::new(concat!($range, "_filename"), Kind::Text).doc(concat!(
                "Name of ",
                $label,
                " PDFs without .pdf; placeholders are resolved at \
                 completion. Empty: the kind's name and id."
            )),
            Field::new(concat!($range, "_email_subject"), Kind::Text).doc(concat!(
                "Subject of ",
                $label,
                " e-mails that give none and use no e-mail template; \
                 placeholders are resolved. Default: ",
                $placeholder,
                "."
            )),
            Field::new(concat!($range, "_email_body"), Kind::Text).doc(concat!(
                "Body of ",
                $label,
                " e-mails that give none and use no e-mail template; \
                 placeholders are resolved. Default: a short covering letter."
            )),
        ]
    };
}

static OFFER: [Field; 9] = kind_settings!("offer", "offer", "OFR-", "Offer [Offer.offer_number]");
static CONFIRMATION: [Field; 9] = kind_settings!(
    "confirmation",
    "confirmation",
    "OC-",
    "Order confirmation [Confirmation.confirmation_number]"
);
static DELIVERY_NOTE: [Field; 9] = kind_settings!(
    "delivery_note",
    "delivery note",
    "DN-",
    "Delivery note [DeliveryNote.delivery_note_number]"
);

/// What offers and delivery notes need beyond their kind's settings, then the terms,
/// sending and the company.
static TAIL: &[Field] = &[
    Field::new("article_number_pre", Kind::Text)
        .doc("Number prefix of new articles. Default: ART-."),
    Field::new("article_number_length", Kind::Integer).doc(
        "Minimum digits of new article numbers, padded with leading zeros (0 to 20). Default: 5.",
    ),
    Field::new("article_number_next", Kind::Integer)
        .read_only()
        .doc("The number the next article with article_number_pre gets (read only; computed)."),
    Field::new("offer_validity_days", Kind::Integer)
        .doc("Days a new offer holds after its date (0 to 3650): its validity_days. Default: 30."),
    Field::new("delivery_note_prices", Kind::Bool)
        .doc("1 prints prices and totals on delivery notes; 0 only the quantities. Default: 0."),
    Field::new("reminder_due_days", Kind::Integer).doc(
        "Days from a new reminder's date to its due date (0 to 3650): its due_days. Default: 10.",
    ),
    Field::new("reminder_email_subject", Kind::Text).doc(
        "Subject of reminder e-mails that give none; placeholders are resolved. Default: \
         [Reminder.subject], the reminder's subject.",
    ),
    Field::new("reminder_email_body", Kind::Text).doc(
        "Body of reminder e-mails that give none; placeholders are resolved. Default: a short \
         covering letter.",
    ),
    Field::new("dunning_run", Kind::Bool).doc(
        "1: the automatic dunning runs make the next reminder of every OVERDUE invoice of a \
         client with dunning_run 1 once the level's days_overdue have passed, one level per \
         invoice and run. Default: 0.",
    ),
    Field::new("dunning_action", Kind::Enum(DUNNING_ACTIONS)).doc(
        "What an automatic dunning run does with a reminder it makes: CREATE leaves a draft, \
         COMPLETE completes it, EMAIL completes and e-mails it, MAIL completes and posts it. \
         Default: CREATE.",
    ),
    Field::new("dunning_repeat_days", Kind::Integer).doc(
        "Past the last level, automatic runs repeat it this many days after the previous \
         reminder's due date (0 to 3650); 0: never. Default: 0.",
    ),
    Field::new("dunning_flat_charge", Kind::Bool).doc(
        "1 adds the flat charge of § 288 (5) BGB (40 EUR) for business clients (consumer 0) to \
         the first reminder of an invoice in EUR that has a fee, once per invoice. Default: 0.",
    ),
    Field::new("due_days", Kind::Integer).doc(
        "Days from the document date to the due date (0 to 3650) for clients whose due_days_type \
         is SETTINGS. Default: 14.",
    ),
    Field::new("discount_rate", Kind::Decimal).doc(
        "Cash discount in percent (0 to 100) for clients whose discount_rate_type is SETTINGS. \
         Default: 0.",
    ),
    Field::new("discount_days", Kind::Integer).doc(
        "Days from the document date to the cash discount date (0 to 3650) for clients whose \
         discount_days_type is SETTINGS. Default: 0.",
    ),
    Field::new("payment_types", Kind::Words(PAYMENT_TYPES)).doc(
        "Payment types new documents accept, comma-separated (values of a payment's type); the \
         first one sets the e-invoice's payment means (BT-81).",
    ),
    Field::new("print_version", Kind::Bool).doc(
        "1 serves GET …/pdf?type=print, the version without background that completion renders. \
         Default: 0.",
    ),
    Field::new("default_email_sender", Kind::Email).doc(
        "Sender address of e-mails that give no from. Empty: the e-mail address of the user who \
         sends.",
    ),
    Field::new("bcc_addresses", Kind::Text)
        .doc("E-mail addresses, comma-separated, that get a blind copy of every e-mail sent."),
    Field::new("company_name", Kind::Text).doc(
        "Seller name (BT-27), printed in the sender line and footer; [Company.name] in \
         placeholders.",
    ),
    Field::new("company_street", Kind::Text).doc("Seller street (BT-35)."),
    Field::new("company_zip", Kind::Text).doc("Seller post code (BT-38)."),
    Field::new("company_city", Kind::Text).doc("Seller city (BT-37)."),
    Field::new("company_country_code", Kind::Country)
        .doc("Seller country (BT-40); e-invoices also take it for clients without a country_code."),
    Field::new("company_vat_number", Kind::Text)
        .doc("Seller VAT identifier (BT-31), printed in the footer."),
    // E-invoicing (EN 16931 business terms in README, "E-invoices").
    Field::new("company_tax_number", Kind::Text).doc("Seller tax registration number (BT-32)."),
    Field::new("company_registration_id", Kind::Text)
        .doc("Seller legal registration identifier (BT-30), e.g. the commercial register number."),
    Field::new("company_contact_name", Kind::Text).doc("Seller contact point (BT-41)."),
    Field::new("company_phone", Kind::Text).doc("Seller contact telephone number (BT-42)."),
    Field::new("company_email", Kind::Email)
        .doc("Seller contact e-mail address (BT-43); the default of company_electronic_address."),
    Field::new("company_electronic_address", Kind::Email)
        .doc("Seller electronic address (BT-34), an e-mail address. Empty: company_email."),
    Field::new("company_bank_account_owner", Kind::Text)
        .doc("Name of the payment account (BT-85). Empty: company_name."),
    Field::new("company_bank_iban", Kind::Iban).doc(
        "IBAN of the payment account (BT-84) that credit transfers go to; its check digits must be \
         valid.",
    ),
    Field::new("company_bank_bic", Kind::Bic)
        .doc("BIC of the payment account's bank (BT-86), 8 or 11 characters."),
    Field::new("company_bank_name", Kind::Text).doc("Name of the payment account's bank."),
    Field::new("company_creditor_id", Kind::Text)
        .doc("SEPA creditor identifier (BT-90) for documents paid by DEBIT."),
    Field::new("tax_exemption_reason", Kind::Text).doc(
        "VAT exemption reason (BT-120) of documents for clients with tax_rule NO_TAX (category E).",
    ),
    Field::new("einvoice_pdf", Kind::Bool).doc(
        "1 makes completed PDFs Factur-X hybrids (PDF/A-3 carrying the factur-x XML); completion \
         then checks the Factur-X rules. Default: 0.",
    ),
    Field::new("girocode", Kind::Bool).doc(
        "1 prints an EPC QR code (GiroCode: a SEPA credit transfer of the amount to \
         company_bank_iban, the invoice number as its reference) on invoices in EUR and shows it \
         in the customer portal, when company_bank_iban is set. Default: 1.",
    ),
    // The customer portal.
    Field::new("public_url", Kind::Text).doc(
        "The address clients reach this service at, such as https://billing.example.com: links to \
         the customer portal (customerportal_url, client portal sessions) start with it. Empty: \
         completed documents get no link.",
    ),
    Field::new("portal_link_days", Kind::Integer).doc(
        "Days a document's portal link works after the document was completed or its link \
         renewed (1 to 3650); a document still OPEN keeps its link until 30 days after it is paid, \
         canceled or answered. Default: 90.",
    ),
];

/// Every setting, in response order.
pub static FIELDS: &[Field] = &ALL;

const COUNT: usize =
    HEAD.len() + OFFER.len() + CONFIRMATION.len() + DELIVERY_NOTE.len() + TAIL.len();

static ALL: [Field; COUNT] = {
    let parts: [&[Field]; 5] = [HEAD, &OFFER, &CONFIRMATION, &DELIVERY_NOTE, TAIL];
    let mut out = [Field::new("", Kind::Text); COUNT];
    let (mut n, mut p) = (0, 0);
    while p < parts.len() {
        let mut i = 0;
        while i < parts[p].len() {
            out[n] = parts[p][i];
            n += 1;
            i += 1;
        }
        p += 1;
    }
    out
};

/// The number ranges of documents and clients, as their settings name them.
pub const RANGES: [&str; 7] = [
    "invoice",
    "credit_note",
    "offer",
    "confirmation",
    "delivery_note",
    "client",
    "article",
];

/// A setting's value nobody has changed.
#[derive(Debug, Clone, Copy)]
enum Preset {
    Text(&'static str),
    Int(i64),
    Bool(bool),
    DecZero,
}

impl Preset {
    fn scalar(self) -> Scalar {
        match self {
            Preset::Text(t) => Scalar::Text(t.to_owned()),
            Preset::Int(i) => Scalar::Int(i),
            Preset::Bool(b) => Scalar::Bool(b),
            Preset::DecZero => Scalar::Dec(Decimal::ZERO),
        }
    }
}

/// The value of each setting nobody has changed, by name in byte order (settings are read
/// by most requests, and their presets merge with the stored values in one pass:
/// `tests::the_presets_are_fields_in_order`). Settings not named have no value.
static PRESETS: &[(&str, Preset)] = &[
    ("article_number_length", Preset::Int(5)),
    ("article_number_pre", Preset::Text("ART-")),
    ("client_number_length", Preset::Int(0)),
    (
        "confirmation_email_body",
        Preset::Text(
            "Dear [Client.name],\n\nthank you for your order: please find attached our order \
             confirmation [Confirmation.confirmation_number] of [Confirmation.date].\n\nKind \
             regards\n[Company.name]",
        ),
    ),
    (
        "confirmation_email_subject",
        Preset::Text("Order confirmation [Confirmation.confirmation_number]"),
    ),
    ("confirmation_number_length", Preset::Int(5)),
    ("confirmation_number_pre", Preset::Text("OC-")),
    (
        "credit_note_email_body",
        Preset::Text(
            "Dear [Client.name],\n\nplease find attached credit note \
             [CreditNote.credit_note_number] of [CreditNote.date].\n\nKind regards\n[Company.name]",
        ),
    ),
    (
        "credit_note_email_subject",
        Preset::Text("Credit note [CreditNote.credit_note_number]"),
    ),
    ("credit_note_number_length", Preset::Int(5)),
    ("credit_note_number_pre", Preset::Text("CN-")),
    ("currency_code", Preset::Text("EUR")),
    (
        "delivery_note_email_body",
        Preset::Text(
            "Dear [Client.name],\n\nplease find attached delivery note \
             [DeliveryNote.delivery_note_number] of [DeliveryNote.date].\n\nKind \
             regards\n[Company.name]",
        ),
    ),
    (
        "delivery_note_email_subject",
        Preset::Text("Delivery note [DeliveryNote.delivery_note_number]"),
    ),
    ("delivery_note_number_length", Preset::Int(5)),
    ("delivery_note_number_pre", Preset::Text("DN-")),
    ("delivery_note_prices", Preset::Bool(false)),
    ("discount_days", Preset::Int(0)),
    ("discount_rate", Preset::DecZero),
    ("due_days", Preset::Int(14)),
    ("dunning_action", Preset::Text("CREATE")),
    ("dunning_flat_charge", Preset::Bool(false)),
    ("dunning_repeat_days", Preset::Int(0)),
    ("dunning_run", Preset::Bool(false)),
    ("einvoice_pdf", Preset::Bool(false)),
    ("girocode", Preset::Bool(true)),
    (
        "invoice_email_body",
        Preset::Text(
            "Dear [Client.name],\n\nplease find attached invoice [Invoice.invoice_number] \
             of [Invoice.date].\n\nKind regards\n[Company.name]",
        ),
    ),
    (
        "invoice_email_subject",
        Preset::Text("Invoice [Invoice.invoice_number]"),
    ),
    ("invoice_number_length", Preset::Int(5)),
    ("invoice_number_pre", Preset::Text("INV-")),
    ("locale", Preset::Text("de_DE")),
    ("net_gross", Preset::Text("NET")),
    (
        "offer_email_body",
        Preset::Text(
            "Dear [Client.name],\n\nplease find attached our offer [Offer.offer_number] of \
             [Offer.date], valid until [Offer.validity_date].\n\nKind regards\n[Company.name]",
        ),
    ),
    (
        "offer_email_subject",
        Preset::Text("Offer [Offer.offer_number]"),
    ),
    ("offer_number_length", Preset::Int(5)),
    ("offer_number_pre", Preset::Text("OFR-")),
    ("offer_validity_days", Preset::Int(30)),
    ("portal_link_days", Preset::Int(90)),
    ("print_version", Preset::Bool(false)),
    ("reminder_due_days", Preset::Int(10)),
    (
        "reminder_email_body",
        Preset::Text(
            "Dear [Client.name],\n\nour invoice [Invoice.invoice_number] of [Invoice.date] is \
             still open. Please find attached our reminder: [Reminder.total_gross] are due by \
             [Reminder.due_date].\n\nKind regards\n[Company.name]",
        ),
    ),
    ("reminder_email_subject", Preset::Text("[Reminder.subject]")),
    ("time_zone", Preset::Text(super::clock::ZONE_DEFAULT)),
];

pub(crate) fn key(account: u64) -> Vec<u8> {
    store::keys::singleton(account, "settings")
}

/// The stored settings over their defaults, without the computed fields.
pub fn load_stored(txn: &dyn Read, account: u64) -> Result<Record, Error> {
    let stored = match txn.get(&key(account))? {
        Some(bytes) => records::decode_pairs(&bytes)?,
        None => Vec::new(),
    };
    Ok(over_presets(stored, PRESETS.iter()))
}

/// The settings `keep` takes by name, stored over their defaults: a reader that needs a
/// few of them copies only those out of the stored record.
pub fn load_some(txn: &dyn Read, account: u64, keep: fn(&str) -> bool) -> Result<Record, Error> {
    let stored = match txn.get(&key(account))? {
        Some(bytes) => records::decode_pairs_kept(&bytes, keep)?,
        None => Vec::new(),
    };
    Ok(over_presets(
        stored,
        PRESETS.iter().filter(|(name, _)| keep(name)),
    ))
}

/// Stored values over the `presets` (by name).
fn over_presets<'p>(
    stored: Vec<(String, Scalar)>,
    presets: impl Iterator<Item = &'p (&'static str, Preset)>,
) -> Record {
    if !stored.is_sorted_by(|a, b| a.0 < b.0) {
        let mut record = Record {
            values: presets
                .map(|(name, v)| ((*name).to_owned(), v.scalar()))
                .collect(),
        };
        record.values.extend(stored);
        return record;
    }
    // Both by name: merged in one pass, a stored value over its preset, and the map built
    // from sorted pairs (inserting each stored value into a map of the defaults was most
    // of the cost of reading settings).
    let mut merged = Vec::with_capacity(PRESETS.len() + stored.len());
    let mut presets = presets.peekable();
    for (name, value) in stored {
        while let Some((preset, v)) = presets.next_if(|(p, _)| *p < name.as_str()) {
            merged.push(((*preset).to_owned(), v.scalar()));
        }
        presets.next_if(|(p, _)| *p == name.as_str());
        merged.push((name, value));
    }
    merged.extend(presets.map(|(p, v)| ((*p).to_owned(), v.scalar())));
    Record {
        values: merged.into_iter().collect(),
    }
}

/// The settings as the API shows them, with the next numbers of each range: the number a
/// document dated `today` would get, its prefix's date placeholders resolved as the
/// document's are (so a new year's prefix starts a new series).
pub fn load(txn: &dyn Read, account: u64, today: Date) -> Result<Record, Error> {
    let mut record = load_stored(txn, account)?;
    for range in RANGES {
        let pre = record.text(&format!("{range}_number_pre")).to_owned();
        let pre = if range == "client" || range == "article" {
            pre
        } else {
            numbering::resolve_prefix(&pre, today)
        };
        let next = numbering::next_free(txn, account, range, &pre)?;
        record.set(&format!("{range}_number_next"), Some(Scalar::Int(next)));
    }
    Ok(record)
}

pub fn update(ctx: &Ctx, txn: &mut dyn Write, changes: &Changes) -> Result<Record, Error> {
    if !ctx.is_admin {
        return Err(Error::Forbidden(
            "only an admin user may change the settings".into(),
        ));
    }
    let mut errors = changes.errors();
    check_not_cleared(FIELDS, changes, &mut errors);
    let mut record = load_stored(txn.as_read(), ctx.account_id)?;
    changes.apply(&mut record);
    validate(&record, &mut errors);
    if !errors.is_empty() {
        return Err(Error::Invalid(errors));
    }
    txn.put(&key(ctx.account_id), &records::encode_record(&record))?;
    let clock = super::clock::load(txn.as_read(), ctx.account_id)?;
    let zone = record.text("time_zone");
    if zone != clock.zone {
        // The account's clock keeps the zone every request reads.
        super::clock::save(txn, ctx.account_id, zone, clock.offset, ctx.now)?;
    }
    load(txn.as_read(), ctx.account_id, ctx.today())
}

/// Sets the account's time zone (the test clock sets it with its moment).
pub fn set_time_zone(txn: &mut dyn Write, account: u64, zone: &str) -> Result<(), Error> {
    let mut record = load_stored(txn.as_read(), account)?;
    if record.text("time_zone") == zone {
        return Ok(());
    }
    record.set("time_zone", Some(Scalar::Text(zone.to_owned())));
    txn.put(&key(account), &records::encode_record(&record))?;
    Ok(())
}

fn validate(r: &Record, errors: &mut Vec<String>) {
    let in_range = |name: &str, max: i64, errors: &mut Vec<String>| {
        if let Some(v) = r.int(name)
            && !(0..=max).contains(&v)
        {
            errors.push(format!("{name} must be between 0 and {max}, got {v}"));
        }
    };
    for range in RANGES {
        in_range(
            &format!("{range}_number_length"),
            limits::NUMBER_LENGTH_MAX,
            errors,
        );
        if r.text(&format!("{range}_number_pre")).chars().count() > limits::NUMBER_PRE_CHARS_MAX {
            errors.push(format!(
                "{range}_number_pre is longer than {} characters",
                limits::NUMBER_PRE_CHARS_MAX
            ));
        }
    }
    let zone = r.text("time_zone");
    if super::schedule::zone(zone).is_none() {
        errors.push(format!(
            "time_zone must be an IANA time zone such as Europe/Berlin, got \"{zone}\""
        ));
    }
    in_range("due_days", limits::TERM_DAYS_MAX, errors);
    in_range("reminder_due_days", limits::TERM_DAYS_MAX, errors);
    in_range("dunning_repeat_days", limits::TERM_DAYS_MAX, errors);
    in_range("offer_validity_days", limits::TERM_DAYS_MAX, errors);
    in_range("discount_days", limits::TERM_DAYS_MAX, errors);
    if let Some(days) = r.int("portal_link_days")
        && !(1..=limits::TERM_DAYS_MAX).contains(&days)
    {
        errors.push(format!(
            "portal_link_days must be between 1 and {}, got {days}",
            limits::TERM_DAYS_MAX
        ));
    }
    if let Some(problem) = public_url_problem(r.text("public_url")) {
        errors.push(problem);
    }
    if let Some(rate) = r.get("discount_rate").and_then(Scalar::as_dec)
        && !(Decimal::ZERO..=Decimal::ONE_HUNDRED).contains(&rate)
    {
        errors.push(format!(
            "discount_rate must be between 0 and 100, got {rate}"
        ));
    }
    for addr in r.text("bcc_addresses").split(',').map(str::trim) {
        if !addr.is_empty() && !is_email(addr) {
            errors.push(format!(
                "bcc_addresses must be e-mail addresses separated by commas, got \"{addr}\""
            ));
        }
    }
}

/// What is wrong with a `public_url`, if anything: it must be empty or an absolute http(s)
/// address without a query, fragment or spaces (links are this, then `/portal/…`).
fn public_url_problem(url: &str) -> Option<String> {
    if url.is_empty() {
        return None;
    }
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"));
    let fine = rest.is_some_and(|r| {
        let host = r.split('/').next().unwrap_or("");
        !host.is_empty()
            && url.len() <= limits::PUBLIC_URL_BYTES_MAX
            && !url.chars().any(|c| {
                c.is_whitespace() || c.is_control() || matches!(c, '?' | '#' | '"' | '<' | '>')
            })
    });
    (!fine).then(|| {
        format!(
            "public_url must be an address starting with https:// or http://, without a query or \
             spaces (at most {} bytes), got \"{url}\"",
            limits::PUBLIC_URL_BYTES_MAX
        )
    })
}

/// The settings' `public_url` as links start with it: without a trailing slash.
pub fn public_url(settings: &Record) -> &str {
    settings.text("public_url").trim_end_matches('/')
}

/// A comma-separated list of payment types, normalized to upper case.
pub fn parse_payment_types(list: &str) -> Result<Vec<&'static str>, String> {
    super::schema::parse_words("payment_types", PAYMENT_TYPES, list)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::caps::{Store as _, mem::MemStore};

    /// The settings of an account that stored none.
    fn defaults() -> Record {
        Record {
            values: PRESETS
                .iter()
                .map(|(name, v)| ((*name).to_owned(), v.scalar()))
                .collect(),
        }
    }

    /// Stored values over the defaults, as a copy of the defaults with the stored values
    /// put into it gives them: every stored name wins, every other field keeps its default;
    /// some of them are those of the whole.
    #[test]
    fn stored_settings_lie_over_their_defaults() {
        let store = MemStore::default();
        let mut stored = Record::default();
        stored.set("company_name", Some(Scalar::Text("Muster GmbH".into())));
        stored.set("currency_code", Some(Scalar::Text("CHF".into())));
        stored.set("aaa_unknown_first", Some(Scalar::Int(1)));
        stored.set("zzz_unknown_last", Some(Scalar::Bool(true)));
        let mut txn = store.begin_write().unwrap();
        txn.put(&key(7), &records::encode_record(&stored)).unwrap();
        txn.commit().unwrap();
        let read = store.begin_read().unwrap();
        let loaded = load_stored(read.as_ref(), 7).unwrap();
        let mut expected = defaults();
        expected.values.extend(stored.values.clone());
        assert_eq!(loaded, expected);
        assert_eq!(loaded.text("currency_code"), "CHF");
        assert_eq!(load_stored(read.as_ref(), 8).unwrap(), defaults());

        // Some of them: exactly those of the whole that the filter takes.
        let some = |name: &str| name.starts_with("c") || name.starts_with("z");
        let mut expected = loaded.clone();
        expected.values.retain(|name, _| some(name));
        assert_eq!(load_some(read.as_ref(), 7, some).unwrap(), expected);
        assert_eq!(expected.text("currency_code"), "CHF");
        assert_eq!(expected.get("zzz_unknown_last"), Some(&Scalar::Bool(true)));
        assert_eq!(expected.get("due_days"), None);
    }

    #[test]
    fn the_presets_are_fields_in_order() {
        assert!(PRESETS.is_sorted_by(|a, b| a.0 < b.0), "by name, each once");
        for (name, _) in PRESETS {
            assert!(
                FIELDS.iter().any(|f| f.name == *name),
                "{name} is a setting"
            );
        }
        assert_eq!(defaults().text("time_zone"), "Europe/Berlin");
        assert_eq!(defaults().int("due_days"), Some(14));
        assert_eq!(defaults().get("company_name"), None);
    }
}
