//! The shapes of the UN/ECE codes e-invoices name that the service checks itself; the code
//! lists themselves are the official rules' (BR-CL), which the tests run.

/// Whether `code` has the shape of a UN/ECE Recommendation 20 (or 21) unit code.
pub fn is_unit_code(code: &str) -> bool {
    (2..=3).contains(&code.len())
        && code
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(code: &str, expected: bool) {
        assert_eq!(is_unit_code(code), expected, "{code}");
    }

    #[test]
    fn unit_codes_are_two_or_three_capitals_or_digits() {
        check("C62", true);
        check("H87", true);
        check("LS", true);
        check("c62", false);
        check("C", false);
        check("C620", false);
        check("", false);
        check("Ü1", false);
    }
}
