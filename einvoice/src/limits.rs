//! Every bound on what reading an e-invoice may cost, here and nowhere else: the XML
//! reader's (`read`) and the PDF reader's (`pdf`). The input comes from anyone; these keep
//! the memory and time of one read bounded by the size of the input, whatever it says.
//!
//! How large an upload may be is the component's to say (`component/src/limits.rs`).

/// How deep the elements of an e-invoice may nest, the root counting as one.
pub const XML_DEPTH_MAX: usize = 64;

/// How many coded values outside their code lists (BR-CL) one read keeps (`Read::unlisted`):
/// a document with more says nothing new by them, and what an import keeps of them stays
/// small.
pub const UNLISTED_MAX: usize = 100;

/// The bounds of one PDF read that a caller may choose; `Default` is what the service uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PdfLimits {
    /// Most indirect objects: entries of the cross-reference data, `obj` markers of the
    /// fallback scan, members of one object stream, cross-reference sections.
    pub objects_max: usize,
    /// Most bytes one stream may decode to.
    pub stream_bytes_max: usize,
    /// Most bytes a Flate stream may inflate to per compressed byte (a stream inflating to
    /// at most `PDF_RATIO_EXEMPT` bytes is never refused for its ratio).
    pub inflate_ratio_max: usize,
    /// Deepest nesting of arrays and dictionaries, of references resolved one within
    /// another, of a name tree (at most `PDF_DEPTH_HARD_MAX` whatever this says: the parser
    /// recurses).
    pub depth_max: usize,
}

impl Default for PdfLimits {
    fn default() -> Self {
        PdfLimits {
            objects_max: 100_000,
            stream_bytes_max: 16 * 1024 * 1024,
            inflate_ratio_max: 200,
            depth_max: 64,
        }
    }
}

// The PDF reader's fixed bounds, beside those of `PdfLimits`.

/// Where the `%PDF-` header may start.
pub const PDF_HEADER_WINDOW: usize = 1024;
/// The file's end, where `%%EOF` must be for it to count as complete.
pub const PDF_TAIL_WINDOW: usize = 1024;
/// The nesting the parser's recursion may reach, whatever the limits say.
pub const PDF_DEPTH_HARD_MAX: usize = 128;
/// All streams together decode to at most this many times `stream_bytes_max`.
pub const PDF_STREAMS_FACTOR: usize = 4;
/// One object holds at most this many times `objects_max` values.
pub const PDF_VALUES_FACTOR: usize = 4;
/// Streams inflating to at most this many bytes are exempt from the ratio limit.
pub const PDF_RATIO_EXEMPT: usize = 64 * 1024;
/// Bytes inflated at a time: how far past a limit inflating may go before it stops.
pub const PDF_CHUNK: usize = 32 * 1024;
/// The parser reads at most this many times (file + inflated bytes), plus
/// `PDF_WORK_FLOOR`: objects may overlap, and this keeps the time linear all the same.
pub const PDF_WORK_FACTOR: usize = 8;
pub const PDF_WORK_FLOOR: usize = 1024 * 1024;
/// Whitespace between a stream's data and `endstream` when `/Length` is right.
pub const PDF_STREAM_END_SLACK: usize = 64;
