//! The format-neutral document tree shared by every reader and writer.

/// The `type=` of a typed scalar element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarType {
    Integer,
    Float,
    Date,
    DateTime,
}

impl ScalarType {
    pub fn as_str(self) -> &'static str {
        match self {
            ScalarType::Integer => "integer",
            ScalarType::Float => "float",
            ScalarType::Date => "date",
            ScalarType::DateTime => "datetime",
        }
    }

    /// The `type=` attribute, as `Emit` takes attributes.
    pub const fn attrs(self) -> &'static [(&'static str, &'static str)] {
        match self {
            ScalarType::Integer => &[("type", "integer")],
            ScalarType::Float => &[("type", "float")],
            ScalarType::Date => &[("type", "date")],
            ScalarType::DateTime => &[("type", "datetime")],
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// A scalar; the empty string is an empty element.
    Text(String),
    /// Child elements in document order.
    Children(Vec<Element>),
}

/// One element: a name, attributes in order, and either text or children.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Element {
    pub name: String,
    pub attrs: Vec<(String, String)>,
    pub content: Content,
}

impl Element {
    /// A scalar element without a type attribute.
    pub fn text(name: impl Into<String>, text: impl Into<String>) -> Element {
        Element {
            name: name.into(),
            attrs: Vec::new(),
            content: Content::Text(text.into()),
        }
    }

    /// A scalar element with `type=`.
    pub fn typed(name: impl Into<String>, ty: ScalarType, text: impl Into<String>) -> Element {
        Element {
            name: name.into(),
            attrs: vec![("type".into(), ty.as_str().into())],
            content: Content::Text(text.into()),
        }
    }

    /// An element holding child elements.
    pub fn node(name: impl Into<String>, children: Vec<Element>) -> Element {
        Element {
            name: name.into(),
            attrs: Vec::new(),
            content: Content::Children(children),
        }
    }

    /// A list element: `type="array"` and one child per entry.
    pub fn list(name: impl Into<String>, children: Vec<Element>) -> Element {
        Element {
            name: name.into(),
            attrs: vec![("type".into(), "array".into())],
            content: Content::Children(children),
        }
    }

    pub fn with_attr(mut self, name: &str, value: impl Into<String>) -> Element {
        self.attrs.push((name.into(), value.into()));
        self
    }

    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The children, or nothing for a scalar.
    pub fn children(&self) -> &[Element] {
        match &self.content {
            Content::Children(c) => c,
            Content::Text(_) => &[],
        }
    }

    /// The first child of that name.
    pub fn child(&self, name: &str) -> Option<&Element> {
        self.children().iter().find(|c| c.name == name)
    }

    /// The text of a scalar element; an element with children has none.
    pub fn as_text(&self) -> Option<&str> {
        match &self.content {
            Content::Text(t) => Some(t),
            Content::Children(c) if c.is_empty() => Some(""),
            Content::Children(_) => None,
        }
    }
}
