//! Where the terms are in OASIS UBL 2.1 `Invoice` and `CreditNote`: the names of the
//! `cac` and `cbc` elements, the paths of the terms below the root, and its dates.

use time::Date;

use super::{
    AllowanceChargeSoFar, Attrs, Builder, LineSoFar, VatSoFar, append, boolean, category, decimal,
    email_scheme, fill, first, iso_date, note, shorten, trim,
};
use crate::model::{Address, Party};

/// The UBL `cac` names the model has terms in (sorted).
pub(super) const CAC: &[&str] = &[
    "AccountingCustomerParty",
    "AccountingSupplierParty",
    "Address",
    "AllowanceCharge",
    "BillingReference",
    "ClassifiedTaxCategory",
    "Contact",
    "ContractDocumentReference",
    "Country",
    "CreditNoteLine",
    "Delivery",
    "DeliveryLocation",
    "FinancialInstitutionBranch",
    "InvoiceDocumentReference",
    "InvoiceLine",
    "Item",
    "LegalMonetaryTotal",
    "OrderReference",
    "Party",
    "PartyIdentification",
    "PartyLegalEntity",
    "PartyTaxScheme",
    "PayeeFinancialAccount",
    "PayerFinancialAccount",
    "PaymentMandate",
    "PaymentMeans",
    "PaymentTerms",
    "PostalAddress",
    "Price",
    "SellersItemIdentification",
    "TaxCategory",
    "TaxScheme",
    "TaxSubtotal",
    "TaxTotal",
];

/// The UBL `cbc` names the model has terms in (sorted).
pub(super) const CBC: &[&str] = &[
    "ActualDeliveryDate",
    "AdditionalStreetName",
    "AllowanceChargeReason",
    "AllowanceChargeReasonCode",
    "AllowanceTotalAmount",
    "Amount",
    "BaseAmount",
    "BuyerReference",
    "ChargeIndicator",
    "ChargeTotalAmount",
    "CityName",
    "CompanyID",
    "CountrySubentity",
    "CreditNoteTypeCode",
    "CreditedQuantity",
    "CustomizationID",
    "Description",
    "DocumentCurrencyCode",
    "DueDate",
    "ElectronicMail",
    "EndpointID",
    "ID",
    "IdentificationCode",
    "InvoiceTypeCode",
    "InvoicedQuantity",
    "IssueDate",
    "LineExtensionAmount",
    "MultiplierFactorNumeric",
    "Name",
    "Note",
    "PayableAmount",
    "PayableRoundingAmount",
    "PaymentDueDate",
    "PaymentID",
    "PaymentMeansCode",
    "Percent",
    "PostalZone",
    "PrepaidAmount",
    "PriceAmount",
    "RegistrationName",
    "StreetName",
    "TaxAmount",
    "TaxExclusiveAmount",
    "TaxExemptionReason",
    "TaxExemptionReasonCode",
    "TaxInclusiveAmount",
    "TaxableAmount",
    "Telephone",
];

const SUPPLIER: &str = "AccountingSupplierParty";
const CUSTOMER: &str = "AccountingCustomerParty";

/// A UBL date, `YYYY-MM-DD`, with a time zone (`Z`, `+01:00`) ignored.
pub(super) fn ubl_date(v: &str) -> Result<Option<Date>, String> {
    let zone = v.get(10..).unwrap_or("");
    let zone_ok = zone.is_empty()
        || zone == "Z"
        || (zone.len() == 6
            && matches!(zone.as_bytes()[0], b'+' | b'-')
            && zone.as_bytes()[3] == b':'
            && zone
                .bytes()
                .enumerate()
                .all(|(i, b)| matches!(i, 0 | 3) || b.is_ascii_digit()));
    match v.get(..10).filter(|_| zone_ok).and_then(iso_date) {
        Some(d) => Ok(Some(d)),
        None => Err(format!("'{}' is no date (YYYY-MM-DD)", shorten(v))),
    }
}

impl Builder {
    pub(super) fn ubl_start(&mut self, path: &[&str]) {
        match path {
            ["InvoiceLine" | "CreditNoteLine"] => self.lines.push(LineSoFar::default()),
            ["InvoiceLine" | "CreditNoteLine", "AllowanceCharge"] => {
                if let Some(line) = self.lines.last_mut() {
                    line.pending = Some(AllowanceChargeSoFar::default());
                }
            }
            ["AllowanceCharge"] => self.allowance_charges.push(AllowanceChargeSoFar::default()),
            ["TaxTotal", "TaxSubtotal"] => self.vat.push(VatSoFar::default()),
            ["PaymentMeans"] => self.means = self.means.saturating_add(1),
            ["BillingReference", "InvoiceDocumentReference"] => self.preceding_starts(),
            ["Delivery", "DeliveryLocation", "Address"] => {
                self.deliver_to.get_or_insert_with(Address::default);
            }
            [SUPPLIER | CUSTOMER, "Party", "PartyTaxScheme"] => {
                self.tax_scheme = (String::new(), String::new());
            }
            _ => {}
        }
    }

    pub(super) fn ubl_end(&mut self, path: &[&str], v: &str, a: &Attrs) -> Result<(), String> {
        match path {
            ["CustomizationID"] => fill(&mut self.specification, v),
            ["ID"] => fill(&mut self.number, v),
            ["IssueDate"] => first(&mut self.issue_date, ubl_date(v)?),
            ["DueDate"] => first(&mut self.due_date, ubl_date(v)?),
            ["InvoiceTypeCode" | "CreditNoteTypeCode"] => fill(&mut self.type_code, v),
            ["Note"] => note(&mut self.notes, v),
            ["DocumentCurrencyCode"] => fill(&mut self.currency, v),
            ["BuyerReference"] => fill(&mut self.buyer_reference, v),
            ["OrderReference", "ID"] => fill(&mut self.order_reference, v),
            ["ContractDocumentReference", "ID"] => fill(&mut self.contract_reference, v),
            ["BillingReference", "InvoiceDocumentReference", field] if self.references == 1 => {
                if let Some((number, date)) = &mut self.preceding {
                    match *field {
                        "ID" => fill(number, v),
                        "IssueDate" => first(date, ubl_date(v)?),
                        _ => {}
                    }
                }
            }
            [SUPPLIER, "Party", rest @ ..] => ubl_party(
                &mut self.seller,
                Some(&mut self.debit.creditor_id),
                &mut self.tax_scheme,
                rest,
                v,
                a,
            ),
            [CUSTOMER, "Party", rest @ ..] => {
                ubl_party(&mut self.buyer, None, &mut self.tax_scheme, rest, v, a);
            }
            ["Delivery", "ActualDeliveryDate"] => first(&mut self.delivery_date, ubl_date(v)?),
            ["Delivery", "DeliveryLocation", "Address", rest @ ..] => {
                if let Some(address) = &mut self.deliver_to {
                    ubl_address(address, rest, v);
                }
            }
            ["PaymentMeans", rest @ ..] if self.means == 1 => self.ubl_payment(rest, v, a)?,
            ["PaymentTerms", "Note"] => append(&mut self.payment_terms, v),
            ["AllowanceCharge", rest @ ..] => {
                if let Some(ac) = self.allowance_charges.last_mut() {
                    ubl_allowance_charge(ac, rest, v)?;
                }
            }
            ["TaxTotal", "TaxAmount"] => self.vat_total(decimal(v)?, a.currency_id.as_deref()),
            ["TaxTotal", "TaxSubtotal", rest @ ..] => {
                if let Some(vat) = self.vat.last_mut() {
                    ubl_vat_breakdown(vat, rest, v)?;
                }
            }
            ["LegalMonetaryTotal", field] => self.ubl_total(field, v)?,
            ["InvoiceLine" | "CreditNoteLine", rest @ ..] => {
                if let Some(line) = self.lines.last_mut() {
                    ubl_line(line, rest, v, a)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// BG-22 (`cac:LegalMonetaryTotal`).
    fn ubl_total(&mut self, field: &str, v: &str) -> Result<(), String> {
        let t = &mut self.totals;
        match field {
            "LineExtensionAmount" => t.line_net = decimal(v)?,
            "TaxExclusiveAmount" => t.without_vat = decimal(v)?,
            "TaxInclusiveAmount" => t.with_vat = decimal(v)?,
            "AllowanceTotalAmount" => t.allowances = decimal(v)?,
            "ChargeTotalAmount" => t.charges = decimal(v)?,
            "PrepaidAmount" => t.paid = decimal(v)?,
            "PayableRoundingAmount" => t.rounding = decimal(v)?,
            "PayableAmount" => self.payable(decimal(v)?),
            _ => {}
        }
        Ok(())
    }

    /// BG-16 (the first `cac:PaymentMeans`), and BT-9 of a credit note.
    fn ubl_payment(&mut self, path: &[&str], v: &str, a: &Attrs) -> Result<(), String> {
        match path {
            ["PaymentMeansCode"] => {
                fill(&mut self.payment.means_code, v);
                fill(
                    &mut self.payment.means_text,
                    a.name.as_deref().map_or("", trim),
                );
            }
            ["PaymentDueDate"] => first(&mut self.due_date, ubl_date(v)?),
            ["PaymentID"] => fill(&mut self.payment.remittance, v),
            ["PayeeFinancialAccount", "ID"] => fill(&mut self.transfer.iban, v),
            ["PayeeFinancialAccount", "Name"] => fill(&mut self.transfer.account_name, v),
            ["PayeeFinancialAccount", "FinancialInstitutionBranch", "ID"] => {
                fill(&mut self.transfer.bic, v);
            }
            ["PaymentMandate", "ID"] => fill(&mut self.debit.mandate, v),
            ["PaymentMandate", "PayerFinancialAccount", "ID"] => {
                fill(&mut self.debit.debited_iban, v);
            }
            _ => {}
        }
        Ok(())
    }
}

/// BG-25 below `cac:InvoiceLine` or `cac:CreditNoteLine`.
fn ubl_line(line: &mut LineSoFar, path: &[&str], v: &str, a: &Attrs) -> Result<(), String> {
    match path {
        ["ID"] => fill(&mut line.id, v),
        ["Note"] => append(&mut line.note, v),
        ["InvoicedQuantity" | "CreditedQuantity"] => {
            line.quantity = decimal(v)?;
            fill(&mut line.unit_code, a.unit_code.as_deref().map_or("", trim));
        }
        ["LineExtensionAmount"] => line.net_amount = decimal(v)?,
        ["AllowanceCharge"] => line.settle()?,
        ["AllowanceCharge", rest @ ..] => {
            if let Some(ac) = &mut line.pending {
                ubl_allowance_charge(ac, rest, v)?;
            }
        }
        ["Item", "Description"] => fill(&mut line.description, v),
        ["Item", "Name"] => fill(&mut line.name, v),
        ["Item", "SellersItemIdentification", "ID"] => fill(&mut line.seller_id, v),
        ["Item", "ClassifiedTaxCategory", "ID"] => line.category = Some(category(v)?),
        ["Item", "ClassifiedTaxCategory", "Percent"] => line.rate = decimal(v)?,
        ["Price", "PriceAmount"] => line.net_price = decimal(v)?,
        _ => {}
    }
    Ok(())
}

/// BG-23 below `cac:TaxTotal/cac:TaxSubtotal`.
fn ubl_vat_breakdown(vat: &mut VatSoFar, path: &[&str], v: &str) -> Result<(), String> {
    match path {
        ["TaxableAmount"] => vat.taxable = decimal(v)?,
        ["TaxAmount"] => vat.tax = decimal(v)?,
        ["TaxCategory", "ID"] => vat.category = Some(category(v)?),
        ["TaxCategory", "Percent"] => vat.rate = decimal(v)?,
        ["TaxCategory", "TaxExemptionReasonCode"] => fill(&mut vat.exemption_code, v),
        ["TaxCategory", "TaxExemptionReason"] => fill(&mut vat.exemption_reason, v),
        _ => {}
    }
    Ok(())
}

/// BG-20, BG-21 or BG-27 below `cac:AllowanceCharge`.
fn ubl_allowance_charge(
    ac: &mut AllowanceChargeSoFar,
    path: &[&str],
    v: &str,
) -> Result<(), String> {
    match path {
        ["ChargeIndicator"] => ac.charge = Some(boolean(v)?),
        ["AllowanceChargeReasonCode"] => fill(&mut ac.reason_code, v),
        ["AllowanceChargeReason"] => fill(&mut ac.reason, v),
        ["MultiplierFactorNumeric"] => ac.percent = Some(decimal(v)?),
        ["Amount"] => ac.amount = decimal(v)?,
        ["BaseAmount"] => ac.base = Some(decimal(v)?),
        ["TaxCategory", "ID"] => ac.category = Some(category(v)?),
        ["TaxCategory", "Percent"] => ac.rate = decimal(v)?,
        _ => {}
    }
    Ok(())
}

/// BG-4 (with `creditor_id`, BT-90 as the seller's `SEPA` identifier) or BG-7, below
/// `cac:Party`. `tax_scheme` gathers a `cac:PartyTaxScheme`: `VAT` is BT-31 / BT-48, any
/// other scheme the seller's BT-32.
fn ubl_party(
    p: &mut Party,
    creditor_id: Option<&mut String>,
    tax_scheme: &mut (String, String),
    path: &[&str],
    v: &str,
    a: &Attrs,
) {
    match path {
        ["EndpointID"] if email_scheme(a) => fill(&mut p.electronic_address, v),
        ["PartyIdentification", "ID"] => match (a.scheme(), creditor_id) {
            (Some("SEPA"), Some(creditor_id)) => fill(creditor_id, v),
            (Some("SEPA"), None) => {}
            _ => fill(&mut p.identifier, v),
        },
        ["PostalAddress", rest @ ..] => ubl_address(&mut p.address, rest, v),
        ["PartyTaxScheme", "CompanyID"] => fill(&mut tax_scheme.0, v),
        ["PartyTaxScheme", "TaxScheme", "ID"] => fill(&mut tax_scheme.1, v),
        ["PartyTaxScheme"] => {
            let (id, scheme) = std::mem::take(tax_scheme);
            if scheme == "VAT" {
                fill(&mut p.vat_id, &id);
            } else if creditor_id.is_some() {
                fill(&mut p.tax_number, &id);
            }
        }
        ["PartyLegalEntity", "RegistrationName"] => fill(&mut p.name, v),
        ["PartyLegalEntity", "CompanyID"] => fill(&mut p.legal_registration, v),
        ["Contact", "Name"] => fill(&mut p.contact.name, v),
        ["Contact", "Telephone"] => fill(&mut p.contact.phone, v),
        ["Contact", "ElectronicMail"] => fill(&mut p.contact.email, v),
        _ => {}
    }
}

/// BG-5, BG-8 or BG-15 below `cac:PostalAddress` or `cac:Address`.
fn ubl_address(address: &mut Address, path: &[&str], v: &str) {
    let term = match path {
        ["StreetName"] => &mut address.line1,
        ["AdditionalStreetName"] => &mut address.line2,
        ["CityName"] => &mut address.city,
        ["PostalZone"] => &mut address.post_code,
        ["CountrySubentity"] => &mut address.subdivision,
        ["Country", "IdentificationCode"] => &mut address.country,
        _ => return,
    };
    fill(term, v);
}
