//! EN 16931 e-invoices, apart from anything the service keeps: the semantic model
//! (`model`), the defaults of the terms nobody gave (`derive`), the rules the service
//! decides itself (`rules`), the writers of UN/CEFACT CII (`cii`: XRechnung and Factur-X)
//! and of OASIS UBL 2.1 (`ubl`: XRechnung), the reader of both back into the model
//! (`read`), the bounded reader of the XML inside a hybrid PDF (`pdf`), and the code lists
//! of EN 16931 (`code_lists`, generated from the official rules) with what a code must be
//! in (`codes`). Every bound on reading is in `limits`.
//!
//! It knows bytes and the model only: never a store, HTTP, WIT, the clock or a file. The
//! component maps its records to the model and back (`domain::einvoice`), and runs the
//! readers inside its sandbox on what anyone uploads. The XML of an e-invoice is business
//! content, not a wire format, which is why it is written here and not by the component's
//! `codec`.

#![forbid(unsafe_code)]

pub mod cii;
pub mod code_lists;
pub mod codes;
pub mod derive;
pub mod limits;
pub mod model;
pub mod pdf;
pub mod read;
pub mod rules;
pub mod ubl;

pub use model::Profile;
pub use rules::Violation;

/// The name of the XML inside a Factur-X hybrid PDF.
pub const FACTUR_X_FILE: &str = "factur-x.xml";

/// The XML of `inv` in `profile`.
pub fn write(inv: &model::Invoice, profile: Profile) -> Vec<u8> {
    match profile {
        Profile::XrechnungCii | Profile::FacturX => cii::write(inv, profile),
        Profile::XrechnungUbl => ubl::write(inv, profile),
    }
}
