//! The defaults of the e-invoice terms a client does not give: the unit code of an item's
//! unit word, the VAT category of an item in its document's tax situation, the exemption
//! reason of a category, the payment means of a payment type. Documented in README
//! ("E-invoices").

use rust_decimal::Decimal;

use crate::model::Category;

/// EU member states (ISO 3166-1 alpha-2), sorted: an intra-community supply needs both
/// parties inside.
pub const EU: &[&str] = &[
    "AT", "BE", "BG", "CY", "CZ", "DE", "DK", "EE", "ES", "FI", "FR", "GR", "HR", "HU", "IE", "IT",
    "LT", "LU", "LV", "MT", "NL", "PL", "PT", "RO", "SE", "SI", "SK",
];

pub fn in_eu(country: &str) -> bool {
    EU.binary_search(&country).is_ok()
}

/// Unit words (German and English, lower case, singular and plural) and their UN/ECE
/// Recommendation 20 codes. A unit that is already a code of this table's values is kept.
const UNITS: &[(&str, &str)] = &[
    ("piece", "H87"),
    ("pieces", "H87"),
    ("pc", "H87"),
    ("pcs", "H87"),
    ("stück", "H87"),
    ("stk", "H87"),
    ("stk.", "H87"),
    ("hour", "HUR"),
    ("hours", "HUR"),
    ("h", "HUR"),
    ("hr", "HUR"),
    ("hrs", "HUR"),
    ("std", "HUR"),
    ("std.", "HUR"),
    ("stunde", "HUR"),
    ("stunden", "HUR"),
    ("minute", "MIN"),
    ("minutes", "MIN"),
    ("min", "MIN"),
    ("minuten", "MIN"),
    ("day", "DAY"),
    ("days", "DAY"),
    ("tag", "DAY"),
    ("tage", "DAY"),
    ("week", "WEE"),
    ("weeks", "WEE"),
    ("woche", "WEE"),
    ("wochen", "WEE"),
    ("month", "MON"),
    ("months", "MON"),
    ("monat", "MON"),
    ("monate", "MON"),
    ("year", "ANN"),
    ("years", "ANN"),
    ("jahr", "ANN"),
    ("jahre", "ANN"),
    ("kg", "KGM"),
    ("kilogram", "KGM"),
    ("kilogramm", "KGM"),
    ("g", "GRM"),
    ("gram", "GRM"),
    ("gramm", "GRM"),
    ("t", "TNE"),
    ("tonne", "TNE"),
    ("tonnen", "TNE"),
    ("m", "MTR"),
    ("meter", "MTR"),
    ("metre", "MTR"),
    ("km", "KMT"),
    ("cm", "CMT"),
    ("mm", "MMT"),
    ("m2", "MTK"),
    ("m²", "MTK"),
    ("qm", "MTK"),
    ("m3", "MTQ"),
    ("m³", "MTQ"),
    ("l", "LTR"),
    ("liter", "LTR"),
    ("litre", "LTR"),
    ("ml", "MLT"),
    ("kwh", "KWH"),
    ("set", "SET"),
    ("sets", "SET"),
    ("pauschal", "LS"),
    ("pauschale", "LS"),
    ("lump sum", "LS"),
    ("flat", "LS"),
    ("pkg", "XPK"),
    ("package", "XPK"),
    ("paket", "XPK"),
    ("box", "XBX"),
    ("karton", "XCT"),
    ("pair", "PR"),
    ("paar", "PR"),
];

/// The codes `UNITS` maps to, and `C62` ("one"): a unit written as one of them is a code.
const CODES: &[&str] = &[
    "ANN", "C62", "CMT", "DAY", "GRM", "H87", "HUR", "KGM", "KMT", "KWH", "LS", "LTR", "MIN",
    "MLT", "MMT", "MON", "MTK", "MTQ", "MTR", "PR", "SET", "TNE", "WEE", "XBX", "XCT", "XPK",
];

/// The unit code of an item: the one given, else the code of its unit word, else `C62`.
pub fn unit_code(given: &str, unit: &str) -> String {
    if !given.trim().is_empty() {
        return given.trim().to_owned();
    }
    let unit = unit.trim();
    if CODES.contains(&unit) {
        return unit.to_owned();
    }
    let word = unit.to_lowercase();
    UNITS
        .iter()
        .find(|(w, _)| *w == word)
        .map_or("C62", |(_, code)| code)
        .to_owned()
}

/// How the document's client is taxed, as the category derivation needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Situation {
    /// Taxed normally.
    Taxed,
    /// `tax_rule` NO_TAX: exempt.
    Exempt,
    /// A listed tax-free country inside the EU: reverse charge or intra-community supply.
    EuTaxFree,
    /// A listed tax-free country outside the EU: export.
    Export,
}

/// The VAT category of an item: the one given, else derived from the situation, the rate
/// and whether the item is a product.
pub fn category(
    given: Option<Category>,
    situation: Situation,
    rate: Decimal,
    product: bool,
) -> Category {
    if let Some(c) = given {
        return c;
    }
    match situation {
        Situation::Taxed if rate > Decimal::ZERO => Category::S,
        Situation::Taxed => Category::Z,
        Situation::Exempt => Category::E,
        Situation::EuTaxFree if product => Category::K,
        Situation::EuTaxFree => Category::AE,
        Situation::Export if product => Category::G,
        Situation::Export => Category::O,
    }
}

/// The exemption reason of a category nobody wrote one for: the settings' reason for
/// exempt documents, a standard text for the others (German for German locales).
pub fn exemption_reason(category: Category, settings_reason: &str, german: bool) -> String {
    let text = match (category, german) {
        (Category::S | Category::Z | Category::L | Category::M | Category::B, _) => "",
        (Category::E, _) => settings_reason,
        (Category::AE, true) => "Steuerschuldnerschaft des Leistungsempfängers",
        (Category::AE, false) => "Reverse charge",
        (Category::K, true) => "Steuerfreie innergemeinschaftliche Lieferung",
        (Category::K, false) => "Intra-community supply",
        (Category::G, true) => "Steuerfreie Ausfuhrlieferung",
        (Category::G, false) => "Export outside the EU",
        (Category::O, true) => "Nicht im Inland steuerbare Leistung",
        (Category::O, false) => "Not subject to VAT",
    };
    text.trim().to_owned()
}

/// The payment means (BT-81, UNTDID 4461) of a payment type.
pub fn means_code(payment_type: &str) -> &'static str {
    match payment_type {
        "BANK_TRANSFER" => "58",
        "DEBIT" => "59",
        "CASH" => "10",
        "BANK_CARD" => "48",
        "CREDIT_CARD" => "54",
        "PAYPAL" => "68",
        _ => "1",
    }
}

/// An IBAN without spaces, as e-invoices write it.
pub fn compact(iban: &str) -> String {
    iban.chars().filter(|c| !c.is_whitespace()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_words_map_to_codes() {
        assert_eq!(unit_code("", "Stunden"), "HUR");
        assert_eq!(unit_code("", "pcs"), "H87");
        assert_eq!(unit_code("", "Fass"), "C62");
        assert_eq!(unit_code("", ""), "C62");
        assert_eq!(unit_code("", "KGM"), "KGM");
        assert_eq!(unit_code("XYZ", "h"), "XYZ");
        use crate::codes::is_unit_code;
        assert!(is_unit_code("C62") && is_unit_code("LS") && !is_unit_code("c62"));
    }

    #[test]
    fn tables_are_sorted_for_binary_search() {
        assert!(EU.windows(2).all(|w| w[0] < w[1]));
        assert!(CODES.windows(2).all(|w| w[0] < w[1]));
        assert!(UNITS.iter().all(|(_, c)| CODES.contains(c)));
        // Every code a unit word gives is one the official list holds.
        assert!(
            CODES.iter().all(|c| crate::codes::is_unit_code(c)),
            "{CODES:?}"
        );
    }

    #[test]
    fn categories_follow_the_situation() {
        let r19 = Decimal::from(19);
        assert_eq!(category(None, Situation::Taxed, r19, false), Category::S);
        assert_eq!(
            category(None, Situation::Taxed, Decimal::ZERO, true),
            Category::Z
        );
        assert_eq!(category(None, Situation::Exempt, r19, true), Category::E);
        assert_eq!(
            category(None, Situation::EuTaxFree, r19, false),
            Category::AE
        );
        assert_eq!(category(None, Situation::EuTaxFree, r19, true), Category::K);
        assert_eq!(category(None, Situation::Export, r19, true), Category::G);
        assert_eq!(category(None, Situation::Export, r19, false), Category::O);
        assert_eq!(
            category(Some(Category::Z), Situation::Taxed, r19, false),
            Category::Z
        );
    }
}
