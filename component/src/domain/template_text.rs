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

fn rtf(file: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(file);
    let chars: Vec<char> = text.chars().collect();
    let mut paras = Vec::new();
    let mut current = String::new();
    // Per group: whether its text is skipped.
    let mut skip_stack = vec![false];
    let mut i = 0;
    // Characters to skip after \uN (the ANSI fallback).
    let mut fallback = 0usize;
    while i < chars.len() {
        let c = chars[i];
        let skipping = *skip_stack.last().unwrap_or(&false);
        match c {
            '{' => {
                skip_stack.push(skipping);
                i += 1;
            }
            '}' => {
                skip_stack.pop();
                if skip_stack.is_empty() {
                    skip_stack.push(false);
                }
                i += 1;
            }
            '\\' => {
                i += 1;
                let Some(&next) = chars.get(i) else { break };
                if next.is_ascii_alphabetic() {
                    let start = i;
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
                    let param: Option<i64> =
                        chars[num_start..i].iter().collect::<String>().parse().ok();
                    if i < chars.len() && chars[i] == ' ' {
                        i += 1;
                    }
                    if RTF_SKIP.contains(&word.as_str()) {
                        if let Some(top) = skip_stack.last_mut() {
                            *top = true;
                        }
                        continue;
                    }
                    if skipping {
                        continue;
                    }
                    match word.as_str() {
                        "par" | "sect" | "page" => paras.push(std::mem::take(&mut current)),
                        "line" => current.push('\n'),
                        "tab" => current.push('\t'),
                        "u" => {
                            if let Some(n) = param {
                                let code = if n < 0 { n + 65536 } else { n } as u32;
                                current.extend(char::from_u32(code));
                                fallback = 1;
                            }
                        }
                        _ => {}
                    }
                } else if next == '*' {
                    if let Some(top) = skip_stack.last_mut() {
                        *top = true;
                    }
                    i += 1;
                } else if next == '\'' {
                    let hex: String = chars
                        .get(i + 1..i + 3)
                        .map(|s| s.iter().collect())
                        .unwrap_or_default();
                    i += 3;
                    if fallback > 0 {
                        fallback -= 1;
                    } else if !skipping && let Ok(b) = u8::from_str_radix(&hex, 16) {
                        current.push(cp1252(b));
                    }
                } else {
                    // \\ \{ \} and other escaped symbols.
                    if !skipping && matches!(next, '\\' | '{' | '}') {
                        current.push(next);
                    }
                    i += 1;
                }
            }
            '\r' | '\n' => i += 1,
            _ => {
                if fallback > 0 {
                    fallback -= 1;
                } else if !skipping {
                    current.push(c);
                }
                i += 1;
            }
        }
    }
    paras.push(current);
    paras
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
