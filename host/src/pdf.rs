//! The `pdf` interface: lays a layout-neutral document out on A4 pages with pdf-writer.
//!
//! Standard Helvetica in WinAnsi encoding (characters outside it print as `?`); long tables
//! break across pages with the header repeated, and every page carries its number. The
//! output depends only on the document: no dates or random ids, so equal documents render
//! to equal bytes.

use pdf_writer::{Content, Finish, Name, Pdf, Rect, Ref, Str, TextStr};

use crate::State;
use crate::bindings::faktura::service::pdf::{self as wit, Document};

const PAGE_W: f32 = 595.0;
const PAGE_H: f32 = 842.0;
const MARGIN: f32 = 56.0;
const BODY_SIZE: f32 = 10.0;
const LINE: f32 = 14.0;

impl wit::Host for State {
    async fn render(&mut self, doc: Document) -> wasmtime::Result<Result<Vec<u8>, String>> {
        Ok(render(&doc))
    }
}

/// Characters to WinAnsi (cp1252) bytes; what it cannot show becomes `?`.
fn win_ansi(s: &str) -> Vec<u8> {
    s.chars()
        .map(|c| match c {
            '\u{20}'..='\u{7e}' | '\u{a0}'..='\u{ff}' => c as u8,
            '€' => 0x80,
            '‚' => 0x82,
            '„' => 0x84,
            '…' => 0x85,
            '‘' => 0x91,
            '’' => 0x92,
            '“' => 0x93,
            '”' => 0x94,
            '–' => 0x96,
            '—' => 0x97,
            'Š' => 0x8a,
            'š' => 0x9a,
            'Ž' => 0x8e,
            'ž' => 0x9e,
            'Œ' => 0x8c,
            'œ' => 0x9c,
            'Ÿ' => 0x9f,
            _ => b'?',
        })
        .collect()
}

/// Width of text in Helvetica, estimated from an average glyph width.
fn width(s: &str, size: f32) -> f32 {
    s.chars().count() as f32 * size * 0.5
}

/// Splits a paragraph into lines that fit `max` points.
fn wrap(text: &str, size: f32, max: f32) -> Vec<String> {
    let mut lines = Vec::new();
    for raw in text.lines() {
        let mut line = String::new();
        for word in raw.split_whitespace() {
            let candidate = if line.is_empty() {
                word.to_owned()
            } else {
                format!("{line} {word}")
            };
            if width(&candidate, size) > max && !line.is_empty() {
                lines.push(std::mem::take(&mut line));
                line = word.to_owned();
            } else {
                line = candidate;
            }
        }
        lines.push(line);
    }
    lines
}

/// Content streams of the pages, written top to bottom.
struct Pages {
    done: Vec<Content>,
    current: Content,
    y: f32,
}

impl Pages {
    fn new() -> Pages {
        Pages {
            done: Vec::new(),
            current: Content::new(),
            y: PAGE_H - MARGIN,
        }
    }

    fn text(&mut self, x: f32, font: &[u8], size: f32, s: &str) {
        self.current
            .begin_text()
            .set_font(Name(font), size)
            .next_line(x, self.y)
            .show(Str(&win_ansi(s)))
            .end_text();
    }

    fn text_right(&mut self, right: f32, font: &[u8], size: f32, s: &str) {
        self.text(right - width(s, size), font, size, s);
    }

    /// Moves down; starts a new page when the bottom margin is reached.
    fn advance(&mut self, dy: f32) -> bool {
        self.y -= dy;
        if self.y < MARGIN + LINE * 2.0 {
            self.done
                .push(std::mem::replace(&mut self.current, Content::new()));
            self.y = PAGE_H - MARGIN;
            return true;
        }
        false
    }

    fn rule(&mut self) {
        self.current
            .move_to(MARGIN, self.y + 4.0)
            .line_to(PAGE_W - MARGIN, self.y + 4.0)
            .stroke();
    }
}

pub fn render(doc: &Document) -> Result<Vec<u8>, String> {
    let usable = PAGE_W - 2.0 * MARGIN;
    let mut p = Pages::new();
    if !doc.print {
        // The background band that the print version leaves out.
        p.current
            .set_fill_gray(0.93)
            .rect(0.0, PAGE_H - 24.0, PAGE_W, 24.0)
            .fill_nonzero()
            .set_fill_gray(0.0);
    }
    for line in &doc.sender {
        p.text(MARGIN, b"F1", 8.0, line);
        p.advance(10.0);
    }
    p.advance(6.0);
    for line in &doc.recipient {
        p.text(MARGIN, b"F1", BODY_SIZE, line);
        p.advance(LINE);
    }
    p.advance(LINE);
    p.text(MARGIN, b"F2", 16.0, &doc.title);
    p.advance(LINE * 1.6);
    for row in &doc.meta {
        p.text(MARGIN, b"F1", BODY_SIZE, &row.label);
        p.text(MARGIN + 140.0, b"F1", BODY_SIZE, &row.value);
        p.advance(LINE);
    }
    p.advance(LINE / 2.0);
    for para in &doc.preamble {
        for line in wrap(para, BODY_SIZE, usable) {
            p.text(MARGIN, b"F1", BODY_SIZE, &line);
            p.advance(LINE);
        }
        p.advance(LINE / 2.0);
    }
    let columns = doc.items.header.len().max(1);
    let col_w = usable / columns as f32;
    let draw_row = |p: &mut Pages, cells: &[String], font: &[u8]| {
        for (i, cell) in cells.iter().enumerate().take(columns) {
            let left = MARGIN + col_w * i as f32;
            if doc.items.right_aligned.contains(&(i as u32)) {
                p.text_right(left + col_w - 4.0, font, BODY_SIZE, cell);
            } else {
                p.text(left, font, BODY_SIZE, cell);
            }
        }
    };
    if !doc.items.header.is_empty() {
        draw_row(&mut p, &doc.items.header, b"F2");
        p.advance(LINE);
        p.rule();
        for row in &doc.items.rows {
            if row.len() != doc.items.header.len() {
                return Err(format!(
                    "a table row has {} cells, the header {}",
                    row.len(),
                    doc.items.header.len()
                ));
            }
            draw_row(&mut p, row, b"F1");
            if p.advance(LINE) {
                draw_row(&mut p, &doc.items.header, b"F2");
                p.advance(LINE);
                p.rule();
            }
        }
        p.advance(LINE / 2.0);
    }
    for row in &doc.totals {
        p.text_right(PAGE_W - MARGIN - 120.0, b"F1", BODY_SIZE, &row.label);
        p.text_right(PAGE_W - MARGIN, b"F2", BODY_SIZE, &row.value);
        p.advance(LINE);
    }
    p.advance(LINE / 2.0);
    for para in &doc.closing {
        for line in wrap(para, BODY_SIZE, usable) {
            p.text(MARGIN, b"F1", BODY_SIZE, &line);
            p.advance(LINE);
        }
        p.advance(LINE / 2.0);
    }
    let mut contents = p.done;
    contents.push(p.current);
    let count = contents.len();

    let mut pdf = Pdf::new();
    let catalog = Ref::new(1);
    let tree = Ref::new(2);
    let regular = Ref::new(3);
    let bold = Ref::new(4);
    let info = Ref::new(5);
    let first_page = 6;
    pdf.catalog(catalog).pages(tree);
    pdf.document_info(info).title(TextStr(&doc.title));
    let page_ids: Vec<Ref> = (0..count)
        .map(|i| Ref::new(first_page + 2 * i as i32))
        .collect();
    pdf.pages(tree)
        .kids(page_ids.iter().copied())
        .count(count as i32);
    pdf.type1_font(regular)
        .base_font(Name(b"Helvetica"))
        .encoding_predefined(Name(b"WinAnsiEncoding"));
    pdf.type1_font(bold)
        .base_font(Name(b"Helvetica-Bold"))
        .encoding_predefined(Name(b"WinAnsiEncoding"));
    for (i, mut content) in contents.into_iter().enumerate() {
        let footer = format!("{}   Page {} of {}", doc.footer, i + 1, count);
        content
            .begin_text()
            .set_font(Name(b"F1"), 8.0)
            .next_line(MARGIN, MARGIN / 2.0)
            .show(Str(&win_ansi(footer.trim_start())))
            .end_text();
        let page_id = page_ids[i];
        let content_id = Ref::new(page_id.get() + 1);
        let mut page = pdf.page(page_id);
        page.media_box(Rect::new(0.0, 0.0, PAGE_W, PAGE_H));
        page.parent(tree);
        page.contents(content_id);
        let mut resources = page.resources();
        resources
            .fonts()
            .pair(Name(b"F1"), regular)
            .pair(Name(b"F2"), bold);
        resources.finish();
        page.finish();
        pdf.stream(content_id, &content.finish());
    }
    Ok(pdf.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bindings::faktura::service::pdf::{MetaRow, Table};

    fn doc(rows: usize) -> Document {
        Document {
            title: "Invoice INV-00001".into(),
            sender: vec!["Faktura GmbH · Street 1 · 10115 Berlin".into()],
            recipient: vec!["Müller AG".into(), "Hauptstraße 5".into()],
            meta: vec![MetaRow {
                label: "Date".into(),
                value: "2026-11-21".into(),
            }],
            preamble: vec!["Thank you for your order.".into()],
            items: Table {
                header: vec!["Item".into(), "Amount".into()],
                rows: (0..rows)
                    .map(|i| vec![format!("Line {i}"), "10 €".into()])
                    .collect(),
                right_aligned: vec![1],
            },
            totals: vec![MetaRow {
                label: "Total".into(),
                value: "10 €".into(),
            }],
            closing: vec!["Payable within 14 days.".into()],
            footer: "Faktura".into(),
            print: false,
        }
    }

    #[test]
    fn renders_a_pdf_deterministically_with_page_breaks() {
        let one = render(&doc(3)).unwrap();
        assert!(one.starts_with(b"%PDF-"));
        assert_eq!(one, render(&doc(3)).unwrap());
        let long = render(&doc(200)).unwrap();
        let pages = long.windows(10).filter(|w| w == b"/Type /Pag").count();
        // "/Type /Pages" once, "/Type /Page" per page: more than two pages for 200 rows.
        assert!(pages > 3, "{pages}");
    }

    #[test]
    fn rows_must_match_the_header() {
        let mut d = doc(1);
        d.items.rows[0].pop();
        assert!(render(&d).is_err());
    }
}
