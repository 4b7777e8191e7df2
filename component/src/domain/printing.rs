//! The printed form of a document: what its PDF says, as a layout-neutral `PdfDocument`
//! with every placeholder resolved and every amount formatted for the account's locale.

use rust_decimal::Decimal;

use super::date::Date;
use super::documents::items::Item;
use super::documents::reminder::Dunning;
use super::documents::{DocKind, Document};
use super::girocode;
use super::money::{self, round_commercial_2};
use super::placeholders::{self, Values};
use super::schema::Record;
use crate::caps::{Matrix, PdfDocument, Table};

/// Whether the locale writes 1.234,56 (most of continental Europe) or 1,234.56.
fn decimal_comma(locale: &str) -> bool {
    let lang = locale.get(..2).unwrap_or("").to_ascii_lowercase();
    matches!(
        lang.as_str(),
        "de" | "fr"
            | "es"
            | "it"
            | "nl"
            | "pl"
            | "pt"
            | "cs"
            | "sk"
            | "da"
            | "sv"
            | "nb"
            | "fi"
            | "ru"
            | "uk"
            | "el"
            | "tr"
            | "hu"
            | "ro"
            | "hr"
            | "sl"
            | "bg"
            | "lt"
            | "lv"
            | "et"
    )
}

/// An amount with two decimals, thousands grouped, and the currency code.
pub fn format_money(amount: Decimal, currency: &str, locale: &str) -> String {
    let mut cents = round_commercial_2(amount);
    // Exactly two places, as an integer of cents: cheaper than formatting the decimal.
    cents.rescale(2);
    let cents = cents.mantissa();
    let (group, point) = if decimal_comma(locale) {
        ('.', ',')
    } else {
        (',', '.')
    };
    // The whole units' digits, last first, into a buffer of their own: one allocation,
    // the answer's.
    let mut digits = [0u8; 40];
    let mut len = 0;
    let mut int = cents.unsigned_abs() / 100;
    loop {
        digits[len] = b'0' + (int % 10) as u8;
        len += 1;
        int /= 10;
        if int == 0 {
            break;
        }
    }
    let mut out = String::with_capacity(len * 4 / 3 + 5 + currency.len());
    if cents < 0 {
        out.push('-');
    }
    for i in (0..len).rev() {
        out.push(char::from(digits[i]));
        if i > 0 && i.is_multiple_of(3) {
            out.push(group);
        }
    }
    out.push(point);
    let frac = cents.unsigned_abs() % 100;
    out.push(char::from(b'0' + (frac / 10) as u8));
    out.push(char::from(b'0' + (frac % 10) as u8));
    if !currency.is_empty() {
        out.push(' ');
        out.push_str(currency);
    }
    out
}

/// A quantity or rate without trailing zeros, in the locale's decimal mark.
pub fn format_number(d: Decimal, locale: &str) -> String {
    let mut text = d.normalize().to_string();
    if decimal_comma(locale)
        && let Some(point) = text.find('.')
    {
        text.replace_range(point..=point, ",");
    }
    text
}

/// A date as the locale writes it: `31.12.2026` in German, else `2026-12-31`.
pub fn format_date(date: Date, locale: &str) -> String {
    let mut iso = Vec::with_capacity(10);
    date.push_to(&mut iso);
    let german = locale
        .get(..2)
        .is_some_and(|lang| lang.eq_ignore_ascii_case("de"));
    let text = if german && iso.len() == 10 {
        [&iso[8..10], b".", &iso[5..7], b".", &iso[0..4]].concat()
    } else {
        iso
    };
    String::from_utf8(text).expect("a date is written in ASCII")
}

/// The document's [`values`], made when a text first names one of them.
pub fn values_of<'a>(doc: &'a Document, client: &'a Record, settings: &'a Record) -> Values<'a> {
    Values::new(move || values(doc, client, settings))
}

/// The values placeholders resolve to for a document (`[Invoice.…]`, `[Offer.…]`, ...).
pub fn values(doc: &Document, client: &Record, settings: &Record) -> Vec<(String, String)> {
    let locale = settings.text("locale");
    let mut values = document_values(doc, locale);
    // The link under a name of every kind, for texts that e-mail documents of any kind.
    values.push((
        "Document.customerportal_url".to_owned(),
        doc.portal_url.clone(),
    ));
    if let Some(d) = doc.dunning.as_deref() {
        let money = |d: Decimal| format_money(d, &doc.currency_code, locale);
        let date = |d: Option<Date>| d.map(|d| format_date(d, locale)).unwrap_or_default();
        values.extend(
            [
                ("Reminder.reminder_level", d.level.to_string()),
                ("Reminder.reminder_level_name", d.level_name.clone()),
                ("Invoice.invoice_number", d.invoice_number.clone()),
                ("Invoice.date", date(d.invoice_date)),
                ("Invoice.due_date", date(d.invoice_due_date)),
                ("Invoice.open_amount", money(d.claim)),
            ]
            .map(|(k, v)| (k.to_owned(), v)),
        );
    }
    push_party_values(&mut values, client, settings);
    if let Some(d) = doc.dunning.as_deref() {
        // The subject's own placeholders name the invoice, the client, the company.
        let subject = placeholders::resolve(&d.subject, &values);
        values.push(("Reminder.subject".to_owned(), subject));
    }
    values
}

/// The document's own values, under the name of its kind (`Invoice.date`, ...).
fn document_values(doc: &Document, locale: &str) -> Vec<(String, String)> {
    let money = |d: Decimal| format_money(d, &doc.currency_code, locale);
    [
        ("id", doc.id.to_string()),
        (doc.kind.number_field(), doc.formatted_number.clone()),
        ("number", doc.number.to_string()),
        ("date", format_date(doc.date, locale)),
        ("due_date", format_date(doc.due_date, locale)),
        ("discount_date", format_date(doc.discount_date, locale)),
        ("validity_date", format_date(doc.validity_date, locale)),
        ("total_gross", money(doc.total_gross)),
        ("total_net", money(doc.total_net)),
        (
            "discount_amount",
            money(money::discount_amount(doc.total_gross, doc.discount_rate)),
        ),
        ("paid_amount", money(doc.paid_amount)),
        ("open_amount", money(doc.open_amount())),
        ("currency_code", doc.currency_code.clone()),
        ("label", doc.label.clone()),
        ("address", doc.address.clone()),
        ("customerportal_url", doc.portal_url.clone()),
    ]
    .into_iter()
    .map(|(k, v)| (format!("{}.{k}", doc.kind.placeholder_object()), v))
    .collect()
}

/// Adds the values of the client (`Client.name`, ...) and of the seller (`Company.name`,
/// ...).
fn push_party_values(values: &mut Vec<(String, String)>, client: &Record, settings: &Record) {
    for field in [
        "name",
        "client_number",
        "salutation",
        "first_name",
        "last_name",
        "street",
        "zip",
        "city",
        "country_code",
        "email",
        "address",
        "vat_number",
    ] {
        values.push((format!("Client.{field}"), client.text(field).to_owned()));
    }
    for field in [
        "name",
        "street",
        "zip",
        "city",
        "country_code",
        "vat_number",
    ] {
        values.push((
            format!("Company.{field}"),
            settings.text(&format!("company_{field}")).to_owned(),
        ));
    }
}

/// The document as its two PDFs show it, the original and the print version, each with
/// the one GiroCode (encoded once). `template_text` is the template's paragraphs,
/// placeholders unresolved.
pub fn documents(
    doc: &Document,
    items: &[Item],
    client: &Record,
    settings: &Record,
    values: &Values<'_>,
    template_text: &[String],
) -> [PdfDocument; 2] {
    let matrix = girocode(doc, settings, settings.text("locale"));
    [false, true].map(|print| PdfDocument {
        matrix: matrix.clone(),
        ..layout(doc, items, client, settings, values, template_text, print)
    })
}

/// The document as a page shows it beside its PDF: what the PDF shows without the
/// GiroCode, which a page links to as an image of its own (`portal`), so that a view does
/// not draw a code its browser already holds. `values` are the document's [`values_of`].
pub fn page(
    doc: &Document,
    items: &[Item],
    client: &Record,
    settings: &Record,
    values: &Values<'_>,
) -> PdfDocument {
    layout(doc, items, client, settings, values, &[], false)
}

/// The document as its PDF shows it, without the GiroCode: a reminder its claim, every
/// other kind its items and totals.
fn layout(
    doc: &Document,
    items: &[Item],
    client: &Record,
    settings: &Record,
    values: &Values<'_>,
    template_text: &[String],
    print: bool,
) -> PdfDocument {
    let locale = settings.text("locale");
    let resolve = |t: &str| values.resolve(t);
    // What the PDF of every kind shows alike.
    let frame = PdfDocument {
        sender: sender_line(settings),
        recipient: doc.address.lines().map(str::to_owned).collect(),
        preamble: preamble(doc, template_text, &resolve),
        footer: footer_line(settings),
        print,
        ..PdfDocument::default()
    };
    if let Some(dunning) = doc.dunning.as_deref() {
        return PdfDocument {
            title: match resolve(&dunning.subject).trim() {
                "" => doc.kind.title().to_owned(),
                subject => subject.to_owned(),
            },
            meta: reminder_meta(doc, dunning, client, locale),
            items: claim_table(doc, dunning, items, locale),
            totals: vec![(
                "Amount due".to_owned(),
                format_money(doc.total_gross, &doc.currency_code, locale),
            )],
            closing: reminder_closing(doc, items, locale, &resolve),
            ..frame
        };
    }
    // Delivery notes show quantities only, unless the settings ask for prices.
    let priced = doc.kind != DocKind::DeliveryNote || settings.bool("delivery_note_prices");
    PdfDocument {
        title: if doc.title.trim().is_empty() {
            format!("{} {}", doc.kind.title(), doc.formatted_number)
        } else {
            format!("{} {}", doc.title.trim(), doc.formatted_number)
        },
        meta: meta(doc, client, locale),
        items: item_table(doc, items, locale, priced),
        totals: if priced {
            totals(doc, locale)
        } else {
            Vec::new()
        },
        closing: closing(doc, locale, &resolve),
        ..frame
    }
}

/// The paragraphs before the items: the template's text, then the document's
/// introduction, placeholders resolved; empty ones left out.
fn preamble(
    doc: &Document,
    template_text: &[String],
    resolve: &dyn Fn(&str) -> String,
) -> Vec<String> {
    let mut preamble: Vec<String> = template_text
        .iter()
        .map(|t| resolve(t))
        .filter(|t| !t.trim().is_empty())
        .collect();
    if !doc.intro.trim().is_empty() {
        preamble.push(resolve(&doc.intro));
    }
    preamble
}

/// The line at the foot of every page: the seller's name and VAT number, those given.
fn footer_line(settings: &Record) -> String {
    [
        settings.text("company_name"),
        settings.text("company_vat_number"),
    ]
    .iter()
    .filter(|s| !s.is_empty())
    .copied()
    .collect::<Vec<_>>()
    .join(" · ")
}

/// The seller's line above the recipient: name, street, post code and city.
fn sender_line(settings: &Record) -> Vec<String> {
    let sender = [
        settings.text("company_name"),
        settings.text("company_street"),
        &format!(
            "{} {}",
            settings.text("company_zip"),
            settings.text("company_city")
        ),
    ]
    .iter()
    .map(|s| s.trim())
    .filter(|s| !s.is_empty())
    .collect::<Vec<_>>()
    .join(" · ");
    if sender.is_empty() {
        Vec::new()
    } else {
        vec![sender]
    }
}

/// A reminder's values beside the address: its date, the invoice it is for, the client.
fn reminder_meta(
    doc: &Document,
    d: &Dunning,
    client: &Record,
    locale: &str,
) -> Vec<(String, String)> {
    let mut meta = vec![("Date".to_owned(), format_date(doc.date, locale))];
    meta.push(("Invoice number".to_owned(), d.invoice_number.clone()));
    if let Some(date) = d.invoice_date {
        meta.push(("Invoice date".to_owned(), format_date(date, locale)));
    }
    if let Some(due) = d.invoice_due_date {
        meta.push(("Invoice due date".to_owned(), format_date(due, locale)));
    }
    if !client.text("client_number").is_empty() {
        meta.push((
            "Client number".into(),
            client.text("client_number").to_owned(),
        ));
    }
    meta
}

/// A reminder's claim: the invoice's open amount, then its fees and interest.
fn claim_table(doc: &Document, d: &Dunning, items: &[Item], locale: &str) -> Table {
    let money = |a: Decimal| format_money(a, &doc.currency_code, locale);
    let mut rows = vec![vec![
        format!(
            "Open amount of invoice {}{}{}",
            d.invoice_number,
            d.invoice_date
                .map(|date| format!(" of {}", format_date(date, locale)))
                .unwrap_or_default(),
            d.invoice_due_date
                .map(|due| format!(", due {}", format_date(due, locale)))
                .unwrap_or_default(),
        ),
        money(d.claim),
    ]];
    for item in items {
        let mut title = item.title.clone();
        if !item.description.is_empty() {
            title = format!("{title}\n{}", item.description);
        }
        if item.quantity != Decimal::ONE {
            title = format!(
                "{title}\n{} × {}",
                format_number(item.quantity, locale),
                money(item.unit_price)
            );
        }
        rows.push(vec![
            title,
            money(round_commercial_2(item.quantity * item.unit_price)),
        ]);
    }
    Table {
        header: vec!["Claim".to_owned(), "Amount".to_owned()],
        rows,
        right_aligned: vec![1],
    }
}

/// Below a reminder's amount due: its note, what to pay by when, and that its fees and
/// interest carry no VAT.
fn reminder_closing(
    doc: &Document,
    items: &[Item],
    locale: &str,
    resolve: &dyn Fn(&str) -> String,
) -> Vec<String> {
    let mut closing = vec![format!(
        "Please pay {} by {}.",
        format_money(doc.total_gross, &doc.currency_code, locale),
        format_date(doc.due_date, locale)
    )];
    if !items.is_empty() {
        closing.push(
            "Dunning fees and default interest are damages, not payment for a supply: no VAT is \
             charged on them."
                .to_owned(),
        );
    }
    if !doc.note.trim().is_empty() {
        closing.push(resolve(&doc.note));
    }
    closing
}

/// The GiroCode of what is open of a document that carries one, with what it says beside
/// it for those who type rather than scan.
fn girocode(doc: &Document, settings: &Record, locale: &str) -> Option<Matrix> {
    let transfer = girocode::transfer(doc, settings, doc.open_amount())?;
    let mut caption = vec![
        "Pay by scanning the code with your banking app (GiroCode)".to_owned(),
        transfer.name.clone(),
        format!("IBAN {}", transfer.iban),
    ];
    if !transfer.bic.is_empty() {
        caption.push(format!("BIC {}", transfer.bic));
    }
    caption.push(format!(
        "Amount {}",
        format_money(transfer.amount, &doc.currency_code, locale)
    ));
    caption.push(format!("Reference {}", transfer.reference));
    Some(Matrix {
        caption,
        modules: transfer.matrix(),
    })
}

/// The labelled values beside the address: number, dates, client number, supply date.
fn meta(doc: &Document, client: &Record, locale: &str) -> Vec<(String, String)> {
    let mut meta = vec![
        (
            format!("{} number", doc.kind.title()),
            doc.formatted_number.clone(),
        ),
        ("Date".to_owned(), format_date(doc.date, locale)),
    ];
    match doc.kind {
        DocKind::Invoice | DocKind::CreditNote => {
            meta.push(("Due date".to_owned(), format_date(doc.due_date, locale)));
        }
        DocKind::Offer => {
            meta.push((
                "Valid until".to_owned(),
                format_date(doc.validity_date, locale),
            ));
        }
        DocKind::Confirmation | DocKind::DeliveryNote | DocKind::Recurring | DocKind::Reminder => {}
    }
    if !client.text("client_number").is_empty() {
        meta.push((
            "Client number".into(),
            client.text("client_number").to_owned(),
        ));
    }
    if !doc.supply_date.is_empty() {
        let label = if doc.supply_date_type.starts_with("DELIVERY") {
            "Delivery date"
        } else {
            "Supply date"
        };
        meta.push((label.into(), doc.supply_date.clone()));
    }
    meta
}

/// The item table: every item with its quantity and, when `priced`, its price, tax and
/// total. An optional line of an offer says that it is not in the total.
fn item_table(doc: &Document, items: &[Item], locale: &str, priced: bool) -> Table {
    let money = |d: Decimal| format_money(d, &doc.currency_code, locale);
    let rows = items
        .iter()
        .map(|item| {
            let mut title = item.title.clone();
            if !item.description.is_empty() {
                title = format!("{title}\n{}", item.description);
            }
            if !item.reduction.is_empty() {
                title = format!("{title}\nReduction {}", item.reduction);
            }
            if item.optional {
                title = format!("{title}\nOptional: not included in the total");
            }
            let mut row = vec![
                title,
                format_number(item.quantity, locale),
                item.unit.clone(),
            ];
            if priced {
                let totals = money::line_totals(&item.line(), doc.basis(), doc.tax_free);
                let rate = if doc.tax_free {
                    Decimal::ZERO
                } else {
                    item.tax_rate
                };
                let line_total = match doc.basis() {
                    money::PriceBasis::Net => totals.net,
                    money::PriceBasis::Gross => totals.gross,
                };
                let total = money(line_total);
                row.extend([
                    money(item.unit_price),
                    {
                        let mut rate = format_number(rate, locale);
                        rate.push_str(" %");
                        rate
                    },
                    if item.optional {
                        format!("({total})")
                    } else {
                        total
                    },
                ]);
            }
            row
        })
        .collect();
    let (header, right_aligned): (&[&str], Vec<u32>) = if priced {
        (
            &["Item", "Quantity", "Unit", "Unit price", "Tax", "Total"],
            vec![1, 3, 4, 5],
        )
    } else {
        (&["Item", "Quantity", "Unit"], vec![1])
    };
    Table {
        header: header.iter().map(|h| (*h).to_owned()).collect(),
        rows,
        right_aligned,
    }
}

/// The rows below the item table: subtotal and reduction, net, each tax, total.
fn totals(doc: &Document, locale: &str) -> Vec<(String, String)> {
    let money = |d: Decimal| format_money(d, &doc.currency_code, locale);
    let mut totals = Vec::new();
    if !doc.total_reduction.is_zero() {
        let basis = match doc.basis() {
            money::PriceBasis::Net => doc.total_net_unreduced,
            money::PriceBasis::Gross => doc.total_gross_unreduced,
        };
        totals.push(("Subtotal".to_owned(), money(basis)));
        totals.push((
            format!("Reduction {}", doc.reduction),
            money(-doc.total_reduction),
        ));
    }
    totals.push(("Total net".to_owned(), money(doc.total_net)));
    for t in &doc.taxes {
        if doc.tax_free {
            continue;
        }
        let name = if t.name.is_empty() {
            "Tax".to_owned()
        } else {
            t.name.clone()
        };
        totals.push((
            format!("{name} {} %", format_number(t.rate, locale)),
            money(t.amount),
        ));
    }
    totals.push(("Total".to_owned(), money(doc.total_gross)));
    totals
}

/// The paragraphs below the totals: tax note, the document's note, what to do by when.
fn closing(doc: &Document, locale: &str, resolve: &dyn Fn(&str) -> String) -> Vec<String> {
    let mut closing = Vec::new();
    if doc.tax_free {
        closing.push(format!("No tax is charged on this {}.", doc.kind.label()));
    }
    if !doc.note.trim().is_empty() {
        closing.push(resolve(&doc.note));
    }
    match doc.kind {
        DocKind::Invoice => {
            closing.push(format!(
                "Please pay by {}.",
                format_date(doc.due_date, locale)
            ));
            if !doc.discount_rate.is_zero() {
                closing.push(format!(
                    "Paid by {}, a cash discount of {} % ({}) applies.",
                    format_date(doc.discount_date, locale),
                    format_number(doc.discount_rate, locale),
                    format_money(
                        money::discount_amount(doc.total_gross, doc.discount_rate),
                        &doc.currency_code,
                        locale
                    )
                ));
            }
        }
        DocKind::Offer => closing.push(format!(
            "This offer is valid until {}.",
            format_date(doc.validity_date, locale)
        )),
        DocKind::CreditNote
        | DocKind::Confirmation
        | DocKind::DeliveryNote
        | DocKind::Recurring
        | DocKind::Reminder => {}
    }
    closing
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::schema::Scalar;

    #[test]
    fn both_pdfs_of_a_document_carry_its_one_girocode() {
        let mut doc = crate::domain::documents::model_sample(DocKind::Invoice, 2);
        doc.currency_code = "EUR".into();
        let mut settings = Record::default();
        settings.set("girocode", Some(Scalar::Bool(true)));
        let iban = Scalar::Text("DE02120300000000202051".into());
        settings.set("company_bank_iban", Some(iban));
        let client = Record::default();
        let values = values_of(&doc, &client, &settings);
        let [original, print] = documents(&doc, &[], &client, &settings, &values, &[]);
        let code = original
            .matrix
            .expect("an open invoice in EUR carries a code");
        assert!(!code.modules.is_empty());
        assert_eq!(print.matrix, Some(code));
    }

    #[test]
    fn money_is_formatted_for_the_locale() {
        let d = |s: &str| s.parse::<Decimal>().unwrap();
        assert_eq!(
            format_money(d("1234567.5"), "EUR", "de_DE"),
            "1.234.567,50 EUR"
        );
        assert_eq!(format_money(d("1234.005"), "USD", "en_US"), "1,234.01 USD");
        assert_eq!(format_money(d("-40"), "EUR", "de_DE"), "-40,00 EUR");
        assert_eq!(format_money(d("0.5"), "CHF", "en"), "0.50 CHF");
        assert_eq!(format_money(d("-0.004"), "EUR", "de_DE"), "0,00 EUR");
        assert_eq!(
            format_money(d("-1234.565"), "EUR", "de_DE"),
            "-1.234,57 EUR"
        );
        assert_eq!(format_money(d("999.999"), "", "en"), "1,000.00");
        assert_eq!(
            format_money(d("123456789012.3"), "EUR", "en"),
            "123,456,789,012.30 EUR"
        );
        assert_eq!(format_money(d("100"), "EUR", "de_DE"), "100,00 EUR");
        assert_eq!(format_money(d("1000"), "EUR", "de_DE"), "1.000,00 EUR");
    }

    #[test]
    fn numbers_and_dates_are_written_for_the_locale() {
        let d = |s: &str| s.parse::<Decimal>().unwrap();
        assert_eq!(format_number(d("1.500"), "de_DE"), "1,5");
        assert_eq!(format_number(d("1.500"), "en_US"), "1.5");
        assert_eq!(format_number(d("19.00"), "de"), "19");
        assert_eq!(format_number(d("-0.25"), "de_AT"), "-0,25");
        let date = Date::parse("2026-12-31").unwrap();
        assert_eq!(format_date(date, "de_DE"), "31.12.2026");
        assert_eq!(format_date(date, "DE"), "31.12.2026");
        assert_eq!(format_date(date, "en_GB"), "2026-12-31");
        assert_eq!(format_date(date, ""), "2026-12-31");
        assert_eq!(format_date(date, "d"), "2026-12-31");
    }
}
