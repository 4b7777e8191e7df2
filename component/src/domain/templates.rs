//! Document templates: word-processor files kept byte-exact, one default per document type.

use super::Error;
use super::records::{self, Draft, Filter, Resource, Rules, Saved};
use super::schema::{Field, Kind, Record, Scalar};

pub const TYPES: &[&str] = &[
    "INVOICE",
    "OFFER",
    "CONFIRMATION",
    "REMINDER",
    "DELIVERY_NOTE",
    "CREDIT_NOTE",
];
pub const FORMATS: &[&str] = &["doc", "docx", "rtf"];

static FIELDS: &[Field] = &[
    Field::new("id", Kind::Integer)
        .read_only()
        .doc("Id of the template (read only; assigned on create)."),
    Field::new("created", Kind::DateTime)
        .read_only()
        .doc("When the template was created (read only)."),
    Field::new("updated", Kind::DateTime)
        .read_only()
        .doc("When the template was last changed (read only)."),
    Field::new("type", Kind::Enum(TYPES)).mandatory().doc(
        "Kind of document the template is for; completion uses INVOICE and CREDIT_NOTE templates, \
         the other types are kept only.",
    ),
    Field::new("name", Kind::Text)
        .mandatory()
        .doc("Name of the template."),
    Field::new("format", Kind::Enum(FORMATS)).mandatory().doc(
        "File format of base64file: doc (Word 97-2003), docx or rtf; the file must start the way \
         its format does.",
    ),
    Field::new("is_default", Kind::Bool).doc(
        "1 makes the template the default of its type, clearing the flag on the others of that \
         type. Default: 1 for the first template of a type, else 0.",
    ),
    Field::new("base64file", Kind::File)
        .mandatory()
        .single_only()
        .doc(
            "The template file, base64-encoded and kept byte-exact; its text, placeholders \
             resolved, is laid out above the items. In single responses only.",
        ),
];

pub static TEMPLATES: Resource = Resource::new("templates", "template", FIELDS, &TemplateRules)
    .filtered(&[Filter::exact("type", "type")]);

struct TemplateRules;

impl Rules for TemplateRules {
    fn prepare(&self, d: Draft<'_>) -> Result<(), Error> {
        let format = d.record.text("format").to_owned();
        let new_file = d.changes.files.iter().find(|(n, _)| *n == "base64file");
        // Check the file against its declared format whenever either d.changes.
        let file = match (new_file, d.old) {
            (Some((_, bytes)), _) => Some(bytes.clone()),
            (None, Some(old)) if d.changes.has("format") => {
                records::load_files(d.txn.as_read(), &TEMPLATES, d.ctx.account_id, old.id())?
                    .into_iter()
                    .next()
                    .map(|(_, b)| b)
            }
            _ => None,
        };
        if let Some(file) = file
            && !format.is_empty()
            && let Err(e) = check_signature(&format, &file)
        {
            d.errors.push(e);
        }
        if d.old.is_none() && d.record.get("is_default").is_none() {
            // The first template of a type becomes its default.
            let ty = d.record.text("type").to_owned();
            let any_of_type = records::load_all(d.txn.as_read(), &TEMPLATES, d.ctx.account_id)?
                .iter()
                .any(|t| t.text("type") == ty);
            d.record.set("is_default", Some(Scalar::Bool(!any_of_type)));
        }
        Ok(())
    }

    fn after_save(&self, d: Saved<'_>) -> Result<(), Error> {
        let ty = d.record.text("type").to_owned();
        records::clear_flag_on_others(d.ctx, d.txn, &TEMPLATES, d.record, "is_default", |other| {
            other.text("type") == ty
        })
    }
}

/// Checks that a file starts the way its format requires.
pub fn check_signature(format: &str, bytes: &[u8]) -> Result<(), String> {
    let (ok, what) = match format {
        "docx" => (bytes.starts_with(b"PK\x03\x04"), "a ZIP package"),
        "doc" => (
            bytes.starts_with(&[0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1]),
            "an OLE compound file",
        ),
        "rtf" => (bytes.starts_with(b"{\\rtf"), "text starting with {\\rtf"),
        other => return Err(format!("format {other} is not supported")),
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "base64file is not a {format} file (expected {what})"
        ))
    }
}

/// The template a document is completed with: the one asked for (which must exist), else
/// the default template of the document type, else none (the built-in layout).
pub fn for_document(
    txn: &dyn crate::caps::Read,
    account: u64,
    doc_type: &str,
    asked: Option<u64>,
) -> Result<Option<Record>, Error> {
    if let Some(id) = asked {
        return records::load(txn, &TEMPLATES, account, id)
            .map(Some)
            .map_err(|e| match e {
                Error::NotFound(_) => Error::invalid(format!("template_id {id} does not exist")),
                other => other,
            });
    }
    Ok(records::load_all(txn, &TEMPLATES, account)?
        .into_iter()
        .find(|t| t.text("type") == doc_type && t.bool("is_default")))
}

/// The paragraphs of a template's text, placeholders unresolved.
pub fn text_of(
    txn: &dyn crate::caps::Read,
    account: u64,
    template: &Record,
) -> Result<Vec<String>, Error> {
    let file = records::load_files(txn, &TEMPLATES, account, template.id())?
        .into_iter()
        .next()
        .map(|(_, b)| b)
        .unwrap_or_default();
    Ok(super::template_text::paragraphs(
        template.text("format"),
        &file,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_match_formats() {
        assert!(check_signature("rtf", b"{\\rtf1 hello}").is_ok());
        assert!(check_signature("docx", b"PK\x03\x04rest").is_ok());
        assert!(check_signature("doc", &[0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1]).is_ok());
        assert!(
            check_signature("docx", b"{\\rtf1")
                .unwrap_err()
                .contains("not a docx")
        );
        assert!(check_signature("rtf", b"").is_err());
    }
}
