//! JSON reader and writer for `Element` trees, mirroring the XML shape:
//! `{"invoice": {...}}`, every scalar a string, lists as
//! `{"invoices": {"invoice": [...], "@page": "1", ...}}` (one entry: a single object; none:
//! the key is absent), other attributes as `"@name"`. Reading is lenient the way existing
//! clients write: numbers and booleans for strings, `null` for empty, and nested lists
//! either as `{"items": {"item": [...]}}` or `{"items": [{"item": {...}}]}`.

use serde_json::{Map, Value};

use super::value::{Content, Element};
use super::xml::{DecodeError, check_depth, count_element, err};

/// Writes a document.
pub fn encode_json(root: &Element) -> Vec<u8> {
    let mut map = Map::new();
    // The root is always an object (the reader takes nothing else there): an empty root
    // record is `{}`, where an empty field inside one is `""`.
    let value = match value_of(root) {
        Value::String(text) if text.is_empty() => Value::Object(Map::new()),
        value => value,
    };
    map.insert(root.name.clone(), value);
    serde_json::to_vec(&Value::Object(map)).expect("JSON values always serialize")
}

/// The JSON value of an element's content and attributes.
pub(super) fn value_of(e: &Element) -> Value {
    let attrs: Vec<&(String, String)> = e
        .attrs
        .iter()
        .filter(|(k, v)| {
            !(k == "type"
                && matches!(
                    v.as_str(),
                    "integer" | "float" | "date" | "datetime" | "array"
                ))
        })
        .collect();
    let is_list = e.attr("type") == Some("array");
    match &e.content {
        Content::Text(t) if attrs.is_empty() && !is_list => Value::String(t.clone()),
        content => {
            let mut map = Map::new();
            if let Content::Children(children) = content {
                // Children grouped by name in order of first appearance; a name that repeats
                // (or any entry of a list) becomes an array.
                let mut names: Vec<&str> = Vec::new();
                for c in children {
                    if !names.contains(&c.name.as_str()) {
                        names.push(&c.name);
                    }
                }
                for name in names {
                    let values: Vec<Value> = children
                        .iter()
                        .filter(|c| c.name == name)
                        .map(value_of)
                        .collect();
                    let value = if values.len() == 1 {
                        values.into_iter().next().expect("one value")
                    } else {
                        Value::Array(values)
                    };
                    map.insert(name.to_owned(), value);
                }
            }
            for (k, v) in attrs {
                map.insert(format!("@{k}"), Value::String(v.clone()));
            }
            Value::Object(map)
        }
    }
}

/// Parses one JSON document into its root element.
pub fn decode_json(bytes: &[u8]) -> Result<Element, DecodeError> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| {
        let what = if e.is_syntax() || e.is_eof() {
            "malformed JSON"
        } else {
            "unreadable JSON"
        };
        err(format!("{what}: {e}"))
    })?;
    let Value::Object(map) = value else {
        return Err(err(
            "the JSON body must be an object with one root key, like {\"invoice\": {...}}",
        ));
    };
    let mut entries = map.into_iter();
    let (Some((name, content)), None) = (entries.next(), entries.next()) else {
        return Err(err(
            "the JSON body must be an object with exactly one root key, like {\"invoice\": {...}}",
        ));
    };
    if !matches!(content, Value::Object(_)) {
        return Err(err(format!(
            "{name} must be an object, like {{\"{name}\": {{...}}}}"
        )));
    }
    let mut count = 0;
    element(name, content, 1, &mut count)
}

fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(number_text(&n.to_string())),
        Value::Bool(b) => Some(if *b { "1" } else { "0" }.to_owned()),
        Value::Null => Some(String::new()),
        Value::Array(_) | Value::Object(_) => None,
    }
}

/// The text of a JSON number as written, except that a whole number written with a
/// fraction or an exponent (`-1236.0`, `1e3`) is the same number as its digits and is
/// read as them, as JSON Schema's `integer` reads it.
fn number_text(literal: &str) -> String {
    if !literal.contains(['.', 'e', 'E']) {
        return literal.to_owned();
    }
    let parsed = if literal.contains(['e', 'E']) {
        rust_decimal::Decimal::from_scientific(literal)
    } else {
        literal.parse()
    };
    match parsed {
        Ok(d) if d.fract().is_zero() => d.trunc().normalize().to_string(),
        _ => literal.to_owned(),
    }
}

/// The element of `name` a JSON value stands for, at `depth` (the root is 1): a scalar its
/// text, an object its attributes (`@name`) and children; `count` counts the document's
/// elements.
fn element(
    name: String,
    value: Value,
    depth: usize,
    count: &mut usize,
) -> Result<Element, DecodeError> {
    count_element(count)?;
    check_depth(depth)?;
    if let Some(text) = scalar_text(&value) {
        return Ok(Element::text(name, text));
    }
    let Value::Object(map) = value else {
        return Err(err(format!(
            "{name} must be an object or a value, not an array"
        )));
    };
    let mut e = Element::node(name, Vec::new());
    let mut children = Vec::new();
    for (key, v) in map {
        if let Some(attr) = key.strip_prefix('@') {
            let text =
                scalar_text(&v).ok_or_else(|| err(format!("attribute {key} must be a value")))?;
            e.attrs.push((attr.to_owned(), text));
            continue;
        }
        match v {
            Value::Array(entries) => {
                array_children(key, entries, depth, count, &mut children)?;
            }
            other => children.push(element(key, other, depth + 1, count)?),
        }
    }
    e.content = if children.is_empty() {
        Content::Text(String::new())
    } else {
        Content::Children(children)
    };
    Ok(e)
}

/// The children an array under `key` stands for, added to `children`: a list element
/// `key` when each entry wraps one element (`[{"item": {...}}, ...]`), else one element
/// `key` per entry.
fn array_children(
    key: String,
    entries: Vec<Value>,
    depth: usize,
    count: &mut usize,
    children: &mut Vec<Element>,
) -> Result<(), DecodeError> {
    let wrapped = !entries.is_empty()
        && entries.iter().all(
            |x| matches!(x, Value::Object(m) if m.len() == 1 && m.values().all(Value::is_object)),
        );
    if wrapped {
        children.push(wrapped_list(key, entries, depth, count)?);
        return Ok(());
    }
    for entry in entries {
        if matches!(entry, Value::Array(_)) {
            return Err(err(format!("{key} must not hold nested arrays")));
        }
        children.push(element(key.clone(), entry, depth + 1, count)?);
    }
    Ok(())
}

/// The list element `key` of an array whose every entry wraps one element in its name
/// (`[{"item": {...}}, ...]`).
fn wrapped_list(
    key: String,
    entries: Vec<Value>,
    depth: usize,
    count: &mut usize,
) -> Result<Element, DecodeError> {
    let mut list = Element::node(key, Vec::new());
    let mut inner_children = Vec::new();
    for entry in entries {
        let Value::Object(m) = entry else {
            unreachable!("the caller checked every entry")
        };
        for (inner, content) in m {
            inner_children.push(element(inner, content, depth + 2, count)?);
        }
    }
    list.content = Content::Children(inner_children);
    Ok(list)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::ScalarType;
    use proptest::prelude::*;

    fn json(e: &Element) -> Value {
        serde_json::from_slice(&encode_json(e)).unwrap()
    }

    #[test]
    fn lists_mirror_the_xml_shape() {
        let one = Element::list(
            "invoices",
            vec![Element::node(
                "invoice",
                vec![Element::typed("id", ScalarType::Integer, "1")],
            )],
        )
        .with_attr("page", "1")
        .with_attr("total", "1");
        assert_eq!(
            json(&one),
            serde_json::json!({"invoices": {"invoice": {"id": "1"}, "@page": "1", "@total": "1"}})
        );
        let none = Element::list("invoices", vec![]).with_attr("total", "0");
        assert_eq!(
            json(&none),
            serde_json::json!({"invoices": {"@total": "0"}})
        );
        let two = Element::node(
            "errors",
            vec![Element::text("error", "a"), Element::text("error", "b")],
        );
        assert_eq!(
            json(&two),
            serde_json::json!({"errors": {"error": ["a", "b"]}})
        );
        let empty = Element::typed("due_date", ScalarType::Date, "");
        assert_eq!(value_of(&empty), Value::String(String::new()));
    }

    #[test]
    fn clients_write_values_loosely() {
        let e = decode_json(
            br#"{"invoice": {"client_id": 5, "quote": 1.5, "net_gross": null, "x": true,
                 "invoice-items": [{"invoice-item": {"title": "A"}}, {"invoice-item": {"title": "B"}}]}}"#,
        )
        .unwrap();
        assert_eq!(e.child("client_id").unwrap().as_text(), Some("5"));
        assert_eq!(e.child("quote").unwrap().as_text(), Some("1.5"));
        assert_eq!(e.child("net_gross").unwrap().as_text(), Some(""));
        assert_eq!(e.child("x").unwrap().as_text(), Some("1"));
        let items = e.child("invoice-items").unwrap();
        assert_eq!(items.children().len(), 2);
        assert_eq!(
            items.children()[1].child("title").unwrap().as_text(),
            Some("B")
        );
        let same = decode_json(br#"{"invoice": {"invoice-items": {"invoice-item": [{"title": "A"}, {"title": "B"}]}}}"#).unwrap();
        assert_eq!(same.child("invoice-items"), e.child("invoice-items"));
        let huge = decode_json(br#"{"a": {"n": 99999999999999999999999, "e": 1e400}}"#).unwrap();
        assert_eq!(
            huge.child("n").unwrap().as_text(),
            Some("99999999999999999999999")
        );
        assert_eq!(huge.child("e").unwrap().as_text(), Some("1e+400"));
    }

    #[test]
    fn a_root_that_is_no_object_is_refused() {
        for body in [
            &br#"{"client": "AAA"}"#[..],
            br#"{"client": null}"#,
            br#"{"client": 1}"#,
        ] {
            let e = decode_json(body).unwrap_err();
            assert!(e.0.contains("client must be an object"), "{}", e.0);
        }
    }

    #[test]
    fn a_whole_number_written_with_a_fraction_or_exponent_is_read_as_its_digits() {
        let e = decode_json(
            br#"{"a": {"f": -1236.0, "e": 1e3, "g": 2.50E1, "q": 1.50, "s": 1.5e-1, "z": -0.0}}"#,
        )
        .unwrap();
        let text = |name| e.child(name).unwrap().as_text().unwrap().to_owned();
        assert_eq!(text("f"), "-1236");
        assert_eq!(text("e"), "1000");
        assert_eq!(text("g"), "25");
        // Other numbers keep the digits they were written with.
        assert_eq!(text("q"), "1.50");
        assert_eq!(text("s"), "1.5e-1");
        assert_eq!(text("z"), "0");
    }

    #[test]
    fn an_empty_root_writes_as_an_object_and_reads_back() {
        let e = decode_json(br#"{"erro(rs": {}}"#).unwrap();
        let written = encode_json(&e);
        assert_eq!(written, br#"{"erro(rs":{}}"#);
        assert_eq!(decode_json(&written).unwrap(), e);
    }

    #[test]
    fn bad_json_is_refused() {
        for (input, fragment) in [
            (&b"{\"a\": "[..], "malformed JSON"),
            (b"[1, 2]", "must be an object"),
            (b"{\"a\": {}, \"b\": {}}", "exactly one root key"),
            (b"{\"invoice\": [1]}", "invoice must be an object"),
            (b"\"x\"", "must be an object"),
        ] {
            let e = decode_json(input).unwrap_err();
            assert!(e.0.contains(fragment), "{input:?}: {e}");
        }
        let deep = format!("{}{{}}{}", "{\"a\":".repeat(100), "}".repeat(100));
        assert!(
            decode_json(deep.as_bytes())
                .unwrap_err()
                .0
                .contains("nests deeper")
        );
    }

    /// JSON trees of the API's shape: objects of strings, objects and arrays of objects.
    fn arb_tree() -> impl Strategy<Value = Value> {
        let leaf = "[a-zA-Z0-9 äöü€<>&\"]{0,12}".prop_map(Value::String);
        leaf.prop_recursive(4, 40, 5, |inner| {
            prop_oneof![
                prop::collection::btree_map("[a-z][a-z_-]{0,8}", inner.clone(), 1..5)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
                (
                    "[a-z][a-z_-]{0,8}",
                    prop::collection::vec(
                        prop::collection::btree_map("[a-z][a-z_-]{0,8}", inner, 2..4)
                            .prop_map(|m| Value::Object(m.into_iter().collect())),
                        2..4
                    )
                )
                    .prop_map(|(k, v)| {
                        let mut m = Map::new();
                        m.insert(k, Value::Array(v));
                        Value::Object(m)
                    }),
            ]
        })
    }

    proptest! {
        #[test]
        fn json_round_trips_through_the_element_tree(content in arb_tree()) {
            let mut map = Map::new();
            map.insert("root".to_owned(), content);
            let doc = Value::Object(map);
            let bytes = serde_json::to_vec(&doc).unwrap();
            let Ok(element) = decode_json(&bytes) else { return Ok(()) };
            let written = encode_json(&element);
            prop_assert_eq!(&decode_json(&written).unwrap(), &element);
            let back: Value = serde_json::from_slice(&written).unwrap();
            // Empty objects read as empty elements and write back as "".
            fn normalize(v: &Value) -> Value {
                match v {
                    Value::Object(m) if m.is_empty() => Value::String(String::new()),
                    Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), normalize(v))).collect()),
                    Value::Array(a) => Value::Array(a.iter().map(normalize).collect()),
                    other => other.clone(),
                }
            }
            prop_assert_eq!(normalize(&back), normalize(&doc));
        }

        #[test]
        fn xml_round_trips_through_the_element_tree(content in arb_tree()) {
            let mut map = Map::new();
            map.insert("root".to_owned(), content);
            let Ok(element) = decode_json(&serde_json::to_vec(&Value::Object(map)).unwrap()) else { return Ok(()) };
            let xml = crate::codec::encode_xml(&element);
            prop_assert_eq!(crate::codec::decode_xml(&xml).unwrap(), element);
        }
    }
}
