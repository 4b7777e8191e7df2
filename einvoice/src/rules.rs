//! The rules of EN 16931 (CEN) and XRechnung that the service decides itself before an
//! e-invoice is issued: mandatory business terms, the arithmetic rules (BR-CO) exact to
//! the cent, the VAT category rules (BR-S, BR-Z, BR-E, BR-AE, BR-IC, BR-G, BR-O), the
//! XRechnung rules (BR-DE, and the Peppol rules XRechnung includes). Each violation names
//! the rule and the API field that fixes it. Of a document read (`read`), also the
//! code-list rules (BR-CL, `code_lists`), over the lists of the official rule files; the
//! schema is left to those files, which the tests run on every scenario.

use rust_decimal::{Decimal, RoundingStrategy};

use crate::codes::Coded;
use crate::model::{Category, Invoice, Party, Profile};

/// Rounds half away from zero to two decimal places: the VAT that a breakdown's taxable
/// amount and rate give (BR-CO-17), rounded as the service's own totals are.
fn round_half_away_from_zero_2(d: Decimal) -> Decimal {
    d.round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero)
}

/// A rule the data fails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub rule: String,
    /// The API field to change (`settings.company_phone`, `client.buyer_reference`, ...).
    pub field: String,
    pub message: String,
}

impl Violation {
    /// The text of a 400: rule, field, what is wrong.
    pub fn describe(&self) -> String {
        format!("{}: {}: {}", self.rule, self.field, self.message)
    }
}

struct Check {
    out: Vec<Violation>,
}

impl Check {
    fn fail(&mut self, rule: &'static str, field: &str, message: impl Into<String>) {
        self.out.push(Violation {
            rule: rule.to_owned(),
            field: field.to_owned(),
            message: message.into(),
        });
    }

    fn require(&mut self, rule: &'static str, field: &str, value: &str, term: &str) {
        if value.trim().is_empty() {
            self.fail(rule, field, format!("{term} is missing"));
        }
    }
}

/// Whether `phone` has at least three digits (BR-DE-27).
fn phone_ok(phone: &str) -> bool {
    phone.chars().filter(char::is_ascii_digit).count() >= 3
}

/// The e-mail shape of BR-DE-28: one `@` with at least two characters on each side, no
/// blank or dot beside it, no dot at either end.
fn email_ok(email: &str) -> bool {
    let Some((local, domain)) = email.split_once('@') else {
        return false;
    };
    !domain.contains('@')
        && local.chars().count() >= 2
        && domain.chars().count() >= 2
        && !email.contains(char::is_whitespace)
        && !local.ends_with('.')
        && !domain.starts_with('.')
        && !email.starts_with('.')
        && !email.ends_with('.')
}

/// The violations of `inv` for `profile`; `exact_vat` when the document's prices are net,
/// so that every category's tax is its taxable amount times its rate to the cent (on gross
/// prices the tax is the gross minus the net, which may differ from that by one cent).
pub fn check(inv: &Invoice, profile: Profile, exact_vat: bool) -> Vec<Violation> {
    let mut c = Check { out: Vec::new() };
    core(&mut c, inv, exact_vat);
    categories(&mut c, inv);
    if profile.is_xrechnung() {
        xrechnung(&mut c, inv);
    }
    c.out
}

/// How many characters of a value a message shows.
const SHOWN: usize = 100;

/// The code-list rules (BR-CL) a document read fails: one violation per coded value
/// outside the list its rule binds it to (`read::Read::unlisted`), its field where the
/// value stands.
pub fn code_lists(unlisted: &[Coded]) -> Vec<Violation> {
    unlisted
        .iter()
        .map(|c| {
            let value: String = c.value.chars().take(SHOWN).collect();
            Violation {
                rule: c.rule.to_owned(),
                field: c.path.clone(),
                message: format!("{}: '{value}' is not in {}", c.path, c.list.name()),
            }
        })
        .collect()
}

fn core(c: &mut Check, inv: &Invoice, exact_vat: bool) {
    let s = &inv.seller;
    parties_named(c, inv);
    lines_named_and_priced(c, inv);
    if s.vat_id.is_empty() && s.legal_registration.is_empty() && s.identifier.is_empty() {
        c.fail(
            "BR-CO-26",
            "settings.company_vat_number",
            "the seller needs a VAT identifier (BT-31) or a legal registration \
             identifier (BT-30, settings.company_registration_id)",
        );
    }
    if inv
        .payment
        .credit_transfer
        .as_ref()
        .is_some_and(|t| t.iban.is_empty())
    {
        c.fail(
            "BR-61",
            "settings.company_bank_iban",
            "a credit transfer needs the payment account identifier (BT-84)",
        );
    }
    totals_add_up(c, inv);
    vat_amounts_add_up(c, inv, exact_vat);
    if inv.totals.payable > Decimal::ZERO && inv.due_date.is_none() && inv.payment_terms.is_empty()
    {
        c.fail(
            "BR-CO-25",
            "due_date",
            "a positive amount due needs a due date or terms",
        );
    }
}

/// The seller (BG-4) and buyer (BG-7) have a name and a country code.
fn parties_named(c: &mut Check, inv: &Invoice) {
    let (s, b) = (&inv.seller, &inv.buyer);
    c.require(
        "BR-06",
        "settings.company_name",
        &s.name,
        "Seller name (BT-27)",
    );
    c.require(
        "BR-09",
        "settings.company_country_code",
        &s.address.country,
        "Seller country code (BT-40)",
    );
    c.require("BR-07", "client.name", &b.name, "Buyer name (BT-44)");
    c.require(
        "BR-11",
        "client.country_code",
        &b.address.country,
        "Buyer country code (BT-55)",
    );
}

/// There is at least one invoice line (BG-25), and each has an item name and a net
/// price that is not negative.
fn lines_named_and_priced(c: &mut Check, inv: &Invoice) {
    if inv.lines.is_empty() {
        c.fail("BR-16", "items", "an e-invoice needs at least one item");
    }
    for (n, line) in inv.lines.iter().enumerate() {
        if line.name.is_empty() {
            c.fail(
                "BR-25",
                &format!("items[{}].title", n + 1),
                "Item name (BT-153) is missing",
            );
        }
        if line.net_price < Decimal::ZERO {
            c.fail(
                "BR-27",
                &format!("items[{}].unit_price", n + 1),
                "Item net price (BT-146) must not be negative",
            );
        }
    }
}

/// The document totals (BG-22) are the sums of their parts, to the cent (BR-CO-10 to
/// BR-CO-16).
fn totals_add_up(c: &mut Check, inv: &Invoice) {
    let t = &inv.totals;
    let sum_lines: Decimal = inv.lines.iter().map(|l| l.net_amount).sum();
    let arithmetic: [(&'static str, bool, &str); 7] = [
        (
            "BR-CO-10",
            t.line_net == sum_lines,
            "Sum of Invoice line net amount (BT-106)",
        ),
        (
            "BR-CO-11",
            t.allowances == inv.allowances.iter().map(|a| a.amount).sum::<Decimal>(),
            "Sum of allowances on document level (BT-107)",
        ),
        (
            "BR-CO-12",
            t.charges == inv.charges.iter().map(|a| a.amount).sum::<Decimal>(),
            "Sum of charges on document level (BT-108)",
        ),
        (
            "BR-CO-13",
            t.without_vat == t.line_net - t.allowances + t.charges,
            "Invoice total amount without VAT (BT-109)",
        ),
        (
            "BR-CO-14",
            t.vat == inv.vat.iter().map(|v| v.tax).sum::<Decimal>(),
            "Invoice total VAT amount (BT-110)",
        ),
        (
            "BR-CO-15",
            t.with_vat == t.without_vat + t.vat,
            "Invoice total amount with VAT (BT-112)",
        ),
        (
            "BR-CO-16",
            t.payable == t.with_vat - t.paid + t.rounding,
            "Amount due for payment (BT-115)",
        ),
    ];
    for (rule, holds, term) in arithmetic {
        if !holds {
            c.fail(rule, "items", format!("{term} does not add up"));
        }
    }
}

/// Each VAT breakdown's tax (BT-117) is its taxable amount times its rate (BR-CO-17):
/// within a cent, or exactly when `exact_vat`.
fn vat_amounts_add_up(c: &mut Check, inv: &Invoice, exact_vat: bool) {
    for v in &inv.vat {
        let expected = round_half_away_from_zero_2(v.taxable * v.rate / Decimal::ONE_HUNDRED);
        let off = (v.tax - expected).abs();
        if off > Decimal::new(1, 2) || exact_vat && !off.is_zero() {
            c.fail(
                "BR-CO-17",
                "items",
                format!(
                    "VAT of category {} at {} % is {} on a taxable amount of {}, not {expected}",
                    v.category.code(),
                    v.rate,
                    v.tax,
                    v.taxable
                ),
            );
        }
    }
}

/// The rule id of a category's rule `n` (`BR-S-05`, ...).
fn rule(category: Category, n: u8) -> &'static str {
    use Category::{AE, E, G, K, O, S, Z};
    match (category, n) {
        (S, 2) => "BR-S-02",
        (Z, 2) => "BR-Z-02",
        (E, 2) => "BR-E-02",
        (AE, 2) => "BR-AE-02",
        (K, 2) => "BR-IC-02",
        (G, 2) => "BR-G-02",
        (O, 2) => "BR-O-02",
        (S, 5) => "BR-S-05",
        (Z, 5) => "BR-Z-05",
        (E, 5) => "BR-E-05",
        (AE, 5) => "BR-AE-05",
        (K, 5) => "BR-IC-05",
        (G, 5) => "BR-G-05",
        (O, 5) => "BR-O-05",
        (E, 10) => "BR-E-10",
        (AE, 10) => "BR-AE-10",
        (K, 10) => "BR-IC-10",
        (G, 10) => "BR-G-10",
        (O, 10) => "BR-O-10",
        _ => "BR-CO-09",
    }
}

fn categories(c: &mut Check, inv: &Invoice) {
    let s = &inv.seller;
    line_rates(c, inv);
    vat_identifiers(c, inv);
    if used(inv, Category::K) {
        intra_community_delivery(c, inv);
    }
    if used(inv, Category::G) && s.vat_id.is_empty() {
        c.fail(
            "BR-G-02",
            "settings.company_vat_number",
            "an export (G) needs the seller's VAT identifier (BT-31)",
        );
    }
    if used(inv, Category::O) && inv.lines.iter().any(|l| l.category != Category::O) {
        c.fail(
            "BR-O-11",
            "items",
            "an e-invoice with items not subject to VAT (O) may have no other category",
        );
    }
    exemption_reasons(c, inv);
}

/// Whether a line of `inv` has the VAT category `cat`.
fn used(inv: &Invoice, cat: Category) -> bool {
    inv.lines.iter().any(|l| l.category == cat)
}

/// Each line's rate (BT-152) fits its category: above 0 for `S`; 0 or above for `L` and
/// `M` (BR-AF-05, BR-AG-05) and for `B` (an Italian rate, split payment); 0 for any other.
fn line_rates(c: &mut Check, inv: &Invoice) {
    for (n, line) in inv.lines.iter().enumerate() {
        let field = format!("items[{}].tax_category", n + 1);
        let zero = line.rate.is_zero();
        if line.category == Category::S && zero {
            c.fail(
                rule(Category::S, 5),
                &field,
                "a standard rated item (S) needs a rate above 0; use Z for 0 %",
            );
        } else if !line.category.may_carry_rate() && !zero {
            c.fail(
                rule(line.category, 5),
                &field,
                format!(
                    "an item of category {} must have the rate 0, not {}",
                    line.category.code(),
                    line.rate
                ),
            );
        }
    }
}

/// The seller's and buyer's VAT identifiers (BT-31, BT-48) or tax number (BT-32) that
/// the categories used need: `S`, `Z`, `E` the seller's, `AE` and `K` both parties'.
fn vat_identifiers(c: &mut Check, inv: &Invoice) {
    let (s, b) = (&inv.seller, &inv.buyer);
    for cat in [Category::S, Category::Z, Category::E] {
        if used(inv, cat) && s.vat_id.is_empty() && s.tax_number.is_empty() {
            c.fail(
                rule(cat, 2),
                "settings.company_vat_number",
                format!(
                    "items of category {} need the seller's VAT identifier (BT-31) or tax \
                     number (BT-32, settings.company_tax_number)",
                    cat.code()
                ),
            );
        }
    }
    for cat in [Category::AE, Category::K] {
        if !used(inv, cat) {
            continue;
        }
        if s.vat_id.is_empty() {
            c.fail(
                rule(cat, 2),
                "settings.company_vat_number",
                format!(
                    "items of category {} need the seller's VAT identifier (BT-31)",
                    cat.code()
                ),
            );
        }
        if b.vat_id.is_empty() {
            c.fail(
                rule(cat, 2),
                "client.vat_number",
                format!(
                    "items of category {} need the buyer's VAT identifier (BT-48)",
                    cat.code()
                ),
            );
        }
    }
}

/// An intra-community supply (`K`) needs the delivery date (BT-72) and the deliver-to
/// country (BT-80).
fn intra_community_delivery(c: &mut Check, inv: &Invoice) {
    if inv.delivery_date.is_none() {
        c.fail(
            "BR-IC-11",
            "supply_date",
            "an intra-community supply needs the delivery date (BT-72): supply_date with \
             supply_date_type SUPPLY_DATE or DELIVERY_DATE",
        );
    }
    if inv.deliver_to.as_ref().is_none_or(|a| a.country.is_empty()) {
        c.fail(
            "BR-IC-12",
            "client.country_code",
            "Deliver to country code (BT-80) is missing",
        );
    }
}

/// Each VAT breakdown (BG-23) of an exempt category has an exemption reason (BT-120)
/// or its code (BT-121).
fn exemption_reasons(c: &mut Check, inv: &Invoice) {
    for v in &inv.vat {
        if v.category.needs_reason() && v.exemption_reason.is_empty() && v.exemption_code.is_empty()
        {
            c.fail(
                rule(v.category, 10),
                if v.category == Category::E {
                    "settings.tax_exemption_reason"
                } else {
                    "items.tax_exemption_reason"
                },
                format!(
                    "category {} needs an exemption reason (BT-120)",
                    v.category.code()
                ),
            );
        }
    }
}

fn xrechnung(c: &mut Check, inv: &Invoice) {
    let (s, b) = (&inv.seller, &inv.buyer);
    c.require(
        "BR-DE-15",
        "buyer_reference",
        &inv.buyer_reference,
        "Buyer reference (BT-10, e.g. the Leitweg-ID; on the document or the client)",
    );
    xrechnung_seller(c, s);
    xrechnung_buyer_and_delivery(c, inv);
    c.require(
        "PEPPOL-EN16931-R020",
        "settings.company_electronic_address",
        &s.electronic_address,
        "Seller electronic address (BT-34; settings.company_email is its default)",
    );
    c.require(
        "PEPPOL-EN16931-R010",
        "client.electronic_address",
        &b.electronic_address,
        "Buyer electronic address (BT-49; the client's email is its default)",
    );
    let uses = |cats: &[Category]| inv.lines.iter().any(|l| cats.contains(&l.category));
    if uses(&[
        Category::S,
        Category::Z,
        Category::E,
        Category::AE,
        Category::K,
        Category::G,
    ]) && s.vat_id.is_empty()
        && s.tax_number.is_empty()
    {
        c.fail(
            "BR-DE-16",
            "settings.company_tax_number",
            "the seller needs a VAT identifier (BT-31) or a tax number (BT-32)",
        );
    }
    xrechnung_payment_means(c, inv);
}

/// XRechnung's seller (BG-4): city, post code and a contact point (BG-6) with a name,
/// a telephone number and an e-mail address of the shapes it accepts.
fn xrechnung_seller(c: &mut Check, s: &Party) {
    c.require(
        "BR-DE-3",
        "settings.company_city",
        &s.address.city,
        "Seller city (BT-37)",
    );
    c.require(
        "BR-DE-4",
        "settings.company_zip",
        &s.address.post_code,
        "Seller post code (BT-38)",
    );
    c.require(
        "BR-DE-5",
        "settings.company_contact_name",
        &s.contact.name,
        "Seller contact point (BT-41)",
    );
    c.require(
        "BR-DE-6",
        "settings.company_phone",
        &s.contact.phone,
        "Seller contact telephone number (BT-42)",
    );
    c.require(
        "BR-DE-7",
        "settings.company_email",
        &s.contact.email,
        "Seller contact email address (BT-43)",
    );
    if !s.contact.phone.is_empty() && !phone_ok(&s.contact.phone) {
        c.fail(
            "BR-DE-27",
            "settings.company_phone",
            "the phone number needs at least three digits",
        );
    }
    if !s.contact.email.is_empty() && !email_ok(&s.contact.email) {
        c.fail(
            "BR-DE-28",
            "settings.company_email",
            "not an e-mail address XRechnung accepts",
        );
    }
}

/// XRechnung's buyer (BG-7) and deliver-to address (BG-15), when there is one: city
/// and post code.
fn xrechnung_buyer_and_delivery(c: &mut Check, inv: &Invoice) {
    let b = &inv.buyer;
    c.require(
        "BR-DE-8",
        "client.city",
        &b.address.city,
        "Buyer city (BT-52)",
    );
    c.require(
        "BR-DE-9",
        "client.zip",
        &b.address.post_code,
        "Buyer post code (BT-53)",
    );
    if let Some(to) = &inv.deliver_to {
        c.require(
            "BR-DE-10",
            "client.city",
            &to.city,
            "Deliver to city (BT-77)",
        );
        c.require(
            "BR-DE-11",
            "client.zip",
            &to.post_code,
            "Deliver to post code (BT-78)",
        );
    }
}

/// XRechnung's payment instructions (BG-16): no card payments, and a direct debit
/// (BG-19) with its mandate, creditor and debited account.
fn xrechnung_payment_means(c: &mut Check, inv: &Invoice) {
    match inv.payment.means_code.as_str() {
        "48" | "54" | "55" => c.fail(
            "BR-DE-24-a",
            "payment_types",
            "XRechnung needs payment card details (BG-18) for card payments, which \
             Faktura does not keep: accept another payment type first",
        ),
        "59" => {
            let debit = inv.payment.direct_debit.clone().unwrap_or_default();
            c.require(
                "PEPPOL-EN16931-R061",
                "client.debit_mandate_reference",
                &debit.mandate,
                "Mandate reference identifier (BT-89)",
            );
            c.require(
                "BR-DE-30",
                "settings.company_creditor_id",
                &debit.creditor_id,
                "Bank assigned creditor identifier (BT-90)",
            );
            c.require(
                "BR-DE-31",
                "client.bank_iban",
                &debit.debited_iban,
                "Debited account identifier (BT-91)",
            );
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by splitting the category checks: lines of the Canary Islands' IGIC (L), of
    /// Ceuta and Melilla's IPSI (M) and of Italy's split payment (B) carry their rates; a
    /// rate on an exempt line (E) is still refused, by its own rule.
    #[test]
    fn regional_and_split_payment_categories_carry_their_rates() {
        for (category, rate, refused) in [
            (Category::L, 7, None),
            (Category::M, 4, None),
            (Category::B, 22, None),
            (Category::L, 0, None),
            (Category::E, 19, Some("BR-E-05")),
        ] {
            let mut inv = crate::cii::samples::standard();
            inv.lines.truncate(1);
            inv.lines[0].category = category;
            inv.lines[0].rate = rust_decimal::Decimal::from(rate);
            let mut c = Check { out: Vec::new() };
            line_rates(&mut c, &inv);
            let rules: Vec<&str> = c.out.iter().map(|v| v.rule.as_str()).collect();
            assert_eq!(
                rules,
                refused.into_iter().collect::<Vec<_>>(),
                "{category:?} {rate}"
            );
        }
    }

    #[test]
    fn xrechnung_contact_shapes() {
        assert!(phone_ok("+49 30 123") && !phone_ok("12"));
        assert!(email_ok("rechnung@example.com"));
        assert!(!email_ok("a@example.com"));
        assert!(!email_ok("ab@c"));
        assert!(!email_ok("ab @example.com"));
        assert!(!email_ok("ab@@example.com"));
    }
}
