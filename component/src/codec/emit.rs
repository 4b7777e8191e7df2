//! Writing a document as it is produced: resources describe their output as a sequence of
//! `Emit` calls, which `XmlWriter` turns straight into XML text and `TreeBuilder` into an
//! `Element` tree (for JSON, and to compare in tests). A large list is thus written without
//! first building one element, attribute and string per value.

use std::ops::Range;

use super::value::{Content, Element};

/// Attributes that live as long as the program (`type=` attributes, mostly).
pub type StaticAttrs = &'static [(&'static str, &'static str)];

/// The text of a scalar element.
#[derive(Debug, Clone, Copy)]
pub enum Text<'a> {
    /// Any text; written escaped.
    Any(&'a str),
    /// Text in no need of escaping anywhere: ASCII digits, signs and separators, as numbers
    /// and dates are written.
    Ascii(&'a [u8]),
}

/// Receives a document element by element.
pub trait Emit {
    /// Starts an element that holds children; `close` ends it.
    fn open(&mut self, name: &str, attrs: &[(&str, &str)]);
    /// Ends the element `open` started last.
    fn close(&mut self);
    /// A scalar element; empty text is an empty element.
    fn scalar(&mut self, name: &str, attrs: &[(&str, &str)], text: &str);
    /// A scalar element whose name and attributes live as long as the program (a field of
    /// a schema); its text may be ASCII that needs no escaping.
    fn field(&mut self, name: &'static str, attrs: StaticAttrs, text: Text<'_>) {
        match text {
            Text::Any(t) => self.scalar(name, attrs, t),
            Text::Ascii(a) => self.scalar(name, attrs, &String::from_utf8_lossy(a)),
        }
    }
}

/// Emits an existing tree.
pub fn emit_element(e: &Element, out: &mut dyn Emit) {
    let attrs: Vec<(&str, &str)> = e
        .attrs
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    match &e.content {
        Content::Text(t) => out.scalar(&e.name, &attrs, t),
        Content::Children(children) => {
            out.open(&e.name, &attrs);
            for c in children {
                emit_element(c, out);
            }
            out.close();
        }
    }
}

/// XML text with a declaration, indented by two spaces per level.
pub struct XmlWriter {
    out: Vec<u8>,
    /// Open elements: where the name starts in `names`, and whether the start tag still
    /// lacks its `>` (no child yet).
    open: Vec<(usize, bool)>,
    /// The names of the open elements, one after the other.
    names: String,
}

impl Default for XmlWriter {
    fn default() -> Self {
        XmlWriter::new()
    }
}

impl XmlWriter {
    pub fn new() -> XmlWriter {
        let mut out = Vec::with_capacity(4096);
        out.extend_from_slice(b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        XmlWriter {
            out,
            open: Vec::new(),
            names: String::new(),
        }
    }

    /// Bytes written so far.
    pub fn written(&self) -> usize {
        self.out.len()
    }

    /// Makes room for `more` bytes.
    pub fn reserve(&mut self, more: usize) {
        self.out.reserve(more);
    }

    pub fn finish(mut self) -> Vec<u8> {
        while !self.open.is_empty() {
            self.close();
        }
        self.out
    }

    /// Ends a pending start tag before a child, and indents for the new element.
    fn before_child(&mut self) {
        self.end_pending_start();
        indent(&mut self.out, self.open.len());
    }

    /// Ends the parent's start tag with `>` when this is its first child.
    fn end_pending_start(&mut self) {
        if let Some((_, pending @ true)) = self.open.last_mut() {
            *pending = false;
            self.out.extend_from_slice(b">\n");
        }
    }

    /// The start tag of an element, without its closing `>`.
    fn begin(&mut self, name: &str, attrs: &[(&str, &str)]) {
        self.before_child();
        start_tag(&mut self.out, name, attrs);
    }

    /// A scalar element written out in full.
    fn element(&mut self, name: &str, attrs: &[(&str, &str)], text: Text<'_>) {
        self.begin(name, attrs);
        if text_after_start(&mut self.out, text) {
            end_tag(&mut self.out, name);
        }
    }
}

/// The tags of a fixed list of fields, rendered once for records written at one depth:
/// `XmlWriter::tagged` takes them by the field's index, with no lookup.
pub struct FieldTags {
    bytes: Vec<u8>,
    /// Per field: where its indented start tag (with `>`) begins, where its end tag
    /// begins, and where that ends.
    at: Vec<(usize, usize, usize)>,
}

impl FieldTags {
    /// The tags of `fields` as children of an element at `depth` (the root is at 0).
    pub fn new<'a>(
        depth: usize,
        fields: impl IntoIterator<Item = (&'a str, &'a [(&'a str, &'a str)])>,
    ) -> FieldTags {
        let fields = fields.into_iter();
        let depth = depth + 1;
        let mut tags = FieldTags {
            bytes: Vec::with_capacity(fields.size_hint().0 * 48),
            at: Vec::with_capacity(fields.size_hint().0),
        };
        for (name, attrs) in fields {
            let (start, end) = render_tags(&mut tags.bytes, depth, name, attrs);
            tags.at.push((start.start, end.start, end.end));
        }
        tags
    }
}

impl XmlWriter {
    /// The depth an element opened now is at.
    pub fn depth(&self) -> usize {
        self.open.len()
    }

    /// Field `i` of `tags` with `text`, escaped; empty text is an empty element.
    pub fn tagged(&mut self, tags: &FieldTags, i: usize, text: &str) {
        self.tagged_with(tags, i, |out| escape_bytes(out, text.as_bytes(), false));
    }

    /// Field `i` of `tags` with the text `write` appends, which must need no escaping;
    /// when it appends nothing, an empty element.
    pub fn tagged_with(&mut self, tags: &FieldTags, i: usize, write: impl FnOnce(&mut Vec<u8>)) {
        self.end_pending_start();
        let (start, middle, end) = tags.at[i];
        self.out.extend_from_slice(&tags.bytes[start..middle]);
        let text_at = self.out.len();
        write(&mut self.out);
        if self.out.len() == text_at {
            self.out.truncate(text_at - 1);
            self.out.extend_from_slice(b"/>\n");
        } else {
            self.out.extend_from_slice(&tags.bytes[middle..end]);
        }
    }
}

/// After a start tag: `>` and the text, and true when an end tag must follow; `/>` and a
/// line feed for empty text.
fn text_after_start(out: &mut Vec<u8>, text: Text<'_>) -> bool {
    if text_bytes(text).is_empty() {
        out.extend_from_slice(b"/>\n");
        return false;
    }
    out.push(b'>');
    write_text(out, text);
    true
}

fn text_bytes(text: Text<'_>) -> &[u8] {
    match text {
        Text::Any(t) => t.as_bytes(),
        Text::Ascii(a) => a,
    }
}

/// The text of an element: escaped, or copied when it needs no escaping.
fn write_text(out: &mut Vec<u8>, text: Text<'_>) {
    match text {
        Text::Any(t) => escape_bytes(out, t.as_bytes(), false),
        Text::Ascii(bytes) => {
            debug_assert!(
                bytes
                    .iter()
                    .all(|&b| b.is_ascii() && !ATTR_SPECIAL[b as usize]),
                "{bytes:?} needs escaping"
            );
            out.extend_from_slice(bytes);
        }
    }
}

/// `<name attr="value"...`, without the closing `>`.
fn start_tag(out: &mut Vec<u8>, name: &str, attrs: &[(&str, &str)]) {
    out.push(b'<');
    out.extend_from_slice(name.as_bytes());
    for (k, v) in attrs {
        out.push(b' ');
        out.extend_from_slice(k.as_bytes());
        out.extend_from_slice(b"=\"");
        escape_bytes(out, v.as_bytes(), true);
        out.push(b'"');
    }
}

/// Appends the start tag of a field at `depth`, indented and with its `>`, then its end
/// tag; where each lies in `bytes`.
fn render_tags(
    bytes: &mut Vec<u8>,
    depth: usize,
    name: &str,
    attrs: &[(&str, &str)],
) -> (Range<usize>, Range<usize>) {
    let start = bytes.len();
    indent(bytes, depth);
    start_tag(bytes, name, attrs);
    bytes.push(b'>');
    let middle = bytes.len();
    end_tag(bytes, name);
    (start..middle, middle..bytes.len())
}

/// `</name>` and a line feed.
fn end_tag(out: &mut Vec<u8>, name: &str) {
    out.extend_from_slice(b"</");
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b">\n");
}

impl Emit for XmlWriter {
    fn open(&mut self, name: &str, attrs: &[(&str, &str)]) {
        self.begin(name, attrs);
        self.open.push((self.names.len(), true));
        self.names.push_str(name);
    }

    fn close(&mut self) {
        let Some((start, pending)) = self.open.pop() else {
            return;
        };
        if pending {
            self.out.extend_from_slice(b"/>\n");
        } else {
            indent(&mut self.out, self.open.len());
            end_tag(&mut self.out, &self.names[start..]);
        }
        self.names.truncate(start);
    }

    fn scalar(&mut self, name: &str, attrs: &[(&str, &str)], text: &str) {
        self.element(name, attrs, Text::Any(text));
    }

    fn field(&mut self, name: &'static str, attrs: StaticAttrs, text: Text<'_>) {
        self.element(name, attrs, text);
    }
}

fn indent(out: &mut Vec<u8>, depth: usize) {
    const SPACES: &[u8] = b"                                ";
    let mut n = depth * 2;
    while n > 0 {
        let now = n.min(SPACES.len());
        out.extend_from_slice(&SPACES[..now]);
        n -= now;
    }
}

/// Appends `s` with the characters XML gives meaning escaped; in attributes also quotes,
/// line feeds and tabs (which a reader would turn into spaces there). Runs without special characters are copied whole.
fn escape_bytes(out: &mut Vec<u8>, bytes: &[u8], attr: bool) {
    let special = if attr { &ATTR_SPECIAL } else { &TEXT_SPECIAL };
    let mut from = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if !special[b as usize] {
            continue;
        }
        out.extend_from_slice(&bytes[from..i]);
        out.extend_from_slice(match b {
            b'&' => b"&amp;",
            b'<' => b"&lt;",
            b'>' => b"&gt;",
            b'"' => b"&quot;",
            b'\r' => b"&#13;",
            b'\t' => b"&#9;",
            _ => b"&#10;",
        });
        from = i + 1;
    }
    out.extend_from_slice(&bytes[from..]);
}

/// The bytes escaped in element text, and in attribute values.
static TEXT_SPECIAL: [bool; 256] = special(b"&<>\r");
static ATTR_SPECIAL: [bool; 256] = special(b"&<>\r\"\n\t");

const fn special(bytes: &[u8]) -> [bool; 256] {
    let mut table = [false; 256];
    let mut i = 0;
    while i < bytes.len() {
        table[bytes[i] as usize] = true;
        i += 1;
    }
    table
}

/// An `Element` tree.
#[derive(Default)]
pub struct TreeBuilder {
    stack: Vec<Element>,
    root: Option<Element>,
}

impl TreeBuilder {
    pub fn new() -> TreeBuilder {
        TreeBuilder::default()
    }

    /// The root element (an empty one named `empty` when nothing was emitted).
    pub fn finish(mut self) -> Element {
        while !self.stack.is_empty() {
            self.close();
        }
        self.root
            .unwrap_or_else(|| Element::node("empty", Vec::new()))
    }

    fn add(&mut self, e: Element) {
        match self.stack.last_mut() {
            Some(Element {
                content: Content::Children(children),
                ..
            }) => children.push(e),
            _ => self.root = Some(e),
        }
    }
}

fn owned(attrs: &[(&str, &str)]) -> Vec<(String, String)> {
    attrs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

impl Emit for TreeBuilder {
    fn open(&mut self, name: &str, attrs: &[(&str, &str)]) {
        self.stack.push(Element {
            name: name.to_owned(),
            attrs: owned(attrs),
            content: Content::Children(Vec::new()),
        });
    }

    fn close(&mut self) {
        if let Some(e) = self.stack.pop() {
            self.add(e);
        }
    }

    fn scalar(&mut self, name: &str, attrs: &[(&str, &str)], text: &str) {
        self.add(Element {
            name: name.to_owned(),
            attrs: owned(attrs),
            content: Content::Text(text.to_owned()),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::ScalarType;

    fn sample() -> Element {
        Element::list(
            "clients",
            vec![
                Element::node(
                    "client",
                    vec![
                        Element::typed("id", ScalarType::Integer, "7"),
                        Element::text("name", "<Müller & \"Söhne\">\r\nline 2"),
                        Element::typed("due_date", ScalarType::Date, ""),
                        Element::list("taxes", Vec::new()),
                        Element::node("empty", Vec::new()),
                    ],
                ),
                Element::node("client", vec![Element::text("name", "B")]),
            ],
        )
        .with_attr("page", "1")
        .with_attr("note", "a \"quoted\"\nvalue & <more>")
    }

    #[test]
    fn both_writers_give_what_the_tree_holds() {
        let doc = sample();
        let mut xml = XmlWriter::new();
        emit_element(&doc, &mut xml);
        let expected = r#"<?xml version="1.0" encoding="UTF-8"?>
<clients type="array" page="1" note="a &quot;quoted&quot;&#10;value &amp; &lt;more&gt;">
  <client>
    <id type="integer">7</id>
    <name>&lt;Müller &amp; "Söhne"&gt;&#13;
line 2</name>
    <due_date type="date"/>
    <taxes type="array"/>
    <empty/>
  </client>
  <client>
    <name>B</name>
  </client>
</clients>
"#;
        assert_eq!(String::from_utf8(xml.finish()).unwrap(), expected);
        let mut tree = TreeBuilder::new();
        emit_element(&doc, &mut tree);
        assert_eq!(tree.finish(), doc);
    }

    /// Fields write what scalars write, for a name given with different attributes and at
    /// every depth.
    #[test]
    fn fields_are_written_as_scalars_are() {
        static NAMES: [&str; 100] = {
            const N: &str = "abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz01";
            let mut names = [""; 100];
            let mut i = 0;
            while i < 100 {
                names[i] = N.split_at(i).1.split_at(1).0;
                i += 1;
            }
            names
        };
        let emit_all = |e: &mut dyn Emit, as_fields: bool| {
            e.open("list", &[("type", "array")]);
            for record in 0..3 {
                e.open("record", &[]);
                // A field one level deeper is indented deeper.
                e.open("nested", &[]);
                if as_fields {
                    e.field(NAMES[1], &[], Text::Any("x"));
                } else {
                    e.scalar(NAMES[1], &[], "x");
                }
                e.close();
                for (i, name) in NAMES.iter().enumerate() {
                    let attrs: StaticAttrs = if i % 2 == 0 {
                        &[("type", "integer")]
                    } else {
                        &[]
                    };
                    let text = format!("{record}{i}");
                    if as_fields {
                        e.field(name, attrs, Text::Ascii(text.as_bytes()));
                        e.field(name, &[("type", "float")], Text::Any("<&>"));
                        e.field(name, attrs, Text::Any(""));
                    } else {
                        e.scalar(name, attrs, &text);
                        e.scalar(name, &[("type", "float")], "<&>");
                        e.scalar(name, attrs, "");
                    }
                }
                e.close();
            }
            e.close();
        };
        let mut fields = XmlWriter::new();
        emit_all(&mut fields, true);
        let mut scalars = XmlWriter::new();
        emit_all(&mut scalars, false);
        let fields = String::from_utf8(fields.finish()).unwrap();
        assert_eq!(fields, String::from_utf8(scalars.finish()).unwrap());
        assert!(
            fields.contains("<b>01</b>\n    <b type=\"float\">&lt;&amp;&gt;</b>\n    <b/>\n"),
            "{fields}"
        );
        let mut tree = TreeBuilder::new();
        emit_all(&mut tree, true);
        let mut scalar_tree = TreeBuilder::new();
        emit_all(&mut scalar_tree, false);
        assert_eq!(tree.finish(), scalar_tree.finish());
    }

    /// Records written through rendered tags read as records written scalar by scalar:
    /// indented for their depth, text escaped, nothing written an empty element.
    #[test]
    fn tagged_fields_are_written_as_scalars_are() {
        const FIELDS: [(&str, StaticAttrs); 3] = [
            ("id", &[("type", "integer")]),
            ("note", &[]),
            ("paid", &[("type", "float")]),
        ];
        let records = [("1", "a <b> & c", "2.5"), ("22", "", "")];
        let mut tagged = XmlWriter::new();
        let mut scalars = XmlWriter::new();
        for x in [&mut tagged, &mut scalars] {
            x.open("invoices", &[("type", "array")]);
        }
        let tags = FieldTags::new(tagged.depth(), FIELDS.iter().copied());
        for (id, note, paid) in records {
            tagged.open("invoice", &[]);
            tagged.tagged_with(&tags, 0, |out| out.extend_from_slice(id.as_bytes()));
            tagged.tagged(&tags, 1, note);
            tagged.tagged_with(&tags, 2, |out| out.extend_from_slice(paid.as_bytes()));
            tagged.close();
            scalars.open("invoice", &[]);
            for ((name, attrs), text) in FIELDS.iter().zip([id, note, paid]) {
                scalars.scalar(name, attrs, text);
            }
            scalars.close();
        }
        let tagged = String::from_utf8(tagged.finish()).unwrap();
        assert_eq!(tagged, String::from_utf8(scalars.finish()).unwrap());
        assert!(
            tagged.contains(
                "  <invoice>\n    <id type=\"integer\">22</id>\n    <note/>\n    <paid type=\"float\"/>\n  </invoice>\n"
            ),
            "{tagged}"
        );
        assert!(
            tagged.contains("<note>a &lt;b&gt; &amp; c</note>"),
            "{tagged}"
        );
    }

    #[test]
    fn empty_text_is_an_empty_element() {
        let mut xml = XmlWriter::new();
        xml.open("a", &[]);
        xml.scalar("b", &[("type", "integer")], "");
        xml.scalar("c", &[], "1<");
        xml.close();
        let text = String::from_utf8(xml.finish()).unwrap();
        assert!(
            text.ends_with("<a>\n  <b type=\"integer\"/>\n  <c>1&lt;</c>\n</a>\n"),
            "{text}"
        );
    }

    #[test]
    fn escaping_copies_plain_runs_and_escapes_the_rest() {
        let escaped = |s: &str, attr: bool| {
            let mut out = Vec::new();
            escape_bytes(&mut out, s.as_bytes(), attr);
            String::from_utf8(out).unwrap()
        };
        assert_eq!(
            escaped("a&b<c>d\"e\nf\rg", false),
            "a&amp;b&lt;c&gt;d\"e\nf&#13;g"
        );
        assert_eq!(escaped("\"x\"\n", true), "&quot;x&quot;&#10;");
        assert_eq!(escaped("a\tb", true), "a&#9;b");
        assert_eq!(escaped("a\tb", false), "a\tb");
        assert_eq!(escaped("äöü ß", true), "äöü ß");
    }
}
