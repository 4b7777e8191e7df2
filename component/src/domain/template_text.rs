//! The text of a template file: the paragraphs of a docx (word/document.xml) or an rtf
//! document, and a best effort for binary doc files. Formatting is dropped; placeholders
//! stay as written and are resolved later.

use std::io::Read as _;

use crate::limits;

/// Paragraphs of the template's text; empty when nothing can be read.
pub fn paragraphs(format: &str, file: &[u8]) -> Vec<String> {
    let paras = match format {
        "docx" => docx(file).unwrap_or_default(),
        "rtf" => rtf(file),
        "doc" => doc(file),
        _ => Vec::new(),
    };
    paras
        .into_iter()
        .map(|p| p.trim().to_owned())
        .filter(|p| !p.is_empty())
        .take(limits::TEMPLATE_PARAGRAPHS_MAX)
        .collect()
}

fn docx(file: &[u8]) -> Option<Vec<String>> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(file)).ok()?;
    let entry = archive.by_name("word/document.xml").ok()?;
    let mut xml = String::new();
    entry
        .take(limits::DOCX_PART_BYTES_MAX)
        .read_to_string(&mut xml)
        .ok()?;
    let mut reader = quick_xml::Reader::from_str(&xml);
    let mut paras = Vec::new();
    let mut current = String::new();
    let mut in_text = false;
    loop {
        match reader.read_event().ok()? {
            quick_xml::events::Event::Start(e) if e.name().as_ref() == "w:t" => in_text = true,
            quick_xml::events::Event::End(e) if e.name().as_ref() == "w:t" => in_text = false,
            quick_xml::events::Event::Empty(e) if e.name().as_ref() == "w:tab" => {
                current.push('\t')
            }
            quick_xml::events::Event::Empty(e) if e.name().as_ref() == "w:br" => current.push('\n'),
            quick_xml::events::Event::End(e) if e.name().as_ref() == "w:p" => {
                paras.push(std::mem::take(&mut current));
            }
            quick_xml::events::Event::Text(t) if in_text => current.push_str(&t.xml10_content()),
            quick_xml::events::Event::GeneralRef(r) if in_text => {
                let c = match &*r.xml10_content() {
                    "amp" => Some('&'),
                    "lt" => Some('<'),
                    "gt" => Some('>'),
                    "quot" => Some('"'),
                    "apos" => Some('\''),
                    _ => r.resolve_char_ref().ok().flatten(),
                };
                current.extend(c);
            }
            quick_xml::events::Event::Eof => break,
            _ => {}
        }
    }
    Some(paras)
}

/// Destinations whose content is not body text.
const RTF_SKIP: &[&str] = &[
    "fonttbl",
    "colortbl",
    "stylesheet",
    "info",
    "pict",
    "header",
    "footer",
    "headerl",
    "headerr",
    "footerl",
    "footerr",
    "listtable",
    "listoverridetable",
    "themedata",
    "colorschememapping",
    "latentstyles",
    "datastore",
    "xmlnstbl",
    "rsidtbl",
    "generator",
    "fldinst",
    "object",
    "shp",
];

/// The paragraphs of an rtf document's body text: control words that break lines or
/// paragraphs are kept as such, text in destinations that are not body text is skipped.
fn rtf(file: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(file);
    let chars: Vec<char> = text.chars().collect();
    let mut body = RtfBody {
        paras: Vec::new(),
        current: String::new(),
        skip_stack: vec![false],
        fallback: 0,
    };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let skipping = *body.skip_stack.last().unwrap_or(&false);
        match c {
            '{' => {
                body.skip_stack.push(skipping);
                i += 1;
            }
            '}' => {
                body.skip_stack.pop();
                if body.skip_stack.is_empty() {
                    body.skip_stack.push(false);
                }
                i += 1;
            }
            '\\' => {
                i += 1;
                let Some(&next) = chars.get(i) else { break };
                if next.is_ascii_alphabetic() {
                    let (word, param, end) = control_word(&chars, i);
                    i = end;
                    body.control_word(&word, param, skipping);
                } else if next == '*' {
                    body.skip_group();
                    i += 1;
                } else if next == '\'' {
                    let hex: String = chars
                        .get(i + 1..i + 3)
                        .map(|s| s.iter().collect())
                        .unwrap_or_default();
                    i += 3;
                    body.hex_char(&hex, skipping);
                } else {
                    // \\ \{ \} and other escaped symbols.
                    if !skipping && matches!(next, '\\' | '{' | '}') {
                        body.current.push(next);
                    }
                    i += 1;
                }
            }
            '\r' | '\n' => i += 1,
            _ => {
                body.text_char(c, skipping);
                i += 1;
            }
        }
    }
    body.paras.push(body.current);
    body.paras
}

/// The control word whose letters start at `start`: the word, its numeric parameter and
/// where the text after it begins (past the one space that may end it).
fn control_word(chars: &[char], start: usize) -> (String, Option<i64>, usize) {
    let mut i = start;
    while i < chars.len() && chars[i].is_ascii_alphabetic() {
        i += 1;
    }
    let word: String = chars[start..i].iter().collect();
    let num_start = i;
    if i < chars.len() && (chars[i] == '-' || chars[i].is_ascii_digit()) {
        i += 1;
        while i < chars.len() && chars[i].is_ascii_digit() {
            i += 1;
        }
    }
    let param: Option<i64> = chars[num_start..i].iter().collect::<String>().parse().ok();
    if i < chars.len() && chars[i] == ' ' {
        i += 1;
    }
    (word, param, i)
}

/// The body text of an rtf document as far as it is read.
struct RtfBody {
    paras: Vec<String>,
    /// The paragraph being read.
    current: String,
    /// Per group: whether its text is skipped.
    skip_stack: Vec<bool>,
    /// Characters to skip after \uN (the ANSI fallback).
    fallback: usize,
}

impl RtfBody {
    /// Skips the text of the group being read (a destination that is not body text).
    fn skip_group(&mut self) {
        if let Some(top) = self.skip_stack.last_mut() {
            *top = true;
        }
    }

    /// Takes a control word: a destination to skip, a break, a tab or a Unicode character.
    fn control_word(&mut self, word: &str, param: Option<i64>, skipping: bool) {
        if RTF_SKIP.contains(&word) {
            self.skip_group();
            return;
        }
        if skipping {
            return;
        }
        match word {
            "par" | "sect" | "page" => self.paras.push(std::mem::take(&mut self.current)),
            "line" => self.current.push('\n'),
            "tab" => self.current.push('\t'),
            "u" => {
                if let Some(n) = param {
                    let code = if n < 0 { n + 65536 } else { n } as u32;
                    self.current.extend(char::from_u32(code));
                    self.fallback = 1;
                }
            }
            _ => {}
        }
    }

    /// Takes a Windows-1252 character written as \'hh, unless it is a fallback to skip.
    fn hex_char(&mut self, hex: &str, skipping: bool) {
        if self.fallback > 0 {
            self.fallback -= 1;
        } else if !skipping && let Ok(b) = u8::from_str_radix(hex, 16) {
            self.current.push(cp1252(b));
        }
    }

    /// Takes a plain character of text, unless it is a fallback to skip.
    fn text_char(&mut self, c: char, skipping: bool) {
        if self.fallback > 0 {
            self.fallback -= 1;
        } else if !skipping {
            self.current.push(c);
        }
    }
}

/// Windows-1252 to Unicode for the bytes RTF writes as \'hh.
fn cp1252(b: u8) -> char {
    const HIGH: [char; 32] = [
        '€', '\u{81}', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\u{8d}', 'Ž',
        '\u{8f}', '\u{90}', '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '\u{9d}',
        'ž', 'Ÿ',
    ];
    match b {
        0x80..=0x9f => HIGH[(b - 0x80) as usize],
        _ => b as char,
    }
}

/// Binary Word files: runs of readable UTF-16LE text, a best effort.
fn doc(file: &[u8]) -> Vec<String> {
    let mut paras = Vec::new();
    let mut current = String::new();
    for pair in file.chunks_exact(2) {
        let unit = u16::from_le_bytes([pair[0], pair[1]]);
        match char::from_u32(unit as u32) {
            Some('\r') => {
                if current.chars().count() >= 3 {
                    paras.push(std::mem::take(&mut current));
                }
                current.clear();
            }
            Some(c)
                if !c.is_control()
                    && (c.is_alphanumeric()
                        || c.is_ascii_punctuation()
                        || c == ' '
                        || "€äöüÄÖÜß".contains(c)) =>
            {
                current.push(c)
            }
            _ => {
                if current.chars().count() >= 8 {
                    paras.push(std::mem::take(&mut current));
                }
                current.clear();
            }
        }
    }
    paras
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    #[test]
    fn rtf_paragraphs_with_escapes_and_unicode() {
        let rtf_text = br"{\rtf1\ansi{\fonttbl{\f0 Arial;}}{\*\generator Word;}\f0 Rechnung [Invoice.invoice_number]\par M\'fcller \u1057?\u1095?\'ebt\par{\info{\title x}}Ende\par}";
        assert_eq!(
            paragraphs("rtf", rtf_text),
            vec!["Rechnung [Invoice.invoice_number]", "Müller Счët", "Ende"]
        );
    }

    #[test]
    fn docx_paragraphs_from_document_xml() {
        let mut buf = std::io::Cursor::new(Vec::new());
        {
            let mut zip = zip::ZipWriter::new(&mut buf);
            zip.start_file(
                "word/document.xml",
                zip::write::SimpleFileOptions::default(),
            )
            .unwrap();
            zip.write_all(
                br#"<?xml version="1.0"?><w:document xmlns:w="x"><w:body><w:p><w:r><w:t>Dear [Client.name],</w:t></w:r></w:p><w:p><w:r><w:t xml:space="preserve">Invoice </w:t></w:r><w:r><w:t>[Invoice.invoice_number] &amp; more</w:t></w:r></w:p></w:body></w:document>"#,
            )
            .unwrap();
            zip.finish().unwrap();
        }
        assert_eq!(
            paragraphs("docx", &buf.into_inner()),
            vec![
                "Dear [Client.name],",
                "Invoice [Invoice.invoice_number] & more"
            ]
        );
    }

    #[test]
    fn garbage_gives_no_text() {
        assert!(paragraphs("docx", b"PK\x03\x04garbage").is_empty());
        assert!(paragraphs("doc", &[0u8; 64]).is_empty());
    }
}
