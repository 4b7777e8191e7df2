//! PDF/A-3b and embedded files for the renderer (`render::render_archival`): the archive
//! options, their validation, and the objects they add to a document (XMP metadata, the
//! sRGB OutputIntent, file specifications with their embedded file streams, the catalog's
//! `AF` array and `EmbeddedFiles` name tree, the trailer `ID`).
//!
//! A Factur-X / ZUGFeRD hybrid invoice is a PDF/A-3 with the CII XML attached as
//! `factur-x.xml` (relationship `Alternative`, or `Data` for the MINIMUM and BASIC WL
//! profiles) and the Factur-X extension schema in its XMP metadata.
//!
//! Everything written depends only on the document and the archive, never on a clock: the
//! document's dates (Info `CreationDate`/`ModDate`, `xmp:CreateDate`/`ModifyDate`/
//! `MetadataDate`) are the `modified` date of the Factur-X XML, or else of the first
//! attachment, and are left out when nothing is attached; the trailer `ID` is a digest of
//! the file's body.

use std::fmt::Write as _;
use std::sync::LazyLock;

use pdf_writer::types::{AssociationKind, OutputIntentSubtype};
use pdf_writer::writers::Catalog;
use pdf_writer::{Date, Filter, Name, Pdf, Ref, Str, TextStr};
use sha2::{Digest, Sha256};

/// What the output conforms to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Conformance {
    /// A plain PDF 1.7, as `render::render` writes it.
    #[default]
    Plain,
    /// PDF/A-3b (ISO 19005-3, level B): XMP metadata, sRGB OutputIntent, trailer ID.
    PdfA3b,
}

/// A file attached to the document (in the `EmbeddedFiles` name tree and the catalog's
/// `AF` array).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbeddedFile {
    /// The file's name (`F`, `UF`, and its key in the name tree), e.g. "factur-x.xml".
    pub filename: String,
    /// MIME type, e.g. "text/xml"; written as the embedded file's `Subtype`.
    pub mimetype: String,
    /// `Desc` of the file specification.
    pub description: String,
    /// `AFRelationship`: Alternative, Data, Source, Supplement or Unspecified.
    pub relationship: String,
    /// ISO 8601 date-time of the file's last change, e.g. "2026-11-24T00:00:00Z" (a date
    /// alone, "2026-11-24", means its midnight); written as `Params/ModDate`.
    pub modified: String,
    pub content: Vec<u8>,
}

/// The Factur-X / ZUGFeRD properties of the XMP metadata (`fx:` namespace).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FacturX {
    /// `fx:DocumentType`, e.g. "INVOICE".
    pub document_type: String,
    /// `fx:DocumentFileName`, e.g. "factur-x.xml": the attachment holding the XML.
    pub filename: String,
    /// `fx:Version`, e.g. "1.0".
    pub version: String,
    /// `fx:ConformanceLevel`, e.g. "EN 16931".
    pub conformance_level: String,
}

/// What `render_archival` adds to a document. The default adds nothing: the output is
/// byte for byte `render`'s.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Archive {
    pub conformance: Conformance,
    pub attachments: Vec<EmbeddedFile>,
    /// Requires `PdfA3b` and an attachment named `filename`.
    pub factur_x: Option<FacturX>,
}

/// The producer named in the Info dictionary and the XMP metadata.
pub(crate) const PRODUCER: &str = "Faktura";

/// The sRGB profile of the OutputIntent (icc-profiles-free, Zlib licence: icc/).
const SRGB_ICC: &[u8] = include_bytes!("../icc/sRGB.icc");

static SRGB_ICC_COMPRESSED: LazyLock<Vec<u8>> =
    LazyLock::new(|| miniz_oxide::deflate::compress_to_vec_zlib(SRGB_ICC, 6));

const FACTUR_X_NS: &str = "urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#";

/// A date-time as given in ISO 8601, to be written as a PDF date and an XMP date.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    year: u16,
    month: u8,
    day: u8,
    hour: u8,
    minute: u8,
    second: u8,
    /// Offset from UTC: sign (-1 or 1), hours, minutes. None: local time, zone unknown.
    offset: Option<(i8, u8, u8)>,
}

impl Stamp {
    /// Parses `YYYY-MM-DD`, or `YYYY-MM-DDThh:mm[:ss[.fff]]` with an optional `Z`,
    /// `±hh:mm`, `±hhmm` or `±hh`. Fractions of a second are dropped.
    pub(crate) fn parse(text: &str) -> Result<Stamp, String> {
        Stamp::read(text.as_bytes()).ok_or_else(|| {
            format!("{text:?} is not an ISO 8601 date-time (e.g. 2026-11-24T00:00:00Z)")
        })
    }

    /// The date in `b` and the time after it, if any; None unless both are well-formed
    /// and the date and time exist.
    fn read(b: &[u8]) -> Option<Stamp> {
        let year = digits(b, 0, 4)?;
        if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
            return None;
        }
        let (month, day) = (digits(b, 5, 2)?, digits(b, 8, 2)?);
        let mut stamp = Stamp {
            year,
            month: month as u8,
            day: day as u8,
            hour: 0,
            minute: 0,
            second: 0,
            offset: None,
        };
        if b.len() > 10 {
            stamp.read_time(b, 10)?;
        }
        stamp.exists().then_some(stamp)
    }

    /// The time at `at` in `b`: `Thh:mm[:ss[.fff]]` and the offset from UTC.
    fn read_time(&mut self, b: &[u8], mut at: usize) -> Option<()> {
        if !matches!(b[at], b'T' | b't') {
            return None;
        }
        self.hour = digits(b, at + 1, 2)? as u8;
        if b.get(at + 3) != Some(&b':') {
            return None;
        }
        self.minute = digits(b, at + 4, 2)? as u8;
        at += 6;
        if b.get(at) == Some(&b':') {
            self.second = digits(b, at + 1, 2)? as u8;
            at += 3;
            if matches!(b.get(at), Some(b'.' | b',')) {
                at += 1;
                let fraction = b[at..].iter().take_while(|c| c.is_ascii_digit()).count();
                if fraction == 0 {
                    return None;
                }
                at += fraction;
            }
        }
        self.offset = offset(b, at)?;
        Some(())
    }

    /// Whether the date is in the calendar and the time on the clock.
    fn exists(&self) -> bool {
        let year = self.year;
        let leap =
            year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400));
        let days = match self.month {
            1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
            4 | 6 | 9 | 11 => 30,
            2 if leap => 29,
            2 => 28,
            _ => return false,
        };
        !(self.day == 0
            || self.day > days
            || self.hour > 23
            || self.minute > 59
            || self.second > 59)
    }

    /// The PDF date, `D:YYYYMMDDHHmmSS` with `Z` or `±HH'mm`.
    pub(crate) fn pdf(self) -> Date {
        let date = Date::new(self.year)
            .month(self.month)
            .day(self.day)
            .hour(self.hour)
            .minute(self.minute)
            .second(self.second);
        match self.offset {
            None => date,
            Some((sign, hours, minutes)) => date
                .utc_offset_hour(sign * hours as i8)
                .utc_offset_minute(minutes),
        }
    }

    /// The same instant as an XMP date, `YYYY-MM-DDThh:mm:ss` with `Z` or `±hh:mm`.
    pub(crate) fn xmp(self) -> String {
        let mut out = format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        );
        match self.offset {
            None => {}
            Some((_, 0, 0)) => out.push('Z'),
            Some((sign, hours, minutes)) => {
                let sign = if sign < 0 { '-' } else { '+' };
                let _ = write!(out, "{sign}{hours:02}:{minutes:02}");
            }
        }
        out
    }
}

/// The number of `len` decimal digits at `from` in `b`, if they are there.
fn digits(b: &[u8], from: usize, len: usize) -> Option<u16> {
    let part = b.get(from..from + len)?;
    if !part.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(
        part.iter()
            .fold(0u16, |acc, d| acc * 10 + u16::from(d - b'0')),
    )
}

/// The offset from UTC at `at` in `b`, up to its end: nothing (local time, `None`), `Z`,
/// `±hh:mm`, `±hhmm` or `±hh`; the outer None when it is none of these.
fn offset(b: &[u8], at: usize) -> Option<Option<(i8, u8, u8)>> {
    match b.get(at) {
        None => Some(None),
        Some(b'Z' | b'z') if b.len() == at + 1 => Some(Some((1, 0, 0))),
        Some(&sign @ (b'+' | b'-')) => {
            let hours = digits(b, at + 1, 2)? as u8;
            let minutes = match &b[at + 3..] {
                [] => 0,
                [b':', _, _] => digits(b, at + 4, 2)? as u8,
                [_, _] => digits(b, at + 3, 2)? as u8,
                _ => return None,
            };
            // A PDF date's minutes take the sign of its hours: -00:30 has none.
            if hours > 23 || minutes > 59 || (sign == b'-' && hours == 0 && minutes > 0) {
                return None;
            }
            let sign = if sign == b'-' && (hours, minutes) != (0, 0) {
                -1
            } else {
                1
            };
            Some(Some((sign, hours, minutes)))
        }
        Some(_) => None,
    }
}

/// An attachment, validated, with what is written of it.
struct Attachment<'a> {
    file: &'a EmbeddedFile,
    /// The name tree key and `F`: the filename with any byte outside printable ASCII
    /// replaced by `_` (`UF` keeps the filename as given).
    key: String,
    relationship: AssociationKind,
    modified: Stamp,
    size: i32,
    filespec: Ref,
    stream: Ref,
}

impl<'a> Attachment<'a> {
    /// Validates `file`: a filename, a relationship, a MIME type, a modification date
    /// and a size that fits a PDF integer. Its object ids are placeholders.
    fn validate(file: &'a EmbeddedFile) -> Result<Self, String> {
        let name = &file.filename;
        if name.is_empty() {
            return Err("an attachment has no filename".into());
        }
        let relationship = relationship(file)?;
        let mime = file.mimetype.as_bytes();
        let slash = mime.iter().filter(|&&c| c == b'/').count();
        if slash != 1
            || mime.first() == Some(&b'/')
            || mime.last() == Some(&b'/')
            || !mime.iter().all(|c| c.is_ascii_graphic())
        {
            return Err(format!(
                "attachment {name:?}: {:?} is not a MIME type like text/xml",
                file.mimetype
            ));
        }
        let modified =
            Stamp::parse(&file.modified).map_err(|e| format!("attachment {name:?}: {e}"))?;
        let size = i32::try_from(file.content.len())
            .map_err(|_| format!("attachment {name:?} is too large"))?;
        let key: String = name
            .chars()
            .map(|c| if matches!(c, ' '..='~') { c } else { '_' })
            .collect();
        Ok(Attachment {
            file,
            key,
            relationship,
            modified,
            size,
            filespec: Ref::new(1),
            stream: Ref::new(1),
        })
    }
}

/// The `AFRelationship` an attachment names.
fn relationship(file: &EmbeddedFile) -> Result<AssociationKind, String> {
    match file.relationship.as_str() {
        "Alternative" => Ok(AssociationKind::Alternative),
        "Data" => Ok(AssociationKind::Data),
        "Source" => Ok(AssociationKind::Source),
        "Supplement" => Ok(AssociationKind::Supplement),
        "Unspecified" => Ok(AssociationKind::Unspecified),
        other => Err(format!(
            "attachment {:?}: relationship {other:?} is none of \
             Alternative, Data, Source, Supplement, Unspecified",
            file.filename
        )),
    }
}

/// The document's dates with Factur-X: the modification date of the attached XML, which
/// needs PDF/A and a relationship of Alternative, Data or Source.
fn factur_x_date(
    fx: &FacturX,
    attachments: &[Attachment<'_>],
    pdfa: bool,
) -> Result<Stamp, String> {
    if !pdfa {
        return Err("Factur-X needs conformance PdfA3b".into());
    }
    let xml = attachments
        .iter()
        .find(|a| a.file.filename == fx.filename)
        .ok_or_else(|| format!("Factur-X names {:?}, not attached", fx.filename))?;
    if !matches!(
        xml.relationship,
        AssociationKind::Alternative | AssociationKind::Data | AssociationKind::Source
    ) {
        return Err(format!(
            "Factur-X: {:?} must be attached as Alternative, Data or Source",
            fx.filename
        ));
    }
    Ok(xml.modified)
}

/// The archive's additions to one document, validated, with their object ids.
pub(crate) struct Plan<'a> {
    archive: &'a Archive,
    /// In name tree order (by key).
    attachments: Vec<Attachment<'a>>,
    /// The document's dates (see the module's documentation).
    date: Option<Stamp>,
    /// Metadata stream and ICC profile, for PDF/A.
    pdfa: Option<(Ref, Ref)>,
}

impl<'a> Plan<'a> {
    /// Validates the archive; object ids are taken from `alloc` (none for the default
    /// archive).
    pub(crate) fn new(
        archive: &'a Archive,
        mut alloc: impl FnMut() -> Ref,
    ) -> Result<Self, String> {
        let pdfa = archive.conformance == Conformance::PdfA3b;
        let mut attachments = Vec::with_capacity(archive.attachments.len());
        for file in &archive.attachments {
            attachments.push(Attachment::validate(file)?);
        }
        let mut date = attachments.first().map(|a| a.modified);
        if let Some(fx) = &archive.factur_x {
            date = Some(factur_x_date(fx, &attachments, pdfa)?);
        }
        attachments.sort_by(|a, b| a.key.cmp(&b.key));
        if let Some(pair) = attachments.windows(2).find(|w| w[0].key == w[1].key) {
            return Err(format!("two attachments are named {:?}", pair[0].key));
        }
        let pdfa = pdfa.then(|| (alloc(), alloc()));
        for attachment in &mut attachments {
            attachment.filespec = alloc();
            attachment.stream = alloc();
        }
        Ok(Plan {
            archive,
            attachments,
            date,
            pdfa,
        })
    }

    pub(crate) fn is_pdfa(&self) -> bool {
        self.pdfa.is_some()
    }

    /// The document's dates, for the Info dictionary (PDF/A only).
    pub(crate) fn info_date(&self) -> Option<Date> {
        self.date.filter(|_| self.is_pdfa()).map(Stamp::pdf)
    }

    /// The catalog's entries: Metadata, OutputIntents, Names/EmbeddedFiles, AF.
    pub(crate) fn catalog(&self, catalog: &mut Catalog<'_>) {
        if let Some((metadata, icc)) = self.pdfa {
            catalog.metadata(metadata);
            catalog
                .output_intents()
                .push()
                .subtype(OutputIntentSubtype::PDFA)
                .output_condition_identifier(TextStr("sRGB IEC61966-2.1"))
                .registry_name(TextStr("http://www.color.org"))
                .info(TextStr("sRGB IEC61966-2.1"))
                .dest_output_profile(icc);
        }
        if self.attachments.is_empty() {
            return;
        }
        {
            let mut names = catalog.names();
            let mut tree = names.embedded_files();
            let mut entries = tree.names();
            for a in &self.attachments {
                entries.insert(Str(a.key.as_bytes()), a.filespec);
            }
        }
        catalog
            .insert(Name(b"AF"))
            .array()
            .items(self.attachments.iter().map(|a| a.filespec));
    }

    /// The objects of the archive: metadata, ICC profile, file specifications and
    /// embedded files.
    pub(crate) fn write_objects(&self, pdf: &mut Pdf, title: &str) {
        if let Some((metadata, icc)) = self.pdfa {
            let xmp = self.xmp(title);
            pdf.metadata(metadata, xmp.as_bytes());
            pdf.icc_profile(icc, &SRGB_ICC_COMPRESSED)
                .n(3)
                .filter(Filter::FlateDecode);
        }
        for a in &self.attachments {
            pdf.file_spec(a.filespec)
                .path(Str(a.key.as_bytes()))
                .unic_file(TextStr(&a.file.filename))
                .description(TextStr(&a.file.description))
                .association_kind(a.relationship)
                .embedded_file_with_unicode(a.stream);
            // Level 1: the XML of an invoice shrinks almost as much as at 6, in a fraction of the time.
            let compressed = miniz_oxide::deflate::compress_to_vec_zlib(&a.file.content, 1);
            let mut stream = pdf.embedded_file(a.stream, &compressed);
            stream
                .subtype(Name(a.file.mimetype.as_bytes()))
                .filter(Filter::FlateDecode);
            stream
                .params()
                .size(a.size)
                .modification_date(a.modified.pdf());
        }
    }

    /// Sets the trailer ID (PDF/A only): both halves are the first 16 bytes of the
    /// SHA-256 of everything written so far, so equal documents get equal ids.
    pub(crate) fn file_id(&self, pdf: &mut Pdf) {
        if self.is_pdfa() {
            let digest = Sha256::digest(pdf.as_bytes());
            let id = digest[..16].to_vec();
            pdf.set_file_id((id.clone(), id));
        }
    }

    /// The XMP packet: PDF/A identification, title, producer, dates and, for Factur-X,
    /// its extension schema and properties.
    fn xmp(&self, title: &str) -> String {
        let mut x = String::with_capacity(4096);
        x.push_str("<?xpacket begin=\"\u{feff}\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>\n");
        x.push_str("<x:xmpmeta xmlns:x=\"adobe:ns:meta/\">\n");
        x.push_str(" <rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">\n");
        x.push_str(
            "  <rdf:Description rdf:about=\"\" xmlns:pdfaid=\"http://www.aiim.org/pdfa/ns/id/\">\n   \
             <pdfaid:part>3</pdfaid:part>\n   \
             <pdfaid:conformance>B</pdfaid:conformance>\n  \
             </rdf:Description>\n",
        );
        let _ = write!(
            x,
            "  <rdf:Description rdf:about=\"\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\">\n   \
             <dc:format>application/pdf</dc:format>\n   \
             <dc:title><rdf:Alt><rdf:li xml:lang=\"x-default\">{}</rdf:li></rdf:Alt></dc:title>\n  \
             </rdf:Description>\n",
            escape(title)
        );
        let _ = write!(
            x,
            "  <rdf:Description rdf:about=\"\" xmlns:pdf=\"http://ns.adobe.com/pdf/1.3/\">\n   \
             <pdf:Producer>{}</pdf:Producer>\n  \
             </rdf:Description>\n",
            escape(PRODUCER)
        );
        if let Some(date) = self.date {
            xmp_dates(&mut x, date);
        }
        if let Some(fx) = &self.archive.factur_x {
            xmp_factur_x_schema(&mut x);
            xmp_factur_x(&mut x, fx);
        }
        x.push_str(" </rdf:RDF>\n</x:xmpmeta>\n<?xpacket end=\"w\"?>");
        x
    }
}

/// The XMP dates (`xmp:CreateDate`, `ModifyDate`, `MetadataDate`): all `date`.
fn xmp_dates(x: &mut String, date: Stamp) {
    let date = date.xmp();
    let _ = write!(
        x,
        "  <rdf:Description rdf:about=\"\" xmlns:xmp=\"http://ns.adobe.com/xap/1.0/\">\n   \
         <xmp:CreateDate>{date}</xmp:CreateDate>\n   \
         <xmp:ModifyDate>{date}</xmp:ModifyDate>\n   \
         <xmp:MetadataDate>{date}</xmp:MetadataDate>\n  \
         </rdf:Description>\n"
    );
}

/// The Factur-X extension schema (`pdfaExtension:schemas`): its namespace, prefix and
/// the four properties it defines.
fn xmp_factur_x_schema(x: &mut String) {
    x.push_str(
        "  <rdf:Description rdf:about=\"\"\n    \
         xmlns:pdfaExtension=\"http://www.aiim.org/pdfa/ns/extension/\"\n    \
         xmlns:pdfaSchema=\"http://www.aiim.org/pdfa/ns/schema#\"\n    \
         xmlns:pdfaProperty=\"http://www.aiim.org/pdfa/ns/property#\">\n   \
         <pdfaExtension:schemas>\n    <rdf:Bag>\n     <rdf:li rdf:parseType=\"Resource\">\n      \
         <pdfaSchema:schema>Factur-X PDFA Extension Schema</pdfaSchema:schema>\n",
    );
    let _ = writeln!(
        x,
        "      <pdfaSchema:namespaceURI>{FACTUR_X_NS}</pdfaSchema:namespaceURI>"
    );
    x.push_str(
        "      <pdfaSchema:prefix>fx</pdfaSchema:prefix>\n      \
         <pdfaSchema:property>\n       <rdf:Seq>\n",
    );
    for (name, description) in [
        ("DocumentFileName", "name of the embedded XML invoice file"),
        ("DocumentType", "INVOICE"),
        ("Version", "The actual version of the Factur-X XML schema"),
        (
            "ConformanceLevel",
            "The conformance level of the embedded Factur-X data",
        ),
    ] {
        let _ = write!(
            x,
            "        <rdf:li rdf:parseType=\"Resource\">\n         \
             <pdfaProperty:name>{name}</pdfaProperty:name>\n         \
             <pdfaProperty:valueType>Text</pdfaProperty:valueType>\n         \
             <pdfaProperty:category>external</pdfaProperty:category>\n         \
             <pdfaProperty:description>{description}</pdfaProperty:description>\n        \
             </rdf:li>\n"
        );
    }
    x.push_str(
        "       </rdf:Seq>\n      </pdfaSchema:property>\n     </rdf:li>\n    \
         </rdf:Bag>\n   </pdfaExtension:schemas>\n  </rdf:Description>\n",
    );
}

/// The Factur-X properties (`fx:`): document type, file name, version and conformance
/// level.
fn xmp_factur_x(x: &mut String, fx: &FacturX) {
    let _ = write!(
        x,
        "  <rdf:Description rdf:about=\"\" xmlns:fx=\"{FACTUR_X_NS}\">\n   \
         <fx:DocumentType>{}</fx:DocumentType>\n   \
         <fx:DocumentFileName>{}</fx:DocumentFileName>\n   \
         <fx:Version>{}</fx:Version>\n   \
         <fx:ConformanceLevel>{}</fx:ConformanceLevel>\n  \
         </rdf:Description>\n",
        escape(&fx.document_type),
        escape(&fx.filename),
        escape(&fx.version),
        escape(&fx.conformance_level)
    );
}

/// Text as XML character data: markup escaped, characters XML 1.0 forbids dropped.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\u{0}'..='\u{1f}' | '\u{7f}' | '\u{fffe}' | '\u{ffff}' => {}
            c => out.push(c),
        }
    }
    out
}

/// The text of a PDF/A document: characters neither font has a glyph for become U+FFFD
/// (or `?`), since PDF/A forbids showing `.notdef`; control characters, which the layout
/// skips, are kept, but dropped from the title (Info and XMP must agree on it).
pub(crate) fn printable(
    doc: &crate::render::Document,
    covered: impl Fn(char) -> bool,
) -> crate::render::Document {
    let replacement = if covered('\u{fffd}') { '\u{fffd}' } else { '?' };
    let fix = |text: &String| -> String {
        text.chars()
            .map(|c| {
                if c.is_control() || covered(c) {
                    c
                } else {
                    replacement
                }
            })
            .collect()
    };
    let fix_all = |texts: &Vec<String>| texts.iter().map(fix).collect::<Vec<_>>();
    let fix_rows = |rows: &Vec<crate::render::MetaRow>| {
        rows.iter()
            .map(|r| crate::render::MetaRow {
                label: fix(&r.label),
                value: fix(&r.value),
            })
            .collect()
    };
    crate::render::Document {
        title: fix(&doc.title)
            .chars()
            .filter(|c| !c.is_control())
            .collect(),
        sender: fix_all(&doc.sender),
        recipient: fix_all(&doc.recipient),
        meta: fix_rows(&doc.meta),
        preamble: fix_all(&doc.preamble),
        items: crate::render::Table {
            header: fix_all(&doc.items.header),
            rows: doc.items.rows.iter().map(fix_all).collect(),
            right_aligned: doc.items.right_aligned.clone(),
        },
        totals: fix_rows(&doc.totals),
        closing: fix_all(&doc.closing),
        footer: fix(&doc.footer),
        print: doc.print,
        matrix: doc.matrix.as_ref().map(|m| crate::render::Matrix {
            caption: fix_all(&m.caption),
            modules: m.modules.clone(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_dates_become_pdf_and_xmp_dates() {
        let cases = [
            ("2026-11-24T00:00:00Z", "2026-11-24T00:00:00Z"),
            ("2026-11-24", "2026-11-24T00:00:00"),
            ("2026-11-24T13:05", "2026-11-24T13:05:00"),
            ("2026-11-24T13:05:09.123+01:30", "2026-11-24T13:05:09+01:30"),
            ("2026-11-24T13:05:09-0500", "2026-11-24T13:05:09-05:00"),
            ("2024-02-29T23:59:59+00:00", "2024-02-29T23:59:59Z"),
            ("2026-11-24T13:05:09-00", "2026-11-24T13:05:09Z"),
        ];
        for (input, xmp) in cases {
            assert_eq!(Stamp::parse(input).unwrap().xmp(), xmp, "{input}");
        }
        for bad in [
            "",
            "2026-13-01",
            "2025-02-29",
            "2026-11-24 10:00",
            "2026-11-24T25:00",
            "2026-11-24T10:00:00Y",
            "2026-11-24T10:00:00+1",
            "24.11.2026",
            "2026-11-24T10:00:00.",
            "2026-11-24T10:00:00-00:30",
        ] {
            assert!(Stamp::parse(bad).is_err(), "{bad:?}");
        }
        let mut pdf = Pdf::new();
        pdf.document_info(Ref::new(1))
            .creation_date(Stamp::parse("2026-11-24T13:05:09-05:30").unwrap().pdf())
            .modified_date(Stamp::parse("2026-11-24T00:00:00Z").unwrap().pdf());
        let bytes = pdf.finish();
        let text = String::from_utf8_lossy(&bytes);
        assert!(text.contains("(D:20261124130509-05'30)"), "{text}");
        assert!(text.contains("(D:20261124000000Z)"), "{text}");
    }

    #[test]
    fn xml_text_is_escaped() {
        assert_eq!(escape("a<b>&\"c\"\u{1}\n"), "a&lt;b&gt;&amp;&quot;c&quot;");
    }
}
