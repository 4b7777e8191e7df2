//! Where the terms are in UN/CEFACT CII (D16B, as Factur-X, ZUGFeRD 2.x and XRechnung use
//! it) and in ZUGFeRD 1.0: the names of its namespaces' elements, the paths of the terms
//! below the root, and its dates.

use time::Date;

use super::{
    AllowanceChargeSoFar, Attrs, Builder, LineSoFar, VatSoFar, append, boolean, category, decimal,
    email_scheme, fill, first, iso_date, note, shorten, trim,
};
use crate::model::{Address, Party};

/// The CII `rsm` names (sorted, for `binary_search`).
pub(super) const RSM: &[&str] = &[
    "ExchangedDocument",
    "ExchangedDocumentContext",
    "SupplyChainTradeTransaction",
];

/// ZUGFeRD 1.0 names and the CII D16B names they stand for.
pub(super) const RSM_ALIASES: &[(&str, &str)] = &[
    ("HeaderExchangedDocument", "ExchangedDocument"),
    (
        "SpecifiedExchangedDocumentContext",
        "ExchangedDocumentContext",
    ),
    (
        "SpecifiedSupplyChainTradeTransaction",
        "SupplyChainTradeTransaction",
    ),
];

/// The CII `ram` names the model has terms in (sorted). ZUGFeRD 1.0's
/// `SpecifiedTradeSettlementMonetarySummation` (the header's and the lines') and its
/// logistics charges (`SpecifiedLogisticsServiceCharge`, `AppliedAmount`,
/// `AppliedTradeTax`) are among them.
pub(super) const RAM: &[&str] = &[
    "AccountName",
    "ActualAmount",
    "ActualDeliverySupplyChainEvent",
    "AllowanceTotalAmount",
    "ApplicableHeaderTradeAgreement",
    "ApplicableHeaderTradeDelivery",
    "ApplicableHeaderTradeSettlement",
    "ApplicableTradeTax",
    "AppliedAmount",
    "AppliedTradeTax",
    "AssociatedDocumentLineDocument",
    "BICID",
    "BasisAmount",
    "BilledQuantity",
    "BuyerOrderReferencedDocument",
    "BuyerReference",
    "BuyerTradeParty",
    "CalculatedAmount",
    "CalculationPercent",
    "CategoryCode",
    "CategoryTradeTax",
    "ChargeAmount",
    "ChargeIndicator",
    "ChargeTotalAmount",
    "CityName",
    "CompleteNumber",
    "Content",
    "ContractReferencedDocument",
    "CountryID",
    "CountrySubDivisionName",
    "CreditorReferenceID",
    "DefinedTradeContact",
    "DepartmentName",
    "Description",
    "DirectDebitMandateID",
    "DueDateDateTime",
    "DuePayableAmount",
    "EmailURIUniversalCommunication",
    "ExemptionReason",
    "ExemptionReasonCode",
    "FormattedIssueDateTime",
    "GlobalID",
    "GrandTotalAmount",
    "GuidelineSpecifiedDocumentContextParameter",
    "IBANID",
    "ID",
    "IncludedNote",
    "IncludedSupplyChainTradeLineItem",
    "Information",
    "InvoiceCurrencyCode",
    "InvoiceReferencedDocument",
    "IssueDateTime",
    "IssuerAssignedID",
    "LineID",
    "LineOne",
    "LineTotalAmount",
    "LineTwo",
    "Name",
    "NetPriceProductTradePrice",
    "OccurrenceDateTime",
    "PayeePartyCreditorFinancialAccount",
    "PayeeSpecifiedCreditorFinancialInstitution",
    "PayerPartyDebtorFinancialAccount",
    "PaymentReference",
    "PersonName",
    "PostalTradeAddress",
    "PostcodeCode",
    "ProprietaryID",
    "RateApplicablePercent",
    "Reason",
    "ReasonCode",
    "RoundingAmount",
    "SellerAssignedID",
    "SellerTradeParty",
    "ShipToTradeParty",
    "SpecifiedLegalOrganization",
    "SpecifiedLineTradeAgreement",
    "SpecifiedLineTradeDelivery",
    "SpecifiedLineTradeSettlement",
    "SpecifiedLogisticsServiceCharge",
    "SpecifiedTaxRegistration",
    "SpecifiedTradeAllowanceCharge",
    "SpecifiedTradePaymentTerms",
    "SpecifiedTradeProduct",
    "SpecifiedTradeSettlementHeaderMonetarySummation",
    "SpecifiedTradeSettlementLineMonetarySummation",
    "SpecifiedTradeSettlementMonetarySummation",
    "SpecifiedTradeSettlementPaymentMeans",
    "TaxBasisTotalAmount",
    "TaxTotalAmount",
    "TelephoneUniversalCommunication",
    "TotalPrepaidAmount",
    "TypeCode",
    "URIID",
    "URIUniversalCommunication",
];

/// ZUGFeRD 1.0 `ram` names and the CII D16B names they stand for.
pub(super) const RAM_ALIASES: &[(&str, &str)] = &[
    ("ApplicablePercent", "RateApplicablePercent"),
    (
        "ApplicableSupplyChainTradeAgreement",
        "ApplicableHeaderTradeAgreement",
    ),
    (
        "ApplicableSupplyChainTradeDelivery",
        "ApplicableHeaderTradeDelivery",
    ),
    (
        "ApplicableSupplyChainTradeSettlement",
        "ApplicableHeaderTradeSettlement",
    ),
    (
        "SpecifiedSupplyChainTradeAgreement",
        "SpecifiedLineTradeAgreement",
    ),
    (
        "SpecifiedSupplyChainTradeDelivery",
        "SpecifiedLineTradeDelivery",
    ),
    (
        "SpecifiedSupplyChainTradeSettlement",
        "SpecifiedLineTradeSettlement",
    ),
];

/// The `udt` and `qdt` names (sorted).
pub(super) const DATA_TYPES: &[&str] = &["DateTimeString", "Indicator"];

const TX: &str = "SupplyChainTradeTransaction";
const AGREEMENT: &str = "ApplicableHeaderTradeAgreement";
const DELIVERY: &str = "ApplicableHeaderTradeDelivery";
const SETTLEMENT: &str = "ApplicableHeaderTradeSettlement";
const LINE_ITEM: &str = "IncludedSupplyChainTradeLineItem";

/// A CII date (`udt:DateTimeString` or `qdt:DateTimeString`): format 102 `YYYYMMDD` (also
/// without a format), 610 `YYYYMM` (its first day); 616 (a week) is no date.
pub(super) fn cii_date(v: &str, a: &Attrs) -> Result<Option<Date>, String> {
    let digits = |len: usize| v.len() == len && v.bytes().all(|b| b.is_ascii_digit());
    let date = match a.format.as_deref().map(trim) {
        None | Some("102") if digits(8) => {
            iso_date(&format!("{}-{}-{}", &v[..4], &v[4..6], &v[6..]))
        }
        Some("610") if digits(6) => iso_date(&format!("{}-{}-01", &v[..4], &v[4..])),
        Some("616") => return Ok(None),
        None | Some("102" | "610") => None,
        Some(other) => return Err(format!("unknown date format '{}'", shorten(other))),
    };
    match date {
        Some(d) => Ok(Some(d)),
        None => Err(format!(
            "'{}' is no date in format {}",
            shorten(v),
            a.format.as_deref().map_or("102", |f| shorten(trim(f)))
        )),
    }
}

impl Builder {
    pub(super) fn cii_start(&mut self, path: &[&str]) {
        match path {
            [TX, LINE_ITEM] => self.lines.push(LineSoFar::default()),
            [
                TX,
                LINE_ITEM,
                "SpecifiedLineTradeSettlement",
                "SpecifiedTradeAllowanceCharge",
            ] => {
                if let Some(line) = self.lines.last_mut() {
                    line.pending = Some(AllowanceChargeSoFar::default());
                }
            }
            [TX, DELIVERY, "ShipToTradeParty", "PostalTradeAddress"] => {
                self.deliver_to.get_or_insert_with(Address::default);
            }
            [TX, SETTLEMENT, "SpecifiedTradeSettlementPaymentMeans"] => {
                self.means = self.means.saturating_add(1);
            }
            [TX, SETTLEMENT, "ApplicableTradeTax"] => self.vat.push(VatSoFar::default()),
            [TX, SETTLEMENT, "SpecifiedTradeAllowanceCharge"] => {
                self.allowance_charges.push(AllowanceChargeSoFar::default());
            }
            [TX, SETTLEMENT, "SpecifiedLogisticsServiceCharge"] => {
                self.allowance_charges.push(AllowanceChargeSoFar {
                    charge: Some(true),
                    ..AllowanceChargeSoFar::default()
                });
            }
            [TX, SETTLEMENT, "InvoiceReferencedDocument"] => self.preceding_starts(),
            _ => {}
        }
    }

    pub(super) fn cii_end(&mut self, path: &[&str], v: &str, a: &Attrs) -> Result<(), String> {
        match path {
            [
                "ExchangedDocumentContext",
                "GuidelineSpecifiedDocumentContextParameter",
                "ID",
            ] => fill(&mut self.specification, v),
            ["ExchangedDocument", "ID"] => fill(&mut self.number, v),
            ["ExchangedDocument", "TypeCode"] => fill(&mut self.type_code, v),
            ["ExchangedDocument", "IssueDateTime", "DateTimeString"] => {
                first(&mut self.issue_date, cii_date(v, a)?);
            }
            ["ExchangedDocument", "IncludedNote", "Content"] => note(&mut self.notes, v),
            [TX, LINE_ITEM, rest @ ..] => {
                if let Some(line) = self.lines.last_mut() {
                    cii_line(line, rest, v, a)?;
                }
            }
            [TX, AGREEMENT, rest @ ..] => self.cii_agreement(rest, v, a),
            [TX, DELIVERY, rest @ ..] => self.cii_delivery(rest, v, a)?,
            [TX, SETTLEMENT, rest @ ..] => self.cii_settlement(rest, v, a)?,
            _ => {}
        }
        Ok(())
    }

    fn cii_agreement(&mut self, path: &[&str], v: &str, a: &Attrs) {
        match path {
            ["BuyerReference"] => fill(&mut self.buyer_reference, v),
            ["SellerTradeParty", rest @ ..] => cii_party(&mut self.seller, true, rest, v, a),
            ["BuyerTradeParty", rest @ ..] => cii_party(&mut self.buyer, false, rest, v, a),
            ["BuyerOrderReferencedDocument", "IssuerAssignedID" | "ID"] => {
                fill(&mut self.order_reference, v);
            }
            ["ContractReferencedDocument", "IssuerAssignedID"] => {
                fill(&mut self.contract_reference, v);
            }
            _ => {}
        }
    }

    fn cii_delivery(&mut self, path: &[&str], v: &str, a: &Attrs) -> Result<(), String> {
        match path {
            ["ShipToTradeParty", "PostalTradeAddress", field] => {
                if let Some(address) = &mut self.deliver_to {
                    cii_address(address, field, v);
                }
            }
            [
                "ActualDeliverySupplyChainEvent",
                "OccurrenceDateTime",
                "DateTimeString",
            ] => first(&mut self.delivery_date, cii_date(v, a)?),
            _ => {}
        }
        Ok(())
    }

    fn cii_settlement(&mut self, path: &[&str], v: &str, a: &Attrs) -> Result<(), String> {
        match path {
            ["CreditorReferenceID"] => fill(&mut self.debit.creditor_id, v),
            ["PaymentReference"] => fill(&mut self.payment.remittance, v),
            ["InvoiceCurrencyCode"] => fill(&mut self.currency, v),
            ["SpecifiedTradeSettlementPaymentMeans", rest @ ..] if self.means == 1 => {
                self.cii_payment_means(rest, v);
            }
            ["ApplicableTradeTax", rest @ ..] => {
                if let Some(vat) = self.vat.last_mut() {
                    cii_vat_breakdown(vat, rest, v)?;
                }
            }
            [
                "SpecifiedTradeAllowanceCharge" | "SpecifiedLogisticsServiceCharge",
                rest @ ..,
            ] => {
                if let Some(ac) = self.allowance_charges.last_mut() {
                    cii_allowance_charge(ac, rest, v)?;
                }
            }
            ["SpecifiedTradePaymentTerms", "Description"] => append(&mut self.payment_terms, v),
            [
                "SpecifiedTradePaymentTerms",
                "DueDateDateTime",
                "DateTimeString",
            ] => {
                first(&mut self.due_date, cii_date(v, a)?);
            }
            ["SpecifiedTradePaymentTerms", "DirectDebitMandateID"] => {
                fill(&mut self.debit.mandate, v);
            }
            [
                "SpecifiedTradeSettlementHeaderMonetarySummation"
                | "SpecifiedTradeSettlementMonetarySummation",
                field,
            ] => self.cii_total(field, v, a)?,
            ["InvoiceReferencedDocument", rest @ ..] if self.references == 1 => {
                if let Some((number, date)) = &mut self.preceding {
                    match rest {
                        ["IssuerAssignedID"] => fill(number, v),
                        ["FormattedIssueDateTime", "DateTimeString"] => {
                            first(date, cii_date(v, a)?);
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// BG-16 (the first `ram:SpecifiedTradeSettlementPaymentMeans`): the means, the
    /// debited account of a direct debit (BG-19) and the account of a credit transfer
    /// (BG-17).
    fn cii_payment_means(&mut self, path: &[&str], v: &str) {
        match path {
            ["TypeCode"] => fill(&mut self.payment.means_code, v),
            ["Information"] => fill(&mut self.payment.means_text, v),
            ["PayerPartyDebtorFinancialAccount", "IBANID"] => {
                fill(&mut self.debit.debited_iban, v);
            }
            [
                "PayeePartyCreditorFinancialAccount",
                "IBANID" | "ProprietaryID",
            ] => {
                fill(&mut self.transfer.iban, v);
            }
            ["PayeePartyCreditorFinancialAccount", "AccountName"] => {
                fill(&mut self.transfer.account_name, v);
            }
            ["PayeeSpecifiedCreditorFinancialInstitution", "BICID"] => {
                fill(&mut self.transfer.bic, v);
            }
            _ => {}
        }
    }

    /// BG-22.
    fn cii_total(&mut self, field: &str, v: &str, a: &Attrs) -> Result<(), String> {
        let t = &mut self.totals;
        match field {
            "LineTotalAmount" => t.line_net = decimal(v)?,
            "ChargeTotalAmount" => t.charges = decimal(v)?,
            "AllowanceTotalAmount" => t.allowances = decimal(v)?,
            "TaxBasisTotalAmount" => t.without_vat = decimal(v)?,
            "TaxTotalAmount" => self.vat_total(decimal(v)?, a.currency_id.as_deref()),
            "RoundingAmount" => t.rounding = decimal(v)?,
            "GrandTotalAmount" => t.with_vat = decimal(v)?,
            "TotalPrepaidAmount" => t.paid = decimal(v)?,
            "DuePayableAmount" => self.payable(decimal(v)?),
            _ => {}
        }
        Ok(())
    }
}

/// BG-23 below `ram:ApplicableHeaderTradeSettlement/ram:ApplicableTradeTax`.
fn cii_vat_breakdown(vat: &mut VatSoFar, path: &[&str], v: &str) -> Result<(), String> {
    match path {
        ["CalculatedAmount"] => vat.tax = decimal(v)?,
        ["BasisAmount"] => vat.taxable = decimal(v)?,
        ["CategoryCode"] => vat.category = Some(category(v)?),
        ["RateApplicablePercent"] => vat.rate = decimal(v)?,
        ["ExemptionReason"] => fill(&mut vat.exemption_reason, v),
        ["ExemptionReasonCode"] => fill(&mut vat.exemption_code, v),
        _ => {}
    }
    Ok(())
}

/// BG-25 below `ram:IncludedSupplyChainTradeLineItem`.
fn cii_line(line: &mut LineSoFar, path: &[&str], v: &str, a: &Attrs) -> Result<(), String> {
    const SETTLEMENT: &str = "SpecifiedLineTradeSettlement";
    match path {
        ["AssociatedDocumentLineDocument", "LineID"] => fill(&mut line.id, v),
        ["AssociatedDocumentLineDocument", "IncludedNote", "Content"] => {
            append(&mut line.note, v);
        }
        ["SpecifiedTradeProduct", "SellerAssignedID"] => fill(&mut line.seller_id, v),
        ["SpecifiedTradeProduct", "Name"] => fill(&mut line.name, v),
        ["SpecifiedTradeProduct", "Description"] => fill(&mut line.description, v),
        [
            "SpecifiedLineTradeAgreement",
            "NetPriceProductTradePrice",
            "ChargeAmount",
        ] => line.net_price = decimal(v)?,
        ["SpecifiedLineTradeDelivery", "BilledQuantity"] => {
            line.quantity = decimal(v)?;
            fill(&mut line.unit_code, a.unit_code.as_deref().map_or("", trim));
        }
        [SETTLEMENT, "ApplicableTradeTax", "CategoryCode"] => {
            line.category = Some(category(v)?);
        }
        [SETTLEMENT, "ApplicableTradeTax", "RateApplicablePercent"] => line.rate = decimal(v)?,
        [SETTLEMENT, "SpecifiedTradeAllowanceCharge"] => line.settle()?,
        [SETTLEMENT, "SpecifiedTradeAllowanceCharge", rest @ ..] => {
            if let Some(ac) = &mut line.pending {
                cii_allowance_charge(ac, rest, v)?;
            }
        }
        [
            SETTLEMENT,
            "SpecifiedTradeSettlementLineMonetarySummation"
            | "SpecifiedTradeSettlementMonetarySummation",
            "LineTotalAmount",
        ] => line.net_amount = decimal(v)?,
        _ => {}
    }
    Ok(())
}

/// BG-20, BG-21 or BG-27 (`ram:SpecifiedTradeAllowanceCharge`), or a ZUGFeRD 1.0
/// logistics charge (`ram:SpecifiedLogisticsServiceCharge`).
fn cii_allowance_charge(
    ac: &mut AllowanceChargeSoFar,
    path: &[&str],
    v: &str,
) -> Result<(), String> {
    match path {
        ["ChargeIndicator", "Indicator"] => ac.charge = Some(boolean(v)?),
        ["CalculationPercent"] => ac.percent = Some(decimal(v)?),
        ["BasisAmount"] => ac.base = Some(decimal(v)?),
        ["ActualAmount" | "AppliedAmount"] => ac.amount = decimal(v)?,
        ["ReasonCode"] => fill(&mut ac.reason_code, v),
        ["Reason" | "Description"] => fill(&mut ac.reason, v),
        ["CategoryTradeTax" | "AppliedTradeTax", "CategoryCode"] => {
            ac.category = Some(category(v)?);
        }
        [
            "CategoryTradeTax" | "AppliedTradeTax",
            "RateApplicablePercent",
        ] => {
            ac.rate = decimal(v)?;
        }
        _ => {}
    }
    Ok(())
}

/// BG-4 (`seller`) or BG-7 below `ram:SellerTradeParty` or `ram:BuyerTradeParty`.
fn cii_party(p: &mut Party, seller: bool, path: &[&str], v: &str, a: &Attrs) {
    match path {
        // `ram:ID` comes before `ram:GlobalID`, and wins.
        ["ID" | "GlobalID"] => fill(&mut p.identifier, v),
        ["Name"] => fill(&mut p.name, v),
        ["SpecifiedLegalOrganization", "ID"] => fill(&mut p.legal_registration, v),
        ["DefinedTradeContact", "PersonName" | "DepartmentName"] => {
            fill(&mut p.contact.name, v);
        }
        [
            "DefinedTradeContact",
            "TelephoneUniversalCommunication",
            "CompleteNumber",
        ] => fill(&mut p.contact.phone, v),
        [
            "DefinedTradeContact",
            "EmailURIUniversalCommunication",
            "URIID",
        ] => {
            fill(&mut p.contact.email, v);
        }
        ["PostalTradeAddress", field] => cii_address(&mut p.address, field, v),
        ["URIUniversalCommunication", "URIID"] if email_scheme(a) => {
            fill(&mut p.electronic_address, v);
        }
        ["SpecifiedTaxRegistration", "ID"] => match a.scheme() {
            Some("VA") => fill(&mut p.vat_id, v),
            Some("FC") if seller => fill(&mut p.tax_number, v),
            _ => {}
        },
        _ => {}
    }
}

/// BG-5, BG-8 or BG-15: a child of `ram:PostalTradeAddress`.
fn cii_address(address: &mut Address, field: &str, v: &str) {
    let term = match field {
        "PostcodeCode" => &mut address.post_code,
        "LineOne" => &mut address.line1,
        "LineTwo" => &mut address.line2,
        "CityName" => &mut address.city,
        "CountryID" => &mut address.country,
        "CountrySubDivisionName" => &mut address.subdivision,
        _ => return,
    };
    fill(term, v);
}
