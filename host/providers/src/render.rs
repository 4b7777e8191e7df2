//! The PDF renderer: lays a layout-neutral document out on A4 pages with pdf-writer, and
//! draws page-sized thumbnails of a template's text with ab_glyph and the image crate.
//!
//! Text is set in DejaVu Sans (regular and bold), embedded as subsets with a ToUnicode map,
//! so any Latin, Greek or Cyrillic text prints and `pdftotext` reads it back. Long tables
//! break across pages with the header repeated; every page carries its number. The output
//! depends only on the document: no dates or random ids, so equal documents render to
//! equal bytes.
//!
//! A subset numbers its glyphs in the order of the font, so documents using the same
//! glyphs embed the same subset, whatever their text; the subsets embedded last are kept
//! compressed (`EMBEDDED`), since compressing them is most of a render's work.
//!
//! `render_archival` adds attached files and PDF/A-3b (for Factur-X / ZUGFeRD hybrid
//! invoices) as `crate::pdfa` writes them; its only dates are the attachments' own.

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock, Mutex};

use pdf_writer::types::{CidFontType, FontFlags, SystemInfo, UnicodeCmap};
use pdf_writer::{Content, Filter, Finish, Name, Pdf, Rect, Ref, Str, TextStr};
use sha2::{Digest, Sha256};

use crate::pdfa::{self, Plan};
pub use crate::pdfa::{Archive, Conformance, EmbeddedFile, FacturX};

const PAGE_W: f32 = 595.0;
const PAGE_H: f32 = 842.0;
const MARGIN: f32 = 56.0;
const BODY_SIZE: f32 = 9.5;
const LINE: f32 = 13.0;
/// Width of every table column but the first (which takes the rest).
const COLUMN_W: f32 = 72.0;

/// One labelled value of the meta block or the totals (e.g. "Number", "RE-0001").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetaRow {
    pub label: String,
    pub value: String,
}

/// A table: a header row and body rows with the same number of cells. Columns whose index
/// is listed in `right_aligned` are aligned right (amounts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub right_aligned: Vec<u32>,
}

/// A layout-neutral document: what the `pdf` interface's `document` record carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    /// File metadata title; also shown as the document heading.
    pub title: String,
    /// Sender line(s), shown above the recipient address.
    pub sender: Vec<String>,
    /// Recipient address lines.
    pub recipient: Vec<String>,
    pub meta: Vec<MetaRow>,
    /// Paragraphs above the table.
    pub preamble: Vec<String>,
    pub items: Table,
    /// Summary rows below the table.
    pub totals: Vec<MetaRow>,
    /// Paragraphs below the totals.
    pub closing: Vec<String>,
    /// Footer text on every page beside the page number.
    pub footer: String,
    /// Print version: no background decoration.
    pub print: bool,
    /// A matrix drawn below the closing paragraphs (a QR code).
    pub matrix: Option<Matrix>,
}

/// A square matrix of modules drawn as filled squares where true (a QR code without its
/// quiet zone), with lines of text beside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matrix {
    pub caption: Vec<String>,
    pub modules: Vec<Vec<bool>>,
}

/// Side of a matrix on the page, in points (about 34 mm: a QR code of 45 modules, the
/// largest an EPC payment code needs, keeps modules of 0.75 mm).
const MATRIX_SIDE: f32 = 96.0;

/// The encodings of a thumbnail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageFormat {
    Png,
    Gif,
    Jpg,
}

/// A font file and what layout needs of it.
struct FontFile {
    data: &'static [u8],
    postscript_name: &'static str,
    units_per_em: f32,
    ascender: f32,
    descender: f32,
    cap_height: f32,
    bbox: Rect,
    /// Glyph id and advance (1/1000 em) of every character below [`GLYPHS_LOOKED_UP`]:
    /// text is laid out twice per document and measured while it is wrapped, and a
    /// lookup in the font's character map was a tenth of a PDF's rendering.
    glyphs: Box<[(u16, f32)]>,
}

/// Characters whose glyphs a [`FontFile`] keeps at hand: Latin, Greek, Cyrillic and the
/// punctuation and currency signs up to U+20CF (the euro sign among them).
const GLYPHS_LOOKED_UP: u32 = 0x20D0;

impl FontFile {
    fn load(data: &'static [u8], postscript_name: &'static str) -> FontFile {
        let face = ttf_parser::Face::parse(data, 0).expect("the bundled font parses");
        let bbox = face.global_bounding_box();
        let upem = face.units_per_em() as f32;
        let scale = |v: i16| v as f32 * 1000.0 / upem;
        let glyphs = (0..GLYPHS_LOOKED_UP)
            .map(|c| glyph_of(&face, char::from_u32(c).unwrap_or('\0'), upem))
            .collect();
        FontFile {
            glyphs,
            data,
            postscript_name,
            units_per_em: upem,
            ascender: scale(face.ascender()),
            descender: scale(face.descender()),
            cap_height: scale(face.capital_height().unwrap_or(face.ascender())),
            bbox: Rect::new(
                scale(bbox.x_min),
                scale(bbox.y_min),
                scale(bbox.x_max),
                scale(bbox.y_max),
            ),
        }
    }

    fn face(&self) -> ttf_parser::Face<'static> {
        ttf_parser::Face::parse(self.data, 0).expect("the bundled font parses")
    }
}

/// The glyph id of `c` in `face` (0, the missing glyph, if it has none) and its advance in
/// 1/1000 em.
fn glyph_of(face: &ttf_parser::Face<'_>, c: char, units_per_em: f32) -> (u16, f32) {
    let gid = face.glyph_index(c).unwrap_or(ttf_parser::GlyphId(0));
    let advance = face.glyph_hor_advance(gid).unwrap_or(0);
    (gid.0, advance as f32 * 1000.0 / units_per_em)
}

static REGULAR: LazyLock<FontFile> =
    LazyLock::new(|| FontFile::load(include_bytes!("../fonts/DejaVuSans.ttf"), "DejaVuSans"));
static BOLD: LazyLock<FontFile> = LazyLock::new(|| {
    FontFile::load(
        include_bytes!("../fonts/DejaVuSans-Bold.ttf"),
        "DejaVuSans-Bold",
    )
});

/// The glyphs one document uses of one font: old glyph ids remapped to a dense subset.
struct FontUse {
    file: &'static FontFile,
    face: ttf_parser::Face<'static>,
    remapper: subsetter::GlyphRemapper,
    /// New glyph id → the text it stands for, and its advance in 1/1000 em.
    glyphs: BTreeMap<u16, (char, f32)>,
    resource: &'static [u8],
}

impl FontUse {
    /// A font use whose subset starts with `glyphs` (old ids), numbered in font order.
    fn new(file: &'static FontFile, resource: &'static [u8], glyphs: &[u16]) -> FontUse {
        FontUse {
            file,
            face: file.face(),
            remapper: subsetter::GlyphRemapper::new_from_glyphs_sorted(glyphs),
            glyphs: BTreeMap::new(),
            resource,
        }
    }

    /// The old ids of the glyphs used, in subset order.
    fn used(&self) -> Vec<u16> {
        self.remapper.remapped_gids().collect()
    }

    /// Glyph id and advance of `c`.
    fn glyph(&self, c: char) -> (u16, f32) {
        match self.file.glyphs.get(c as usize) {
            Some(&known) => known,
            None => glyph_of(&self.face, c, self.file.units_per_em),
        }
    }

    fn advance(&self, c: char) -> f32 {
        self.glyph(c).1
    }

    fn width(&self, text: &str, size: f32) -> f32 {
        text.chars().map(|c| self.advance(c)).sum::<f32>() * size / 1000.0
    }

    /// The text as two-byte subset glyph ids (Identity-H), recording each glyph used.
    fn encode(&mut self, text: &str) -> Vec<u8> {
        let mut out = Vec::with_capacity(text.len() * 2);
        for c in text.chars().filter(|c| !c.is_control()) {
            let (old, advance) = self.glyph(c);
            let new = self.remapper.remap(old);
            self.glyphs.entry(new).or_insert((c, advance));
            out.extend_from_slice(&new.to_be_bytes());
        }
        out
    }
}

/// Content streams of the pages, written top to bottom.
struct Layout {
    regular: FontUse,
    bold: FontUse,
    done: Vec<Content>,
    current: Content,
    y: f32,
}

#[derive(Clone, Copy)]
enum Weight {
    Regular,
    Bold,
}

impl Layout {
    fn font(&mut self, weight: Weight) -> &mut FontUse {
        match weight {
            Weight::Regular => &mut self.regular,
            Weight::Bold => &mut self.bold,
        }
    }

    fn width(&self, weight: Weight, text: &str, size: f32) -> f32 {
        match weight {
            Weight::Regular => self.regular.width(text, size),
            Weight::Bold => self.bold.width(text, size),
        }
    }

    fn text(&mut self, x: f32, weight: Weight, size: f32, text: &str) {
        let font = self.font(weight);
        let resource = font.resource;
        let encoded = font.encode(text);
        let y = self.y;
        self.current
            .begin_text()
            .set_font(Name(resource), size)
            .next_line(x, y)
            .show(Str(&encoded))
            .end_text();
    }

    fn text_right(&mut self, right: f32, weight: Weight, size: f32, text: &str) {
        let w = self.width(weight, text, size);
        self.text(right - w, weight, size, text);
    }

    /// Moves down; returns true when that started a new page.
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
            .set_line_width(0.5)
            .move_to(MARGIN, self.y + LINE - 3.0)
            .line_to(PAGE_W - MARGIN, self.y + LINE - 3.0)
            .stroke();
    }

    /// Splits a paragraph into lines no wider than `max` points.
    fn wrap(&self, weight: Weight, text: &str, size: f32, max: f32) -> Vec<String> {
        let mut lines = Vec::new();
        for raw in text.lines() {
            let mut line = String::new();
            for word in raw.split_whitespace() {
                let candidate = if line.is_empty() {
                    word.to_owned()
                } else {
                    format!("{line} {word}")
                };
                if self.width(weight, &candidate, size) > max && !line.is_empty() {
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

    fn paragraph(&mut self, text: &str) {
        for line in self.wrap(Weight::Regular, text, BODY_SIZE, PAGE_W - 2.0 * MARGIN) {
            self.text(MARGIN, Weight::Regular, BODY_SIZE, &line);
            self.advance(LINE);
        }
        self.advance(LINE / 2.0);
    }
}

/// A matrix at the left margin, on a new page when the rest of this one cannot hold it,
/// its caption beside it; the layout goes on below both. A quiet zone of four modules is
/// left around it, as QR readers want.
fn draw_matrix(l: &mut Layout, matrix: &Matrix) {
    let n = matrix.modules.len();
    if n == 0 {
        return;
    }
    let module = MATRIX_SIDE / n as f32;
    let quiet = module * 4.0;
    let height = MATRIX_SIDE + 2.0 * quiet;
    if l.y - height < MARGIN + LINE * 2.0 {
        l.done
            .push(std::mem::replace(&mut l.current, Content::new()));
        l.y = PAGE_H - MARGIN;
    }
    // Top edge of the modules, the quiet zone above them clear of the text above: `y` is
    // the next text baseline, a line's height below the last one.
    let top = l.y + LINE - 3.0 - quiet;
    let left = MARGIN + quiet;
    l.current.save_state().set_fill_rgb(0.0, 0.0, 0.0);
    for (r, row) in matrix.modules.iter().enumerate() {
        // Runs of dark modules as one rectangle each: fewer operators, and no seams.
        let mut c = 0;
        while c < row.len() {
            if !row[c] {
                c += 1;
                continue;
            }
            let start = c;
            while c < row.len() && row[c] {
                c += 1;
            }
            l.current.rect(
                left + module * start as f32,
                top - module * (r + 1) as f32,
                module * (c - start) as f32,
                module,
            );
        }
    }
    l.current.fill_nonzero().restore_state();
    let text_left = MARGIN + MATRIX_SIDE + 2.0 * quiet + 12.0;
    let bottom = top - MATRIX_SIDE - quiet;
    for (i, line) in matrix.caption.iter().enumerate() {
        let weight = if i == 0 {
            Weight::Bold
        } else {
            Weight::Regular
        };
        l.text(text_left, weight, BODY_SIZE, line);
        l.y -= LINE;
    }
    l.y = l.y.min(bottom);
    l.advance(LINE);
}

/// Column left edges and widths: the first column takes what the others leave.
fn columns(count: usize) -> Vec<(f32, f32)> {
    let usable = PAGE_W - 2.0 * MARGIN;
    let others = COLUMN_W * count.saturating_sub(1) as f32;
    let first = (usable - others).max(COLUMN_W);
    let mut out = vec![(MARGIN, first)];
    for i in 1..count {
        out.push((MARGIN + first + COLUMN_W * (i - 1) as f32, COLUMN_W));
    }
    out
}

fn table_row(l: &mut Layout, doc: &Document, cells: &[String], weight: Weight) {
    let cols = columns(doc.items.header.len());
    // The first column wraps; the row is as tall as its wrapped text.
    let first = l.wrap(weight, &cells[0], BODY_SIZE, cols[0].1 - 6.0);
    let top = l.y;
    for (i, cell) in cells.iter().enumerate().skip(1) {
        let (left, width) = cols[i];
        if doc.items.right_aligned.contains(&(i as u32)) {
            l.text_right(left + width - 2.0, weight, BODY_SIZE, cell);
        } else {
            l.text(left + 2.0, weight, BODY_SIZE, cell);
        }
    }
    for (n, line) in first.iter().enumerate() {
        l.y = top - LINE * n as f32;
        l.text(MARGIN, weight, BODY_SIZE, line);
    }
    l.y = top - LINE * (first.len().max(1) - 1) as f32;
}

/// The document as a plain PDF 1.7: `render_archival` with the default archive.
pub fn render(doc: &Document) -> Result<Vec<u8>, String> {
    render_archival(doc, &Archive::default())
}

/// The document with what `archive` adds: attachments (embedded files, in the catalog's
/// `AF` array and `EmbeddedFiles` name tree) and, for `Conformance::PdfA3b`, what PDF/A-3b
/// requires (XMP metadata, with Factur-X's extension schema when `factur_x` is set, an sRGB
/// OutputIntent, a trailer ID). In PDF/A, characters the fonts lack print as U+FFFD rather
/// than `.notdef`. Deterministic like `render`: equal inputs give equal bytes.
pub fn render_archival(doc: &Document, archive: &Archive) -> Result<Vec<u8>, String> {
    let columns_n = doc.items.header.len();
    if let Some(bad) = doc.items.rows.iter().find(|r| r.len() != columns_n) {
        return Err(format!(
            "a table row has {} cells, the header {columns_n}",
            bad.len()
        ));
    }
    // Validated before the layout, which is most of the work.
    Plan::new(archive, || Ref::new(1))?;
    let printable;
    let doc = if archive.conformance == Conformance::PdfA3b {
        let (regular, bold) = (REGULAR.face(), BOLD.face());
        printable = pdfa::printable(doc, |c| {
            regular.glyph_index(c).is_some() && bold.glyph_index(c).is_some()
        });
        &printable
    } else {
        doc
    };
    // Once to learn the glyphs, once more with them numbered in font order.
    let (_, first) = lay_out(doc, [&[], &[]]);
    let (regular, bold) = (first.regular.used(), first.bold.used());
    let (contents, l) = lay_out(doc, [&regular, &bold]);
    write_pdf(doc, contents, &l, archive)
}

/// The pages' content streams, with the fonts' subsets starting with `glyphs`.
fn lay_out(doc: &Document, glyphs: [&[u16]; 2]) -> (Vec<Content>, Layout) {
    let mut l = Layout {
        regular: FontUse::new(&REGULAR, b"F1", glyphs[0]),
        bold: FontUse::new(&BOLD, b"F2", glyphs[1]),
        done: Vec::new(),
        current: Content::new(),
        y: PAGE_H - MARGIN,
    };
    lay_out_heading(&mut l, doc);
    for para in &doc.preamble {
        l.paragraph(para);
    }
    if !doc.items.header.is_empty() {
        lay_out_items(&mut l, doc);
    }
    for row in &doc.totals {
        l.text_right(
            PAGE_W - MARGIN - 110.0,
            Weight::Regular,
            BODY_SIZE,
            &row.label,
        );
        l.text_right(PAGE_W - MARGIN, Weight::Bold, BODY_SIZE, &row.value);
        l.advance(LINE);
    }
    l.advance(LINE / 2.0);
    for para in &doc.closing {
        l.paragraph(para);
    }
    if let Some(matrix) = &doc.matrix {
        draw_matrix(&mut l, matrix);
    }
    let mut contents = std::mem::take(&mut l.done);
    contents.push(std::mem::replace(&mut l.current, Content::new()));
    // Footers last, once the page count is known.
    add_footers(&mut contents, &mut l, doc);
    (contents, l)
}

/// The top of the first page: sender line, recipient address, title and the meta rows
/// (label and value).
fn lay_out_heading(l: &mut Layout, doc: &Document) {
    for line in &doc.sender {
        l.text(MARGIN, Weight::Regular, 7.5, line);
        l.advance(10.0);
    }
    l.advance(8.0);
    for line in &doc.recipient {
        l.text(MARGIN, Weight::Regular, 10.0, line);
        l.advance(LINE);
    }
    l.advance(LINE * 1.5);
    l.text(MARGIN, Weight::Bold, 16.0, &doc.title);
    l.advance(LINE * 1.8);
    for row in &doc.meta {
        l.text(MARGIN, Weight::Regular, BODY_SIZE, &row.label);
        l.text(MARGIN + 130.0, Weight::Regular, BODY_SIZE, &row.value);
        l.advance(LINE);
    }
    l.advance(LINE / 2.0);
}

/// The items table between rules, its header repeated on each new page.
fn lay_out_items(l: &mut Layout, doc: &Document) {
    table_row(l, doc, &doc.items.header, Weight::Bold);
    l.advance(LINE);
    l.rule();
    for row in &doc.items.rows {
        table_row(l, doc, row, Weight::Regular);
        if l.advance(LINE) {
            table_row(l, doc, &doc.items.header, Weight::Bold);
            l.advance(LINE);
            l.rule();
        }
    }
    l.rule();
    l.advance(LINE / 2.0);
}

/// Each page's footer, "footer   Page i of n", and in the screen version the band at
/// the top of the page.
fn add_footers(contents: &mut [Content], l: &mut Layout, doc: &Document) {
    let count = contents.len();
    for (i, content) in contents.iter_mut().enumerate() {
        let footer = format!("{}   Page {} of {}", doc.footer, i + 1, count);
        let encoded = l.regular.encode(footer.trim_start());
        if !doc.print {
            // The decoration the print version leaves out (pre-printed paper has its own).
            content
                .save_state()
                .set_fill_rgb(0.93, 0.94, 0.96)
                .rect(0.0, PAGE_H - 22.0, PAGE_W, 22.0)
                .fill_nonzero()
                .restore_state();
        }
        content
            .begin_text()
            .set_font(Name(b"F1"), 7.5)
            .next_line(MARGIN, MARGIN / 2.0)
            .show(Str(&encoded))
            .end_text();
    }
}

/// Object ids: fixed ones first, then five per font, two per page, and the archive's
/// (none for the default archive).
fn write_pdf(
    doc: &Document,
    contents: Vec<Content>,
    l: &Layout,
    archive: &Archive,
) -> Result<Vec<u8>, String> {
    let mut pdf = Pdf::new();
    let mut next = 1;
    let mut alloc = || {
        let r = Ref::new(next);
        next += 1;
        r
    };
    let catalog = alloc();
    let tree = alloc();
    let info = alloc();
    let fonts = [(&l.regular, alloc()), (&l.bold, alloc())];
    let font_parts: Vec<[Ref; 4]> = fonts
        .iter()
        .map(|_| [alloc(), alloc(), alloc(), alloc()])
        .collect();
    let pages: Vec<(Ref, Ref)> = contents.iter().map(|_| (alloc(), alloc())).collect();
    let plan = Plan::new(archive, alloc)?;

    let mut cat = pdf.catalog(catalog);
    cat.pages(tree);
    plan.catalog(&mut cat);
    cat.finish();
    let mut document_info = pdf.document_info(info);
    document_info
        .title(TextStr(&doc.title))
        .producer(TextStr(pdfa::PRODUCER));
    if let Some(date) = plan.info_date() {
        document_info.creation_date(date).modified_date(date);
    }
    document_info.finish();
    pdf.pages(tree)
        .kids(pages.iter().map(|(p, _)| *p))
        .count(pages.len() as i32);
    for ((font, type0), [cid, descriptor, file, cmap]) in fonts.iter().zip(&font_parts) {
        write_font(&mut pdf, font, *type0, *cid, *descriptor, *file, *cmap)?;
    }
    for ((page_id, content_id), content) in pages.iter().zip(contents) {
        let mut page = pdf.page(*page_id);
        page.media_box(Rect::new(0.0, 0.0, PAGE_W, PAGE_H));
        page.parent(tree);
        page.contents(*content_id);
        let mut resources = page.resources();
        resources
            .fonts()
            .pair(Name(b"F1"), fonts[0].1)
            .pair(Name(b"F2"), fonts[1].1);
        resources.finish();
        page.finish();
        pdf.stream(*content_id, &content.finish());
    }
    plan.write_objects(&mut pdf, &doc.title);
    plan.file_id(&mut pdf);
    Ok(pdf.finish())
}

fn write_font(
    pdf: &mut Pdf,
    font: &FontUse,
    type0: Ref,
    cid: Ref,
    descriptor: Ref,
    file: Ref,
    cmap: Ref,
) -> Result<(), String> {
    let embedded = embedded(font)?;
    let base_font = format!("{}+{}", embedded.tag, font.file.postscript_name);
    let system_info = SystemInfo {
        registry: Str(b"Adobe"),
        ordering: Str(b"Identity"),
        supplement: 0,
    };
    pdf.type0_font(type0)
        .base_font(Name(base_font.as_bytes()))
        .encoding_predefined(Name(b"Identity-H"))
        .descendant_font(cid)
        .to_unicode(cmap);
    let mut cid_font = pdf.cid_font(cid);
    cid_font
        .subtype(CidFontType::Type2)
        .base_font(Name(base_font.as_bytes()))
        .system_info(system_info)
        .font_descriptor(descriptor)
        .default_width(0.0)
        .cid_to_gid_map_predefined(Name(b"Identity"));
    {
        let mut widths = cid_font.widths();
        for (gid, (_, advance)) in &font.glyphs {
            widths.consecutive(*gid, [*advance]);
        }
    }
    cid_font.finish();
    pdf.font_descriptor(descriptor)
        .name(Name(base_font.as_bytes()))
        .flags(FontFlags::NON_SYMBOLIC)
        .bbox(font.file.bbox)
        .italic_angle(0.0)
        .ascent(font.file.ascender)
        .descent(font.file.descender)
        .cap_height(font.file.cap_height)
        .stem_v(80.0)
        .font_file2(file);
    pdf.stream(file, &embedded.program)
        .filter(Filter::FlateDecode)
        .pair(Name(b"Length1"), embedded.length as i32);
    let mut unicode = UnicodeCmap::new(Name(b"Custom"), system_info);
    for (gid, (c, _)) in &font.glyphs {
        unicode.pair(*gid, *c);
    }
    pdf.cmap(cmap, &unicode.finish());
    Ok(())
}

/// A font subset as embedded: the tag of its name, its compressed program and that
/// program's length.
struct Embedded {
    tag: String,
    program: Vec<u8>,
    length: usize,
}

/// Subsets kept compressed, the most recently used first.
const EMBEDDED_CACHED: usize = 32;

/// Font name and glyphs (old ids, subset order) → the subset embedded for them.
type EmbeddedCache = Vec<(&'static str, Vec<u16>, Arc<Embedded>)>;

static EMBEDDED: Mutex<EmbeddedCache> = Mutex::new(Vec::new());

#[cfg(test)]
thread_local! {
    /// Subsets this thread built rather than found kept.
    static BUILT: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The embedded subset of the glyphs `font` used: kept from an earlier document, or built.
fn embedded(font: &FontUse) -> Result<Arc<Embedded>, String> {
    let name = font.file.postscript_name;
    let glyphs = font.used();
    let kept = |cache: &mut EmbeddedCache| {
        let at = cache
            .iter()
            .position(|(n, g, _)| *n == name && *g == glyphs)?;
        let entry = cache.remove(at);
        let found = entry.2.clone();
        cache.insert(0, entry);
        Some(found)
    };
    if let Some(found) = kept(&mut EMBEDDED.lock().unwrap_or_else(|p| p.into_inner())) {
        return Ok(found);
    }
    let subset = subsetter::subset(font.file.data, 0, &font.remapper)
        .map_err(|e| format!("subsetting {name}: {e}"))?;
    // A subset's name carries a tag derived from its glyphs, so equal documents agree.
    let digest = Sha256::digest(&subset);
    let tag: String = digest[..6]
        .iter()
        .map(|b| (b'A' + b % 26) as char)
        .collect();
    let built = Arc::new(Embedded {
        tag,
        program: compress(&subset),
        length: subset.len(),
    });
    #[cfg(test)]
    BUILT.with(|b| b.set(b.get() + 1));
    let mut cache = EMBEDDED.lock().unwrap_or_else(|p| p.into_inner());
    if kept(&mut cache).is_none() {
        cache.insert(0, (name, glyphs, built.clone()));
        cache.truncate(EMBEDDED_CACHED);
    }
    Ok(built)
}

fn compress(data: &[u8]) -> Vec<u8> {
    miniz_oxide::deflate::compress_to_vec_zlib(data, 6)
}

#[cfg(test)]
mod tests {
    use super::*;

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
                    .map(|i| vec![format!("Line {i} Счёт Ελληνικά zażółć"), "10,00 €".into()])
                    .collect(),
                right_aligned: vec![1],
            },
            totals: vec![MetaRow {
                label: "Total".into(),
                value: "10,00 €".into(),
            }],
            closing: vec!["Payable within 14 days.".into()],
            footer: "Faktura".into(),
            print: false,
            matrix: None,
        }
    }

    /// The `/BaseFont` names of a PDF's fonts.
    fn base_fonts(pdf: &[u8]) -> Vec<String> {
        let text = String::from_utf8_lossy(pdf);
        let mut names: Vec<String> = text
            .match_indices("/BaseFont /")
            .map(|(at, m)| {
                text[at + m.len()..]
                    .split(|c: char| c.is_whitespace() || c == '/' || c == '>')
                    .next()
                    .unwrap_or_default()
                    .to_owned()
            })
            .collect();
        names.sort();
        names.dedup();
        names
    }

    #[test]
    fn documents_using_the_same_glyphs_share_one_embedded_subset() {
        let mut first = doc(2);
        first.title = "Rechnung Zyx 42".into();
        let mut second = doc(2);
        second.title = "xyZ 24 gnunhceR".into();
        let a = render(&first).unwrap();
        let built = BUILT.with(|b| b.get());
        let b = render(&second).unwrap();
        assert_eq!(
            BUILT.with(|b| b.get()),
            built,
            "the second document's subsets were kept from the first"
        );
        assert_eq!(base_fonts(&a), base_fonts(&b));
        assert_eq!(base_fonts(&a).len(), 2, "{:?}", base_fonts(&a));
        assert_ne!(a, b);
        let mut more = doc(2);
        more.title = "Ω".into();
        let c = render(&more).unwrap();
        assert_eq!(
            BUILT.with(|b| b.get()),
            built + 1,
            "a new glyph, a new subset"
        );
        assert_ne!(base_fonts(&a), base_fonts(&c));
    }

    #[test]
    fn renders_deterministically_with_page_breaks() {
        let one = render(&doc(3)).unwrap();
        assert!(one.starts_with(b"%PDF-"));
        assert_eq!(one, render(&doc(3)).unwrap());
        let long = render(&doc(150)).unwrap();
        let pages = long.windows(11).filter(|w| w == b"/Type /Page").count();
        // "/Type /Pages" once plus one "/Type /Page" per page.
        assert!(pages >= 4, "{pages}");
    }

    /// `render`'s output as it was before archives existed: the archive adds nothing
    /// unless asked to. (An update of pdf-writer, subsetter or miniz_oxide that changes
    /// the bytes on purpose updates these digests.)
    #[test]
    fn plain_render_bytes_are_unchanged() {
        for (rows, print, len, digest) in [
            (
                0,
                false,
                23892,
                "e1a7b25d59dc662db38d4cd0efc88c673e43430ece4e36253c354ee029f6d68c",
            ),
            (
                3,
                false,
                27749,
                "f145eeaec07e46d5b4c921e5c902f28098215ab8124cae06ae91cd8c968f655b",
            ),
            (
                3,
                true,
                27709,
                "cf5a219f0f043d166e2c090d4ef80dca98f49244604b96efab79f04964d7d4a5",
            ),
            (
                150,
                false,
                73674,
                "ac50cc3cac09e067f1f48d5baf6221803464297f10af323e16202a53d75fc251",
            ),
        ] {
            let mut d = doc(rows);
            d.print = print;
            let bytes = render(&d).unwrap();
            assert_eq!(
                (bytes.len(), hex::encode(Sha256::digest(&bytes))),
                (len, digest.into())
            );
            assert_eq!(render_archival(&d, &Archive::default()).unwrap(), bytes);
        }
    }

    const XML: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<rsm:CrossIndustryInvoice/>\n";

    fn factur_x() -> Archive {
        Archive {
            conformance: Conformance::PdfA3b,
            attachments: vec![
                EmbeddedFile {
                    filename: "factur-x.xml".into(),
                    mimetype: "text/xml".into(),
                    description: "Factur-X invoice".into(),
                    relationship: "Alternative".into(),
                    modified: "2026-11-24T00:00:00Z".into(),
                    content: XML.as_bytes().to_vec(),
                },
                EmbeddedFile {
                    filename: "Anhang.txt".into(),
                    mimetype: "text/plain".into(),
                    description: "Notes".into(),
                    relationship: "Supplement".into(),
                    modified: "2026-11-20".into(),
                    content: b"notes".to_vec(),
                },
            ],
            factur_x: Some(FacturX {
                document_type: "INVOICE".into(),
                filename: "factur-x.xml".into(),
                version: "1.0".into(),
                conformance_level: "EN 16931".into(),
            }),
        }
    }

    /// The text of indirect object `n 0 obj` (up to its `endobj`), lossily.
    fn object(pdf: &[u8], id: &str) -> String {
        let text = String::from_utf8_lossy(pdf);
        let start = text.find(&format!("\n{id} 0 obj\n")).expect(id);
        let end = start + text[start..].find("endobj").unwrap();
        text[start..end].to_owned()
    }

    /// The object id a key refers to in `dict` (`/Key n 0 R`).
    fn reference(dict: &str, key: &str) -> String {
        let at = dict.find(&format!("/{key} ")).expect(key) + key.len() + 2;
        dict[at..].split(' ').next().unwrap().to_owned()
    }

    #[test]
    fn pdfa3b_output_is_deterministic_and_has_what_pdfa_and_factur_x_need() {
        let d = doc(3);
        let archive = factur_x();
        let a = render_archival(&d, &archive).unwrap();
        assert_eq!(a, render_archival(&d, &archive).unwrap());
        assert!(a.starts_with(b"%PDF-1.7\n%"));
        assert!(a[10..14].iter().all(|&b| b > 127));
        let text = String::from_utf8_lossy(&a);
        assert!(!text.contains("/Encrypt"));
        let trailer = &text[text.rfind("trailer").unwrap()..];
        assert!(trailer.contains("/ID [<"), "{trailer}");
        let catalog = object(&a, &reference(trailer, "Root"));
        for key in [
            "/Metadata",
            "/OutputIntents",
            "/GTS_PDFA1",
            "/EmbeddedFiles",
            "/AF [",
        ] {
            assert!(catalog.contains(key), "{key}: {catalog}");
        }
        // Name tree keys in order.
        let anhang = catalog.find("(Anhang.txt)").unwrap();
        assert!(
            anhang < catalog.find("(factur-x.xml)").unwrap(),
            "{catalog}"
        );
        let metadata = object(&a, &reference(&catalog, "Metadata"));
        assert!(metadata.contains("/Type /Metadata") && metadata.contains("/Subtype /XML"));
        assert!(!metadata.contains("/Filter"), "{metadata}");
        for part in [
            "<pdfaid:part>3</pdfaid:part>",
            "<pdfaid:conformance>B</pdfaid:conformance>",
            "<rdf:li xml:lang=\"x-default\">Invoice INV-00001</rdf:li>",
            "<pdf:Producer>Faktura</pdf:Producer>",
            "<xmp:CreateDate>2026-11-24T00:00:00Z</xmp:CreateDate>",
            "<pdfaSchema:namespaceURI>urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#</pdfaSchema:namespaceURI>",
            "<pdfaProperty:name>ConformanceLevel</pdfaProperty:name>",
            "<fx:DocumentType>INVOICE</fx:DocumentType>",
            "<fx:DocumentFileName>factur-x.xml</fx:DocumentFileName>",
            "<fx:Version>1.0</fx:Version>",
            "<fx:ConformanceLevel>EN 16931</fx:ConformanceLevel>",
        ] {
            assert!(metadata.contains(part), "{part}: {metadata}");
        }
        let info = object(&a, &reference(trailer, "Info"));
        assert!(info.contains("/CreationDate (D:20261124000000Z)"), "{info}");
        assert!(info.contains("/ModDate (D:20261124000000Z)"), "{info}");
        let intent = &catalog[catalog.find("/OutputIntents").unwrap()..];
        let icc = object(&a, &reference(intent, "DestOutputProfile"));
        assert!(icc.contains("/N 3"), "{icc}");
        let at = catalog.find("(factur-x.xml)").unwrap() + "(factur-x.xml) ".len();
        let spec_id = catalog[at..].split(' ').next().unwrap();
        let spec = object(&a, spec_id);
        for part in [
            "/Type /Filespec",
            "/F (factur-x.xml)",
            "/UF (factur-x.xml)",
            "/Desc (Factur-X invoice)",
            "/AFRelationship /Alternative",
        ] {
            assert!(spec.contains(part), "{part}: {spec}");
        }
        let ef = &spec[spec.find("/EF").unwrap()..];
        assert_eq!(reference(ef, "F"), reference(ef, "UF"));
        let file = object(&a, &reference(ef, "UF"));
        for part in [
            "/Type /EmbeddedFile",
            "/Subtype /text#2Fxml",
            &format!("/Size {}", XML.len()),
            "/ModDate (D:20261124000000Z)",
        ] {
            assert!(file.contains(part), "{part}: {file}");
        }
        let af = &catalog[catalog.find("/AF [").unwrap()..];
        assert!(af[..af.find(']').unwrap()].contains(&format!("{spec_id} 0 R")));
        // Another document, another id.
        let other = render_archival(&doc(4), &archive).unwrap();
        let other_text = String::from_utf8_lossy(&other);
        let id = |t: &str| {
            t[t.rfind("/ID").unwrap()..]
                .split(']')
                .next()
                .unwrap()
                .to_owned()
        };
        assert_ne!(id(&text), id(&other_text));
    }

    #[test]
    fn pdfa3b_without_attachments_and_attachments_without_pdfa() {
        let d = doc(1);
        let pdfa = render_archival(
            &d,
            &Archive {
                conformance: Conformance::PdfA3b,
                ..Archive::default()
            },
        )
        .unwrap();
        let text = String::from_utf8_lossy(&pdfa);
        assert!(text.contains("<pdfaid:part>3</pdfaid:part>"));
        assert!(!text.contains("/EmbeddedFiles") && !text.contains("/AF"));
        assert!(!text.contains("xmp:CreateDate") && !text.contains("/CreationDate"));
        let mut plain = factur_x();
        plain.conformance = Conformance::Plain;
        plain.factur_x = None;
        let attached = render_archival(&d, &plain).unwrap();
        let text = String::from_utf8_lossy(&attached);
        assert!(text.contains("/EmbeddedFiles") && text.contains("/AFRelationship /Supplement"));
        assert!(!text.contains("/Metadata") && !text.contains("/ID"));
    }

    #[test]
    fn archives_are_validated() {
        let d = doc(1);
        let fails = |change: &dyn Fn(&mut Archive), needle: &str| {
            let mut archive = factur_x();
            change(&mut archive);
            let error = render_archival(&d, &archive).unwrap_err();
            assert!(error.contains(needle), "{error}");
        };
        fails(&|a| a.conformance = Conformance::Plain, "PdfA3b");
        fails(
            &|a| a.attachments.remove(0).filename.clear(),
            "not attached",
        );
        fails(
            &|a| a.attachments[0].relationship = "alternative".into(),
            "relationship",
        );
        fails(
            &|a| a.attachments[0].relationship = "Supplement".into(),
            "Factur-X",
        );
        fails(
            &|a| a.attachments[0].modified = "24.11.2026".into(),
            "ISO 8601",
        );
        fails(&|a| a.attachments[1].mimetype = "xml".into(), "MIME");
        fails(
            &|a| a.attachments[1].filename = "factur-x.xml".into(),
            "two attachments",
        );
        fails(&|a| a.attachments[1].filename.clear(), "no filename");
    }

    /// The glyphs kept at hand are the font's: below the table's end, at it and beyond.
    #[test]
    fn kept_glyphs_are_the_fonts_own() {
        for file in [&*REGULAR, &*BOLD] {
            let face = file.face();
            let font = FontUse::new(file, &[], &[]);
            for c in [
                'A',
                'ä',
                'ß',
                'Ω',
                'Ж',
                '–',
                '€',
                '\u{20CF}',
                '\u{20D0}',
                '請',
                '\u{1F600}',
            ] {
                assert_eq!(
                    font.glyph(c),
                    glyph_of(&face, c, file.units_per_em),
                    "{c:?}"
                );
            }
            assert_ne!(font.glyph('€').0, 0, "the font has a euro sign");
            assert_eq!(font.glyph('€'), file.glyphs['€' as usize]);
        }
    }

    #[test]
    fn pdfa_shows_no_notdef_glyph() {
        let mut d = doc(1);
        d.title = "Rechnung 請求書\u{1}".into();
        let archive = Archive {
            conformance: Conformance::PdfA3b,
            ..Archive::default()
        };
        let (regular, bold) = (REGULAR.face(), BOLD.face());
        let covered = |c| regular.glyph_index(c).is_some() && bold.glyph_index(c).is_some();
        let printable = pdfa::printable(&d, covered);
        assert_eq!(printable.title, "Rechnung \u{fffd}\u{fffd}\u{fffd}");
        assert_eq!(printable.items, d.items);
        let pdf = render_archival(&d, &archive).unwrap();
        let text = String::from_utf8_lossy(&pdf);
        assert!(text.contains("Rechnung \u{fffd}\u{fffd}\u{fffd}</rdf:li>"));
        // The plain render keeps the text as given.
        assert_ne!(render(&d).unwrap(), render(&printable).unwrap());
    }

    #[test]
    fn rows_must_match_the_header() {
        let mut d = doc(1);
        d.items.rows[0].pop();
        assert!(render(&d).is_err());
    }
}

/// A page-sized image (A4 at one pixel per point) of paragraphs laid out as the PDF lays
/// out a template's text: same font, size, margins and line breaks.
pub fn thumbnail(paragraphs: &[String], format: ImageFormat) -> Result<Vec<u8>, String> {
    use ab_glyph::{Font, FontRef, PxScale, ScaleFont, point};

    let font = FontRef::try_from_slice(REGULAR.data).map_err(|e| e.to_string())?;
    let (w, h) = (PAGE_W as u32, PAGE_H as u32);
    let mut img = image::RgbImage::from_pixel(w, h, image::Rgb([255, 255, 255]));
    for y in 0..22 {
        for x in 0..w {
            img.put_pixel(x, y, image::Rgb([237, 240, 245]));
        }
    }
    let upem = font.units_per_em().unwrap_or(1000.0);
    let height = font.height_unscaled();
    let scale = PxScale::from(BODY_SIZE * height / upem);
    let scaled = font.as_scaled(scale);
    let usable = PAGE_W - 2.0 * MARGIN;
    let mut baseline = MARGIN + BODY_SIZE;
    let layout = Layout {
        regular: FontUse::new(&REGULAR, b"F1", &[]),
        bold: FontUse::new(&BOLD, b"F2", &[]),
        done: Vec::new(),
        current: Content::new(),
        y: 0.0,
    };
    'page: for para in paragraphs {
        for line in layout.wrap(Weight::Regular, para, BODY_SIZE, usable) {
            if baseline > PAGE_H - MARGIN {
                break 'page;
            }
            let mut x = MARGIN;
            for c in line.chars() {
                let id = font.glyph_id(c);
                let glyph = id.with_scale_and_position(scale, point(x, baseline));
                if let Some(outlined) = font.outline_glyph(glyph) {
                    let bounds = outlined.px_bounds();
                    outlined.draw(|gx, gy, coverage| {
                        let px = bounds.min.x as i64 + gx as i64;
                        let py = bounds.min.y as i64 + gy as i64;
                        if (0..w as i64).contains(&px) && (0..h as i64).contains(&py) {
                            let p = img.get_pixel_mut(px as u32, py as u32);
                            for channel in p.0.iter_mut() {
                                *channel = (*channel as f32 * (1.0 - coverage)) as u8;
                            }
                        }
                    });
                }
                x += scaled.h_advance(id);
            }
            baseline += LINE;
        }
        baseline += LINE / 2.0;
    }
    let mut out = std::io::Cursor::new(Vec::new());
    let result = match format {
        ImageFormat::Png => img.write_to(&mut out, image::ImageFormat::Png),
        ImageFormat::Jpg => img.write_to(&mut out, image::ImageFormat::Jpeg),
        ImageFormat::Gif => image::DynamicImage::ImageRgb8(img)
            .to_rgba8()
            .write_to(&mut out, image::ImageFormat::Gif),
    };
    result.map_err(|e| e.to_string())?;
    Ok(out.into_inner())
}

#[cfg(test)]
mod thumbnail_tests {
    use super::*;

    #[test]
    fn thumbnails_decode_at_page_size_in_every_format() {
        let text = vec![
            "Rechnung [Invoice.invoice_number]".to_owned(),
            "Счёт".to_owned(),
        ];
        for (format, expected) in [
            (ImageFormat::Png, image::ImageFormat::Png),
            (ImageFormat::Gif, image::ImageFormat::Gif),
            (ImageFormat::Jpg, image::ImageFormat::Jpeg),
        ] {
            let bytes = thumbnail(&text, format).unwrap();
            assert_eq!(image::guess_format(&bytes).unwrap(), expected);
            let decoded = image::load_from_memory(&bytes).unwrap();
            assert_eq!((decoded.width(), decoded.height()), (595, 842));
            // Text left dark pixels in the text area.
            let dark = decoded.to_luma8().pixels().filter(|p| p.0[0] < 100).count();
            assert!(dark > 50, "{format:?}: {dark} dark pixels");
        }
    }
}
