//! The EN 16931 model of a completed document, built from what the service keeps: the
//! document with its items, its client and the account's settings. Amounts come from the
//! same calculation as the API's totals (`money`), grouped by VAT category and rate, so
//! that the e-invoice's totals are the document's.

use faktura_einvoice::derive::{self, Situation};
use faktura_einvoice::model::{
    Address, AllowanceCharge, Category, Contact, CreditTransfer, DirectDebit, Invoice, Line,
    LineAllowance, Party, Payment, Totals, VatBreakdown,
};
use rust_decimal::{Decimal, RoundingStrategy};

use super::super::date::Date;
use super::super::documents::items::Item;
use super::super::documents::{DocKind, Document};
use super::super::money::{self, Line as MoneyLine, LineTotals, PriceBasis, Reduction};
use super::super::schema::Record;

/// What an e-invoice is made of.
pub struct Sources<'a> {
    pub doc: &'a Document,
    pub items: &'a [Item],
    pub client: &'a Record,
    pub settings: &'a Record,
    /// The client's tax situation (`tax_rule` and the tax-free countries).
    pub situation: Situation,
    /// The invoice a credit note was made from: its number and date.
    pub preceding: Option<(String, Date)>,
    /// The document's contact at the client, resolved: the buyer's contact (BT-56 to
    /// BT-58) when the document names one.
    pub contact: Option<&'a Record>,
}

fn text(r: &Record, name: &str) -> String {
    r.text(name).trim().to_owned()
}

fn first_non_empty(values: &[String]) -> String {
    values
        .iter()
        .find(|v| !v.is_empty())
        .cloned()
        .unwrap_or_default()
}

fn seller(settings: &Record) -> Party {
    let email = text(settings, "company_email");
    Party {
        name: text(settings, "company_name"),
        identifier: String::new(),
        legal_registration: text(settings, "company_registration_id"),
        vat_id: text(settings, "company_vat_number"),
        tax_number: text(settings, "company_tax_number"),
        electronic_address: first_non_empty(&[
            text(settings, "company_electronic_address"),
            email.clone(),
        ]),
        address: Address {
            line1: text(settings, "company_street"),
            line2: String::new(),
            city: text(settings, "company_city"),
            post_code: text(settings, "company_zip"),
            subdivision: String::new(),
            country: text(settings, "company_country_code"),
        },
        contact: Contact {
            name: text(settings, "company_contact_name"),
            phone: text(settings, "company_phone"),
            email,
        },
    }
}

fn buyer(client: &Record, settings: &Record, named: Option<&Record>) -> Party {
    let person = format!(
        "{} {}",
        client.text("first_name").trim(),
        client.text("last_name").trim()
    )
    .trim()
    .to_owned();
    let name = first_non_empty(&[text(client, "name"), person.clone()]);
    let email = text(client, "email");
    let phone = text(client, "phone");
    if let Some(named) = named {
        // The document's contact: a person's name, else the contact's label.
        let person = format!(
            "{} {}",
            named.text("first_name").trim(),
            named.text("last_name").trim()
        );
        let contact = Contact {
            name: first_non_empty(&[person.trim().to_owned(), text(named, "label")]),
            phone: text(named, "phone"),
            email: text(named, "email"),
        };
        return Party {
            contact,
            ..buyer(client, settings, None)
        };
    }
    let contact = if email.is_empty() && phone.is_empty() {
        Contact::default()
    } else {
        Contact {
            name: if person != name {
                person
            } else {
                String::new()
            },
            phone,
            email: email.clone(),
        }
    };
    Party {
        name,
        identifier: text(client, "client_number"),
        legal_registration: String::new(),
        vat_id: text(client, "vat_number"),
        tax_number: String::new(),
        electronic_address: first_non_empty(&[text(client, "electronic_address"), email]),
        address: Address {
            line1: text(client, "street"),
            line2: String::new(),
            city: text(client, "city"),
            post_code: text(client, "zip"),
            subdivision: text(client, "state"),
            // A client without a country is one of the seller's country.
            country: first_non_empty(&[
                text(client, "country_code"),
                text(settings, "company_country_code"),
            ]),
        },
        contact,
    }
}

/// The first payment type the document accepts, if any.
fn first_payment_type(doc: &Document) -> Option<String> {
    doc.payment_types
        .split(',')
        .map(|t| t.trim().to_ascii_uppercase())
        .find(|t| !t.is_empty())
}

fn payment(doc: &Document, client: &Record, settings: &Record) -> Payment {
    let iban = derive::compact(settings.text("company_bank_iban"));
    // Without an accepted payment type, a transfer to the account's IBAN when it has one.
    let means_code = match first_payment_type(doc) {
        Some(t) => derive::means_code(&t),
        None if !iban.is_empty() => "58",
        None => "1",
    };
    // BG-17 belongs to credit transfers only (XRechnung BR-DE-23-b and its kin).
    let credit_transfer = matches!(means_code, "58" | "30").then(|| CreditTransfer {
        iban,
        account_name: first_non_empty(&[
            text(settings, "company_bank_account_owner"),
            text(settings, "company_name"),
        ]),
        bic: text(settings, "company_bank_bic"),
    });
    let direct_debit = (means_code == "59").then(|| DirectDebit {
        mandate: text(client, "debit_mandate_reference"),
        creditor_id: text(settings, "company_creditor_id"),
        debited_iban: derive::compact(client.text("bank_iban")),
    });
    Payment {
        means_code: means_code.to_owned(),
        means_text: String::new(),
        remittance: doc.formatted_number.clone(),
        credit_transfer,
        direct_debit,
    }
}

/// BT-20: the due date in words, and the cash discount in the machine-readable form of
/// XRechnung (`#SKONTO#TAGE=n#PROZENT=p#`, one line each, the text ending in a newline).
fn payment_terms(doc: &Document, german: bool) -> String {
    let mut terms = if german {
        format!("Zahlbar bis {}.", iso(doc.due_date))
    } else {
        format!("Payable by {}.", iso(doc.due_date))
    };
    if doc.discount_rate > Decimal::ZERO {
        let days = doc.discount_date.days_since(doc.date);
        terms.push_str(&format!(
            "\n#SKONTO#TAGE={days}#PROZENT={:.2}#\n",
            doc.discount_rate
        ));
    }
    terms
}

fn iso(d: Date) -> String {
    format!("{:04}-{:02}-{:02}", d.year(), d.month(), d.day())
}

/// One group of the VAT breakdown while it is built.
struct Group {
    category: Category,
    rate: Decimal,
    reason: String,
    /// Indexes of the group's lines.
    lines: Vec<usize>,
}

/// The document's figures, worked out once for its lines, allowances and VAT breakdown.
struct Figures {
    basis: PriceBasis,
    /// Each item's category.
    categories: Vec<Category>,
    groups: Vec<Group>,
    /// The document's calculation.
    totals: money::Totals,
    /// Each line's net amount.
    line_net: Vec<Decimal>,
    /// Each group's sum of line net amounts.
    group_line_sum: Vec<Decimal>,
}

/// An item's VAT rate: 0 on a tax-free document.
fn item_rate(tax_free: bool, item: &Item) -> Decimal {
    if tax_free {
        Decimal::ZERO
    } else {
        item.tax_rate
    }
}

/// The model of a completed document.
pub fn build(s: &Sources<'_>) -> Invoice {
    let doc = s.doc;
    let german = s.settings.text("locale").starts_with("de");
    let figures = figures(s, german);
    let lines = invoice_lines(s.items, &figures, doc.tax_free, german);
    let (allowances, charges, vat) = allowances_and_vat(doc, &figures, german);
    let totals = invoice_totals(doc, &figures.line_net, &allowances, &charges, &vat);
    let delivery_date = delivery_date(doc);
    let buyer_reference = first_non_empty(&[
        doc.buyer_reference.trim().to_owned(),
        text(s.client, "buyer_reference"),
    ]);
    let (seller, buyer, deliver_to) = parties(s, &figures.categories);
    Invoice {
        number: doc.formatted_number.clone(),
        issue_date: doc.date.to_time(),
        type_code: type_code(doc.kind),
        currency: doc.currency_code.clone(),
        due_date: Some(doc.due_date.to_time()),
        buyer_reference,
        order_reference: doc.order_reference.trim().to_owned(),
        contract_reference: doc.contract_reference.trim().to_owned(),
        preceding: s
            .preceding
            .as_ref()
            .map(|(number, date)| (number.clone(), Some(date.to_time()))),
        notes: [doc.intro.trim(), doc.note.trim()]
            .into_iter()
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .collect(),
        payment_terms: payment_terms(doc, german),
        delivery_date,
        deliver_to,
        seller,
        buyer,
        payment: payment(doc, s.client, s.settings),
        allowances,
        charges,
        totals,
        vat,
        lines,
    }
}

/// The items' categories, the document's calculation by them, and the lines' net
/// amounts.
fn figures(s: &Sources<'_>, german: bool) -> Figures {
    let basis = s.doc.basis();
    let (groups, categories) = group_items(s, german);
    let totals = calculate(s.doc, s.items, &categories);
    let (line_net, group_line_sum) = line_nets(&groups, &totals, basis);
    Figures {
        basis,
        categories,
        groups,
        totals,
        line_net,
        group_line_sum,
    }
}

/// Each item's category and reason, then the groups by (category, rate) in order of
/// first appearance, as the document's taxes are grouped by (name, rate).
fn group_items(s: &Sources<'_>, german: bool) -> (Vec<Group>, Vec<Category>) {
    let settings_reason = text(s.settings, "tax_exemption_reason");
    let mut groups: Vec<Group> = Vec::new();
    let mut categories = Vec::with_capacity(s.items.len());
    for (n, item) in s.items.iter().enumerate() {
        let rate = item_rate(s.doc.tax_free, item);
        let category = derive::category(
            Category::parse(&item.tax_category),
            s.situation,
            rate,
            item.product_type == "PRODUCT",
        );
        categories.push(category);
        let reason = match item.tax_exemption_reason.trim() {
            "" => derive::exemption_reason(category, &settings_reason, german),
            given => given.to_owned(),
        };
        match groups
            .iter_mut()
            .find(|g| g.category == category && g.rate == rate)
        {
            Some(g) => g.lines.push(n),
            None => groups.push(Group {
                category,
                rate,
                reason: if category.needs_reason() {
                    reason
                } else {
                    String::new()
                },
                lines: vec![n],
            }),
        }
    }
    (groups, categories)
}

/// The document's calculation with the groups named by category: the same figures as
/// the API's totals whenever each (name, rate) of the document is one (category, rate).
fn calculate(doc: &Document, items: &[Item], categories: &[Category]) -> money::Totals {
    let money_lines: Vec<MoneyLine> = items
        .iter()
        .zip(categories)
        .map(|(i, c)| MoneyLine {
            quantity: i.quantity,
            unit_price: i.unit_price,
            tax_name: c.code().to_owned(),
            tax_rate: item_rate(doc.tax_free, i),
            reduction: Reduction::parse(&i.reduction).ok().flatten(),
        })
        .collect();
    let reduction = Reduction::parse(&doc.reduction).ok().flatten();
    // Rates are already 0 on a tax-free document; the calculation must not merge its
    // categories into one unnamed group.
    money::document_totals(&money_lines, doc.basis(), reduction, false)
}

/// Line net amounts: the items' nets; on gross prices, each group's unreduced net
/// (the net of its gross sum) spread over its lines, so that lines add up to it. Next to
/// them, each group's sum of line net amounts.
fn line_nets(
    groups: &[Group],
    totals: &money::Totals,
    basis: PriceBasis,
) -> (Vec<Decimal>, Vec<Decimal>) {
    let mut line_net: Vec<Decimal> = totals.lines.iter().map(|t| t.net).collect();
    let mut group_line_sum = Vec::with_capacity(groups.len());
    for g in groups {
        if basis == PriceBasis::Gross {
            let gross: Decimal = g.lines.iter().map(|&n| totals.lines[n].gross).sum();
            let target =
                money::round_commercial_2(gross / (Decimal::ONE + g.rate / Decimal::ONE_HUNDRED));
            let weights: Vec<Decimal> = g.lines.iter().map(|&n| totals.lines[n].net).collect();
            let have: Decimal = weights.iter().sum();
            let fix = money::spread(target - have, &weights);
            for (&n, f) in g.lines.iter().zip(fix) {
                line_net[n] += f;
            }
        }
        group_line_sum.push(g.lines.iter().map(|&n| line_net[n]).sum::<Decimal>());
    }
    (line_net, group_line_sum)
}

/// The invoice's lines, one for each item.
fn invoice_lines(items: &[Item], f: &Figures, tax_free: bool, german: bool) -> Vec<Line> {
    let mut lines = Vec::with_capacity(items.len());
    for (n, item) in items.iter().enumerate() {
        let (net_price, allowance) =
            line_price(item, &f.totals.lines[n], f.line_net[n], f.basis, german);
        lines.push(Line {
            id: (n + 1).to_string(),
            note: String::new(),
            quantity: item.quantity.normalize(),
            unit_code: derive::unit_code(&item.unit_code, &item.unit),
            net_amount: f.line_net[n],
            allowance,
            net_price: net_price.normalize(),
            category: f.categories[n],
            rate: item_rate(tax_free, item).normalize(),
            name: match item.title.trim() {
                "" => item.description.trim().to_owned(),
                title => title.to_owned(),
            },
            description: if item.title.trim().is_empty() {
                String::new()
            } else {
                item.description.trim().to_owned()
            },
            seller_id: item.article_id.map(|a| a.to_string()).unwrap_or_default(),
        });
    }
    lines
}

/// A line's net price and, on net prices, the item's reduction as the line's allowance.
fn line_price(
    item: &Item,
    t: &LineTotals,
    line_net: Decimal,
    basis: PriceBasis,
    german: bool,
) -> (Decimal, Option<LineAllowance>) {
    match basis {
        PriceBasis::Net => {
            let off = t.net_unreduced - t.net;
            (
                item.unit_price,
                (off > Decimal::ZERO).then(|| LineAllowance {
                    amount: off,
                    base: None,
                    percent: None,
                    reason: if german { "Rabatt" } else { "Discount" }.to_owned(),
                    reason_code: "95".to_owned(),
                }),
            )
        }
        // Gross prices: the net price of the line as it is, its reduction included.
        PriceBasis::Gross => {
            let price = if item.quantity.is_zero() {
                Decimal::ZERO
            } else {
                (line_net / item.quantity)
                    .round_dp_with_strategy(4, RoundingStrategy::MidpointAwayFromZero)
                    .abs()
            };
            (price.normalize(), None)
        }
    }
}

/// The document reduction (and rounding on gross prices) per group: the group's line
/// sum minus its taxable amount, an allowance when positive, a charge when negative.
/// Next to them, the VAT breakdown.
fn allowances_and_vat(
    doc: &Document,
    f: &Figures,
    german: bool,
) -> (
    Vec<AllowanceCharge>,
    Vec<AllowanceCharge>,
    Vec<VatBreakdown>,
) {
    let mut allowances = Vec::new();
    let mut charges = Vec::new();
    let mut vat = Vec::with_capacity(f.groups.len());
    for (g, line_sum) in f.groups.iter().zip(&f.group_line_sum) {
        let tax = f
            .totals
            .taxes
            .iter()
            .find(|t| t.name == g.category.code() && t.rate == g.rate)
            .expect("every group has its tax line");
        let difference = *line_sum - tax.net;
        let (reason, code) = if doc.total_reduction.is_zero() {
            (if german { "Rundung" } else { "Rounding" }, "")
        } else {
            (if german { "Rabatt" } else { "Discount" }, "95")
        };
        let entry = |amount: Decimal| AllowanceCharge {
            amount,
            base: None,
            percent: None,
            category: g.category,
            rate: g.rate.normalize(),
            reason: reason.to_owned(),
            reason_code: code.to_owned(),
        };
        if difference > Decimal::ZERO {
            allowances.push(entry(difference));
        } else if difference < Decimal::ZERO {
            charges.push(AllowanceCharge {
                reason_code: String::new(),
                ..entry(-difference)
            });
        }
        vat.push(VatBreakdown {
            taxable: tax.net,
            tax: tax.amount,
            category: g.category,
            rate: g.rate.normalize(),
            exemption_reason: g.reason.clone(),
            exemption_code: g.category.exemption_code().unwrap_or("").to_owned(),
        });
    }
    (allowances, charges, vat)
}

/// The invoice's totals: the lines, less the allowances, plus the charges and the VAT,
/// less what was paid in advance.
fn invoice_totals(
    doc: &Document,
    line_net: &[Decimal],
    allowances: &[AllowanceCharge],
    charges: &[AllowanceCharge],
    vat: &[VatBreakdown],
) -> Totals {
    let line_total: Decimal = line_net.iter().sum();
    let allowance_total: Decimal = allowances.iter().map(|a| a.amount).sum();
    let charge_total: Decimal = charges.iter().map(|c| c.amount).sum();
    let vat_total: Decimal = vat.iter().map(|v| v.tax).sum();
    let without_vat = line_total - allowance_total + charge_total;
    let with_vat = without_vat + vat_total;
    let paid = doc.paid_amount.min(with_vat);
    Totals {
        line_net: line_total,
        allowances: allowance_total,
        charges: charge_total,
        without_vat,
        vat: vat_total,
        with_vat,
        paid,
        rounding: Decimal::ZERO,
        payable: with_vat - paid,
    }
}

/// BT-72: the supply date given as a date; without one, the invoice date (German
/// invoices must state when the supply was; "supply date = invoice date" is the rule
/// when nothing else is said). A supply period given as text has no BT-72.
fn delivery_date(doc: &Document) -> Option<time::Date> {
    match (doc.supply_date_type.as_str(), doc.supply_date.trim()) {
        ("SUPPLY_DATE" | "DELIVERY_DATE", date) => Date::parse(date).map(Date::to_time),
        (_, "") => Some(doc.date.to_time()),
        _ => None,
    }
}

/// The seller, the buyer and, for an intra-community supply, where the goods went.
fn parties(s: &Sources<'_>, categories: &[Category]) -> (Party, Party, Option<Address>) {
    let mut buyer = buyer(s.client, s.settings, s.contact);
    let mut seller = seller(s.settings);
    // Not subject to VAT (O): neither party is named by a VAT identifier (BR-O-02).
    if categories.contains(&Category::O) {
        seller.vat_id.clear();
        buyer.vat_id.clear();
    }
    // An intra-community supply names where the goods went: the buyer's address.
    let deliver_to = categories
        .contains(&Category::K)
        .then(|| buyer.address.clone());
    (seller, buyer, deliver_to)
}

/// The invoice type code: 381 for a credit note, 380 for the rest.
fn type_code(kind: DocKind) -> String {
    match kind {
        DocKind::CreditNote => "381".to_owned(),
        // Only kinds with e-invoices are issued one (`Spec::einvoices`).
        DocKind::Invoice
        | DocKind::Offer
        | DocKind::Confirmation
        | DocKind::DeliveryNote
        | DocKind::Recurring
        | DocKind::Reminder => "380".to_owned(),
    }
}
