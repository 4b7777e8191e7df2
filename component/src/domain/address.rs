//! The postal address block of a party (a client, a contact): company, person, street,
//! zip and city, country, each on a line of its own.

use super::schema::Record;

/// The postal address block: company, person, street, zip and city, country.
pub fn block(r: &Record) -> String {
    let person = [
        r.text("salutation"),
        r.text("first_name"),
        r.text("last_name"),
    ]
    .iter()
    .map(|s| s.trim())
    .filter(|s| !s.is_empty())
    .collect::<Vec<_>>()
    .join(" ");
    let city = [r.text("zip").trim(), r.text("city").trim()]
        .iter()
        .filter(|s| !s.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join(" ");
    [
        r.text("name").trim().to_owned(),
        person,
        r.text("street").trim().to_owned(),
        city,
        r.text("country_code").to_owned(),
    ]
    .into_iter()
    .filter(|l| !l.is_empty())
    .collect::<Vec<_>>()
    .join("\n")
}
