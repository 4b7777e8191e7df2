//! Placeholders like `[Invoice.invoice_number]` in texts (intro, note, template text,
//! e-mail subject and body), resolved from a list of values. Unknown placeholders stay as
//! written, so a typo shows up in the document instead of vanishing.

/// The values of a document's placeholders, made when a text first names one: most texts
/// name none, and making them formats every date and amount of the document.
pub struct Values<'a> {
    make: Box<dyn Fn() -> Vec<(String, String)> + 'a>,
    made: std::cell::OnceCell<Vec<(String, String)>>,
}

impl<'a> Values<'a> {
    pub fn new(make: impl Fn() -> Vec<(String, String)> + 'a) -> Values<'a> {
        Values {
            make: Box::new(make),
            made: std::cell::OnceCell::new(),
        }
    }

    /// `text` with its placeholders resolved (`resolve`).
    pub fn resolve(&self, text: &str) -> String {
        if !text.contains('[') {
            return text.to_owned();
        }
        resolve(text, self.made.get_or_init(|| (self.make)()))
    }

    /// Whether the values were made.
    #[cfg(test)]
    pub fn made(&self) -> bool {
        self.made.get().is_some()
    }
}

/// Replaces every `[Name.field]` whose key is listed.
pub fn resolve(text: &str, values: &[(String, String)]) -> String {
    if !text.contains('[') {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('[') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        match after.find(']') {
            Some(end) if after[..end].contains('.') && !after[..end].contains('[') => {
                let key = &after[..end];
                match values.iter().find(|(k, _)| k == key) {
                    Some((_, v)) => out.push_str(v),
                    None => {
                        out.push('[');
                        out.push_str(key);
                        out.push(']');
                    }
                }
                rest = &after[end + 1..];
            }
            _ => {
                out.push('[');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_keys_resolve_and_others_stay() {
        let values = vec![
            ("Invoice.invoice_number".to_string(), "INV-7".to_string()),
            ("Client.name".to_string(), "Müller".to_string()),
        ];
        let check = |input: &str, expected: &str| assert_eq!(resolve(input, &values), expected);
        check(
            "No. [Invoice.invoice_number] for [Client.name]",
            "No. INV-7 for Müller",
        );
        check("[Invoice.unknown] [x] [", "[Invoice.unknown] [x] [");
        check("[[Client.name]]", "[Müller]");
        check("plain", "plain");
    }

    #[test]
    fn values_are_made_once_and_only_for_a_text_that_names_one() {
        let makes = std::cell::Cell::new(0);
        let values = Values::new(|| {
            makes.set(makes.get() + 1);
            vec![("Client.name".to_owned(), "Müller".to_owned())]
        });
        assert_eq!(values.resolve("Vielen Dank."), "Vielen Dank.");
        assert!(!values.made());
        assert_eq!(values.resolve("Hallo [Client.name]"), "Hallo Müller");
        assert_eq!(values.resolve("[Client.name]!"), "Müller!");
        assert_eq!(makes.get(), 1);
    }
}
