//! The e-invoice XML inside an uploaded hybrid PDF: Factur-X and ZUGFeRD 2.1+
//! (`factur-x.xml`), ZUGFeRD 2.0 (`zugferd-invoice.xml`), ZUGFeRD 1.0
//! (`ZUGFeRD-invoice.xml`) and XRechnung attached to a PDF (`xrechnung.xml`).
//!
//! A small reader written for this one job, not a PDF library. The upload is untrusted and
//! read inside the sandbox, and the crates that read PDFs (lopdf, pdf, pdf-extract and
//! their kind) load the whole document and inflate its streams without a limit on bytes or
//! ratio before anything can be asked of them: a decompression bomb, a `/Kids` loop or an
//! object count in the millions costs them memory or time without end. This reader goes
//! from the trailer to the catalog, the attachments and the one stream it needs, and every
//! step has a bound ([`PdfLimits`]).
//!
//! What it reads: the header `%PDF-` (within the first KiB); cross-reference tables and
//! cross-reference streams (PDF 1.5, `/W`, `/Index`, PNG and TIFF predictors), hybrid
//! files (`/XRefStm`), incremental updates (`/Prev`, loop-safe); object streams (`/N`,
//! `/First`); when the cross-reference data is missing or wrong, a scan of the file for
//! `N G obj` markers instead. Objects: literal strings (escapes, balanced parentheses),
//! hex strings, names with `#xx`, numbers, arrays, dictionaries, references, streams
//! (`/Length` direct or indirect, or up to `endstream` when it is wrong). Filters:
//! `/FlateDecode` (zlib or raw deflate) with its predictors, or none; any other filter is
//! `Malformed`. Encrypted PDFs are `Malformed` (PDF/A, so Factur-X, forbids encryption).
//!
//! The attachments are the catalog's `/Names /EmbeddedFiles` name tree, its `/AF` array
//! and, when those hold no e-invoice, every file specification in the document (`/Type
//! /Filespec`, or a dictionary with `/EF`). The e-invoice is the one named as above (by
//! `/UF`, `/F` or its key in the name tree; case-insensitive, in that order of names),
//! else the only attachment that is XML (named `*.xml`, or `/Subtype` `text/xml` or
//! `application/xml`).
//!
//! Its bounds are in `crate::limits` ([`PdfLimits`] and the `PDF_` constants). Besides
//! those a caller chooses: one object holds at most 4 × `objects_max` values; all streams
//! together decode to at most 4 × `stream_bytes_max` bytes, counting what a stream that
//! fails inflated before it failed, and an object stream is decoded once however many
//! objects name it; Flate is inflated in 32 KiB chunks and stopped as soon as a limit is
//! passed; the parser and the filters read at most 8 × (the file's size plus the bytes
//! inflated) + 1 MiB in all, which keeps the time linear when objects overlap; no
//! allocation is sized by an unchecked number from the file.
//! Reference and `/Kids` loops are errors; a `/Prev` loop, like any other broken
//! cross-reference data, sends the reader to the scan.
//!
//! `syntax` reads objects from bytes, `xref` finds them by number, `filters` decodes a
//! stream's data, `attachments` picks the e-invoice among the attached files.

mod attachments;
mod filters;
mod syntax;
#[cfg(test)]
mod tests;
mod xref;

use std::fmt;

use crate::limits::{PDF_DEPTH_HARD_MAX, PDF_HEADER_WINDOW, PDF_TAIL_WINDOW, PdfLimits};
use xref::Doc;

/// The e-invoice found in a PDF.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Embedded {
    /// The attachment's name as the PDF gives it, without any folder (empty when the
    /// attachment has no name).
    pub filename: String,
    /// The attachment's bytes, decoded.
    pub xml: Vec<u8>,
}

/// Why no e-invoice came out of a PDF.
#[derive(Debug, Clone)]
pub enum PdfError {
    /// No `%PDF-` header: not a PDF.
    NotPdf,
    /// The file ends early (it was cut short).
    Truncated,
    /// A PDF without an attachment recognisable as the e-invoice.
    NoEInvoice,
    /// Reading it would pass a limit; which one.
    TooLarge(String),
    /// Broken, or using what this reader does not support; what.
    Malformed(String),
}

impl fmt::Display for PdfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PdfError::NotPdf => f.write_str("not a PDF"),
            PdfError::Truncated => f.write_str("the PDF is cut short"),
            PdfError::NoEInvoice => f.write_str("the PDF has no e-invoice attached"),
            PdfError::TooLarge(what) => write!(f, "the PDF is too large to read: {what}"),
            PdfError::Malformed(what) => write!(f, "the PDF is malformed: {what}"),
        }
    }
}

impl std::error::Error for PdfError {}

/// The e-invoice attached to `pdf`.
pub fn embedded_xml(pdf: &[u8], limits: &PdfLimits) -> Result<Embedded, PdfError> {
    let head = &pdf[..pdf.len().min(PDF_HEADER_WINDOW)];
    let Some(at) = find(head, b"%PDF-", 0) else {
        return Err(PdfError::NotPdf);
    };
    // Offsets count from the header when something precedes it.
    let pdf = &pdf[at..];
    let limits = PdfLimits {
        depth_max: limits.depth_max.min(PDF_DEPTH_HARD_MAX),
        ..*limits
    };
    match read(pdf, &limits) {
        Err(PdfError::NoEInvoice | PdfError::Malformed(_)) if !ends_complete(pdf) => {
            Err(PdfError::Truncated)
        }
        result => result,
    }
}

pub(super) fn malformed(what: impl Into<String>) -> PdfError {
    PdfError::Malformed(what.into())
}

pub(super) fn lossy(bytes: &[u8]) -> String {
    let cut = &bytes[..bytes.len().min(40)];
    String::from_utf8_lossy(cut).into_owned()
}

/// Reads by the cross-reference data; when that is broken, by a scan of the file.
fn read(pdf: &[u8], limits: &PdfLimits) -> Result<Embedded, PdfError> {
    let mut doc = Doc::new(pdf, limits);
    let first = match doc.read_xref() {
        Ok(()) if doc.encrypted => return Err(encrypted()),
        Ok(()) => doc.find(),
        Err(e) => Err(e),
    };
    match first {
        Err(PdfError::Malformed(_) | PdfError::Truncated) => {
            let mut doc = Doc::new(pdf, limits);
            doc.scan()?;
            if doc.encrypted {
                return Err(encrypted());
            }
            doc.find()
        }
        other => other,
    }
}

fn encrypted() -> PdfError {
    malformed("the PDF is encrypted")
}

fn ends_complete(pdf: &[u8]) -> bool {
    let tail = &pdf[pdf.len().saturating_sub(PDF_TAIL_WINDOW)..];
    find(tail, b"%%EOF", 0).is_some()
}

/// The first `needle` in `hay` at or after `from`.
pub(super) fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    let rest = hay.get(from..)?;
    rest.windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

/// The last `needle` in `hay`.
pub(super) fn rfind(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).rposition(|w| w == needle)
}
