//! File names that reach the outside (PDF downloads, e-mail attachments, postal letters):
//! what a client may name a file, and how a name made from placeholders is cleaned.

use crate::limits;

/// Why `name`, given for `what`, is not a plain file name: a path, a `..`, or a control
/// character (a line break would reach a mail header). `None` when it is one.
pub fn problem(what: &str, name: &str) -> Option<String> {
    let trimmed = name.trim();
    let path = trimmed.contains(['/', '\\']) || trimmed == "." || trimmed == "..";
    (path || name.chars().any(char::is_control)).then(|| {
        format!(
            "{what} \"{}\" must be a plain file name, without a path or control characters",
            name.escape_debug()
        )
    })
}

/// A file name without path separators, control characters or leading dots, at most
/// `limits::FILENAME_CHARS_MAX` characters.
pub fn sanitize(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_control() || "/\\:*?\"<>|".contains(c) {
                '_'
            } else {
                c
            }
        })
        .collect();
    let cleaned = cleaned.trim().trim_start_matches('.').to_owned();
    let cleaned: String = cleaned.chars().take(limits::FILENAME_CHARS_MAX).collect();
    if cleaned.is_empty() {
        "document".to_owned()
    } else {
        cleaned
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_control_characters_are_not_file_names() {
        assert!(problem("f", "a/b.pdf").is_some());
        assert!(problem("f", "..").is_some());
        assert!(problem("f", "x\r\nBcc: y").is_some());
        assert!(problem("f", "Rechnung 7.pdf").is_none());
        assert_eq!(sanitize("../a/b:c?.pdf"), "_a_b_c_.pdf");
        assert_eq!(sanitize("..."), "document");
        assert_eq!(sanitize(&"x".repeat(500)).len(), limits::FILENAME_CHARS_MAX);
    }
}
