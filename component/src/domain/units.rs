//! Units of articles: a name, unique in the account in any case, and the UN/ECE
//! Recommendation 20 code e-invoices give it. A unit an article uses cannot be deleted.

use super::records::{self, Draft, Resource, Rules};
use super::schema::{Field, Kind, Record, Scalar};
use super::{Ctx, Error};
use crate::caps::Write;

static FIELDS: &[Field] = &[
    Field::new("id", Kind::Integer)
        .read_only()
        .doc("Id of the unit (read only; assigned on create)."),
    Field::new("created", Kind::DateTime)
        .read_only()
        .doc("When the unit was created (read only)."),
    Field::new("updated", Kind::DateTime)
        .read_only()
        .doc("When the unit was last changed (read only)."),
    Field::new("name", Kind::Text).mandatory().doc(
        "Name of the unit as items print it, e.g. h or Stück: one line, unique in the account in \
         any case.",
    ),
    Field::new("unit_code", Kind::UnitCode).doc(
        "UN/ECE Recommendation 20 code of the unit (BT-130 of e-invoices), e.g. HUR, C62, KGM; \
         items made from an article of this unit take it. Empty: derived from the name.",
    ),
];

pub static UNITS: Resource = Resource::new("units", "unit", FIELDS, &UnitRules)
    .filtered(&[records::Filter::exact("name", "name")])
    .indexed(&["name"]);

/// The collection of articles, whose records name units (named, not referenced: articles
/// depend on this module).
const ARTICLES: &str = "articles";

struct UnitRules;

impl Rules for UnitRules {
    fn prepare(&self, d: Draft<'_>) -> Result<(), Error> {
        let name = d.record.text("name").trim().to_owned();
        if name.contains(['\n', '\r']) {
            d.errors.push("name must be a single line".into());
        }
        if name.is_empty() {
            return Ok(());
        }
        let taken = records::find(d.txn.as_read(), &UNITS, d.ctx.account_id, "name", &name)?
            .into_iter()
            .find(|u| u.id() != d.record.id() && u.text("name").trim().eq_ignore_ascii_case(&name));
        if let Some(other) = taken {
            d.errors.push(format!(
                "name {name} is taken by unit {} (names are unique in any case)",
                other.id()
            ));
        }
        d.record.set("name", Some(Scalar::Text(name)));
        Ok(())
    }

    fn before_delete(&self, ctx: &Ctx, txn: &mut dyn Write, record: &Record) -> Result<(), Error> {
        let users = records::ids_of(
            txn.as_read(),
            ARTICLES,
            ctx.account_id,
            "unit_id",
            record.id(),
        )?;
        if !users.is_empty() {
            let list: Vec<String> = users.iter().map(u64::to_string).collect();
            return Err(Error::invalid(format!(
                "unit {} is used by the articles {} and cannot be deleted",
                record.id(),
                list.join(", ")
            )));
        }
        Ok(())
    }
}
