//! Declarative field lists for the record-shaped resources (templates, properties, clients,
//! settings, taxes, country taxes): one `Field` per attribute with its kind, whether it is
//! mandatory and who may write it. Parsing and formatting of each kind's text lives here,
//! so every resource validates the same way.

use std::collections::BTreeMap;
use std::str::FromStr;

use rust_decimal::Decimal;

use super::codes;
use super::date::{Date, DateTime, digits_into, push_digits, write_ascii};
use crate::limits;

/// A stored value.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    Text(String),
    Int(i64),
    Dec(Decimal),
    Date(Date),
    /// Unix seconds.
    DateTime(i64),
    Bool(bool),
}

impl Scalar {
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Scalar::Int(i) => Some(*i),
            _ => None,
        }
    }

    pub fn as_text(&self) -> Option<&str> {
        match self {
            Scalar::Text(t) => Some(t),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Scalar::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_dec(&self) -> Option<Decimal> {
        match self {
            Scalar::Dec(d) => Some(*d),
            Scalar::Int(i) => Some(Decimal::from(*i)),
            _ => None,
        }
    }

    /// The wire text: amounts without trailing zeros, booleans as 1/0.
    pub fn to_wire(&self) -> String {
        match self {
            Scalar::Text(t) => t.clone(),
            other => other.as_value().to_string(),
        }
    }

    /// The value borrowed.
    pub fn as_value(&self) -> Value<'_> {
        match self {
            Scalar::Text(t) => Value::Text(t),
            Scalar::Int(i) => Value::Int(*i),
            Scalar::Dec(d) => Value::Dec(*d),
            Scalar::Date(d) => Value::Date(*d),
            Scalar::DateTime(t) => Value::DateTime(*t),
            Scalar::Bool(b) => Value::Bool(*b),
        }
    }

    /// Total order used by `order_by`: numbers by value, text case-insensitively.
    pub fn compare(&self, other: &Scalar) -> std::cmp::Ordering {
        use Scalar::*;
        match (self, other) {
            // ASCII texts (dates, numbers, most names) without lowercased copies: sorting
            // thousands of groups compares them tens of thousands of times.
            (Text(a), Text(b)) if a.is_ascii() && b.is_ascii() => a
                .bytes()
                .map(|c| c.to_ascii_lowercase())
                .cmp(b.bytes().map(|c| c.to_ascii_lowercase())),
            (Text(a), Text(b)) => a.to_lowercase().cmp(&b.to_lowercase()),
            (Int(a), Int(b)) => a.cmp(b),
            (Date(a), Date(b)) => a.cmp(b),
            (DateTime(a), DateTime(b)) => a.cmp(b),
            (Bool(a), Bool(b)) => a.cmp(b),
            (a, b) => match (a.as_dec(), b.as_dec()) {
                (Some(x), Some(y)) => x.cmp(&y),
                _ => a.to_wire().cmp(&b.to_wire()),
            },
        }
    }
}

/// A value as read from its owner, without copying text: what a response writes. Its
/// `Display` is the wire text.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    Text(&'a str),
    Int(i64),
    Dec(Decimal),
    Date(Date),
    /// Unix seconds.
    DateTime(i64),
    Bool(bool),
}

impl Value<'_> {
    pub fn to_scalar(self) -> Scalar {
        match self {
            Value::Text(t) => Scalar::Text(t.to_owned()),
            Value::Int(i) => Scalar::Int(i),
            Value::Dec(d) => Scalar::Dec(d),
            Value::Date(d) => Scalar::Date(d),
            Value::DateTime(t) => Scalar::DateTime(t),
            Value::Bool(b) => Scalar::Bool(b),
        }
    }
}

impl Value<'_> {
    /// Appends the wire text. Only text can hold characters XML or JSON escape; every
    /// other value is written in ASCII digits, signs and separators.
    pub fn push_to(&self, out: &mut Vec<u8>) {
        match self {
            Value::Text(t) => out.extend_from_slice(t.as_bytes()),
            Value::Int(i) => push_int(out, *i),
            Value::Dec(d) => push_decimal(out, *d),
            Value::Date(d) => d.push_to(out),
            Value::DateTime(t) => DateTime(*t).push_to(out),
            Value::Bool(b) => out.push(if *b { b'1' } else { b'0' }),
        }
    }
}

/// Appends a decimal without trailing zeros, as `normalize()` then `Display` write it.
fn push_decimal(out: &mut Vec<u8>, d: Decimal) {
    // A mantissa is below 2^96: at most two 64-bit halves of 19 digits, so no 128-bit
    // division (a call on wasm32) per digit.
    const TEN_19: u64 = 10_000_000_000_000_000_000;
    let (high, low, scale) = match u64::try_from(d.mantissa().unsigned_abs()) {
        // Amounts, nearly always: trailing zeros dropped in 64 bits, no 128-bit division.
        Ok(mut m) if m < TEN_19 => {
            let mut scale = d.scale();
            while scale > 0 && m % 10 == 0 {
                m /= 10;
                scale -= 1;
            }
            (0, m, scale)
        }
        _ => {
            let d = d.normalize();
            let m = d.mantissa().unsigned_abs();
            let ten_19 = u128::from(TEN_19);
            ((m / ten_19) as u64, (m % ten_19) as u64, d.scale())
        }
    };
    let mut digits = [0u8; 40];
    let mut at = digits_into(&mut digits, 40, low, if high > 0 { 19 } else { 1 });
    if high > 0 {
        at = digits_into(&mut digits, at, high, 1);
    }
    let digits = &digits[at..];
    if d.is_sign_negative() && (high, low) != (0, 0) {
        out.push(b'-');
    }
    let scale = scale as usize;
    if scale == 0 {
        out.extend_from_slice(digits);
    } else if scale >= digits.len() {
        out.extend_from_slice(b"0.");
        out.resize(out.len() + scale - digits.len(), b'0');
        out.extend_from_slice(digits);
    } else {
        let (whole, fraction) = digits.split_at(digits.len() - scale);
        out.extend_from_slice(whole);
        out.push(b'.');
        out.extend_from_slice(fraction);
    }
}

fn push_int(out: &mut Vec<u8>, i: i64) {
    if i < 0 {
        out.push(b'-');
    }
    push_digits(out, i.unsigned_abs(), 1);
}

impl std::fmt::Display for Value<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Text(t) => f.write_str(t),
            other => {
                let mut s = Vec::with_capacity(40);
                other.push_to(&mut s);
                write_ascii(f, &s)
            }
        }
    }
}

/// What a field holds and how its text is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Free text up to `limits::TEXT_CHARS_MAX` characters.
    Text,
    Integer,
    /// A decimal number (amounts, rates).
    Decimal,
    Date,
    DateTime,
    Bool,
    /// One of the listed words; input is matched case-insensitively and stored as listed.
    Enum(&'static [&'static str]),
    /// ISO 3166-1 alpha-2; empty allowed.
    Country,
    /// ISO 4217; empty allowed.
    Currency,
    /// A base64 file; kept outside the record, byte-exact (see `store::keys::file`).
    File,
    /// An e-mail address (`codes::is_email`); empty allowed.
    Email,
    /// An IBAN with valid check digits (`codes::is_iban`, spaces allowed); empty allowed.
    Iban,
    /// A BIC of 8 or 11 characters (`codes::is_bic`); empty allowed.
    Bic,
    /// A unit code of UN/ECE Recommendations 20 and 21, as the official code list of EN 16931
    /// has them (`faktura_einvoice::codes::is_unit_code`); empty allowed.
    UnitCode,
    /// Comma-separated words of the list, any case, stored as listed; empty allowed.
    Words(&'static [&'static str]),
    /// A tag's name: one line without commas, at most `limits::TAG_NAME_CHARS_MAX`
    /// characters.
    Tag,
    /// E-mail recipients: `to`, `cc` and `bcc` children, each repeated at will and holding
    /// one address or several separated by commas (JSON: a string or an array of strings).
    /// Read by the handler that takes them, like a file.
    Recipients,
}

/// Who may set a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Set on create and update.
    Write,
    /// Only computed by the service; ignored in request bodies.
    Read,
}

#[derive(Debug, Clone, Copy)]
pub struct Field {
    pub name: &'static str,
    pub kind: Kind,
    pub access: Access,
    /// Must be present (and not empty) on create.
    pub mandatory: bool,
    /// Left out of list responses (large files).
    pub single_only: bool,
    /// A number that must be greater than 0 (an amount paid, an exchange rate).
    pub positive: bool,
    /// What the field means, for the API description (`http::openapi`): one or two
    /// sentences, its defaults and rules; every field has one.
    pub doc: &'static str,
}

impl Field {
    pub const fn new(name: &'static str, kind: Kind) -> Field {
        Field {
            name,
            kind,
            access: Access::Write,
            mandatory: false,
            single_only: false,
            positive: false,
            doc: "",
        }
    }

    pub const fn positive(mut self) -> Field {
        self.positive = true;
        self
    }

    pub const fn doc(mut self, doc: &'static str) -> Field {
        self.doc = doc;
        self
    }

    pub const fn read_only(mut self) -> Field {
        self.access = Access::Read;
        self
    }

    pub const fn mandatory(mut self) -> Field {
        self.mandatory = true;
        self
    }

    pub const fn single_only(mut self) -> Field {
        self.single_only = true;
        self
    }

    /// Parses the text of a request element. `Ok(None)` means "empty": the value is cleared.
    pub fn parse(&self, text: &str) -> Result<Option<Scalar>, String> {
        let name = self.name;
        let trimmed = text.trim();
        if trimmed.is_empty() && !matches!(self.kind, Kind::Text) {
            return Ok(None);
        }
        let value = match self.kind {
            Kind::Text => match parse_text(name, text)? {
                Some(value) => value,
                None => return Ok(None),
            },
            Kind::Integer => Scalar::Int(
                parse_integer(trimmed).ok_or_else(|| refused(name, "an integer", trimmed))?,
            ),
            Kind::Decimal => Scalar::Dec(
                parse_decimal(trimmed).ok_or_else(|| refused(name, "a decimal number", trimmed))?,
            ),
            Kind::Date => Scalar::Date(
                Date::parse(trimmed)
                    .ok_or_else(|| refused(name, "a date as YYYY-MM-DD", trimmed))?,
            ),
            Kind::DateTime => return Err(format!("{name} is read-only")),
            Kind::Bool => {
                Scalar::Bool(parse_bool(trimmed).ok_or_else(|| refused(name, "1 or 0", trimmed))?)
            }
            Kind::Enum(words) => parse_enum(name, words, trimmed)?,
            Kind::Country => parse_upper_code(
                name,
                trimmed,
                codes::is_country,
                "an ISO 3166 alpha-2 country code",
            )?,
            Kind::Currency => parse_upper_code(
                name,
                trimmed,
                codes::is_currency,
                "an ISO 4217 currency code",
            )?,
            Kind::File => return Err(format!("{name} is a file and is read separately")),
            Kind::Recipients => {
                return Err(format!(
                    "{name} holds to, cc and bcc elements and is read separately"
                ));
            }
            Kind::Email => parse_code(name, trimmed, codes::is_email, "an e-mail address")?,
            Kind::Iban => parse_code(
                name,
                trimmed,
                codes::is_iban,
                "an IBAN with valid check digits",
            )?,
            Kind::Bic => parse_code(name, trimmed, codes::is_bic, "a BIC of 8 or 11 characters")?,
            Kind::UnitCode => parse_code(
                name,
                trimmed,
                faktura_einvoice::codes::is_unit_code,
                "a UN/ECE Recommendation 20 code like C62 or HUR",
            )?,
            Kind::Words(words) => {
                parse_words(name, words, trimmed)?;
                Scalar::Text(trimmed.to_owned())
            }
            Kind::Tag => parse_tag(name, text)?,
        };
        if self.positive && value.as_dec().is_some_and(|v| v <= Decimal::ZERO) {
            return Err(format!("{name} must be greater than 0, got {trimmed}"));
        }
        Ok(Some(value))
    }
}

/// Free text as sent, untrimmed; `Ok(None)` when it is empty.
fn parse_text(name: &str, text: &str) -> Result<Option<Scalar>, String> {
    if text.chars().count() > limits::TEXT_CHARS_MAX {
        return Err(format!(
            "{name} is longer than {} characters",
            limits::TEXT_CHARS_MAX
        ));
    }
    if text.is_empty() {
        return Ok(None);
    }
    Ok(Some(Scalar::Text(text.to_owned())))
}

/// One of `words`, in any case, kept as `words` spells it.
fn parse_enum(name: &str, words: &[&str], trimmed: &str) -> Result<Scalar, String> {
    let word = words
        .iter()
        .find(|w| w.eq_ignore_ascii_case(trimmed))
        .ok_or_else(|| refused(name, &format!("one of {}", words.join(", ")), trimmed))?;
    Ok(Scalar::Text((*word).to_owned()))
}

/// A country or currency code in any case, kept in capitals if `known` knows it.
fn parse_upper_code(
    name: &str,
    trimmed: &str,
    known: fn(&str) -> bool,
    what: &str,
) -> Result<Scalar, String> {
    let code = trimmed.to_ascii_uppercase();
    if !known(&code) {
        return Err(refused(name, what, trimmed));
    }
    Ok(Scalar::Text(code))
}

/// An address or code kept as sent (trimmed) if `valid` accepts it; the refusal quotes it
/// whole.
fn parse_code(
    name: &str,
    trimmed: &str,
    valid: fn(&str) -> bool,
    what: &str,
) -> Result<Scalar, String> {
    if !valid(trimmed) {
        return Err(format!("{name} must be {what}, got \"{trimmed}\""));
    }
    Ok(Scalar::Text(trimmed.to_owned()))
}

/// A tag name as sent: one line, no commas, not too long.
fn parse_tag(name: &str, text: &str) -> Result<Scalar, String> {
    if text.contains([',', '\n', '\r']) || text.chars().count() > limits::TAG_NAME_CHARS_MAX {
        return Err(format!(
            "{name} must be one line of at most {} characters without commas",
            limits::TAG_NAME_CHARS_MAX
        ));
    }
    Ok(Scalar::Text(text.to_owned()))
}

/// The message refusing a value that is not `what` the field must be; the value shortened.
fn refused(name: &str, what: &str, trimmed: &str) -> String {
    format!("{name} must be {what}, got {}", shorten(trimmed))
}

/// The words of a comma-separated list (empty entries skipped), each as `words` spells it.
pub fn parse_words(
    name: &str,
    words: &'static [&'static str],
    list: &str,
) -> Result<Vec<&'static str>, String> {
    list.split(',')
        .map(str::trim)
        .filter(|w| !w.is_empty())
        .map(|word| {
            words
                .iter()
                .find(|t| t.eq_ignore_ascii_case(word))
                .copied()
                .ok_or_else(|| {
                    format!(
                        "{name} must list values of {}, got \"{word}\"",
                        words.join(", ")
                    )
                })
        })
        .collect()
}

/// Integers as plain decimal digits with an optional sign; nothing that overflows i64.
pub fn parse_integer(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if !(1..=18).contains(&digits.len()) || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Decimals as digits with one optional point; no exponents, at most 15 integer digits.
pub fn parse_decimal(s: &str) -> Option<Decimal> {
    let unsigned = s.strip_prefix(['+', '-']).unwrap_or(s);
    let (int, frac) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    let digits_ok = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
    if (int.is_empty() && frac.is_empty())
        || !digits_ok(int)
        || !digits_ok(frac)
        || int.trim_start_matches('0').len() > 15
        || frac.len() > 10
    {
        return None;
    }
    Decimal::from_str(s).ok()
}

pub fn parse_bool(s: &str) -> Option<bool> {
    match s {
        "1" => Some(true),
        "0" => Some(false),
        _ if s.eq_ignore_ascii_case("true") => Some(true),
        _ if s.eq_ignore_ascii_case("false") => Some(false),
        _ => None,
    }
}

/// Quotes a client's value in a message without echoing kilobytes back.
fn shorten(s: &str) -> String {
    let mut out: String = s.chars().take(40).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    format!("\"{out}\"")
}

/// A record of a schema-described resource: field name to value; absent means empty.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Record {
    pub values: BTreeMap<String, Scalar>,
}

impl Record {
    pub fn get(&self, name: &str) -> Option<&Scalar> {
        self.values.get(name)
    }

    pub fn set(&mut self, name: &str, value: Option<Scalar>) {
        match value {
            Some(v) => {
                self.values.insert(name.to_owned(), v);
            }
            None => {
                self.values.remove(name);
            }
        }
    }

    pub fn text(&self, name: &str) -> &str {
        self.get(name).and_then(Scalar::as_text).unwrap_or("")
    }

    pub fn int(&self, name: &str) -> Option<i64> {
        self.get(name).and_then(Scalar::as_int)
    }

    pub fn bool(&self, name: &str) -> bool {
        self.get(name).and_then(Scalar::as_bool).unwrap_or(false)
    }

    pub fn id(&self) -> u64 {
        self.int("id").unwrap_or(0) as u64
    }
}

/// The fields a request sets, in the order of the schema, already parsed.
/// `None` clears a field. Files are carried as their decoded bytes.
#[derive(Debug, Default, Clone)]
pub struct Changes {
    pub values: Vec<(&'static str, Option<Scalar>)>,
    pub files: Vec<(&'static str, Vec<u8>)>,
    /// Fields that were sent but could not be read, with the problem; reported together
    /// with every other problem of the request.
    pub invalid: Vec<(&'static str, String)>,
}

impl Changes {
    pub fn get(&self, name: &str) -> Option<&Option<Scalar>> {
        self.values.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// The problems of fields that could not be read.
    pub fn errors(&self) -> Vec<String> {
        self.invalid.iter().map(|(_, e)| e.clone()).collect()
    }

    pub fn has(&self, name: &str) -> bool {
        self.get(name).is_some() || self.files.iter().any(|(n, _)| *n == name)
    }

    /// Applies the changes to a record.
    pub fn apply(&self, record: &mut Record) {
        for (name, value) in &self.values {
            record.set(name, value.clone());
        }
    }
}

/// Checks that every mandatory field of a create is given and not empty.
pub fn check_mandatory(fields: &[Field], changes: &Changes, errors: &mut Vec<String>) {
    for f in fields
        .iter()
        .filter(|f| f.mandatory && !changes.invalid.iter().any(|(n, _)| *n == f.name))
    {
        let present = match f.kind {
            Kind::File => changes.files.iter().any(|(n, _)| *n == f.name),
            _ => matches!(changes.get(f.name), Some(Some(_))),
        };
        if !present {
            errors.push(format!("{} is mandatory", f.name));
        }
    }
}

/// Checks that an update does not empty a mandatory field.
pub fn check_not_cleared(fields: &[Field], changes: &Changes, errors: &mut Vec<String>) {
    for f in fields.iter().filter(|f| f.mandatory) {
        if let Some(None) = changes.get(f.name) {
            errors.push(format!("{} must not be empty", f.name));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use proptest::prelude::{Just, prop_oneof};

    proptest::proptest! {
        /// Texts sort case-insensitively: ASCII ones without lowercased copies, in the same
        /// order as the copies give (which every other text still takes).
        #[test]
        fn texts_compare_as_their_lowercase(a in "[ -~]{0,12}", b in "[ -~ÄäÖöß]{0,12}") {
            let order = |x: &str, y: &str| {
                Scalar::Text(x.into()).compare(&Scalar::Text(y.into()))
            };
            proptest::prop_assert_eq!(order(&a, &b), a.to_lowercase().cmp(&b.to_lowercase()));
            proptest::prop_assert_eq!(order(&b, &a), b.to_lowercase().cmp(&a.to_lowercase()));
            let upper = a.to_uppercase();
            proptest::prop_assert_eq!(order(&a, &upper), std::cmp::Ordering::Equal);
        }

        /// Integers are written as Rust writes them.
        #[test]
        fn integers_are_written_in_decimal(i in proptest::num::i64::ANY) {
            let mut out = Vec::new();
            Value::Int(i).push_to(&mut out);
            proptest::prop_assert_eq!(String::from_utf8(out).unwrap(), i.to_string());
        }

        /// Decimals are written as rust_decimal writes them normalized.
        #[test]
        fn decimals_are_written_normalized(
            lo in proptest::num::u32::ANY,
            mid in proptest::num::u32::ANY,
            hi in prop_oneof![Just(0u32), Just(1u32), proptest::num::u32::ANY],
            negative in proptest::bool::ANY,
            scale in 0u32..=28,
        ) {
            let d = Decimal::from_parts(lo, mid, hi, negative, scale);
            let mut out = Vec::new();
            Value::Dec(d).push_to(&mut out);
            proptest::prop_assert_eq!(String::from_utf8(out).unwrap(), d.normalize().to_string());
        }
    }

    #[test]
    fn decimal_edge_cases_are_written_as_rust_decimal_writes_them() {
        for d in [
            Decimal::ZERO,
            Decimal::from_parts(0, 0, 0, true, 2),
            Decimal::new(-5, 3),
            Decimal::new(1200, 2),
            Decimal::MAX,
            Decimal::MIN,
            Decimal::from_parts(1, 0, 0, false, 28),
        ] {
            let mut out = Vec::new();
            Value::Dec(d).push_to(&mut out);
            assert_eq!(
                String::from_utf8(out).unwrap(),
                d.normalize().to_string(),
                "{d:?}"
            );
        }
    }

    fn check(kind: Kind, input: &str, expected: Result<Option<&str>, &str>) {
        let got = Field::new("f", kind)
            .parse(input)
            .map(|v| v.map(|s| s.to_wire()));
        match expected {
            Ok(v) => assert_eq!(got.as_ref().ok(), Some(&v.map(String::from)), "{input}"),
            Err(fragment) => {
                let e = got.unwrap_err();
                assert!(e.contains(fragment), "{input}: {e}");
            }
        }
    }

    #[test]
    fn kinds_parse_their_text() {
        check(Kind::Integer, " 42 ", Ok(Some("42")));
        check(Kind::Integer, "", Ok(None));
        check(Kind::Integer, "1e400", Err("must be an integer"));
        check(Kind::Integer, "99999999999999999999999", Err("integer"));
        check(Kind::Decimal, "4615.50", Ok(Some("4615.5")));
        check(Kind::Decimal, "-0.5", Ok(Some("-0.5")));
        check(Kind::Decimal, "1e400", Err("decimal"));
        check(Kind::Decimal, "99999999999999999999999", Err("decimal"));
        check(Kind::Decimal, "NaN", Err("decimal"));
        check(Kind::Date, "2026-02-30", Err("YYYY-MM-DD"));
        check(Kind::Bool, "True", Ok(Some("1")));
        check(Kind::Bool, "false", Ok(Some("0")));
        check(Kind::Bool, "yes", Err("1 or 0"));
        check(
            Kind::Enum(&["INVOICE", "OFFER"]),
            "offer",
            Ok(Some("OFFER")),
        );
        check(
            Kind::Enum(&["INVOICE", "OFFER"]),
            "BILL",
            Err("one of INVOICE, OFFER"),
        );
        check(Kind::Country, "de", Ok(Some("DE")));
        check(Kind::Country, "XX", Err("ISO 3166"));
        check(Kind::Currency, "eur", Ok(Some("EUR")));
        check(Kind::UnitCode, " HUR ", Ok(Some("HUR")));
        check(Kind::UnitCode, "XBX", Ok(Some("XBX")));
        // A code of the shape, but no unit of the lists e-invoices take (BR-CL-23).
        check(
            Kind::UnitCode,
            "AB1",
            Err("UN/ECE Recommendation 20 code like C62 or HUR"),
        );
        check(Kind::UnitCode, "c62", Err("UN/ECE Recommendation 20"));
        check(Kind::Text, "", Ok(None));
        check(Kind::Text, " a ", Ok(Some(" a ")));
    }
}
