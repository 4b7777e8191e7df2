//! The EPC QR code ("GiroCode", EPC069-12, version 002) of a SEPA credit transfer: the
//! text a banking app reads (the seller's BIC, name and IBAN, the amount in EUR, the
//! document number as the remittance information) and its QR matrix. Owns when a document
//! carries one; how it is drawn is the reader's affair (the portal's SVG, the PDF's
//! squares).

use rust_decimal::Decimal;

use super::documents::Document;
use super::money::round_commercial_2;
use super::schema::Record;

mod qr;

/// Longest beneficiary name the EPC code takes, in characters.
const NAME_CHARS_MAX: usize = 70;
/// Longest unstructured remittance information, in characters.
const REMITTANCE_CHARS_MAX: usize = 140;

/// A credit transfer to the seller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transfer {
    pub bic: String,
    pub name: String,
    pub iban: String,
    /// In EUR, two decimals.
    pub amount: Decimal,
    /// The unstructured remittance information: the document number.
    pub reference: String,
}

/// The transfer that pays `amount` of `doc` to the seller's account, when the document
/// carries a GiroCode: its kind is paid to the seller, it is in EUR, the settings name an
/// IBAN and keep `girocode` on, and the amount is one a code can carry.
pub fn transfer(doc: &Document, settings: &Record, amount: Decimal) -> Option<Transfer> {
    let iban: String = settings
        .text("company_bank_iban")
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let amount = round_commercial_2(amount);
    let carried = Decimal::new(1, 2)..=Decimal::new(99_999_999_999, 2);
    if !doc.kind.spec().payable
        || !settings.bool("girocode")
        || iban.is_empty()
        || doc.currency_code != "EUR"
        || !carried.contains(&amount)
    {
        return None;
    }
    let name = match settings.text("company_bank_account_owner").trim() {
        "" => settings.text("company_name").trim(),
        owner => owner,
    };
    Some(Transfer {
        bic: settings.text("company_bank_bic").trim().to_owned(),
        name: name.chars().take(NAME_CHARS_MAX).collect(),
        iban,
        amount,
        reference: doc
            .formatted_number
            .chars()
            .take(REMITTANCE_CHARS_MAX)
            .collect(),
    })
}

impl Transfer {
    /// The code's text, line by line as EPC069-12 orders them: service tag, version,
    /// character set (1: UTF-8), identification, BIC, name, IBAN, amount, purpose, the
    /// structured reference (none), the unstructured one.
    pub fn payload(&self) -> String {
        [
            "BCD",
            "002",
            "1",
            "SCT",
            &self.bic,
            &self.name,
            &self.iban,
            &format!("EUR{:.2}", self.amount),
            "",
            "",
            &self.reference,
        ]
        .join("\n")
    }

    /// A short fingerprint of the code's text: it changes whenever the code does (an
    /// image's address carries it, so that a browser may keep the image as long as it
    /// likes).
    pub fn version(&self) -> String {
        use sha2::{Digest, Sha256};
        hex::encode(&Sha256::digest(self.payload().as_bytes())[..8])
    }

    /// The QR code of `payload`, error correction M as the EPC asks: rows of modules, true
    /// where dark, without the quiet zone around it.
    pub fn matrix(&self) -> Vec<Vec<bool>> {
        // Level M exactly, as EPC069-12 asks (no boost to a higher level that would fit).
        qr::matrix(&self.payload())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::documents::DocKind;
    use crate::domain::schema::Scalar;

    fn settings(pairs: &[(&str, Scalar)]) -> Record {
        let mut r = Record::default();
        r.set("girocode", Some(Scalar::Bool(true)));
        for (k, v) in pairs {
            r.set(k, Some(v.clone()));
        }
        r
    }

    fn invoice(currency: &str) -> Document {
        let mut doc = crate::domain::documents::model_sample(DocKind::Invoice, 2);
        doc.currency_code = currency.into();
        doc.formatted_number = "INV-00042".into();
        doc
    }

    #[test]
    fn the_payload_has_the_lines_epc069_12_asks_for() {
        let s = settings(&[
            ("company_name", Scalar::Text("Muster GmbH".into())),
            (
                "company_bank_iban",
                Scalar::Text("DE02 1203 0000 0000 2020 51".into()),
            ),
            ("company_bank_bic", Scalar::Text("BYLADEM1001".into())),
        ]);
        let t = transfer(&invoice("EUR"), &s, Decimal::new(119_005, 3)).unwrap();
        assert_eq!(
            t.payload(),
            "BCD\n002\n1\nSCT\nBYLADEM1001\nMuster GmbH\nDE02120300000000202051\nEUR119.01\n\n\nINV-00042"
        );
        let m = t.matrix();
        assert!(m.len() >= 21 && m.iter().all(|row| row.len() == m.len()));
    }

    #[test]
    fn only_payable_documents_in_eur_with_an_iban_carry_a_code() {
        let with_iban = settings(&[(
            "company_bank_iban",
            Scalar::Text("DE02120300000000202051".into()),
        )]);
        let amount = Decimal::ONE_HUNDRED;
        assert!(transfer(&invoice("EUR"), &with_iban, amount).is_some());
        assert!(transfer(&invoice("CHF"), &with_iban, amount).is_none());
        assert!(transfer(&invoice("EUR"), &settings(&[]), amount).is_none());
        assert!(transfer(&invoice("EUR"), &with_iban, Decimal::ZERO).is_none());
        let mut off = with_iban.clone();
        off.set("girocode", Some(Scalar::Bool(false)));
        assert!(transfer(&invoice("EUR"), &off, amount).is_none());
        let mut credit_note = invoice("EUR");
        credit_note.kind = DocKind::CreditNote;
        assert!(transfer(&credit_note, &with_iban, amount).is_none());
        // A reminder asks for its invoice's claim, paid by the invoice's own reference.
        let mut reminder = invoice("EUR");
        reminder.kind = DocKind::Reminder;
        assert!(transfer(&reminder, &with_iban, amount).is_none());
    }
}
