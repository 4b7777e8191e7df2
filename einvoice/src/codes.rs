//! The code lists e-invoices name, as the service checks them: which list of the official
//! rules a coded value must be in (`List`, over the generated `code_lists`), a coded value
//! of a document that is in none its rule allows (`Coded`, found by the reader), and the
//! unit codes the service takes (`is_unit_code`). It holds no list of its own.

use crate::code_lists;

/// A code list of the CEN rules (BR-CL), as a coded value must be in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum List {
    /// UNTDID 1001 document types of CII (BR-CL-01).
    DocumentTypesCii,
    /// UNTDID 1001 document types of a UBL Invoice (BR-CL-01).
    InvoiceTypesUbl,
    /// UNTDID 1001 document types of a UBL CreditNote (BR-CL-01).
    CreditNoteTypesUbl,
    /// ISO 4217 (BR-CL-03, -04, -05).
    Currencies,
    /// UNTDID 2475 of CII (BR-CL-06).
    DueDateTypesCii,
    /// UNTDID 2005 of UBL (BR-CL-06).
    DueDateTypesUbl,
    /// UNTDID 1153 (BR-CL-07).
    ReferenceTypes,
    /// UNTDID 4451 of CII (BR-CL-08).
    SubjectsCii,
    /// ISO 6523 ICD (BR-CL-10, -11, -21, -26).
    Icd,
    /// ISO 6523 ICD, or SEPA for a UBL seller's or payee's identifier (BR-CL-10).
    IcdOrSepa,
    /// UNTDID 7143 (BR-CL-13).
    ItemClassifications,
    /// ISO 3166-1 alpha-2 as CII's rules list it (BR-CL-14, -15).
    CountriesCii,
    /// ISO 3166-1 alpha-2 as UBL's rules list it (BR-CL-14, -15).
    CountriesUbl,
    /// UNTDID 4461 (BR-CL-16).
    PaymentMeans,
    /// UNTDID 5305 (BR-CL-17, -18).
    VatCategories,
    /// UNTDID 5189 (BR-CL-19).
    AllowanceReasons,
    /// UNTDID 7161 (BR-CL-20).
    ChargeReasons,
    /// VATEX, in any case (BR-CL-22).
    Vatex,
    /// UN/ECE Recommendations 20 and 21 (BR-CL-23).
    Units,
    /// The MIME codes of attachments, exactly (BR-CL-24).
    MimeCodes,
    /// The electronic address schemes, EAS (BR-CL-25).
    Eas,
}

impl List {
    fn codes(self) -> &'static [&'static str] {
        match self {
            List::DocumentTypesCii => code_lists::DOCUMENT_TYPES_CII,
            List::InvoiceTypesUbl => code_lists::INVOICE_TYPES_UBL,
            List::CreditNoteTypesUbl => code_lists::CREDIT_NOTE_TYPES_UBL,
            List::Currencies => code_lists::CURRENCIES,
            List::DueDateTypesCii => code_lists::DUE_DATE_TYPES_CII,
            List::DueDateTypesUbl => code_lists::DUE_DATE_TYPES_UBL,
            List::ReferenceTypes => code_lists::REFERENCE_TYPES,
            List::SubjectsCii => code_lists::SUBJECTS_CII,
            List::Icd | List::IcdOrSepa => code_lists::ICD,
            List::ItemClassifications => code_lists::ITEM_CLASSIFICATIONS,
            List::CountriesCii => code_lists::COUNTRIES_CII,
            List::CountriesUbl => code_lists::COUNTRIES_UBL,
            List::PaymentMeans => code_lists::PAYMENT_MEANS,
            List::VatCategories => code_lists::VAT_CATEGORIES,
            List::AllowanceReasons => code_lists::ALLOWANCE_REASONS,
            List::ChargeReasons => code_lists::CHARGE_REASONS,
            List::Vatex => code_lists::VATEX,
            List::Units => code_lists::UNITS,
            List::MimeCodes => code_lists::MIME_CODES,
            List::Eas => code_lists::EAS,
        }
    }

    /// Whether `value`, as the reader hands it on (white space normalized as XPath's
    /// `normalize-space`, but for MIME codes, which the rule compares as written), is in
    /// the list, as the rule decides it.
    pub fn admits(self, value: &str) -> bool {
        let found = |v: &str| self.codes().binary_search(&v).is_ok();
        match self {
            // BR-CL-22 compares the code in upper case.
            List::Vatex => found(&value.to_uppercase()),
            List::IcdOrSepa => found(value) || code_lists::SEPA_UBL.contains(&value),
            List::DocumentTypesCii
            | List::InvoiceTypesUbl
            | List::CreditNoteTypesUbl
            | List::Currencies
            | List::DueDateTypesCii
            | List::DueDateTypesUbl
            | List::ReferenceTypes
            | List::SubjectsCii
            | List::Icd
            | List::ItemClassifications
            | List::CountriesCii
            | List::CountriesUbl
            | List::PaymentMeans
            | List::VatCategories
            | List::AllowanceReasons
            | List::ChargeReasons
            | List::Units
            | List::MimeCodes
            | List::Eas => found(value),
        }
    }

    /// What the list is, for a message ("… is not in the ISO 6523 ICD list").
    pub fn name(self) -> &'static str {
        match self {
            List::DocumentTypesCii | List::InvoiceTypesUbl | List::CreditNoteTypesUbl => {
                "the UNTDID 1001 document types EN 16931 allows"
            }
            List::Currencies => "ISO 4217",
            List::DueDateTypesCii => "the UNTDID 2475 codes EN 16931 allows",
            List::DueDateTypesUbl => "the UNTDID 2005 codes EN 16931 allows",
            List::ReferenceTypes => "UNTDID 1153",
            List::SubjectsCii => "UNTDID 4451",
            List::Icd => "the ISO 6523 ICD list",
            List::IcdOrSepa => "the ISO 6523 ICD list (nor SEPA)",
            List::ItemClassifications => "UNTDID 7143",
            List::CountriesCii | List::CountriesUbl => "ISO 3166-1 alpha-2",
            List::PaymentMeans => "UNTDID 4461",
            List::VatCategories => "UNTDID 5305 as EN 16931 uses it",
            List::AllowanceReasons => "UNTDID 5189",
            List::ChargeReasons => "UNTDID 7161",
            List::Vatex => "the VATEX list",
            List::Units => "UN/ECE Recommendations 20 and 21",
            List::MimeCodes => "the MIME codes EN 16931 allows (PDF, PNG, JPEG, CSV, XLSX, ODS)",
            List::Eas => "the electronic address schemes (EAS)",
        }
    }
}

/// A coded value of a document that is not in the list of the code-list rule that binds
/// it: what `rules::code_lists` reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coded {
    /// The rule, `BR-CL-01` to `BR-CL-26`.
    pub rule: &'static str,
    pub list: List,
    /// Where the value stands: the element below its parent, `@attribute` for an
    /// attribute's value (`SellerTradeParty/GlobalID/@schemeID`).
    pub path: String,
    /// The value, as `List::admits` was given it.
    pub value: String,
}

/// Whether `code` is a unit code of UN/ECE Recommendation 20 or 21 (BR-CL-23).
pub fn is_unit_code(code: &str) -> bool {
    List::Units.admits(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(list: List, value: &str, expected: bool) {
        assert_eq!(list.admits(value), expected, "{list:?} {value:?}");
    }

    #[test]
    fn codes_are_in_the_lists_of_the_official_rules() {
        check(List::Units, "C62", true);
        check(List::Units, "H87", true);
        check(List::Units, "LS", true);
        check(List::Units, "XPP", true);
        check(List::Units, "c62", false);
        check(List::Units, "ZZZ", false);
        check(List::Units, "C6 2", false);
        check(List::Units, "", false);
        check(List::Icd, "0088", true);
        check(List::Icd, "0204", true);
        check(List::Icd, "9999", false);
        check(List::IcdOrSepa, "SEPA", true);
        check(List::Icd, "SEPA", false);
        check(List::Eas, "EM", true);
        check(List::Eas, "9930", true);
        check(List::Currencies, "EUR", true);
        check(List::Currencies, "EURO", false);
        check(List::CountriesCii, "DE", true);
        check(List::CountriesCii, "XX", false);
        check(List::Vatex, "vatex-eu-ae", true);
        check(List::MimeCodes, "application/pdf", true);
        check(List::MimeCodes, "application/PDF", false);
        check(List::VatCategories, "AE", true);
        check(List::VatCategories, "X", false);
        check(List::PaymentMeans, "58", true);
        check(List::DocumentTypesCii, "380", true);
        check(List::DocumentTypesCii, "999", false);
    }

    #[test]
    fn unit_codes_are_those_of_recommendations_20_and_21() {
        assert!(is_unit_code("C62") && is_unit_code("HUR") && is_unit_code("XBX"));
        // The shape alone does not make a unit code.
        assert!(!is_unit_code("AB1") && !is_unit_code("ZZ9"));
    }
}
