//! XML reader and writer for `Element` trees, on quick-xml.
//!
//! The reader accepts UTF-8 documents without DTDs: a `<!DOCTYPE` is refused outright, so
//! entity definitions (billion laughs, external entities) never reach a parser. Only the five
//! predefined entities and character references are resolved. Depth, element count and text
//! length are bounded by `limits`.

use quick_xml::events::{BytesRef, BytesStart, Event};
use quick_xml::{Reader, XmlVersion};

use super::emit::{XmlWriter, emit_element};
use super::value::{Content, Element};
use crate::limits;

/// Why a request document was refused; the message is shown to the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError(pub String);

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

pub(super) fn err(msg: impl Into<String>) -> DecodeError {
    DecodeError(msg.into())
}

/// Counts one more element of a document: at most `limits::XML_ELEMENTS_MAX` (XML and
/// JSON alike).
pub(super) fn count_element(count: &mut usize) -> Result<(), DecodeError> {
    *count += 1;
    if *count > limits::XML_ELEMENTS_MAX {
        return Err(err(format!(
            "the document has more than {} elements",
            limits::XML_ELEMENTS_MAX
        )));
    }
    Ok(())
}

/// Refuses an element nested deeper than `limits::XML_DEPTH_MAX` (the root is at depth
/// 1; XML and JSON alike).
pub(super) fn check_depth(depth: usize) -> Result<(), DecodeError> {
    if depth > limits::XML_DEPTH_MAX {
        return Err(err(format!(
            "the document nests deeper than {} elements",
            limits::XML_DEPTH_MAX
        )));
    }
    Ok(())
}

/// Parses one XML document into its root element.
pub fn decode_xml(bytes: &[u8]) -> Result<Element, DecodeError> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        err(format!(
            "the body is not valid UTF-8 (at byte {})",
            e.valid_up_to()
        ))
    })?;
    let mut reader = Reader::from_str(text);
    reader.config_mut().check_end_names = true;
    // Open elements with the text gathered so far.
    let mut stack: Vec<(Element, String)> = Vec::new();
    let mut root: Option<Element> = None;
    let mut elements = 0usize;
    loop {
        let event = reader.read_event().map_err(|e| {
            err(format!(
                "malformed XML at byte {}: {e}",
                reader.error_position()
            ))
        })?;
        match event {
            Event::Start(_) | Event::Empty(_) if root.is_some() => {
                return Err(err("malformed XML: content after the root element"));
            }
            Event::Start(start) => {
                count_element(&mut elements)?;
                check_depth(stack.len() + 1)?;
                stack.push((open(&start)?, String::new()));
            }
            Event::Empty(start) => {
                count_element(&mut elements)?;
                check_depth(stack.len() + 1)?;
                let mut element = open(&start)?;
                element.content = Content::Text(String::new());
                attach(&mut stack, &mut root, element);
            }
            Event::End(_) => {
                let element = close(&mut stack)?;
                attach(&mut stack, &mut root, element);
            }
            Event::Text(t) => append_text(&mut stack, &t.xml10_content(), root.is_some())?,
            Event::CData(c) => {
                append_text(&mut stack, &c.into_inner(), root.is_some())?;
            }
            Event::GeneralRef(r) => {
                let mut buf = [0u8; 4];
                let resolved = resolve(&r)?.encode_utf8(&mut buf);
                append_text(&mut stack, resolved, root.is_some())?;
            }
            Event::DocType(_) => {
                return Err(err("DOCTYPE declarations are not allowed"));
            }
            Event::Decl(_) | Event::PI(_) | Event::Comment(_) => {}
            Event::Eof => break,
        }
    }
    if !stack.is_empty() {
        return Err(err("malformed XML: unexpected end of document"));
    }
    root.ok_or_else(|| err("the body holds no XML element"))
}

/// The element an end tag closes: its text becomes its content when it holds no
/// elements; text beside elements is refused.
fn close(stack: &mut Vec<(Element, String)>) -> Result<Element, DecodeError> {
    let (mut element, text) = stack.pop().ok_or_else(|| err("malformed XML"))?;
    if let Content::Children(children) = &element.content {
        if !children.is_empty() && !text.trim().is_empty() {
            return Err(err(format!(
                "element <{}> mixes text and elements",
                element.name
            )));
        }
        if children.is_empty() {
            element.content = Content::Text(text);
        }
    }
    Ok(element)
}

/// Places a finished element: into the element open around it, else as the root.
fn attach(stack: &mut [(Element, String)], root: &mut Option<Element>, element: Element) {
    match stack.last_mut() {
        Some((parent, _)) => push_child(parent, element),
        None => *root = Some(element),
    }
}

/// The character a reference stands for: a character reference, or one of the five
/// predefined entities (no others are defined, since DTDs are refused).
fn resolve(r: &BytesRef<'_>) -> Result<char, DecodeError> {
    if r.is_char_ref() {
        return r
            .resolve_char_ref()
            .map_err(|e| err(format!("bad character reference: {e}")))?
            .ok_or_else(|| err("bad character reference"));
    }
    match &*r.xml10_content() {
        "amp" => Ok('&'),
        "lt" => Ok('<'),
        "gt" => Ok('>'),
        "quot" => Ok('"'),
        "apos" => Ok('\''),
        other => Err(err(format!(
            "undefined entity &{other}; (entities are not supported)"
        ))),
    }
}

/// A name the writer can write back: a letter or `_` first, then letters, digits, `-`, `_`,
/// `.` or `:`.
fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'))
}

fn open(start: &BytesStart<'_>) -> Result<Element, DecodeError> {
    let name = start.name().as_ref().to_owned();
    if !valid_name(&name) {
        return Err(err(format!("malformed XML: bad element name \"{name}\"")));
    }
    let mut attrs = Vec::new();
    for attr in start.attributes() {
        let attr = attr.map_err(|e| err(format!("malformed attribute in <{name}>: {e}")))?;
        let key = attr.key.as_ref().to_owned();
        if !valid_name(&key) {
            return Err(err(format!(
                "malformed XML: bad attribute name \"{key}\" in <{name}>"
            )));
        }
        let value = attr
            .normalized_value(XmlVersion::Implicit1_0)
            .map_err(|e| err(format!("malformed attribute {key} in <{name}>: {e}")))?
            .into_owned();
        attrs.push((key, value));
    }
    Ok(Element {
        name,
        attrs,
        content: Content::Children(Vec::new()),
    })
}

fn push_child(parent: &mut Element, child: Element) {
    if let Content::Children(children) = &mut parent.content {
        children.push(child);
    }
}

fn append_text(
    stack: &mut [(Element, String)],
    s: &str,
    after_root: bool,
) -> Result<(), DecodeError> {
    match stack.last_mut() {
        Some((_, text)) => {
            if text.len() + s.len() > limits::TEXT_BYTES_MAX {
                return Err(err("element text is too long"));
            }
            text.push_str(s);
            Ok(())
        }
        None if s.trim().is_empty() => Ok(()),
        None if after_root => Err(err("malformed XML: text after the root element")),
        None => Err(err("malformed XML: text before the root element")),
    }
}

/// Writes a document with an XML declaration, indented by two spaces.
pub fn encode_xml(root: &Element) -> Vec<u8> {
    let mut w = XmlWriter::new();
    emit_element(root, &mut w);
    w.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::ScalarType;

    fn check_err(input: &str, expected_fragment: &str) {
        let e = decode_xml(input.as_bytes()).unwrap_err();
        assert!(
            e.0.contains(expected_fragment),
            "{input:?}: got {e:?}, wanted {expected_fragment:?}"
        );
    }

    #[test]
    fn scalar_children_and_entities_are_read() {
        let e = decode_xml(
            b"<?xml version=\"1.0\"?>\n<client>\n  <name>A &amp; B &#228;</name>\n  <note/>\n  <x><![CDATA[<raw>]]></x>\n</client>",
        )
        .unwrap();
        assert_eq!(e.name, "client");
        assert_eq!(e.child("name").unwrap().as_text(), Some("A & B \u{e4}"));
        assert_eq!(e.child("note").unwrap().as_text(), Some(""));
        assert_eq!(e.child("x").unwrap().as_text(), Some("<raw>"));
    }

    #[test]
    fn hostile_documents_are_refused() {
        check_err(
            "<!DOCTYPE lolz [<!ENTITY lol \"lol\">]><a>&lol;</a>",
            "DOCTYPE",
        );
        check_err("<a>&ext;</a>", "undefined entity");
        check_err("<a><b></a>", "malformed XML");
        check_err("<a>", "unexpected end");
        check_err("", "no XML element");
        check_err("<a/><b/>", "after the root");
        // Found by fuzzing: an empty name read fine but could not be written back.
        check_err("<></>", "bad element name");
        check_err("<a 1x=\"2\"/>", "malformed");
        check_err(&"<a>".repeat(100), "nests deeper");
        // An empty element is as deep as one with content: one level past the limit is
        // refused either way, and the deepest allowed reads.
        let nested = |leaf: &str, depth: usize| {
            format!(
                "{}{leaf}{}",
                "<a>".repeat(depth - 1),
                "</a>".repeat(depth - 1)
            )
        };
        check_err(&nested("<b/>", limits::XML_DEPTH_MAX + 1), "nests deeper");
        check_err(
            &nested("<b></b>", limits::XML_DEPTH_MAX + 1),
            "nests deeper",
        );
        assert!(decode_xml(nested("<b/>", limits::XML_DEPTH_MAX).as_bytes()).is_ok());
        let many = format!("<a>{}</a>", "<b/>".repeat(limits::XML_ELEMENTS_MAX + 1));
        check_err(&many, "more than");
        let e = decode_xml(b"<a>\xff</a>").unwrap_err();
        assert!(e.0.contains("UTF-8"));
    }

    #[test]
    fn written_documents_read_back_equal() {
        let doc = Element::list(
            "clients",
            vec![Element::node(
                "client",
                vec![
                    Element::typed("id", ScalarType::Integer, "7"),
                    Element::text("name", "<Müller & \"Söhne\">\nline 2"),
                    Element::typed("due_date", ScalarType::Date, ""),
                ],
            )],
        )
        .with_attr("page", "1")
        // Found by fuzzing: a reader turns a literal tab in an attribute into a space.
        .with_attr("note", "a\tb \n\r c");
        let bytes = encode_xml(&doc);
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(text.contains("<due_date type=\"date\"/>"), "{text}");
        assert_eq!(decode_xml(&bytes).unwrap(), doc);
    }
}
