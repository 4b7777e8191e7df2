//! Writing a document as it is produced: resources describe their output as a sequence of
//! `Emit` calls, which `XmlWriter` turns straight into XML text and `TreeBuilder` into an
//! `Element` tree (for JSON, and to compare in tests). A large list is thus written without
//! first building one element, attribute and string per value.

use super::value::{Content, Element};

/// Receives a document element by element.
pub trait Emit {
    /// Starts an element that holds children; `close` ends it.
    fn open(&mut self, name: &str, attrs: &[(&str, &str)]);
    /// Ends the element `open` started last.
    fn close(&mut self);
    /// A scalar element; empty text is an empty element.
    fn scalar(&mut self, name: &str, attrs: &[(&str, &str)], text: &str);
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
    /// Open elements: name, and whether the start tag still lacks its `>` (no child yet).
    open: Vec<(String, bool)>,
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
        }
    }

    pub fn finish(mut self) -> Vec<u8> {
        while !self.open.is_empty() {
            self.close();
        }
        self.out
    }

    /// Ends a pending start tag before a child, and indents for the new element.
    fn begin(&mut self, name: &str, attrs: &[(&str, &str)]) {
        if let Some((_, pending @ true)) = self.open.last_mut() {
            *pending = false;
            self.out.extend_from_slice(b">\n");
        }
        indent(&mut self.out, self.open.len());
        self.out.push(b'<');
        self.out.extend_from_slice(name.as_bytes());
        for (k, v) in attrs {
            self.out.push(b' ');
            self.out.extend_from_slice(k.as_bytes());
            self.out.extend_from_slice(b"=\"");
            escape_bytes(&mut self.out, v, true);
            self.out.push(b'"');
        }
    }
}

impl Emit for XmlWriter {
    fn open(&mut self, name: &str, attrs: &[(&str, &str)]) {
        self.begin(name, attrs);
        self.open.push((name.to_owned(), true));
    }

    fn close(&mut self) {
        let Some((name, pending)) = self.open.pop() else {
            return;
        };
        if pending {
            self.out.extend_from_slice(b"/>\n");
        } else {
            indent(&mut self.out, self.open.len());
            self.out.extend_from_slice(b"</");
            self.out.extend_from_slice(name.as_bytes());
            self.out.extend_from_slice(b">\n");
        }
    }

    fn scalar(&mut self, name: &str, attrs: &[(&str, &str)], text: &str) {
        self.begin(name, attrs);
        if text.is_empty() {
            self.out.extend_from_slice(b"/>\n");
        } else {
            self.out.push(b'>');
            escape_bytes(&mut self.out, text, false);
            self.out.extend_from_slice(b"</");
            self.out.extend_from_slice(name.as_bytes());
            self.out.extend_from_slice(b">\n");
        }
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
fn escape_bytes(out: &mut Vec<u8>, s: &str, attr: bool) {
    let special = if attr { &ATTR_SPECIAL } else { &TEXT_SPECIAL };
    let bytes = s.as_bytes();
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
            escape_bytes(&mut out, s, attr);
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
