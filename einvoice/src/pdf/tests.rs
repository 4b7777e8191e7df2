//! The PDF reader on real files (from several producers), on PDFs written by hand one
//! section at a time, and on hostile ones: bombs, loops, overlaps and huge counts, each
//! read within its bounds and in time linear in its size.

#![expect(
    clippy::disallowed_methods,
    reason = "the tests time the reader against its bounds, on the test machine's clock"
)]

use super::filters::{inflate, unpredict};
use super::syntax::{Obj, Parser, dict_get, text};
use super::xref::Doc;
use super::*;
use crate::limits::PDF_STREAMS_FACTOR;
use flate2::Compression;
use flate2::write::ZlibEncoder;
use std::fmt::Write as _;
use std::io::Write as _;
use std::time::{Duration, Instant};

const SAMPLE: &[u8] = include_bytes!("../../../tests/einvoice/samples/01.01a-INVOICE_uncefact.xml");
const FACTURX_GS: &[u8] = include_bytes!("../../../tests/einvoice/incoming/facturx-gs.pdf");
const FACTURX_OBJSTM: &[u8] = include_bytes!("../../../tests/einvoice/incoming/facturx-objstm.pdf");
const ZUGFERD_NAMED: &[u8] = include_bytes!("../../../tests/einvoice/incoming/zugferd-named.pdf");

/// Well under a second on any machine the tests run on, for any of the hostile inputs;
/// an unoptimized build on a loaded machine is given four times that (what these
/// bounds catch is work that grows with the input, not constant factors).
const QUICK: Duration = Duration::from_millis(if cfg!(debug_assertions) { 2000 } else { 500 });

fn read(pdf: &[u8]) -> Result<Embedded, PdfError> {
    embedded_xml(pdf, &PdfLimits::default())
}

fn timed(pdf: &[u8], limits: &PdfLimits) -> (Result<Embedded, PdfError>, Duration) {
    let start = Instant::now();
    let r = embedded_xml(pdf, limits);
    (r, start.elapsed())
}

fn zlib(data: &[u8]) -> Vec<u8> {
    let mut e = ZlibEncoder::new(Vec::new(), Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// `input` inflated (`inflate` with its output answered).
fn inflated(
    input: &[u8],
    stream_max: usize,
    ratio_max: usize,
    left: usize,
) -> Result<Vec<u8>, PdfError> {
    let mut out = Vec::new();
    inflate(input, stream_max, ratio_max, left, &mut out).map(|()| out)
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
    let small = inflated(&bomb(0), 1 << 30, 10_000, usize::MAX);
    assert!(
        matches!(small, Ok(ref v) if v.is_empty()) || matches!(small, Err(PdfError::Malformed(_)))
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
    let (r, took) = timed(&pdf.out, &PdfLimits::default());
    assert!(matches!(r, Err(PdfError::TooLarge(_))), "{r:?}");
    assert!(took < QUICK, "{took:?}");
    eprintln!("1 GiB bomb refused in {took:?}");
    // The ratio limit, too, when the bytes limit is out of the way.
    let limits = PdfLimits {
        stream_bytes_max: usize::MAX / 8,
        ..PdfLimits::default()
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
        inflated(&data, 100_000, 1_000_000, usize::MAX),
        Err(PdfError::TooLarge(_))
    ));
    assert!(matches!(
        inflated(&data, 1 << 20, 1_000_000, 200_000),
        Err(PdfError::TooLarge(_))
    ));
    assert_eq!(
        inflated(&data, 1 << 20, 1_000_000, usize::MAX)
            .unwrap()
            .len(),
        300_000
    );
    assert!(matches!(
        inflated(&data[..data.len() / 2], 1 << 20, 1_000_000, usize::MAX),
        Err(PdfError::Truncated)
    ));
    assert!(matches!(
        inflated(b"\x78\x9c\xff\xff\xff", 1 << 20, 200, usize::MAX),
        Err(PdfError::Malformed(_))
    ));
}

#[test]
fn truncated_pdfs_fail_or_still_give_the_whole_xml() {
    for fixture in [FACTURX_GS, FACTURX_OBJSTM, ZUGFERD_NAMED] {
        for cut in (0..fixture.len()).step_by(97) {
            let (r, took) = timed(&fixture[..cut], &PdfLimits::default());
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
    let (r, took) = timed(&pdf.out, &PdfLimits::default());
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
    let (r, took) = timed(&pdf.out, &PdfLimits::default());
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
    let (r, took) = timed(&pdf.out, &PdfLimits::default());
    assert_eq!(r.unwrap().xml, b"<inv/>");
    assert!(took < QUICK);
    let mut doc = Doc::new(&pdf.out, &PdfLimits::default());
    doc.read_xref().unwrap();
    assert!(matches!(doc.find(), Err(PdfError::Malformed(m)) if m.contains("refers to itself")));
}

#[test]
fn prev_loop_falls_back_to_the_scan() {
    let mut pdf = Pdf::new();
    pdf.obj(1, "<< /Type /Catalog /AF [4 0 R] >>");
    pdf.stream(3, "", b"<inv/>");
    pdf.obj(4, "<< /F (factur-x.xml) /EF << /F 3 0 R >> >>");
    let at = pdf.out.len();
    pdf.xref(&format!("/Root 1 0 R /Prev {at}"));
    let (r, took) = timed(&pdf.out, &PdfLimits::default());
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
    let (r, took) = timed(&pdf.out, &PdfLimits::default());
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
    let (r, took) = timed(&pdf, &PdfLimits::default());
    assert!(matches!(r, Err(PdfError::NoEInvoice)), "{r:?}");
    assert!(took < QUICK * 2, "{took:?}");
    eprintln!("99,000 tiny objects read in {took:?}");
    let pdf = tiny_objects(100_001);
    let (r, took) = timed(&pdf, &PdfLimits::default());
    assert!(matches!(r, Err(PdfError::TooLarge(_))), "{r:?}");
    assert!(took < QUICK);
    // Without the table, the scan stops at the same bound.
    let mut broken = pdf.clone();
    let at = rfind(&broken, b"xref\n").unwrap();
    broken.truncate(at);
    let (r, took) = timed(&broken, &PdfLimits::default());
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
        let (r, took) = timed(&pdf.out, &PdfLimits::default());
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
    let (r, took) = timed(&pdf.out, &PdfLimits::default());
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
    let (r, took) = timed(body.as_bytes(), &PdfLimits::default());
    assert!(r.is_err(), "{r:?}");
    assert!(took < QUICK, "{took:?}");
    // A long chain of references.
    let mut pdf = Pdf::new();
    pdf.obj(1, "<< /Type /Catalog /AF 2 0 R >>");
    for i in 2..5000 {
        pdf.obj(i, &format!("{} 0 R", i + 1));
    }
    pdf.xref("/Root 1 0 R");
    let (r, took) = timed(&pdf.out, &PdfLimits::default());
    assert!(matches!(r, Err(PdfError::TooLarge(_))), "{r:?}");
    assert!(took < QUICK);
}

#[test]
fn xref_with_huge_counts_is_bounded() {
    let mut pdf = Pdf::new();
    pdf.obj(1, "<< /Type /Catalog >>");
    let at = pdf.out.len();
    pdf.out.extend_from_slice(format!("xref\n0 18446744073709551615\n0000000000 65535 f \ntrailer\n<< /Root 1 0 R >>\nstartxref\n{at}\n%%EOF\n").as_bytes());
    let (r, took) = timed(&pdf.out, &PdfLimits::default());
    assert!(matches!(r, Err(PdfError::NoEInvoice)), "{r:?}");
    assert!(took < QUICK);
    // An object stream claiming a million members.
    let mut pdf = Pdf::new();
    pdf.obj(1, "<< /Type /Catalog /AF [2 0 R] >>");
    pdf.stream(5, "/Type /ObjStm /N 1000000000 /First 4", b"2 0 [3]");
    pdf.xref_stream_with(6, "/Root 1 0 R", &[(2, 5, 0)]);
    let (r, took) = timed(&pdf.out, &PdfLimits::default());
    assert!(r.is_err(), "{r:?}");
    assert!(took < QUICK);
}

/// Flate data that inflates to a MiB (about 50:1, within the ratio limit) and then turns
/// out to be no Flate data at all.
fn inflates_then_breaks() -> Vec<u8> {
    let mut data = vec![0u8; 1 << 20];
    for (i, b) in data.iter_mut().enumerate().step_by(150) {
        *b = u8::try_from(i % 251).unwrap();
    }
    let mut c = flate2::Compress::new(Compression::best(), true);
    let mut stream = Vec::with_capacity(data.len());
    c.compress_vec(&data, &mut stream, flate2::FlushCompress::Sync)
        .unwrap();
    assert_eq!(c.total_in(), 1 << 20, "one call deflates the MiB");
    stream.extend_from_slice(b"\xff\xff\xff\xff");
    stream
}

/// An object stream that inflates a long way before it breaks, named by thousands of
/// cross-reference entries: it was inflated again for each of them, and a file of 20 KB
/// kept the reader busy for seconds.
#[test]
fn a_broken_object_stream_is_inflated_once_however_many_objects_it_holds() {
    let mut pdf = Pdf::new();
    pdf.obj(1, "<< /Type /Catalog >>");
    pdf.stream(
        5,
        "/Type /ObjStm /N 1 /First 4 /Filter /FlateDecode",
        &inflates_then_breaks(),
    );
    let members: Vec<(u32, u32, u8)> = (10..5_010).map(|n| (n, 5, 0)).collect();
    pdf.xref_stream_with(6, "/Root 1 0 R", &members);
    assert!(pdf.out.len() < 64 * 1024, "{} bytes", pdf.out.len());
    let (r, took) = timed(&pdf.out, &PdfLimits::default());
    assert!(matches!(r, Err(PdfError::NoEInvoice)), "{r:?}");
    assert!(took < QUICK, "{took:?}");
}

/// Many object streams, each inflating a MiB before it breaks: what they inflated was
/// never counted, because they failed, and the bound of all streams together did not hold.
#[test]
fn what_a_broken_stream_inflated_counts_against_the_limit_of_all_streams() {
    let broken = inflates_then_breaks();
    let mut pdf = Pdf::new();
    pdf.obj(1, "<< /Type /Catalog >>");
    let mut members = Vec::new();
    for stm in (10..).step_by(2).take(80) {
        pdf.stream(
            stm,
            "/Type /ObjStm /N 1 /First 4 /Filter /FlateDecode",
            &broken,
        );
        members.push((stm + 1, stm, 0));
    }
    pdf.xref_stream_with(1000, "/Root 1 0 R", &members);
    let limits = PdfLimits::default();
    assert!(80 << 20 > limits.stream_bytes_max * PDF_STREAMS_FACTOR);
    let (r, took) = timed(&pdf.out, &limits);
    assert!(
        matches!(r, Err(PdfError::TooLarge(ref m)) if m.contains("in all")),
        "{r:?}"
    );
    assert!(took < QUICK, "{took:?}");
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
            proptest::prop_assert!(e.xml.len() <= PdfLimits::default().stream_bytes_max);
        }
        proptest::prop_assert!(start.elapsed() < QUICK);
    }
}
