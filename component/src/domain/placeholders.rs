//! Placeholders like `[Invoice.invoice_number]` in texts (intro, note, template text,
//! e-mail subject and body), resolved from a list of values. Unknown placeholders stay as
//! written, so a typo shows up in the document instead of vanishing.

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
}
