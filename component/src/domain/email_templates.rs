//! E-mail templates: a name, a subject and a body with placeholders; the one marked
//! default gives the subject and body of e-mails that name none.

use super::Error;
use super::records::{self, Draft, Resource, Rules, Saved};
use super::schema::{Field, Kind, Record};
use crate::caps::Read;

static FIELDS: &[Field] = &[
    Field::new("id", Kind::Integer)
        .read_only()
        .doc("Id of the e-mail template (read only; assigned on create)."),
    Field::new("created", Kind::DateTime)
        .read_only()
        .doc("When the e-mail template was created (read only)."),
    Field::new("updated", Kind::DateTime)
        .read_only()
        .doc("When the e-mail template was last changed (read only)."),
    Field::new("name", Kind::Text)
        .mandatory()
        .doc("Name of the e-mail template."),
    Field::new("subject", Kind::Text).mandatory().doc(
        "Subject of the e-mail, one line; placeholders such as [Invoice.invoice_number] are \
         resolved when it is sent.",
    ),
    Field::new("body", Kind::Text).doc(
        "Text of the e-mail; placeholders such as [Client.name] are resolved when it is sent.",
    ),
    Field::new("is_default", Kind::Bool).doc(
        "1 makes this the template of e-mails that name no email_template_id (for what the request \
         does not give); setting it clears it on the others.",
    ),
];

pub static EMAIL_TEMPLATES: Resource = Resource::new(
    "email-templates",
    "e-mail template",
    FIELDS,
    &EmailTemplateRules,
);

struct EmailTemplateRules;

impl Rules for EmailTemplateRules {
    fn prepare(&self, d: Draft<'_>) -> Result<(), Error> {
        if d.record.text("subject").contains(['\r', '\n']) {
            d.errors.push("subject must be a single line".into());
        }
        Ok(())
    }

    fn after_save(&self, d: Saved<'_>) -> Result<(), Error> {
        records::clear_flag_on_others(
            d.ctx,
            d.txn,
            &EMAIL_TEMPLATES,
            d.record,
            "is_default",
            |_| true,
        )
    }
}

/// The template asked for (which must exist), else the default one, else none.
pub fn pick(txn: &dyn Read, account: u64, asked: Option<u64>) -> Result<Option<Record>, Error> {
    if let Some(id) = asked {
        return records::load(txn, &EMAIL_TEMPLATES, account, id)
            .map(Some)
            .map_err(|e| match e {
                Error::NotFound(_) => {
                    Error::invalid(format!("email_template_id {id} does not exist"))
                }
                other => other,
            });
    }
    Ok(records::load_all(txn, &EMAIL_TEMPLATES, account)?
        .into_iter()
        .find(|t| t.bool("is_default")))
}
