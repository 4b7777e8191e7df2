//! The EN 16931 semantic model of a completed document: what every syntax (CII, UBL)
//! writes, named after the standard's business terms (BT-n) and groups (BG-n). Plain
//! data, built once by the component (`domain::einvoice::build`) or by `read`, and checked
//! by `rules`; empty strings are absent terms.

use rust_decimal::Decimal;

use time::Date;

/// The e-invoice formats the service issues.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Profile {
    /// XRechnung 3.0 in UN/CEFACT CII.
    XrechnungCii,
    /// XRechnung 3.0 in OASIS UBL 2.1.
    XrechnungUbl,
    /// Factur-X / ZUGFeRD, profile EN 16931 (CII).
    FacturX,
}

impl Profile {
    pub const ALL: [Profile; 3] = [
        Profile::XrechnungCii,
        Profile::XrechnungUbl,
        Profile::FacturX,
    ];

    /// The name clients use (`?profile=`, `einvoice_profile`).
    pub fn name(self) -> &'static str {
        match self {
            Profile::XrechnungCii => "xrechnung-cii",
            Profile::XrechnungUbl => "xrechnung-ubl",
            Profile::FacturX => "factur-x",
        }
    }

    /// The profile `name` names, in any case.
    pub fn parse(name: &str) -> Option<Profile> {
        Profile::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(name.trim()))
    }

    pub fn is_xrechnung(self) -> bool {
        matches!(self, Profile::XrechnungCii | Profile::XrechnungUbl)
    }

    /// BT-24, the specification identifier.
    pub fn specification(self) -> &'static str {
        match self {
            Profile::XrechnungCii | Profile::XrechnungUbl => {
                "urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0"
            }
            Profile::FacturX => "urn:cen.eu:en16931:2017",
        }
    }
}

/// UNTDID 5305 VAT category codes (BT-95, BT-102, BT-118, BT-151).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    /// Standard rate.
    S,
    /// Zero rated goods.
    Z,
    /// Exempt from tax.
    E,
    /// VAT reverse charge.
    AE,
    /// Intra-community supply (VAT exempt for EEA intra-community supply).
    K,
    /// Free export item, tax not charged.
    G,
    /// Services outside scope of tax.
    O,
    /// Canary Islands general indirect tax (read from incoming e-invoices only).
    L,
    /// Tax for production, services and importation in Ceuta and Melilla (read only).
    M,
    /// Transferred (VAT), Italy (read only).
    B,
}

impl Category {
    pub const ALL: [Category; 10] = [
        Category::S,
        Category::Z,
        Category::E,
        Category::AE,
        Category::K,
        Category::G,
        Category::O,
        Category::L,
        Category::M,
        Category::B,
    ];

    pub fn code(self) -> &'static str {
        match self {
            Category::S => "S",
            Category::Z => "Z",
            Category::E => "E",
            Category::AE => "AE",
            Category::K => "K",
            Category::G => "G",
            Category::O => "O",
            Category::L => "L",
            Category::M => "M",
            Category::B => "B",
        }
    }

    pub fn parse(code: &str) -> Option<Category> {
        Category::ALL.into_iter().find(|c| c.code() == code)
    }

    /// Whether a line of the category may carry a rate above 0: `S`; `L` and `M` (BR-AF-05,
    /// BR-AG-05); `B` (an Italian rate, split payment).
    pub fn may_carry_rate(self) -> bool {
        matches!(self, Category::S | Category::L | Category::M | Category::B)
    }

    /// Whether the category needs an exemption reason (BT-120 or its code BT-121).
    pub fn needs_reason(self) -> bool {
        matches!(
            self,
            Category::E | Category::AE | Category::K | Category::G | Category::O
        )
    }

    /// The VATEX code (BT-121) written beside the reason text, where one fits every case.
    pub fn exemption_code(self) -> Option<&'static str> {
        match self {
            Category::AE => Some("VATEX-EU-AE"),
            Category::K => Some("VATEX-EU-IC"),
            Category::G => Some("VATEX-EU-G"),
            Category::O => Some("VATEX-EU-O"),
            Category::S | Category::Z | Category::E | Category::L | Category::M | Category::B => {
                None
            }
        }
    }
}

/// A postal address (BG-5, BG-8).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Address {
    /// BT-35 / BT-50.
    pub line1: String,
    /// BT-36 / BT-51.
    pub line2: String,
    /// BT-37 / BT-52.
    pub city: String,
    /// BT-38 / BT-53.
    pub post_code: String,
    /// BT-39 / BT-54.
    pub subdivision: String,
    /// BT-40 / BT-55, ISO 3166-1 alpha-2.
    pub country: String,
}

/// A contact (BG-6, BG-9).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Contact {
    /// BT-41 / BT-56.
    pub name: String,
    /// BT-42 / BT-57.
    pub phone: String,
    /// BT-43 / BT-58.
    pub email: String,
}

impl Contact {
    pub fn is_empty(&self) -> bool {
        self.name.is_empty() && self.phone.is_empty() && self.email.is_empty()
    }
}

/// The seller (BG-4) or the buyer (BG-7).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Party {
    /// BT-27 / BT-44.
    pub name: String,
    /// BT-29 / BT-46: the buyer's customer number at the seller.
    pub identifier: String,
    /// BT-30 / BT-47: a legal registration identifier (commercial register number).
    pub legal_registration: String,
    /// BT-31 / BT-48.
    pub vat_id: String,
    /// BT-32 (seller only).
    pub tax_number: String,
    /// BT-34 / BT-49, an e-mail address (scheme `EM`).
    pub electronic_address: String,
    pub address: Address,
    pub contact: Contact,
}

/// A SEPA credit transfer account (BG-17).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CreditTransfer {
    /// BT-84.
    pub iban: String,
    /// BT-85.
    pub account_name: String,
    /// BT-86.
    pub bic: String,
}

/// A direct debit (BG-19 with BT-90).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DirectDebit {
    /// BT-89.
    pub mandate: String,
    /// BT-90.
    pub creditor_id: String,
    /// BT-91.
    pub debited_iban: String,
}

/// Payment instructions (BG-16).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Payment {
    /// BT-81, UNTDID 4461.
    pub means_code: String,
    /// BT-82.
    pub means_text: String,
    /// BT-83.
    pub remittance: String,
    /// BG-17: present for credit transfers (58, 30).
    pub credit_transfer: Option<CreditTransfer>,
    /// BG-19: present for direct debits (59).
    pub direct_debit: Option<DirectDebit>,
}

/// A document level allowance (BG-20) or charge (BG-21).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowanceCharge {
    /// BT-92 / BT-99.
    pub amount: Decimal,
    /// BT-93 / BT-100: the base of a percentage, with BT-94 / BT-101.
    pub base: Option<Decimal>,
    pub percent: Option<Decimal>,
    /// BT-95 / BT-102.
    pub category: Category,
    /// BT-96 / BT-103.
    pub rate: Decimal,
    /// BT-97 / BT-104.
    pub reason: String,
    /// BT-98 / BT-105 (UNTDID 5189 for allowances, 7161 for charges).
    pub reason_code: String,
}

/// Document totals (BG-22).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Totals {
    /// BT-106: Σ BT-131.
    pub line_net: Decimal,
    /// BT-107: Σ BT-92.
    pub allowances: Decimal,
    /// BT-108: Σ BT-99.
    pub charges: Decimal,
    /// BT-109 = BT-106 − BT-107 + BT-108.
    pub without_vat: Decimal,
    /// BT-110: Σ BT-117.
    pub vat: Decimal,
    /// BT-112 = BT-109 + BT-110.
    pub with_vat: Decimal,
    /// BT-113.
    pub paid: Decimal,
    /// BT-114.
    pub rounding: Decimal,
    /// BT-115 = BT-112 − BT-113 + BT-114.
    pub payable: Decimal,
}

/// One line of the VAT breakdown (BG-23).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VatBreakdown {
    /// BT-116.
    pub taxable: Decimal,
    /// BT-117.
    pub tax: Decimal,
    /// BT-118.
    pub category: Category,
    /// BT-119.
    pub rate: Decimal,
    /// BT-120.
    pub exemption_reason: String,
    /// BT-121.
    pub exemption_code: String,
}

/// An invoice line (BG-25).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// BT-126.
    pub id: String,
    /// BT-127.
    pub note: String,
    /// BT-129.
    pub quantity: Decimal,
    /// BT-130, UN/ECE Recommendation 20.
    pub unit_code: String,
    /// BT-131.
    pub net_amount: Decimal,
    /// BT-136 with BT-137 (base) and BT-138 (percent) when given as a percentage.
    pub allowance: Option<LineAllowance>,
    /// BT-146.
    pub net_price: Decimal,
    /// BT-151.
    pub category: Category,
    /// BT-152.
    pub rate: Decimal,
    /// BT-153.
    pub name: String,
    /// BT-154.
    pub description: String,
    /// BT-155: the seller's article number.
    pub seller_id: String,
}

/// A line level allowance (BG-27).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineAllowance {
    /// BT-136.
    pub amount: Decimal,
    /// BT-137, BT-138.
    pub base: Option<Decimal>,
    pub percent: Option<Decimal>,
    /// BT-139.
    pub reason: String,
    /// BT-140 (UNTDID 5189).
    pub reason_code: String,
}

/// The invoice (or credit note) as EN 16931 sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invoice {
    /// BT-1.
    pub number: String,
    /// BT-2.
    pub issue_date: Date,
    /// BT-3, UNTDID 1001: 380 commercial invoice, 381 credit note.
    pub type_code: String,
    /// BT-5, ISO 4217.
    pub currency: String,
    /// BT-9.
    pub due_date: Option<Date>,
    /// BT-10.
    pub buyer_reference: String,
    /// BT-12.
    pub contract_reference: String,
    /// BT-13.
    pub order_reference: String,
    /// BT-25 and BT-26: the invoice a credit note corrects.
    pub preceding: Option<(String, Option<Date>)>,
    /// BT-22, in order.
    pub notes: Vec<String>,
    /// BT-20.
    pub payment_terms: String,
    /// BT-72.
    pub delivery_date: Option<Date>,
    /// BG-15 (deliver to address): where an intra-community supply went.
    pub deliver_to: Option<Address>,
    pub seller: Party,
    pub buyer: Party,
    pub payment: Payment,
    pub allowances: Vec<AllowanceCharge>,
    pub charges: Vec<AllowanceCharge>,
    pub totals: Totals,
    pub vat: Vec<VatBreakdown>,
    pub lines: Vec<Line>,
}
