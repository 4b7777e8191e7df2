//! Tags of records that are not documents (clients, articles): a record resource per kind
//! of owner, named by its owner (`client_id`, `article_id`) and indexed by it and by the
//! tag's name, so that an owner's tags and the owners carrying a tag are read without a
//! scan. An owner takes its tags with it when it is deleted. The owner is named by its
//! collection, not referenced: the owners depend on this module.

use super::records::{self, Draft, Resource, Rules};
use super::schema::{self, Changes, Field, Kind, Record, Scalar};
use super::{Ctx, Error};
use crate::caps::{Read, Write};
use crate::limits;
use crate::store::keys;

/// Whose tags a resource holds.
pub struct Owner {
    /// The owners' collection.
    pub collection: &'static str,
    /// The field naming the owner (`client_id`).
    pub field: &'static str,
    /// The owner's name in messages.
    pub label: &'static str,
    /// The tags.
    pub tags: &'static Resource,
}

macro_rules! fields {
    ($field:literal, $label:literal) => {
        &[
            Field::new("id", Kind::Integer)
                .read_only()
                .doc("Id of the tag (read only; assigned on create)."),
            Field::new($field, Kind::Integer).mandatory().doc(concat!(
                "Id of the ",
                $label,
                " the tag is on; it does not change."
            )),
            Field::new("name", Kind::Tag).mandatory().doc(concat!(
                "Name of the tag: one line without commas, at most 100 characters. A name the ",
                $label,
                " already carries (in any case) answers that tag."
            )),
        ]
    };
}

pub static CLIENT_TAGS: Resource = Resource::new(
    "client-tags",
    "client tag",
    fields!("client_id", "client"),
    &TagRules(&CLIENTS),
)
.filtered(&[records::Filter::exact("client_id", "client_id")])
.indexed(&["client_id", "name"]);

pub static ARTICLE_TAGS: Resource = Resource::new(
    "article-tags",
    "article tag",
    fields!("article_id", "article"),
    &TagRules(&ARTICLES),
)
.filtered(&[records::Filter::exact("article_id", "article_id")])
.indexed(&["article_id", "name"]);

pub static CLIENTS: Owner = Owner {
    collection: "clients",
    field: "client_id",
    label: "client",
    tags: &CLIENT_TAGS,
};

pub static ARTICLES: Owner = Owner {
    collection: "articles",
    field: "article_id",
    label: "article",
    tags: &ARTICLE_TAGS,
};

/// The owner of the tags `tags` holds.
pub fn of_tags(tags: &Resource) -> &'static Owner {
    [&CLIENTS, &ARTICLES]
        .into_iter()
        .find(|o| o.tags.collection == tags.collection)
        .expect("every tags resource has its owner")
}

impl Owner {
    /// Whether owner `id` exists in the account.
    pub fn exists(&self, txn: &dyn Read, account: u64, id: u64) -> Result<bool, Error> {
        Ok(txn
            .get(&keys::record(account, self.collection, id))?
            .is_some())
    }

    /// Tags an owner; a name it already carries (in any case) answers that tag.
    pub fn add(&self, ctx: &Ctx, txn: &mut dyn Write, changes: &Changes) -> Result<Record, Error> {
        let mut errors = changes.errors();
        schema::check_mandatory(self.tags.fields, changes, &mut errors);
        let owner = match changes.get(self.field) {
            Some(Some(Scalar::Int(id))) if *id > 0 => Some(*id as u64),
            _ => None,
        };
        let name = match changes.get("name") {
            Some(Some(v)) => v.to_wire().trim().to_owned(),
            _ => String::new(),
        };
        let Some(owner) = owner.filter(|_| errors.is_empty()) else {
            return Err(Error::Invalid(errors));
        };
        if !name.is_empty()
            && let Some(same) = self
                .of(txn.as_read(), ctx.account_id, owner)?
                .into_iter()
                .find(|t| same_name(t.text("name"), &name))
        {
            return Ok(same);
        }
        records::create(ctx, txn, self.tags, changes)
    }

    /// The tags of an owner, in id order.
    pub fn of(&self, txn: &dyn Read, account: u64, owner: u64) -> Result<Vec<Record>, Error> {
        records::children(txn, self.tags, account, self.field, owner)
    }

    /// Deletes the tags of an owner, with the owner.
    pub fn remove_of(&self, ctx: &Ctx, txn: &mut dyn Write, owner: u64) -> Result<(), Error> {
        for tag in self.of(txn.as_read(), ctx.account_id, owner)? {
            records::remove(ctx, txn, self.tags, &tag)?;
        }
        Ok(())
    }

    /// The ids of the owners carrying a tag named `name` (in any case), in id order.
    pub fn tagged(&self, txn: &dyn Read, account: u64, name: &str) -> Result<Vec<u64>, Error> {
        let ids = records::ids_named(txn, self.tags, account, "name", name)?;
        let mut owners: Vec<u64> = records::load_many(txn, self.tags, account, &ids)?
            .iter()
            .filter(|t| same_name(t.text("name"), name))
            .filter_map(|t| t.int(self.field))
            .map(|c| c as u64)
            .collect();
        owners.sort_unstable();
        owners.dedup();
        Ok(owners)
    }
}

impl Owner {
    /// The owners a list may answer by its `tags` (carrying all of them) and `tags_any`
    /// (carrying any of them); `None` when it names neither.
    pub fn owners(
        &self,
        txn: &dyn Read,
        account: u64,
        all: &[&str],
        any: &[&str],
    ) -> Result<Option<std::collections::BTreeSet<u64>>, Error> {
        let mut only: Option<std::collections::BTreeSet<u64>> = None;
        for tag in all {
            let tagged: std::collections::BTreeSet<u64> =
                self.tagged(txn, account, tag)?.into_iter().collect();
            only = Some(match only {
                Some(ids) => ids.intersection(&tagged).copied().collect(),
                None => tagged,
            });
        }
        if !any.is_empty() {
            let mut tagged = std::collections::BTreeSet::new();
            for tag in any {
                tagged.extend(self.tagged(txn, account, tag)?);
            }
            only = Some(match only {
                Some(ids) => ids.intersection(&tagged).copied().collect(),
                None => tagged,
            });
        }
        Ok(only)
    }
}

/// Whether two tag names are the same in any case.
fn same_name(a: &str, b: &str) -> bool {
    a.trim().to_lowercase() == b.trim().to_lowercase()
}

struct TagRules(&'static Owner);

impl Rules for TagRules {
    fn prepare(&self, d: Draft<'_>) -> Result<(), Error> {
        let owner = self.0;
        let account = d.ctx.account_id;
        let id = d.record.int(owner.field).unwrap_or(0);
        if let Some(old) = d.old
            && old.int(owner.field) != d.record.int(owner.field)
        {
            d.errors.push(format!(
                "{} cannot be changed; delete the tag and create another",
                owner.field
            ));
            return Ok(());
        }
        if id < 1 || !owner.exists(d.txn.as_read(), account, id as u64)? {
            d.errors
                .push(format!("{} {id} does not exist", owner.field));
            return Ok(());
        }
        let name = d.record.text("name").trim().to_owned();
        if !d.errors.is_empty() {
            return Ok(());
        }
        d.record.set("name", Some(Scalar::Text(name)));
        let carried = owner.of(d.txn.as_read(), account, id as u64)?.len();
        if d.old.is_none() && carried >= limits::TAGS_MAX {
            d.errors.push(format!(
                "a {} carries at most {} tags",
                owner.label,
                limits::TAGS_MAX
            ));
        }
        Ok(())
    }
}
