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
//! step has a bound ([`Limits`]).
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
//! Its bounds, besides those of [`Limits`]: one object holds at most 4 × `objects_max`
//! values; all streams together decode to at most 4 × `stream_bytes_max` bytes; Flate is
//! inflated in 32 KiB chunks and stopped as soon as a limit is passed; the parser reads at
//! most 8 × (the file's size plus the bytes inflated) + 1 MiB in all, which keeps the time
//! linear when objects overlap; no allocation is sized by an unchecked number from the
//! file. Reference and `/Kids` loops are errors; a `/Prev` loop, like any other broken
//! cross-reference data, sends the reader to the scan.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::rc::Rc;

use flate2::{Decompress, FlushDecompress, Status};

/// Bounds on what reading one PDF may cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most indirect objects: entries of the cross-reference data, `obj` markers of the
    /// fallback scan, members of one object stream, cross-reference sections.
    pub objects_max: usize,
    /// Most bytes one stream may decode to.
    pub stream_bytes_max: usize,
    /// Most bytes a Flate stream may inflate to per compressed byte (a stream inflating to
    /// at most 64 KiB is never refused for its ratio).
    pub inflate_ratio_max: usize,
    /// Deepest nesting of arrays and dictionaries, of references resolved one within
    /// another, of a name tree (at most 128 whatever this says: the parser recurses).
    pub depth_max: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            objects_max: 100_000,
            stream_bytes_max: 16 * 1024 * 1024,
            inflate_ratio_max: 200,
            depth_max: 64,
        }
    }
}

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
#[derive(Debug)]
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
pub fn embedded_xml(pdf: &[u8], limits: &Limits) -> Result<Embedded, PdfError> {
    let head = &pdf[..pdf.len().min(HEADER_WINDOW)];
    let Some(at) = find(head, b"%PDF-", 0) else {
        return Err(PdfError::NotPdf);
    };
    // Offsets count from the header when something precedes it.
    let pdf = &pdf[at..];
    let limits = Limits {
        depth_max: limits.depth_max.min(DEPTH_HARD_MAX),
        ..*limits
    };
    match read(pdf, &limits) {
        Err(PdfError::NoEInvoice | PdfError::Malformed(_)) if !ends_complete(pdf) => {
            Err(PdfError::Truncated)
        }
        result => result,
    }
}

/// The names an e-invoice has, best first (compared case-insensitively).
const KNOWN_NAMES: [&str; 3] = ["factur-x.xml", "zugferd-invoice.xml", "xrechnung.xml"];
/// Where the header may start.
const HEADER_WINDOW: usize = 1024;
/// The file's end, where `%%EOF` must be for it to count as complete.
const TAIL_WINDOW: usize = 1024;
/// The nesting the parser's recursion may reach, whatever the limits say.
const DEPTH_HARD_MAX: usize = 128;
/// All streams together decode to at most this many times `stream_bytes_max`.
const STREAMS_FACTOR: usize = 4;
/// One object holds at most this many times `objects_max` values.
const VALUES_FACTOR: usize = 4;
/// Streams inflating to at most this many bytes are exempt from the ratio limit.
const RATIO_EXEMPT: usize = 64 * 1024;
/// Bytes inflated at a time.
const CHUNK: usize = 32 * 1024;
/// The parser reads at most this many times (file + inflated bytes), plus `WORK_FLOOR`.
const WORK_FACTOR: usize = 8;
const WORK_FLOOR: usize = 1024 * 1024;
/// Whitespace between a stream's data and `endstream` when `/Length` is right.
const STREAM_END_SLACK: usize = 64;

fn malformed(what: impl Into<String>) -> PdfError {
    PdfError::Malformed(what.into())
}

fn lossy(bytes: &[u8]) -> String {
    let cut = &bytes[..bytes.len().min(40)];
    String::from_utf8_lossy(cut).into_owned()
}

/// Reads by the cross-reference data; when that is broken, by a scan of the file.
fn read(pdf: &[u8], limits: &Limits) -> Result<Embedded, PdfError> {
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
    let tail = &pdf[pdf.len().saturating_sub(TAIL_WINDOW)..];
    find(tail, b"%%EOF", 0).is_some()
}

/// The first `needle` in `hay` at or after `from`.
fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    let rest = hay.get(from..)?;
    rest.windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

/// The last `needle` in `hay`.
fn rfind(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).rposition(|w| w == needle)
}

// ---------------------------------------------------------------------------------------
// Objects and their syntax

/// A PDF object. Streams keep their dictionary and where their data starts in the file.
#[derive(Debug, Clone, PartialEq)]
enum Obj {
    Null,
    Bool,
    Int(i64),
    Real,
    Str(Vec<u8>),
    Name(Vec<u8>),
    Array(Vec<Obj>),
    Dict(Dict),
    Ref(u32),
    Stream(Dict, usize),
}

type Dict = Vec<(Vec<u8>, Obj)>;

fn dict_get<'d>(d: &'d Dict, key: &[u8]) -> Option<&'d Obj> {
    d.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

fn dict_int(d: &Dict, key: &[u8]) -> Option<i64> {
    match dict_get(d, key) {
        Some(Obj::Int(n)) => Some(*n),
        _ => None,
    }
}

fn dict_name_is(d: &Dict, key: &[u8], name: &[u8]) -> bool {
    matches!(dict_get(d, key), Some(Obj::Name(n)) if n == name)
}

fn is_ws(c: u8) -> bool {
    matches!(c, b'\0' | b'\t' | b'\n' | 0x0c | b'\r' | b' ')
}

fn is_delim(c: u8) -> bool {
    matches!(
        c,
        b'(' | b')' | b'<' | b'>' | b'[' | b']' | b'{' | b'}' | b'/' | b'%'
    )
}

fn is_regular(c: u8) -> bool {
    !is_ws(c) && !is_delim(c)
}

fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Reads objects from `buf` from `pos` on.
struct Parser<'b> {
    buf: &'b [u8],
    pos: usize,
    depth_max: usize,
    values: usize,
    values_max: usize,
}

impl<'b> Parser<'b> {
    fn peek(&self) -> Option<u8> {
        self.buf.get(self.pos).copied()
    }

    fn at_end(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// Skips whitespace and comments.
    fn skip_ws(&mut self) {
        while let Some(c) = self.peek() {
            if is_ws(c) {
                self.pos += 1;
            } else if c == b'%' {
                while self.peek().is_some_and(|c| c != b'\r' && c != b'\n') {
                    self.pos += 1;
                }
            } else {
                break;
            }
        }
    }

    /// The run of regular characters at the position (maybe empty).
    fn token(&mut self) -> &'b [u8] {
        let start = self.pos;
        while self.peek().is_some_and(is_regular) {
            self.pos += 1;
        }
        self.buf.get(start..self.pos).unwrap_or_default()
    }

    /// Whether the next token is `word`; consumed when it is.
    fn next_is(&mut self, word: &[u8]) -> bool {
        let save = self.pos;
        self.skip_ws();
        if self.token() == word {
            true
        } else {
            self.pos = save;
            false
        }
    }

    fn expect(&mut self, word: &[u8]) -> Result<(), PdfError> {
        self.skip_ws();
        let t = self.token();
        if t == word {
            Ok(())
        } else if t.is_empty() && self.at_end() {
            Err(PdfError::Truncated)
        } else {
            Err(malformed(format!(
                "`{}` where `{}` belongs",
                lossy(t),
                lossy(word)
            )))
        }
    }

    /// A non-negative integer token.
    fn uint(&mut self) -> Result<u64, PdfError> {
        self.skip_ws();
        let t = self.token();
        if t.is_empty() {
            return Err(if self.at_end() {
                PdfError::Truncated
            } else {
                malformed("a number is missing")
            });
        }
        let mut n: u64 = 0;
        for &d in t {
            if !d.is_ascii_digit() {
                return Err(malformed(format!("`{}` is not a number", lossy(t))));
            }
            n = n
                .checked_mul(10)
                .and_then(|n| n.checked_add(u64::from(d - b'0')))
                .ok_or_else(|| malformed("a number is too large"))?;
        }
        Ok(n)
    }

    fn value(&mut self, depth: usize) -> Result<Obj, PdfError> {
        self.values += 1;
        if self.values > self.values_max {
            return Err(PdfError::TooLarge(format!(
                "an object holds more than {} values",
                self.values_max
            )));
        }
        if depth > self.depth_max {
            return Err(PdfError::TooLarge(format!(
                "objects nest deeper than {}",
                self.depth_max
            )));
        }
        self.skip_ws();
        let Some(c) = self.peek() else {
            return Err(PdfError::Truncated);
        };
        match c {
            b'/' => {
                self.pos += 1;
                Ok(Obj::Name(self.name()))
            }
            b'(' => {
                self.pos += 1;
                self.literal().map(Obj::Str)
            }
            b'<' if self.buf.get(self.pos + 1) == Some(&b'<') => {
                self.pos += 2;
                self.dict(depth).map(Obj::Dict)
            }
            b'<' => {
                self.pos += 1;
                self.hex().map(Obj::Str)
            }
            b'[' => {
                self.pos += 1;
                self.array(depth)
            }
            b'+' | b'-' | b'.' | b'0'..=b'9' => self.number(),
            _ => match self.token() {
                b"true" | b"false" => Ok(Obj::Bool),
                b"null" => Ok(Obj::Null),
                b"" => Err(malformed(format!("unexpected `{}`", char::from(c)))),
                t => Err(malformed(format!("unexpected `{}`", lossy(t)))),
            },
        }
    }

    fn name(&mut self) -> Vec<u8> {
        let raw = self.token();
        let mut out = Vec::with_capacity(raw.len());
        let mut i = 0;
        while let Some(&c) = raw.get(i) {
            if c == b'#'
                && let Some(hi) = raw.get(i + 1).copied().and_then(hex_value)
                && let Some(lo) = raw.get(i + 2).copied().and_then(hex_value)
            {
                out.push((hi << 4) | lo);
                i += 3;
            } else {
                out.push(c);
                i += 1;
            }
        }
        out
    }

    fn literal(&mut self) -> Result<Vec<u8>, PdfError> {
        let mut out = Vec::new();
        let mut open = 0usize;
        loop {
            let Some(c) = self.peek() else {
                return Err(PdfError::Truncated);
            };
            self.pos += 1;
            match c {
                b'\\' => {
                    let Some(e) = self.peek() else {
                        return Err(PdfError::Truncated);
                    };
                    self.pos += 1;
                    match e {
                        b'n' => out.push(b'\n'),
                        b'r' => out.push(b'\r'),
                        b't' => out.push(b'\t'),
                        b'b' => out.push(0x08),
                        b'f' => out.push(0x0c),
                        b'0'..=b'7' => {
                            let mut v = u32::from(e - b'0');
                            for _ in 0..2 {
                                match self.peek() {
                                    Some(d @ b'0'..=b'7') => {
                                        v = v * 8 + u32::from(d - b'0');
                                        self.pos += 1;
                                    }
                                    _ => break,
                                }
                            }
                            out.push(v.to_le_bytes()[0]);
                        }
                        // A line continuation.
                        b'\r' => {
                            if self.peek() == Some(b'\n') {
                                self.pos += 1;
                            }
                        }
                        b'\n' => {}
                        other => out.push(other),
                    }
                }
                b'(' => {
                    open += 1;
                    out.push(c);
                }
                b')' => {
                    if open == 0 {
                        return Ok(out);
                    }
                    open -= 1;
                    out.push(c);
                }
                b'\r' => {
                    out.push(b'\n');
                    if self.peek() == Some(b'\n') {
                        self.pos += 1;
                    }
                }
                _ => out.push(c),
            }
        }
    }

    fn hex(&mut self) -> Result<Vec<u8>, PdfError> {
        let mut out = Vec::new();
        let mut high: Option<u8> = None;
        loop {
            let Some(c) = self.peek() else {
                return Err(PdfError::Truncated);
            };
            self.pos += 1;
            if c == b'>' {
                if let Some(h) = high {
                    out.push(h << 4);
                }
                return Ok(out);
            }
            if is_ws(c) {
                continue;
            }
            let Some(v) = hex_value(c) else {
                return Err(malformed("a hex string holds a character that is not hex"));
            };
            match high.take() {
                Some(h) => out.push((h << 4) | v),
                None => high = Some(v),
            }
        }
    }

    fn dict(&mut self, depth: usize) -> Result<Dict, PdfError> {
        let mut d = Vec::new();
        loop {
            self.skip_ws();
            match self.peek() {
                None => return Err(PdfError::Truncated),
                Some(b'>') if self.buf.get(self.pos + 1) == Some(&b'>') => {
                    self.pos += 2;
                    return Ok(d);
                }
                Some(b'/') => {
                    self.pos += 1;
                    let key = self.name();
                    let value = self.value(depth + 1)?;
                    d.push((key, value));
                }
                Some(_) => return Err(malformed("a dictionary key is not a name")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Obj, PdfError> {
        let mut items = Vec::new();
        loop {
            self.skip_ws();
            match self.peek() {
                None => return Err(PdfError::Truncated),
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Obj::Array(items));
                }
                Some(_) => items.push(self.value(depth + 1)?),
            }
        }
    }

    /// A number, or a reference `N G R`.
    fn number(&mut self) -> Result<Obj, PdfError> {
        let t = self.token();
        let digits = match t.first() {
            Some(b'-' | b'+') => &t[1..],
            _ => t,
        };
        let negative = t.first() == Some(&b'-');
        if !digits.is_empty() && digits.iter().all(u8::is_ascii_digit) {
            let mut n: i64 = 0;
            for &d in digits {
                match n
                    .checked_mul(10)
                    .and_then(|n| n.checked_add(i64::from(d - b'0')))
                {
                    Some(m) => n = m,
                    // Beyond any count or offset this reader uses.
                    None => return Ok(Obj::Real),
                }
            }
            if negative {
                return Ok(Obj::Int(-n));
            }
            if t.first() != Some(&b'+')
                && let Ok(num) = u32::try_from(n)
                && self.reference_follows()
            {
                return Ok(Obj::Ref(num));
            }
            return Ok(Obj::Int(n));
        }
        if digits.iter().any(u8::is_ascii_digit)
            && digits.iter().all(|&c| c.is_ascii_digit() || c == b'.')
        {
            return Ok(Obj::Real);
        }
        Err(malformed(format!("`{}` is not a number", lossy(t))))
    }

    /// After an object number: whether `G R` follows (consumed when it does).
    fn reference_follows(&mut self) -> bool {
        let save = self.pos;
        self.skip_ws();
        let generation = self.token();
        if !generation.is_empty()
            && generation.len() <= 5
            && generation.iter().all(u8::is_ascii_digit)
        {
            self.skip_ws();
            if self.token() == b"R" {
                return true;
            }
        }
        self.pos = save;
        false
    }
}

/// `N G obj` and the object after it; a dictionary followed by `stream` is a stream.
fn indirect(p: &mut Parser<'_>, expect: Option<u32>) -> Result<(u32, Obj), PdfError> {
    let num = p.uint()?;
    p.uint()?;
    p.expect(b"obj")?;
    let num = u32::try_from(num).map_err(|_| malformed("an object number is too large"))?;
    if let Some(e) = expect
        && e != num
    {
        return Err(malformed(format!(
            "the cross-reference data puts object {e} where object {num} is"
        )));
    }
    let value = p.value(0)?;
    match value {
        Obj::Dict(d) if p.next_is(b"stream") => {
            match p.peek() {
                Some(b'\r') => {
                    p.pos += 1;
                    if p.peek() == Some(b'\n') {
                        p.pos += 1;
                    }
                }
                Some(b'\n') => p.pos += 1,
                _ => {}
            }
            Ok((num, Obj::Stream(d, p.pos)))
        }
        other => Ok((num, other)),
    }
}

/// A text string (a file name): UTF-16 with its byte order mark, UTF-8, else
/// PDFDocEncoding (taken as Latin-1). Trailing NULs go.
fn text(s: &[u8]) -> String {
    fn utf16(b: &[u8], unit: fn([u8; 2]) -> u16) -> String {
        let units = b.chunks_exact(2).map(|p| unit([p[0], p[1]]));
        char::decode_utf16(units)
            .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
            .collect()
    }
    let s = if let Some(rest) = s.strip_prefix(&[0xfe, 0xff]) {
        utf16(rest, u16::from_be_bytes)
    } else if let Some(rest) = s.strip_prefix(&[0xff, 0xfe]) {
        utf16(rest, u16::from_le_bytes)
    } else if let Some(rest) = s.strip_prefix(&[0xef, 0xbb, 0xbf]) {
        String::from_utf8_lossy(rest).into_owned()
    } else if let Ok(u) = std::str::from_utf8(s) {
        u.to_owned()
    } else {
        s.iter().map(|&b| char::from(b)).collect()
    };
    s.trim_end_matches('\0').to_owned()
}

/// The last part of a file name that may hold folders.
fn basename(name: &str) -> &str {
    name.rsplit(['/', '\\']).next().unwrap_or(name).trim()
}

// ---------------------------------------------------------------------------------------
// Streams

/// `input` inflated, stopped as soon as it passes `stream_max` bytes, `ratio_max` times its
/// own size (past `RATIO_EXEMPT`) or `left`.
fn inflate(
    input: &[u8],
    stream_max: usize,
    ratio_max: usize,
    left: usize,
) -> Result<Vec<u8>, PdfError> {
    let ratio_cap = input.len().saturating_mul(ratio_max).max(RATIO_EXEMPT);
    let zlib = match input {
        [a, b, ..] => {
            (a & 0x0f) == 8 && (a >> 4) <= 7 && ((u16::from(*a) << 8) | u16::from(*b)) % 31 == 0
        }
        _ => false,
    };
    let mut d = Decompress::new(zlib);
    let mut out = Vec::new();
    let mut chunk = vec![0u8; CHUNK];
    loop {
        let (in_before, out_before) = (d.total_in(), d.total_out());
        let at = usize::try_from(in_before).map_or(input.len(), |n| n.min(input.len()));
        let status = d
            .decompress(&input[at..], &mut chunk, FlushDecompress::None)
            .map_err(|e| malformed(format!("corrupt Flate data: {e}")))?;
        let produced =
            usize::try_from(d.total_out() - out_before).map_or(chunk.len(), |n| n.min(chunk.len()));
        let total = out.len() + produced;
        if total > stream_max {
            return Err(PdfError::TooLarge(format!(
                "a stream inflates past {stream_max} bytes"
            )));
        }
        if total > ratio_cap {
            return Err(PdfError::TooLarge(format!(
                "a stream inflates more than {ratio_max} times its size"
            )));
        }
        if total > left {
            return Err(PdfError::TooLarge(
                "the streams inflate past their limit in all".into(),
            ));
        }
        out.extend_from_slice(&chunk[..produced]);
        match status {
            Status::StreamEnd => return Ok(out),
            Status::Ok | Status::BufError => {
                if d.total_in() == in_before && d.total_out() == out_before {
                    // The input is used up before the end of the Flate data.
                    return Err(PdfError::Truncated);
                }
            }
        }
    }
}

/// `data` with the predictor of `parms` undone.
fn unpredict(data: Vec<u8>, parms: &Dict) -> Result<Vec<u8>, PdfError> {
    let int = |key: &[u8], default: i64| dict_int(parms, key).unwrap_or(default);
    let predictor = int(b"Predictor", 1);
    if predictor <= 1 || data.is_empty() {
        return Ok(data);
    }
    let colors = int(b"Colors", 1);
    let bpc = int(b"BitsPerComponent", 8);
    let columns = int(b"Columns", 1);
    if !(1..=32).contains(&colors) || ![1, 2, 4, 8, 16].contains(&bpc) || columns < 1 {
        return Err(malformed("predictor parameters out of range"));
    }
    // At most 32 × 16 bits.
    let pixel_bits = usize::try_from(colors * bpc).unwrap_or(512);
    let bpp = pixel_bits.div_ceil(8);
    let row = usize::try_from(columns)
        .ok()
        .and_then(|c| c.checked_mul(pixel_bits))
        .map(|bits| bits.div_ceil(8))
        .filter(|&r| r <= data.len())
        .ok_or_else(|| malformed("a predictor row is longer than the stream"))?;
    match predictor {
        2 => {
            if bpc != 8 {
                return Err(malformed("TIFF predictor with other than 8 bits"));
            }
            let mut data = data;
            for r in data.chunks_mut(row) {
                for i in bpp..r.len() {
                    r[i] = r[i].wrapping_add(r[i - bpp]);
                }
            }
            Ok(data)
        }
        10..=15 => {
            let mut out = Vec::with_capacity(data.len());
            let mut prev = vec![0u8; row];
            let mut cur = vec![0u8; row];
            for line in data.chunks(row + 1) {
                let Some((&kind, src)) = line.split_first() else {
                    break;
                };
                for (i, &x) in src.iter().enumerate() {
                    let a = if i >= bpp { cur[i - bpp] } else { 0 };
                    let b = prev[i];
                    let c = if i >= bpp { prev[i - bpp] } else { 0 };
                    cur[i] = match kind {
                        0 => x,
                        1 => x.wrapping_add(a),
                        2 => x.wrapping_add(b),
                        3 => x.wrapping_add(((u16::from(a) + u16::from(b)) / 2).to_le_bytes()[0]),
                        4 => x.wrapping_add(paeth(a, b, c)),
                        _ => return Err(malformed("unknown PNG predictor")),
                    };
                }
                out.extend_from_slice(&cur[..src.len()]);
                std::mem::swap(&mut prev, &mut cur);
            }
            Ok(out)
        }
        _ => Err(malformed(format!("unknown predictor {predictor}"))),
    }
}

fn paeth(a: u8, b: u8, c: u8) -> u8 {
    let (ia, ib, ic) = (i16::from(a), i16::from(b), i16::from(c));
    let p = ia + ib - ic;
    let (pa, pb, pc) = ((p - ia).abs(), (p - ib).abs(), (p - ic).abs());
    if pa <= pb && pa <= pc {
        a
    } else if pb <= pc {
        b
    } else {
        c
    }
}

// ---------------------------------------------------------------------------------------
// The document

/// Where an object is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Loc {
    Free,
    At(usize),
    /// In the object stream of that number, at that index.
    InStream(u32, u32),
}

/// An object stream, decoded.
struct ObjStm {
    data: Vec<u8>,
    first: usize,
    members: Vec<(u32, usize)>,
    by_num: HashMap<u32, usize>,
}

/// An attachment that may be the e-invoice.
struct Candidate {
    /// `/UF`, `/F`, the key in the name tree; as given.
    names: Vec<String>,
    /// The embedded file stream.
    file: u32,
}

#[derive(Default)]
struct Found {
    candidates: Vec<Candidate>,
    files: HashSet<u32>,
    specs: HashSet<u32>,
}

struct Doc<'a> {
    pdf: &'a [u8],
    limits: Limits,
    xref: HashMap<u32, Loc>,
    root: Option<u32>,
    encrypted: bool,
    objstms: HashMap<u32, Rc<ObjStm>>,
    /// Objects being resolved, innermost last: one of them again is a loop.
    active: Vec<u32>,
    inflated: usize,
    work: usize,
    endstreams: Option<Vec<usize>>,
}

impl<'a> Doc<'a> {
    fn new(pdf: &'a [u8], limits: &Limits) -> Self {
        Doc {
            pdf,
            limits: *limits,
            xref: HashMap::new(),
            root: None,
            encrypted: false,
            objstms: HashMap::new(),
            active: Vec::new(),
            inflated: 0,
            work: 0,
            endstreams: None,
        }
    }

    fn parser<'b>(&self, buf: &'b [u8], pos: usize) -> Parser<'b> {
        Parser {
            buf,
            pos: pos.min(buf.len()),
            depth_max: self.limits.depth_max,
            values: 0,
            values_max: self.limits.objects_max.saturating_mul(VALUES_FACTOR),
        }
    }

    /// Counts `bytes` read by the parser against its bound.
    fn charge(&mut self, bytes: usize) -> Result<(), PdfError> {
        self.work = self.work.saturating_add(bytes);
        let max = self
            .pdf
            .len()
            .saturating_add(self.inflated)
            .saturating_mul(WORK_FACTOR)
            .saturating_add(WORK_FLOOR);
        if self.work > max {
            return Err(PdfError::TooLarge(
                "its objects overlap: reading them takes too long".into(),
            ));
        }
        Ok(())
    }

    fn too_many_objects(&self) -> PdfError {
        PdfError::TooLarge(format!("more than {} objects", self.limits.objects_max))
    }

    /// The object written at `at` in the file.
    fn parse_at(&mut self, at: usize, expect: Option<u32>) -> Result<(u32, Obj), PdfError> {
        let mut p = self.parser(self.pdf, at);
        let result = indirect(&mut p, expect);
        self.charge(p.pos.saturating_sub(at))?;
        result
    }

    // -- Cross-reference data

    fn read_xref(&mut self) -> Result<(), PdfError> {
        let at = rfind(self.pdf, b"startxref").ok_or_else(|| malformed("no startxref"))?;
        let mut p = self.parser(self.pdf, at + b"startxref".len());
        let start = usize::try_from(p.uint()?).map_err(|_| malformed("startxref too large"))?;
        let mut visited = HashSet::new();
        let mut entries = 0usize;
        let mut next = Some(start);
        let mut newest = true;
        while let Some(off) = next {
            if !visited.insert(off) {
                return Err(malformed(
                    "the /Prev chain of cross-reference sections loops",
                ));
            }
            if visited.len() > self.limits.objects_max {
                return Err(self.too_many_objects());
            }
            let trailer = self.xref_section(off, &mut entries)?;
            if newest {
                self.encrypted = dict_get(&trailer, b"Encrypt").is_some();
                newest = false;
            }
            if self.root.is_none()
                && let Some(Obj::Ref(root)) = dict_get(&trailer, b"Root")
            {
                self.root = Some(*root);
            }
            // A hybrid file: its cross-reference stream comes before the older sections.
            if let Some(stm) = dict_int(&trailer, b"XRefStm") {
                let stm = usize::try_from(stm).map_err(|_| malformed("bad /XRefStm"))?;
                if visited.insert(stm) {
                    self.xref_stream(stm, &mut entries)?;
                }
            }
            next = match dict_get(&trailer, b"Prev") {
                Some(Obj::Int(prev)) => {
                    Some(usize::try_from(*prev).map_err(|_| malformed("bad /Prev"))?)
                }
                _ => None,
            };
        }
        if self.root.is_none() {
            return Err(malformed("the trailer names no catalog"));
        }
        Ok(())
    }

    /// Reads the section at `off` into the table (older entries never replace newer ones)
    /// and answers its trailer.
    fn xref_section(&mut self, off: usize, entries: &mut usize) -> Result<Dict, PdfError> {
        let mut p = self.parser(self.pdf, off);
        if !p.next_is(b"xref") {
            return self.xref_stream(off, entries);
        }
        let result = self.xref_table(&mut p, entries);
        self.charge(p.pos.saturating_sub(off))?;
        result
    }

    fn xref_table(&mut self, p: &mut Parser<'_>, entries: &mut usize) -> Result<Dict, PdfError> {
        while !p.next_is(b"trailer") {
            let first = p.uint()?;
            let count = p.uint()?;
            for i in 0..count {
                let offset = p.uint()?;
                p.uint()?;
                p.skip_ws();
                let loc = match p.token() {
                    b"n" => Loc::At(
                        usize::try_from(offset).map_err(|_| malformed("an offset is too large"))?,
                    ),
                    b"f" => Loc::Free,
                    [] if p.at_end() => return Err(PdfError::Truncated),
                    _ => return Err(malformed("a cross-reference entry is neither n nor f")),
                };
                *entries += 1;
                if *entries > self.limits.objects_max {
                    return Err(self.too_many_objects());
                }
                let num = first
                    .checked_add(i)
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| malformed("an object number is too large"))?;
                self.xref.entry(num).or_insert(loc);
            }
        }
        match p.value(0)? {
            Obj::Dict(d) => Ok(d),
            _ => Err(malformed("the trailer is not a dictionary")),
        }
    }

    fn xref_stream(&mut self, off: usize, entries: &mut usize) -> Result<Dict, PdfError> {
        let Obj::Stream(dict, start) = self.parse_at(off, None)?.1 else {
            return Err(malformed("no cross-reference data at startxref"));
        };
        let widths: Vec<usize> = match dict_get(&dict, b"W") {
            Some(Obj::Array(w)) => w
                .iter()
                .map(|w| match w {
                    Obj::Int(n @ 0..=8) => usize::try_from(*n).unwrap_or(0),
                    _ => 9,
                })
                .collect(),
            _ => Vec::new(),
        };
        let [w0, w1, w2] = widths[..] else {
            return Err(malformed("a cross-reference stream without /W [a b c]"));
        };
        if w0 > 8 || w1 > 8 || w2 > 8 || w0 + w1 + w2 == 0 {
            return Err(malformed("bad /W of a cross-reference stream"));
        }
        let size = u64::try_from(dict_int(&dict, b"Size").unwrap_or(0)).unwrap_or(0);
        let index: Vec<(u64, u64)> = match dict_get(&dict, b"Index") {
            Some(Obj::Array(a)) => a
                .chunks_exact(2)
                .map(|pair| match pair {
                    [Obj::Int(s), Obj::Int(n)] => Ok((
                        u64::try_from(*s).map_err(|_| malformed("bad /Index"))?,
                        u64::try_from(*n).map_err(|_| malformed("bad /Index"))?,
                    )),
                    _ => Err(malformed("bad /Index")),
                })
                .collect::<Result<_, _>>()?,
            _ => vec![(0, size)],
        };
        let raw = self.stream_bytes(&dict, start)?;
        let data = self.decode(&dict, raw)?;
        let field = |bytes: &[u8]| bytes.iter().fold(0u64, |n, &b| (n << 8) | u64::from(b));
        let mut rows = data.chunks_exact(w0 + w1 + w2);
        'sections: for (first, count) in index {
            for i in 0..count {
                let Some(row) = rows.next() else {
                    break 'sections;
                };
                *entries += 1;
                if *entries > self.limits.objects_max {
                    return Err(self.too_many_objects());
                }
                let kind = if w0 == 0 { 1 } else { field(&row[..w0]) };
                let a = field(&row[w0..w0 + w1]);
                let b = field(&row[w0 + w1..]);
                let num = first
                    .checked_add(i)
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| malformed("an object number is too large"))?;
                let loc = match kind {
                    0 => Loc::Free,
                    1 => match usize::try_from(a) {
                        Ok(a) => Loc::At(a),
                        Err(_) => continue,
                    },
                    2 => match (u32::try_from(a), u32::try_from(b)) {
                        (Ok(s), Ok(i)) => Loc::InStream(s, i),
                        _ => continue,
                    },
                    // Other types are references to the null object.
                    _ => continue,
                };
                self.xref.entry(num).or_insert(loc);
            }
        }
        Ok(dict)
    }

    /// Without usable cross-reference data: every `N G obj` in the file (the last of a
    /// number wins), the members of the object streams among them, and the last trailer.
    fn scan(&mut self) -> Result<(), PdfError> {
        let pdf = self.pdf;
        let mut markers = 0usize;
        let mut from = 0;
        while let Some(k) = find(pdf, b"obj", from) {
            from = k + 3;
            if let Some((num, at)) = marker(pdf, k) {
                markers += 1;
                if markers > self.limits.objects_max {
                    return Err(self.too_many_objects());
                }
                self.xref.insert(num, Loc::At(at));
            }
        }
        let mut trailer: Option<(usize, Dict)> = None;
        if let Some(at) = rfind(pdf, b"trailer") {
            let mut p = self.parser(pdf, at + b"trailer".len());
            let value = p.value(0);
            self.charge(p.pos.saturating_sub(at))?;
            if let Ok(Obj::Dict(d)) = value {
                trailer = Some((at, d));
            }
        }
        let mut nums: Vec<u32> = self.xref.keys().copied().collect();
        nums.sort_unstable();
        for num in nums {
            let Some(Loc::At(at)) = self.xref.get(&num).copied() else {
                continue;
            };
            let dict = match self.parse_at(at, Some(num)) {
                Ok((_, Obj::Stream(dict, _))) => dict,
                Ok(_) => continue,
                Err(e @ PdfError::TooLarge(_)) => return Err(e),
                Err(_) => continue,
            };
            if dict_name_is(&dict, b"Type", b"ObjStm") {
                let stm = match self.objstm(num) {
                    Ok(stm) => stm,
                    Err(e @ PdfError::TooLarge(_)) => return Err(e),
                    Err(_) => continue,
                };
                for (index, &(member, _)) in stm.members.iter().enumerate() {
                    let index = u32::try_from(index).unwrap_or(u32::MAX);
                    self.xref.entry(member).or_insert(Loc::InStream(num, index));
                }
                if self.xref.len() > self.limits.objects_max {
                    return Err(self.too_many_objects());
                }
            } else if dict_name_is(&dict, b"Type", b"XRef")
                && dict_get(&dict, b"Root").is_some()
                && trailer.as_ref().is_none_or(|(t, _)| *t < at)
            {
                trailer = Some((at, dict));
            }
        }
        if let Some((_, t)) = trailer {
            if let Some(Obj::Ref(root)) = dict_get(&t, b"Root") {
                self.root = Some(*root);
            }
            self.encrypted = dict_get(&t, b"Encrypt").is_some();
        }
        Ok(())
    }

    // -- Objects

    /// Object `num`, resolved through the cross-reference data (null when absent).
    fn object(&mut self, num: u32) -> Result<Obj, PdfError> {
        if self.active.contains(&num) {
            return Err(malformed(format!("object {num} refers to itself")));
        }
        if self.active.len() >= self.limits.depth_max {
            return Err(PdfError::TooLarge(format!(
                "references nest deeper than {}",
                self.limits.depth_max
            )));
        }
        self.active.push(num);
        let result = self.load(num);
        self.active.pop();
        result
    }

    fn load(&mut self, num: u32) -> Result<Obj, PdfError> {
        match self.xref.get(&num).copied() {
            None | Some(Loc::Free) => Ok(Obj::Null),
            Some(Loc::At(at)) => Ok(self.parse_at(at, Some(num))?.1),
            Some(Loc::InStream(s, index)) => {
                let stm = self.objstm(s)?;
                let off = match stm
                    .members
                    .get(usize::try_from(index).unwrap_or(usize::MAX))
                {
                    Some(&(m, off)) if m == num => off,
                    _ => *stm.by_num.get(&num).ok_or_else(|| {
                        malformed(format!("object {num} is not in object stream {s}"))
                    })?,
                };
                let pos = stm
                    .first
                    .checked_add(off)
                    .filter(|&p| p <= stm.data.len())
                    .ok_or_else(|| malformed("an object lies outside its object stream"))?;
                let mut p = self.parser(&stm.data, pos);
                let value = p.value(0);
                self.charge(p.pos.saturating_sub(pos))?;
                value
            }
        }
    }

    /// `o`, with references followed.
    fn resolve(&mut self, mut o: Obj) -> Result<Obj, PdfError> {
        let mut seen: Vec<u32> = Vec::new();
        while let Obj::Ref(n) = o {
            if seen.contains(&n) {
                return Err(malformed(format!("a reference to object {n} loops")));
            }
            if seen.len() >= self.limits.depth_max {
                return Err(PdfError::TooLarge(format!(
                    "references nest deeper than {}",
                    self.limits.depth_max
                )));
            }
            seen.push(n);
            o = self.object(n)?;
        }
        Ok(o)
    }

    fn objstm(&mut self, num: u32) -> Result<Rc<ObjStm>, PdfError> {
        if let Some(stm) = self.objstms.get(&num) {
            return Ok(Rc::clone(stm));
        }
        if !matches!(self.xref.get(&num), Some(Loc::At(_))) {
            return Err(malformed(format!("object stream {num} is not in the file")));
        }
        let Obj::Stream(dict, start) = self.object(num)? else {
            return Err(malformed(format!("object stream {num} is not a stream")));
        };
        let (Some(n), Some(first)) = (dict_int(&dict, b"N"), dict_int(&dict, b"First")) else {
            return Err(malformed("an object stream without /N or /First"));
        };
        let n = usize::try_from(n).map_err(|_| malformed("bad /N"))?;
        let first = usize::try_from(first).map_err(|_| malformed("bad /First"))?;
        if n > self.limits.objects_max {
            return Err(self.too_many_objects());
        }
        let raw = self.stream_bytes(&dict, start)?;
        let data = self.decode(&dict, raw)?;
        if first > data.len() {
            return Err(malformed("/First lies past an object stream's end"));
        }
        let mut p = self.parser(&data[..first], 0);
        let mut members = Vec::new();
        let mut by_num = HashMap::new();
        let mut header = || -> Result<(), PdfError> {
            for _ in 0..n {
                let m = u32::try_from(p.uint()?).map_err(|_| malformed("bad object number"))?;
                let off = usize::try_from(p.uint()?).map_err(|_| malformed("bad offset"))?;
                members.push((m, off));
                by_num.entry(m).or_insert(off);
            }
            Ok(())
        };
        let result = header();
        let read = p.pos;
        self.charge(read)?;
        result.map_err(|e| match e {
            PdfError::Truncated => malformed("an object stream's header is short"),
            e => e,
        })?;
        let stm = Rc::new(ObjStm {
            data,
            first,
            members,
            by_num,
        });
        self.objstms.insert(num, Rc::clone(&stm));
        Ok(stm)
    }

    /// The raw data of the stream whose data starts at `start`: `/Length` bytes when they
    /// end at `endstream`, else up to the next `endstream`.
    fn stream_bytes(&mut self, dict: &Dict, start: usize) -> Result<&'a [u8], PdfError> {
        let pdf = self.pdf;
        let declared = match dict_get(dict, b"Length") {
            Some(o) => match self.resolve(o.clone())? {
                Obj::Int(n) => usize::try_from(n).ok(),
                _ => None,
            },
            None => None,
        };
        if let Some(n) = declared
            && let Some(end) = start.checked_add(n)
            && end <= pdf.len()
        {
            let slack = &pdf[end..pdf.len().min(end + STREAM_END_SLACK + 9)];
            let ws = slack.iter().take_while(|&&c| is_ws(c)).count();
            if slack[ws..].starts_with(b"endstream") {
                return Ok(&pdf[start..end]);
            }
        }
        let mut end = self.next_endstream(start).ok_or(PdfError::Truncated)?;
        if end > start && pdf[end - 1] == b'\n' {
            end -= 1;
        }
        if end > start && pdf[end - 1] == b'\r' {
            end -= 1;
        }
        Ok(&pdf[start..end])
    }

    /// The first `endstream` at or after `from` (all of them found once).
    fn next_endstream(&mut self, from: usize) -> Option<usize> {
        let pdf = self.pdf;
        let all = self.endstreams.get_or_insert_with(|| {
            let mut all = Vec::new();
            let mut at = 0;
            while let Some(k) = find(pdf, b"endstream", at) {
                all.push(k);
                at = k + 1;
            }
            all
        });
        let i = all.partition_point(|&k| k < from);
        all.get(i).copied()
    }

    /// A stream's data decoded by its filters.
    fn decode(&mut self, dict: &Dict, raw: &[u8]) -> Result<Vec<u8>, PdfError> {
        let filters: Vec<Vec<u8>> = match dict_get(dict, b"Filter") {
            None => Vec::new(),
            Some(f) => match self.resolve(f.clone())? {
                Obj::Null => Vec::new(),
                Obj::Name(n) => vec![n],
                Obj::Array(a) => a
                    .into_iter()
                    .map(|f| match f {
                        Obj::Name(n) => Ok(n),
                        _ => Err(malformed("a filter is not a name")),
                    })
                    .collect::<Result<_, _>>()?,
                _ => return Err(malformed("/Filter is not a name")),
            },
        };
        let parms: Vec<Option<Dict>> = match dict_get(dict, b"DecodeParms") {
            None => Vec::new(),
            Some(p) => match self.resolve(p.clone())? {
                Obj::Dict(d) => vec![Some(d)],
                Obj::Array(a) => a
                    .into_iter()
                    .map(|p| match p {
                        Obj::Dict(d) => Some(d),
                        _ => None,
                    })
                    .collect(),
                _ => Vec::new(),
            },
        };
        let stream_max = self.limits.stream_bytes_max;
        let left = stream_max
            .saturating_mul(STREAMS_FACTOR)
            .saturating_sub(self.inflated);
        if filters.is_empty() {
            if raw.len() > stream_max || raw.len() > left {
                return Err(PdfError::TooLarge(format!(
                    "a stream is longer than {stream_max} bytes"
                )));
            }
            self.inflated += raw.len();
            return Ok(raw.to_vec());
        }
        let mut data: Option<Vec<u8>> = None;
        for (i, filter) in filters.iter().enumerate() {
            if filter != b"FlateDecode" && filter != b"Fl" {
                return Err(malformed(format!(
                    "the filter /{} is not supported",
                    lossy(filter)
                )));
            }
            let left = stream_max
                .saturating_mul(STREAMS_FACTOR)
                .saturating_sub(self.inflated);
            let out = inflate(
                data.as_deref().unwrap_or(raw),
                stream_max,
                self.limits.inflate_ratio_max,
                left,
            )?;
            self.inflated += out.len();
            data = Some(match parms.get(i) {
                Some(Some(p)) => unpredict(out, p)?,
                _ => out,
            });
        }
        Ok(data.unwrap_or_default())
    }

    // -- Attachments

    fn find(&mut self) -> Result<Embedded, PdfError> {
        let mut found = Found::default();
        if let Some(root) = self.root {
            let Obj::Dict(catalog) = self.resolve(Obj::Ref(root))? else {
                return Err(malformed("the catalog is not a dictionary"));
            };
            if let Some(names) = dict_get(&catalog, b"Names")
                && let Obj::Dict(names) = self.resolve(names.clone())?
                && let Some(files) = dict_get(&names, b"EmbeddedFiles")
            {
                self.name_tree(files.clone(), &mut found)?;
            }
            if let Some(af) = dict_get(&catalog, b"AF")
                && let Obj::Array(specs) = self.resolve(af.clone())?
            {
                for spec in specs {
                    self.filespec(spec, None, &mut found)?;
                }
            }
            if let Some((name, file)) = self.pick(&found)? {
                return self.extract(name, file);
            }
        }
        // Attachments the catalog does not list (page annotations, broken catalogs).
        let mut nums: Vec<u32> = self.xref.keys().copied().collect();
        nums.sort_unstable();
        for num in nums {
            if found.specs.contains(&num) {
                continue;
            }
            let dict = match self.object(num) {
                Ok(Obj::Dict(d)) => d,
                Ok(_) => continue,
                Err(e @ PdfError::TooLarge(_)) => return Err(e),
                Err(_) => continue,
            };
            if dict_name_is(&dict, b"Type", b"Filespec") || dict_get(&dict, b"EF").is_some() {
                found.specs.insert(num);
                match self.candidate(&dict, None, &mut found) {
                    Ok(()) => {}
                    Err(e @ PdfError::TooLarge(_)) => return Err(e),
                    Err(_) => continue,
                }
            }
        }
        match self.pick(&found)? {
            Some((name, file)) => self.extract(name, file),
            None => Err(PdfError::NoEInvoice),
        }
    }

    /// Every file specification of the name tree `root`.
    fn name_tree(&mut self, root: Obj, found: &mut Found) -> Result<(), PdfError> {
        let mut nodes = HashSet::new();
        let mut stack = vec![(root, 0usize)];
        while let Some((node, depth)) = stack.pop() {
            if depth > self.limits.depth_max {
                return Err(PdfError::TooLarge(format!(
                    "a name tree deeper than {}",
                    self.limits.depth_max
                )));
            }
            if let Obj::Ref(n) = node
                && !nodes.insert(n)
            {
                return Err(malformed(format!("name tree node {n} is reached twice")));
            }
            let Obj::Dict(node) = self.resolve(node)? else {
                continue;
            };
            if let Some(names) = dict_get(&node, b"Names")
                && let Obj::Array(names) = self.resolve(names.clone())?
            {
                let mut pairs = names.into_iter();
                while let (Some(key), Some(spec)) = (pairs.next(), pairs.next()) {
                    let key = match key {
                        Obj::Str(k) => Some(k),
                        _ => None,
                    };
                    self.filespec(spec, key, found)?;
                }
            }
            if let Some(kids) = dict_get(&node, b"Kids")
                && let Obj::Array(kids) = self.resolve(kids.clone())?
            {
                stack.extend(kids.into_iter().rev().map(|k| (k, depth + 1)));
            }
        }
        Ok(())
    }

    fn filespec(
        &mut self,
        spec: Obj,
        key: Option<Vec<u8>>,
        found: &mut Found,
    ) -> Result<(), PdfError> {
        if let Obj::Ref(n) = spec
            && !found.specs.insert(n)
        {
            return Ok(());
        }
        match self.resolve(spec)? {
            Obj::Dict(d) => self.candidate(&d, key, found),
            // A file specification may be a plain file name: nothing embedded.
            _ => Ok(()),
        }
    }

    fn candidate(
        &mut self,
        spec: &Dict,
        key: Option<Vec<u8>>,
        found: &mut Found,
    ) -> Result<(), PdfError> {
        let Some(ef) = dict_get(spec, b"EF") else {
            return Ok(());
        };
        let Obj::Dict(ef) = self.resolve(ef.clone())? else {
            return Ok(());
        };
        let Some(&Obj::Ref(file)) = dict_get(&ef, b"F").or_else(|| dict_get(&ef, b"UF")) else {
            return Ok(());
        };
        if !found.files.insert(file) {
            return Ok(());
        }
        let mut names = Vec::new();
        for k in [&b"UF"[..], b"F"] {
            if let Some(v) = dict_get(spec, k)
                && let Obj::Str(s) = self.resolve(v.clone())?
            {
                names.push(text(&s));
            }
        }
        if let Some(k) = key {
            names.push(text(&k));
        }
        names.retain(|n| !basename(n).is_empty());
        found.candidates.push(Candidate { names, file });
        Ok(())
    }

    /// The e-invoice among the candidates: its name and file stream.
    fn pick(&mut self, found: &Found) -> Result<Option<(String, u32)>, PdfError> {
        for known in KNOWN_NAMES {
            for c in &found.candidates {
                if let Some(n) = c
                    .names
                    .iter()
                    .find(|n| basename(n).eq_ignore_ascii_case(known))
                {
                    return Ok(Some((basename(n).to_owned(), c.file)));
                }
            }
        }
        let mut xml = None;
        for c in &found.candidates {
            let named = c.names.iter().any(|n| {
                let b = basename(n);
                b.len() > 4
                    && b.is_char_boundary(b.len() - 4)
                    && b[b.len() - 4..].eq_ignore_ascii_case(".xml")
            });
            if named || self.typed_xml(c.file)? {
                if xml.is_some() {
                    return Ok(None);
                }
                let name = c
                    .names
                    .first()
                    .map(|n| basename(n).to_owned())
                    .unwrap_or_default();
                xml = Some((name, c.file));
            }
        }
        Ok(xml)
    }

    /// Whether the embedded file stream `file` says it is XML.
    fn typed_xml(&mut self, file: u32) -> Result<bool, PdfError> {
        match self.object(file) {
            Ok(Obj::Stream(d, _)) => Ok(matches!(
                dict_get(&d, b"Subtype"),
                Some(Obj::Name(n)) if n.eq_ignore_ascii_case(b"text/xml")
                    || n.eq_ignore_ascii_case(b"application/xml")
            )),
            Ok(_) => Ok(false),
            Err(e @ PdfError::TooLarge(_)) => Err(e),
            Err(_) => Ok(false),
        }
    }

    fn extract(&mut self, filename: String, file: u32) -> Result<Embedded, PdfError> {
        let Obj::Stream(dict, start) = self.object(file)? else {
            return Err(malformed("the embedded file is not a stream"));
        };
        let raw = self.stream_bytes(&dict, start)?;
        let xml = self.decode(&dict, raw)?;
        Ok(Embedded { filename, xml })
    }
}

/// The object number and start of an `N G obj` marker whose `obj` is at `k`.
fn marker(pdf: &[u8], k: usize) -> Option<(u32, usize)> {
    if pdf.get(k + 3).is_some_and(|&c| is_regular(c)) {
        return None;
    }
    // Back over whitespace, the generation, whitespace and the number, each bounded.
    let back = |end: usize, pred: fn(u8) -> bool, max: usize| -> usize {
        let mut i = end;
        while i > 0 && end - i < max && pred(pdf[i - 1]) {
            i -= 1;
        }
        i
    };
    let digit = |c: u8| c.is_ascii_digit();
    let g_end = back(k, is_ws, 16);
    let g_start = back(g_end, digit, 5);
    if g_end == k || g_start == g_end {
        return None;
    }
    let n_end = back(g_start, is_ws, 16);
    let n_start = back(n_end, digit, 10);
    if n_end == g_start || n_start == n_end {
        return None;
    }
    if n_start > 0 && is_regular(pdf[n_start - 1]) {
        return None;
    }
    let num = pdf[n_start..n_end].iter().try_fold(0u32, |n, &d| {
        n.checked_mul(10)?.checked_add(u32::from(d - b'0'))
    })?;
    Some((num, n_start))
}

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "the tests time the reader against its bounds, on the test machine's clock"
)]
mod tests {
    use super::*;
    use flate2::Compression;
    use flate2::write::ZlibEncoder;
    use std::fmt::Write as _;
    use std::io::Write as _;
    use std::time::{Duration, Instant};

    const SAMPLE: &[u8] =
        include_bytes!("../../../../tests/einvoice/samples/01.01a-INVOICE_uncefact.xml");
    const FACTURX_GS: &[u8] = include_bytes!("../../../../tests/einvoice/incoming/facturx-gs.pdf");
    const FACTURX_OBJSTM: &[u8] =
        include_bytes!("../../../../tests/einvoice/incoming/facturx-objstm.pdf");
    const ZUGFERD_NAMED: &[u8] =
        include_bytes!("../../../../tests/einvoice/incoming/zugferd-named.pdf");

    /// Well under a second on any machine the tests run on, for any of the hostile inputs;
    /// an unoptimized build on a loaded machine is given four times that (what these
    /// bounds catch is work that grows with the input, not constant factors).
    const QUICK: Duration = Duration::from_millis(if cfg!(debug_assertions) { 2000 } else { 500 });

    fn read(pdf: &[u8]) -> Result<Embedded, PdfError> {
        embedded_xml(pdf, &Limits::default())
    }

    fn timed(pdf: &[u8], limits: &Limits) -> (Result<Embedded, PdfError>, Duration) {
        let start = Instant::now();
        let r = embedded_xml(pdf, limits);
        (r, start.elapsed())
    }

    fn zlib(data: &[u8]) -> Vec<u8> {
        let mut e = ZlibEncoder::new(Vec::new(), Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    /// A PDF written by hand, one incremental section at a time.
    struct Pdf {
        out: Vec<u8>,
        section: Vec<(u32, usize)>,
        size: u32,
    }

    impl Pdf {
        fn new() -> Self {
            Pdf {
                out: b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n".to_vec(),
                section: Vec::new(),
                size: 1,
            }
        }

        fn obj(&mut self, num: u32, body: &str) {
            self.raw_obj(num, body.as_bytes());
        }

        fn raw_obj(&mut self, num: u32, body: &[u8]) {
            self.section.push((num, self.out.len()));
            self.size = self.size.max(num + 1);
            writeln!(self.out, "{num} 0 obj").unwrap();
            self.out.extend_from_slice(body);
            self.out.extend_from_slice(b"\nendobj\n");
        }

        fn stream(&mut self, num: u32, dict: &str, data: &[u8]) {
            let mut body = format!("<< {dict} /Length {} >>\nstream\n", data.len()).into_bytes();
            body.extend_from_slice(data);
            body.extend_from_slice(b"\nendstream");
            self.raw_obj(num, &body);
        }

        /// A cross-reference table of the objects since the last one; answers its offset.
        fn xref(&mut self, trailer: &str) -> usize {
            let at = self.out.len();
            let mut table = String::from("xref\n0 1\n0000000000 65535 f \n");
            for &(num, off) in &self.section {
                write!(table, "{num} 1\n{off:010} 00000 n \n").unwrap();
            }
            write!(
                table,
                "trailer\n<< /Size {} {trailer} >>\nstartxref\n{at}\n%%EOF\n",
                self.size
            )
            .unwrap();
            self.out.extend_from_slice(table.as_bytes());
            self.section.clear();
            at
        }

        /// A cross-reference stream (object `num`, PNG Up predictor) of the objects since
        /// the last section; answers its offset.
        fn xref_stream(&mut self, num: u32, trailer: &str) -> usize {
            self.xref_stream_with(num, trailer, &[])
        }

        /// The same, with `compressed` entries (object, object stream, index) too.
        fn xref_stream_with(
            &mut self,
            num: u32,
            trailer: &str,
            compressed: &[(u32, u32, u8)],
        ) -> usize {
            let at = self.out.len();
            self.section.push((num, at));
            self.size = self.size.max(num + 1);
            let mut entries: Vec<(u32, u8, u32, u8)> = self
                .section
                .iter()
                .map(|&(n, off)| (n, 1, u32::try_from(off).unwrap(), 0))
                .chain(compressed.iter().map(|&(n, s, i)| (n, 2, s, i)))
                .collect();
            entries.sort_unstable();
            let mut index = String::new();
            let mut rows = Vec::new();
            for &(n, kind, a, b) in &entries {
                write!(index, "{n} 1 ").unwrap();
                self.size = self.size.max(n + 1);
                let mut row = vec![kind];
                row.extend_from_slice(&a.to_be_bytes());
                row.push(b);
                rows.push(row);
            }
            let mut data = Vec::new();
            let mut prev = vec![0u8; 6];
            for row in rows {
                data.push(2);
                data.extend(row.iter().zip(&prev).map(|(a, b)| a.wrapping_sub(*b)));
                prev = row;
            }
            let data = zlib(&data);
            let mut body = format!(
                "<< /Type /XRef /Size {} /W [1 4 1] /Index [{index}] /Filter /FlateDecode \
                 /DecodeParms << /Predictor 12 /Columns 6 >> {trailer} /Length {} >>\nstream\n",
                self.size,
                data.len()
            )
            .into_bytes();
            body.extend_from_slice(&data);
            body.extend_from_slice(b"\nendstream");
            self.section.pop();
            self.raw_obj(num, &body);
            self.section.clear();
            write!(self.out, "startxref\n{at}\n%%EOF\n").unwrap();
            at
        }
    }

    /// Catalog 1, pages 2, embedded file 3 (`data`, flate when asked), file spec 4 named
    /// `name` (a PDF string as given, e.g. `(x.xml)` or `<...>`), in the name tree and /AF.
    fn attached(name: &str, data: &[u8], flate: bool) -> Vec<u8> {
        let mut pdf = Pdf::new();
        pdf.obj(
            1,
            &format!(
                "<< /Type /Catalog /Pages 2 0 R /Names << /EmbeddedFiles << /Names [{name} 4 0 R] >> >> /AF [4 0 R] >>"
            ),
        );
        pdf.obj(2, "<< /Type /Pages /Kids [] /Count 0 >>");
        if flate {
            pdf.stream(
                3,
                "/Type /EmbeddedFile /Subtype /text#2Fxml /Filter /FlateDecode",
                &zlib(data),
            );
        } else {
            pdf.stream(3, "/Type /EmbeddedFile", data);
        }
        pdf.obj(
            4,
            &format!("<< /Type /Filespec /F {name} /UF {name} /EF << /F 3 0 R >> >>"),
        );
        pdf.xref("/Root 1 0 R");
        pdf.out
    }

    // -- Fixtures made by other software

    #[test]
    fn factur_x_library_pdf() {
        let e = read(FACTURX_GS).unwrap();
        assert_eq!(e.filename, "factur-x.xml");
        assert!(e.xml == SAMPLE, "the XML differs from the sample");
    }

    #[test]
    fn object_streams_and_xref_stream_from_qpdf() {
        let e = read(FACTURX_OBJSTM).unwrap();
        assert_eq!(e.filename, "factur-x.xml");
        assert!(e.xml == SAMPLE, "the XML differs from the sample");
    }

    #[test]
    fn zugferd_name_in_utf16_beside_another_attachment() {
        let e = read(ZUGFERD_NAMED).unwrap();
        assert_eq!(e.filename, "zugferd-invoice.xml");
        assert!(e.xml == SAMPLE, "the XML differs from the sample");
    }

    #[test]
    fn fixtures_with_broken_startxref_are_scanned() {
        for fixture in [FACTURX_GS, FACTURX_OBJSTM, ZUGFERD_NAMED] {
            let mut pdf = fixture.to_vec();
            let at = rfind(&pdf, b"startxref").unwrap() + 10;
            pdf[at] = b'9';
            pdf[at + 1] = b'9';
            assert!(read(&pdf).unwrap().xml == SAMPLE);
            // No startxref at all.
            let mut pdf = fixture.to_vec();
            let at = rfind(&pdf, b"startxref").unwrap();
            pdf[at..at + 9].copy_from_slice(b"startxreX");
            assert!(read(&pdf).unwrap().xml == SAMPLE);
        }
    }

    #[test]
    fn fixtures_with_shifted_offsets_are_scanned() {
        // Garbage before the header moves every offset; the header is found within 1 KiB
        // and offsets count from it. Bytes inserted after the header break the offsets.
        let mut pdf = b"garbage\n".to_vec();
        pdf.extend_from_slice(FACTURX_GS);
        assert!(read(&pdf).unwrap().xml == SAMPLE);
        let mut pdf = FACTURX_GS[..9].to_vec();
        pdf.extend_from_slice(b"%%%%%%%%%%%%\n");
        pdf.extend_from_slice(&FACTURX_GS[9..]);
        assert!(read(&pdf).unwrap().xml == SAMPLE);
    }

    // -- Hand-made documents

    #[test]
    fn uncompressed_attachment_with_each_known_name() {
        for (name, expect) in [
            ("(factur-x.xml)", "factur-x.xml"),
            ("(ZUGFeRD-invoice.xml)", "ZUGFeRD-invoice.xml"),
            ("(XRechnung.XML)", "XRechnung.XML"),
            (
                "<7a756766657264 2d696e766f6963652e786d6c>",
                "zugferd-invoice.xml",
            ),
            (
                "<FEFF0078007200650063006800 6E0075006E0067002E0078006D006C>",
                "xrechnung.xml",
            ),
            ("(C:\\\\invoices\\\\factur-x.xml)", "factur-x.xml"),
        ] {
            let e = read(&attached(name, b"<x/>", false)).unwrap();
            assert_eq!(
                (e.filename.as_str(), e.xml.as_slice()),
                (expect, &b"<x/>"[..]),
                "{name}"
            );
        }
    }

    #[test]
    fn the_only_xml_attachment_otherwise() {
        let e = read(&attached("(invoice.xml)", b"<a/>", true)).unwrap();
        assert_eq!(e.filename, "invoice.xml");
        // By its /Subtype alone.
        let e = read(&attached("(data.bin)", b"<a/>", true)).unwrap();
        assert_eq!(
            (e.filename.as_str(), e.xml.as_slice()),
            ("data.bin", &b"<a/>"[..])
        );
        // Not XML.
        assert!(matches!(
            read(&attached("(note.txt)", b"hi", false)),
            Err(PdfError::NoEInvoice)
        ));
    }

    #[test]
    fn two_xml_attachments_none_named_is_none() {
        let mut pdf = Pdf::new();
        pdf.obj(1, "<< /Type /Catalog /AF [4 0 R 6 0 R] >>");
        pdf.stream(3, "", b"<a/>");
        pdf.obj(4, "<< /Type /Filespec /F (a.xml) /EF << /F 3 0 R >> >>");
        pdf.stream(5, "", b"<b/>");
        pdf.obj(6, "<< /Type /Filespec /F (b.xml) /EF << /F 5 0 R >> >>");
        pdf.xref("/Root 1 0 R");
        assert!(matches!(read(&pdf.out), Err(PdfError::NoEInvoice)));
    }

    #[test]
    fn name_tree_with_kids_and_indirect_length() {
        let mut pdf = Pdf::new();
        pdf.obj(1, "<< /Type /Catalog /Names << /EmbeddedFiles 10 0 R >> >>");
        pdf.obj(10, "<< /Kids [11 0 R 12 0 R] >>");
        pdf.obj(11, "<< /Limits [(a) (b)] /Names [(a.txt) 20 0 R] >>");
        pdf.obj(12, "<< /Kids [13 0 R] >>");
        pdf.obj(
            13,
            "<< /Names [(x) << /F (factur-x.xml) /EF << /F 30 0 R >> >>] >>",
        );
        pdf.obj(20, "<< /F (a.txt) /EF << /F 21 0 R >> >>");
        pdf.stream(21, "", b"text");
        let data = zlib(SAMPLE);
        let mut body = b"<< /Filter [/FlateDecode] /Length 31 0 R >>\nstream\r\n".to_vec();
        body.extend_from_slice(&data);
        body.extend_from_slice(b"\r\nendstream");
        pdf.raw_obj(30, &body);
        pdf.obj(31, &data.len().to_string());
        pdf.xref("/Root 1 0 R");
        let e = read(&pdf.out).unwrap();
        assert_eq!(e.filename, "factur-x.xml");
        assert!(e.xml == SAMPLE);
    }

    #[test]
    fn incremental_update_through_prev_and_xref_stream() {
        let mut pdf = Pdf::new();
        pdf.obj(1, "<< /Type /Catalog /Pages 2 0 R >>");
        pdf.obj(2, "<< /Type /Pages /Kids [] /Count 0 >>");
        let first = pdf.xref("/Root 1 0 R");
        assert!(matches!(read(&pdf.out), Err(PdfError::NoEInvoice)));
        // The update: an attachment, a new catalog; a cross-reference stream with /Prev.
        pdf.stream(3, "/Filter /FlateDecode", &zlib(b"<inv/>"));
        pdf.obj(
            4,
            "<< /Type /Filespec /UF (xrechnung.xml) /EF << /UF 3 0 R >> >>",
        );
        pdf.obj(1, "<< /Type /Catalog /Pages 2 0 R /AF 5 0 R >>");
        pdf.obj(5, "[4 0 R]");
        let second = pdf.xref_stream(6, &format!("/Root 1 0 R /Prev {first}"));
        let e = read(&pdf.out).unwrap();
        assert_eq!(
            (e.filename.as_str(), e.xml.as_slice()),
            ("xrechnung.xml", &b"<inv/>"[..])
        );
        // And a classic section on top, pointing back at the stream.
        pdf.obj(7, "(unused)");
        pdf.xref(&format!("/Root 1 0 R /Prev {second}"));
        assert_eq!(read(&pdf.out).unwrap().xml, b"<inv/>");
    }

    #[test]
    fn filespec_outside_the_catalog_is_found() {
        let mut pdf = Pdf::new();
        pdf.obj(1, "<< /Type /Catalog /Pages 2 0 R >>");
        pdf.obj(2, "<< /Type /Pages /Kids [] /Count 0 >>");
        pdf.obj(3, "<< /Type /Annot /Subtype /FileAttachment /FS 4 0 R >>");
        pdf.obj(
            4,
            "<< /Type /Filespec /F (factur-x.xml) /EF << /F 5 0 R >> >>",
        );
        pdf.stream(5, "", b"<inv/>");
        pdf.xref("/Root 1 0 R");
        assert_eq!(read(&pdf.out).unwrap().xml, b"<inv/>");
    }

    #[test]
    fn parser_reads_strings_names_and_numbers() {
        let src = br"<< /A (a\(b\)c \\ \n\101\0612 (nested) line\
cont) /B#20C <48 65 6c6C 6> /D [1 2 R -3 +4 .5 6.7 true null] /E<</F 0 0 R>> >>";
        let mut p = Parser {
            buf: src,
            pos: 0,
            depth_max: 8,
            values: 0,
            values_max: 100,
        };
        let Obj::Dict(d) = p.value(0).unwrap() else {
            panic!("not a dict")
        };
        assert_eq!(
            dict_get(&d, b"A"),
            Some(&Obj::Str(b"a(b)c \\ \nA12 (nested) linecont".to_vec()))
        );
        assert_eq!(dict_get(&d, b"B C"), Some(&Obj::Str(b"Hell`".to_vec())));
        assert_eq!(
            dict_get(&d, b"D"),
            Some(&Obj::Array(vec![
                Obj::Ref(1),
                Obj::Int(-3),
                Obj::Int(4),
                Obj::Real,
                Obj::Real,
                Obj::Bool,
                Obj::Null
            ]))
        );
        assert_eq!(
            dict_get(&d, b"E"),
            Some(&Obj::Dict(vec![(b"F".to_vec(), Obj::Ref(0))]))
        );
        assert_eq!(text(b"\xfe\xff\x00f\x00\xfc\x00r\x00\x00"), "f\u{fc}r");
        assert_eq!(text(b"caf\xe9"), "caf\u{e9}");
    }

    #[test]
    fn predictors_are_undone() {
        let parms = |p: i64, cols: i64| {
            vec![
                (b"Predictor".to_vec(), Obj::Int(p)),
                (b"Columns".to_vec(), Obj::Int(cols)),
            ]
        };
        // PNG rows: Sub, Up, Average, Paeth, None.
        let rows = vec![1, 1, 1, 1, 2, 1, 1, 1, 3, 2, 2, 2, 4, 0, 0, 0, 0, 9, 9, 9];
        assert_eq!(
            unpredict(rows, &parms(15, 3)).unwrap(),
            vec![1, 2, 3, 2, 3, 4, 3, 5, 6, 3, 5, 6, 9, 9, 9]
        );
        assert_eq!(
            unpredict(vec![1, 1, 1, 5, 1], &parms(2, 5)).unwrap(),
            vec![1, 2, 3, 8, 9]
        );
        assert!(unpredict(vec![7, 0, 0], &parms(12, 2)).is_err());
        assert!(unpredict(vec![0, 0], &parms(12, 1 << 40)).is_err());
    }

    // -- Hostile documents

    /// Zlib data of `gib` GiB of zeros, made by repeating one sync-flushed block.
    fn bomb(gib: usize) -> Vec<u8> {
        let mut c = flate2::Compress::new(Compression::best(), false);
        let zeros = vec![0u8; 1 << 20];
        let mut block = Vec::with_capacity(8192);
        c.compress_vec(&zeros, &mut block, flate2::FlushCompress::Sync)
            .unwrap();
        assert_eq!(c.total_in(), 1 << 20, "one call deflates the MiB");
        let mut out = vec![0x78, 0xda];
        for _ in 0..gib * 1024 {
            out.extend_from_slice(&block);
        }
        out.extend_from_slice(&[0x03, 0x00, 0, 0, 0, 0]);
        out
    }

    #[test]
    fn decompression_bomb_is_refused_quickly() {
        // The construction is sound: a small one inflates in full.
        let small = inflate(&bomb(0), 1 << 30, 10_000, usize::MAX);
        assert!(
            matches!(small, Ok(ref v) if v.is_empty())
                || matches!(small, Err(PdfError::Malformed(_)))
        );
        let data = bomb(1);
        assert!(data.len() < 2 << 20, "{} bytes", data.len());
        let mut pdf = Pdf::new();
        pdf.obj(1, "<< /Type /Catalog /AF [4 0 R] >>");
        pdf.stream(3, "/Filter /FlateDecode", &data);
        pdf.obj(
            4,
            "<< /Type /Filespec /F (factur-x.xml) /EF << /F 3 0 R >> >>",
        );
        pdf.xref("/Root 1 0 R");
        let (r, took) = timed(&pdf.out, &Limits::default());
        assert!(matches!(r, Err(PdfError::TooLarge(_))), "{r:?}");
        assert!(took < QUICK, "{took:?}");
        eprintln!("1 GiB bomb refused in {took:?}");
        // The ratio limit, too, when the bytes limit is out of the way.
        let limits = Limits {
            stream_bytes_max: usize::MAX / 8,
            ..Limits::default()
        };
        let (r, took) = timed(&pdf.out, &limits);
        assert!(
            matches!(r, Err(PdfError::TooLarge(ref m)) if m.contains("times")),
            "{r:?}"
        );
        assert!(took < QUICK, "{took:?}");
    }

    #[test]
    fn inflating_stops_at_the_limits() {
        let data = zlib(&vec![b'a'; 300_000]);
        assert!(matches!(
            inflate(&data, 100_000, 1_000_000, usize::MAX),
            Err(PdfError::TooLarge(_))
        ));
        assert!(matches!(
            inflate(&data, 1 << 20, 1_000_000, 200_000),
            Err(PdfError::TooLarge(_))
        ));
        assert_eq!(
            inflate(&data, 1 << 20, 1_000_000, usize::MAX)
                .unwrap()
                .len(),
            300_000
        );
        assert!(matches!(
            inflate(&data[..data.len() / 2], 1 << 20, 1_000_000, usize::MAX),
            Err(PdfError::Truncated)
        ));
        assert!(matches!(
            inflate(b"\x78\x9c\xff\xff\xff", 1 << 20, 200, usize::MAX),
            Err(PdfError::Malformed(_))
        ));
    }

    #[test]
    fn truncated_pdfs_fail_or_still_give_the_whole_xml() {
        for fixture in [FACTURX_GS, FACTURX_OBJSTM, ZUGFERD_NAMED] {
            for cut in (0..fixture.len()).step_by(97) {
                let (r, took) = timed(&fixture[..cut], &Limits::default());
                assert!(took < QUICK, "{took:?}");
                if let Ok(e) = r {
                    assert!(e.xml == SAMPLE, "a cut at {cut} gave other XML");
                }
            }
        }
        let half = &FACTURX_GS[..FACTURX_GS.len() / 2];
        assert!(
            matches!(read(half), Err(PdfError::Truncated)),
            "{:?}",
            read(half)
        );
        assert!(matches!(
            read(b"%PDF-1.7\n1 0 obj\n<< /Type /Cat"),
            Err(PdfError::Truncated)
        ));
    }

    #[test]
    fn kids_loop_is_an_error() {
        let mut pdf = Pdf::new();
        pdf.obj(1, "<< /Type /Catalog /Names << /EmbeddedFiles 2 0 R >> >>");
        pdf.obj(2, "<< /Kids [3 0 R] >>");
        pdf.obj(3, "<< /Kids [2 0 R] >>");
        pdf.xref("/Root 1 0 R");
        let (r, took) = timed(&pdf.out, &Limits::default());
        assert!(matches!(r, Err(PdfError::Malformed(_))), "{r:?}");
        assert!(took < QUICK);
        // A node that is its own kid.
        let mut pdf = Pdf::new();
        pdf.obj(1, "<< /Type /Catalog /Names << /EmbeddedFiles 2 0 R >> >>");
        pdf.obj(2, "<< /Kids [2 0 R 2 0 R] >>");
        pdf.xref("/Root 1 0 R");
        assert!(matches!(read(&pdf.out), Err(PdfError::Malformed(_))));
    }

    #[test]
    fn reference_loops_are_errors() {
        // /AF resolves through a chain that comes back.
        let mut pdf = Pdf::new();
        pdf.obj(1, "<< /Type /Catalog /AF 2 0 R >>");
        pdf.obj(2, "3 0 R");
        pdf.obj(3, "2 0 R");
        pdf.xref("/Root 1 0 R");
        assert!(matches!(read(&pdf.out), Err(PdfError::Malformed(_))));
        // A /Length whose references loop.
        let mut pdf = Pdf::new();
        pdf.obj(1, "<< /Type /Catalog /AF [4 0 R] >>");
        pdf.raw_obj(3, b"<< /Length 5 0 R >>\nstream\nabc\nendstream");
        pdf.obj(4, "<< /F (factur-x.xml) /EF << /F 3 0 R >> >>");
        pdf.obj(5, "6 0 R");
        pdf.obj(6, "5 0 R");
        pdf.xref("/Root 1 0 R");
        let (r, took) = timed(&pdf.out, &Limits::default());
        assert!(matches!(r, Err(PdfError::Malformed(_))), "{r:?}");
        assert!(took < QUICK);
        // A /Length that is its own stream is no number: the data ends at `endstream`.
        let mut pdf = Pdf::new();
        pdf.obj(1, "<< /Type /Catalog /AF [4 0 R] >>");
        pdf.raw_obj(3, b"<< /Length 3 0 R >>\nstream\nabc\nendstream");
        pdf.obj(4, "<< /F (factur-x.xml) /EF << /F 3 0 R >> >>");
        pdf.xref("/Root 1 0 R");
        assert_eq!(read(&pdf.out).unwrap().xml, b"abc");
        // An object stream whose /Length lies inside itself: an error by the cross-reference
        // stream; the scan, which does not know object 6, reads on to the end.
        let mut pdf = Pdf::new();
        pdf.obj(1, "<< /Type /Catalog /AF [4 0 R] >>");
        let members = b"4 0 6 50 ";
        let mut data = members.to_vec();
        data.extend_from_slice(b"<< /F (factur-x.xml) /EF << /F 3 0 R >> >>");
        data.resize(members.len() + 50, b' ');
        data.extend_from_slice(b"12");
        pdf.stream(
            5,
            &format!("/Type /ObjStm /N 2 /First {} /Length 6 0 R", members.len()),
            &data,
        );
        pdf.stream(3, "", b"<inv/>");
        pdf.xref_stream_with(7, "/Root 1 0 R", &[(4, 5, 0), (6, 5, 1)]);
        let (r, took) = timed(&pdf.out, &Limits::default());
        assert_eq!(r.unwrap().xml, b"<inv/>");
        assert!(took < QUICK);
        let mut doc = Doc::new(&pdf.out, &Limits::default());
        doc.read_xref().unwrap();
        assert!(
            matches!(doc.find(), Err(PdfError::Malformed(m)) if m.contains("refers to itself"))
        );
    }

    #[test]
    fn prev_loop_falls_back_to_the_scan() {
        let mut pdf = Pdf::new();
        pdf.obj(1, "<< /Type /Catalog /AF [4 0 R] >>");
        pdf.stream(3, "", b"<inv/>");
        pdf.obj(4, "<< /F (factur-x.xml) /EF << /F 3 0 R >> >>");
        let at = pdf.out.len();
        pdf.xref(&format!("/Root 1 0 R /Prev {at}"));
        let (r, took) = timed(&pdf.out, &Limits::default());
        assert_eq!(r.unwrap().xml, b"<inv/>");
        assert!(took < QUICK);
        // Two sections pointing at each other.
        let mut pdf = Pdf::new();
        pdf.obj(1, "<< /Type /Catalog >>");
        let first = pdf.out.len();
        let second = first + 200;
        let mut sec = format!(
            "xref\n0 1\n0000000000 65535 f \ntrailer\n<< /Size 2 /Root 1 0 R /Prev {second} >>\n"
        )
        .into_bytes();
        sec.resize(200, b' ');
        pdf.out.extend_from_slice(&sec);
        pdf.out.extend_from_slice(format!("xref\n0 1\n0000000000 65535 f \ntrailer\n<< /Size 2 /Root 1 0 R /Prev {first} >>\nstartxref\n{second}\n%%EOF\n").as_bytes());
        let (r, took) = timed(&pdf.out, &Limits::default());
        assert!(matches!(r, Err(PdfError::NoEInvoice)), "{r:?}");
        assert!(took < QUICK);
    }

    #[test]
    fn no_attachment_is_no_einvoice() {
        let mut pdf = Pdf::new();
        pdf.obj(1, "<< /Type /Catalog /Pages 2 0 R >>");
        pdf.obj(2, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>");
        pdf.obj(
            3,
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R >>",
        );
        pdf.stream(4, "", b"BT /F1 12 Tf (Hello) Tj ET");
        pdf.xref("/Root 1 0 R");
        assert!(matches!(read(&pdf.out), Err(PdfError::NoEInvoice)));
    }

    #[test]
    fn not_a_pdf() {
        for bytes in [
            &b""[..],
            b"%PD",
            b"PK\x03\x04 a zip",
            b"<?xml version=\"1.0\"?><a/>",
        ] {
            assert!(matches!(read(bytes), Err(PdfError::NotPdf)));
        }
    }

    #[test]
    fn encrypted_is_malformed() {
        let mut pdf = Pdf::new();
        pdf.obj(1, "<< /Type /Catalog >>");
        pdf.obj(2, "<< /Filter /Standard /V 2 >>");
        pdf.xref("/Root 1 0 R /Encrypt 2 0 R");
        assert!(matches!(read(&pdf.out), Err(PdfError::Malformed(m)) if m.contains("encrypted")));
    }

    #[test]
    fn other_filters_are_malformed() {
        let mut pdf = Pdf::new();
        pdf.obj(1, "<< /Type /Catalog /AF [4 0 R] >>");
        pdf.stream(3, "/Filter /LZWDecode", b"\x80\x0b\x60\x50");
        pdf.obj(4, "<< /F (factur-x.xml) /EF << /F 3 0 R >> >>");
        pdf.xref("/Root 1 0 R");
        assert!(matches!(read(&pdf.out), Err(PdfError::Malformed(m)) if m.contains("LZWDecode")));
    }

    fn tiny_objects(n: u32) -> Vec<u8> {
        let mut pdf = Pdf::new();
        pdf.obj(1, "<< /Type /Catalog >>");
        for i in 2..n + 2 {
            pdf.obj(i, "[1]");
        }
        pdf.xref("/Root 1 0 R");
        pdf.out
    }

    #[test]
    fn many_tiny_objects_are_bounded() {
        let pdf = tiny_objects(99_000);
        let (r, took) = timed(&pdf, &Limits::default());
        assert!(matches!(r, Err(PdfError::NoEInvoice)), "{r:?}");
        assert!(took < QUICK * 2, "{took:?}");
        eprintln!("99,000 tiny objects read in {took:?}");
        let pdf = tiny_objects(100_001);
        let (r, took) = timed(&pdf, &Limits::default());
        assert!(matches!(r, Err(PdfError::TooLarge(_))), "{r:?}");
        assert!(took < QUICK);
        // Without the table, the scan stops at the same bound.
        let mut broken = pdf.clone();
        let at = rfind(&broken, b"xref\n").unwrap();
        broken.truncate(at);
        let (r, took) = timed(&broken, &Limits::default());
        assert!(matches!(r, Err(PdfError::TooLarge(_))), "{r:?}");
        assert!(took < QUICK);
    }

    #[test]
    fn huge_length_falls_back_to_endstream() {
        for length in [
            "99999999999999999999",
            "9223372036854775807",
            "-5",
            "1000000",
            "(x)",
        ] {
            let mut pdf = Pdf::new();
            pdf.obj(1, "<< /Type /Catalog /AF [4 0 R] >>");
            pdf.raw_obj(
                3,
                format!("<< /Length {length} >>\nstream\n<inv/>\nendstream").as_bytes(),
            );
            pdf.obj(4, "<< /F (factur-x.xml) /EF << /F 3 0 R >> >>");
            pdf.xref("/Root 1 0 R");
            let (r, took) = timed(&pdf.out, &Limits::default());
            assert_eq!(r.unwrap().xml, b"<inv/>", "{length}");
            assert!(took < QUICK);
        }
        // Without an endstream at all.
        let mut pdf = Pdf::new();
        pdf.obj(1, "<< /Type /Catalog /AF [4 0 R] >>");
        pdf.obj(4, "<< /F (factur-x.xml) /EF << /F 3 0 R >> >>");
        pdf.raw_obj(3, b"<< /Length 99999999 >>\nstream\n<inv/>");
        pdf.xref("/Root 1 0 R");
        assert!(read(&pdf.out).is_err());
    }

    #[test]
    fn deep_nesting_and_overlapping_objects_are_bounded() {
        let mut pdf = Pdf::new();
        pdf.obj(
            1,
            &format!("<< /Type /Catalog /X {} >>", "[".repeat(1_000_000)),
        );
        pdf.xref("/Root 1 0 R");
        let (r, took) = timed(&pdf.out, &Limits::default());
        assert!(matches!(r, Err(PdfError::TooLarge(_))), "{r:?}");
        assert!(took < QUICK);
        // Objects nested in one another's strings, each parsed to the end of the file.
        let n = 50_000;
        let mut body = String::from("%PDF-1.7\n");
        for i in 1..=n {
            write!(body, "{i} 0 obj (").unwrap();
        }
        body.push_str(&")".repeat(n));
        body.push_str("\ntrailer << /Root 1 0 R >>\n%%EOF\n");
        let (r, took) = timed(body.as_bytes(), &Limits::default());
        assert!(r.is_err(), "{r:?}");
        assert!(took < QUICK, "{took:?}");
        // A long chain of references.
        let mut pdf = Pdf::new();
        pdf.obj(1, "<< /Type /Catalog /AF 2 0 R >>");
        for i in 2..5000 {
            pdf.obj(i, &format!("{} 0 R", i + 1));
        }
        pdf.xref("/Root 1 0 R");
        let (r, took) = timed(&pdf.out, &Limits::default());
        assert!(matches!(r, Err(PdfError::TooLarge(_))), "{r:?}");
        assert!(took < QUICK);
    }

    #[test]
    fn xref_with_huge_counts_is_bounded() {
        let mut pdf = Pdf::new();
        pdf.obj(1, "<< /Type /Catalog >>");
        let at = pdf.out.len();
        pdf.out.extend_from_slice(format!("xref\n0 18446744073709551615\n0000000000 65535 f \ntrailer\n<< /Root 1 0 R >>\nstartxref\n{at}\n%%EOF\n").as_bytes());
        let (r, took) = timed(&pdf.out, &Limits::default());
        assert!(matches!(r, Err(PdfError::NoEInvoice)), "{r:?}");
        assert!(took < QUICK);
        // An object stream claiming a million members.
        let mut pdf = Pdf::new();
        pdf.obj(1, "<< /Type /Catalog /AF [2 0 R] >>");
        pdf.stream(5, "/Type /ObjStm /N 1000000000 /First 4", b"2 0 [3]");
        pdf.xref_stream_with(6, "/Root 1 0 R", &[(2, 5, 0)]);
        let (r, took) = timed(&pdf.out, &Limits::default());
        assert!(r.is_err(), "{r:?}");
        assert!(took < QUICK);
    }

    /// Pieces of PDF syntax the mutations insert.
    const TOKENS: [&[u8]; 24] = [
        b"99999999999",
        b"0",
        b"1",
        b"-1",
        b" 0 R ",
        b" 2 0 R ",
        b"<<",
        b">>",
        b"(",
        b")",
        b"[",
        b"]",
        b"\\",
        b"/Kids [1 0 R]",
        b"/Prev 0",
        b"/Length 4 0 R",
        b"stream\n",
        b"endstream",
        b" 3 0 obj ",
        b"xref\n0 1\n",
        b"trailer",
        b"%",
        b"<FEFF",
        b"/Filter /FlateDecode",
    ];

    /// The fixtures and hand-made documents the mutations start from.
    fn bases() -> Vec<Vec<u8>> {
        let mut chained = Pdf::new();
        chained.obj(1, "<< /Type /Catalog /Names << /EmbeddedFiles 10 0 R >> >>");
        chained.obj(10, "<< /Kids [11 0 R] >>");
        chained.obj(11, "<< /Names [(factur-x.xml) 4 0 R] >>");
        chained.stream(3, "/Length 5 0 R /Filter /FlateDecode", &zlib(b"<x/>"));
        chained.obj(4, "<< /F (factur-x.xml) /EF << /F 3 0 R >> >>");
        chained.obj(5, &zlib(b"<x/>").len().to_string());
        let first = chained.xref("/Root 1 0 R");
        chained.obj(1, "<< /Type /Catalog /AF [4 0 R] >>");
        chained.xref_stream(6, &format!("/Root 1 0 R /Prev {first}"));
        vec![
            FACTURX_GS.to_vec(),
            FACTURX_OBJSTM.to_vec(),
            ZUGFERD_NAMED.to_vec(),
            attached(
                "<FEFF0078007200650063006800 6E0075006E0067002E0078006D006C>",
                b"<x/>",
                false,
            ),
            chained.out,
        ]
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..2048)) {
            let _ = read(&bytes);
            let mut pdf = b"%PDF-1.7\n".to_vec();
            pdf.extend_from_slice(&bytes);
            let _ = read(&pdf);
        }

        #[test]
        fn mutated_documents_never_panic(
            which in 0usize..5,
            edits in proptest::collection::vec((0.0f64..1.0, proptest::prelude::any::<u8>(), 0usize..5), 1..12),
        ) {
            let mut pdf = bases().swap_remove(which);
            for (at, byte, how) in edits {
                let i = ((pdf.len() as f64) * at) as usize;
                let i = i.min(pdf.len().saturating_sub(1));
                match how {
                    0 => if let Some(b) = pdf.get_mut(i) { *b = byte },
                    1 => pdf.insert(i, byte),
                    2 => { if i < pdf.len() { pdf.remove(i); } }
                    3 => {
                        let token = TOKENS[usize::from(byte) % TOKENS.len()];
                        pdf.splice(i..i, token.iter().copied());
                    }
                    // A number made another number.
                    _ => {
                        if let Some(d) = pdf[i..].iter().position(u8::is_ascii_digit) {
                            let d = i + d;
                            let len = pdf[d..].iter().take_while(|c| c.is_ascii_digit()).count();
                            let new = (u64::from(byte) * 7_919).to_string();
                            pdf.splice(d..d + len, new.bytes());
                        }
                    }
                }
            }
            let start = Instant::now();
            if let Ok(e) = read(&pdf) {
                // Whatever comes out is bounded.
                proptest::prop_assert!(e.xml.len() <= Limits::default().stream_bytes_max);
            }
            proptest::prop_assert!(start.elapsed() < QUICK);
        }
    }
}
