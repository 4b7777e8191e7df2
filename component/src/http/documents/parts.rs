//! The parts of documents on the wire: `/api/{invoice,credit-note}-{items,payments,comments,
//! tags}`. One set of handlers (list by the document's id, get, create, delete, and
//! update where a part can be changed) for every part of every kind, driven by the `Part`
//! each kind of part implements.

use super::super::error::ApiError;
use super::super::records::{decode_changes, encode_record};
use super::super::{Response, in_write};
use super::{names, parse_id};
use crate::caps::{Read, Write};
use crate::codec::Element;
use crate::domain::documents::{
    DocKind, Document, commands, comments, items, payments, storage, tags,
};
use crate::domain::schema::{Changes, Field, Record};
use crate::domain::{Ctx, Error};
use crate::http::Call;

/// A part of documents, as its handlers need it.
pub(crate) trait Part {
    type Child;
    /// Whether a child's record shows values of its document (an item's totals).
    const SHOWS_DOCUMENT: bool;
    fn singular(kind: DocKind) -> &'static str;
    fn plural(kind: DocKind) -> &'static str;
    fn fields(kind: DocKind) -> &'static [Field];
    /// The name of a child in "… 7 does not exist".
    fn label(kind: DocKind) -> String;
    fn record(kind: DocKind, child: &Self::Child, doc: Option<&Document>) -> Record;
    /// The id of a child's document.
    fn document_of(child: &Self::Child) -> u64;
    fn list(txn: &dyn Read, ctx: &Ctx, kind: DocKind, doc: u64) -> Result<Vec<Self::Child>, Error>;
    fn load(txn: &dyn Read, ctx: &Ctx, kind: DocKind, id: u64) -> Result<Self::Child, Error>;
    fn create(
        ctx: &Ctx,
        txn: &mut dyn Write,
        kind: DocKind,
        changes: &Changes,
    ) -> Result<Self::Child, Error>;
    fn delete(ctx: &Ctx, txn: &mut dyn Write, kind: DocKind, id: u64) -> Result<(), Error>;
}

/// A part whose children can be changed.
pub(crate) trait Changeable: Part {
    fn change(
        ctx: &Ctx,
        txn: &mut dyn Write,
        kind: DocKind,
        id: u64,
        changes: &Changes,
    ) -> Result<Self::Child, Error>;
}

/// A part: its struct and its `Part`, from what differs: the part's domain module (its
/// fields and records), its wire names, its label in messages, its commands; children are
/// listed and loaded through `storage` (items sorted by position).
macro_rules! part {
    (
        $name:ident: $module:ident::$child:ident, $singular:ident / $plural:ident,
        label: |$k:ident| $label:expr, shows_document: $shows:literal,
        record: |$rk:ident, $rc:ident, $rd:ident| $record:expr, list: $list:path,
        create: $create:expr, delete: $delete:path $(,)?
    ) => {
        pub(crate) struct $name;

        impl Part for $name {
            type Child = $module::$child;
            const SHOWS_DOCUMENT: bool = $shows;
            fn singular(kind: DocKind) -> &'static str {
                names(kind).$singular
            }
            fn plural(kind: DocKind) -> &'static str {
                names(kind).$plural
            }
            fn fields(kind: DocKind) -> &'static [Field] {
                $module::fields(kind)
            }
            fn label($k: DocKind) -> String {
                $label
            }
            fn record($rk: DocKind, $rc: &$module::$child, $rd: Option<&Document>) -> Record {
                $record
            }
            fn document_of(child: &$module::$child) -> u64 {
                child.document_id
            }
            fn list(
                txn: &dyn Read,
                ctx: &Ctx,
                kind: DocKind,
                doc: u64,
            ) -> Result<Vec<$module::$child>, Error> {
                $list(txn, ctx.account_id, kind, doc)
            }
            fn load(
                txn: &dyn Read,
                ctx: &Ctx,
                kind: DocKind,
                id: u64,
            ) -> Result<$module::$child, Error> {
                storage::child(txn, ctx.account_id, kind, id)
            }
            fn create(
                ctx: &Ctx,
                txn: &mut dyn Write,
                kind: DocKind,
                changes: &Changes,
            ) -> Result<$module::$child, Error> {
                ($create)(ctx, txn, kind, changes)
            }
            fn delete(ctx: &Ctx, txn: &mut dyn Write, kind: DocKind, id: u64) -> Result<(), Error> {
                $delete(ctx, txn, kind, id)
            }
        }
    };
}

part!(
    Items: items::Item, item / items, label: |kind| format!("{} item", kind.label()),
    shows_document: true, record: |_kind, item, doc| items::to_record(item, doc.expect("an item shows its document's totals")),
    list: storage::items, create: |ctx, txn, kind, changes| commands::add_item(ctx, txn, kind, changes).map(|(item, _)| item), delete: commands::remove_item,
);

impl Changeable for Items {
    fn change(
        ctx: &Ctx,
        txn: &mut dyn Write,
        kind: DocKind,
        id: u64,
        changes: &Changes,
    ) -> Result<items::Item, Error> {
        commands::change_item(ctx, txn, kind, id, changes).map(|(item, _)| item)
    }
}

part!(Payments: payments::Payment, payment / payments, label: |_k| "payment".into(), shows_document: false,
    record: |kind, p, _doc| payments::to_record(kind, p), list: storage::children, create: commands::book_payment, delete: commands::delete_payment);
part!(Comments: comments::Comment, comment / comments, label: |_k| "comment".into(), shows_document: false,
    record: |kind, c, _doc| comments::to_record(kind, c), list: storage::children, create: commands::add_comment, delete: commands::remove_comment);
part!(Tags: tags::Tag, tag / tags, label: |_k| "tag".into(), shows_document: false,
    record: |kind, t, _doc| tags::to_record(kind, t), list: storage::children, create: commands::add_tag, delete: commands::remove_tag);

fn element<P: Part>(kind: DocKind, child: &P::Child, doc: Option<&Document>) -> Element {
    encode_record(
        P::fields(kind),
        P::singular(kind),
        &P::record(kind, child, doc),
        None,
    )
}

/// The document a child shows values of, when its part shows any.
fn document_for<P: Part>(
    txn: &dyn Read,
    ctx: &Ctx,
    kind: DocKind,
    child: &P::Child,
) -> Result<Option<Document>, Error> {
    if !P::SHOWS_DOCUMENT {
        return Ok(None);
    }
    storage::load(txn, ctx.account_id, kind, P::document_of(child)).map(Some)
}

/// `GET /{part}?invoice_id=…`: the children of one document (mandatory), paged.
pub(crate) fn list<P: Part>(c: &Call<'_>, kind: DocKind) -> Result<Response, ApiError> {
    let (caps, ctx, query) = (c.caps, c.ctx, c.query);
    let field = kind.parent_field();
    let id = query
        .id(field)?
        .ok_or_else(|| ApiError::bad(format!("{field} is mandatory")))?;
    let txn = caps.store.begin_read()?;
    let doc = storage::load(txn.as_ref(), ctx.account_id, kind, id)?;
    let order = query.order(P::fields(kind))?;
    let mut children = P::list(txn.as_ref(), ctx, kind, doc.id)?;
    if !order.is_empty() {
        // Stable: children equal under `order_by` keep their stored order.
        let mut keyed: Vec<_> = children
            .into_iter()
            .map(|c| (P::record(kind, &c, Some(&doc)), c))
            .collect();
        keyed.sort_by(|(a, _), (b, _)| crate::domain::records::compare_by(&order, a, b));
        children = keyed.into_iter().map(|(_, c)| c).collect();
    }
    let (page, per_page) = query.paging()?;
    let total = children.len();
    let start = (page as usize - 1).saturating_mul(per_page as usize);
    let elements = children
        .iter()
        .skip(start)
        .take(per_page as usize)
        .map(|c| element::<P>(kind, c, Some(&doc)))
        .collect();
    let root = Element::list(P::plural(kind), elements)
        .with_attr("page", page.to_string())
        .with_attr("per_page", per_page.to_string())
        .with_attr("total", total.to_string());
    let mut r = Response::doc(200, root);
    r.headers.push(("x-total-count".into(), total.to_string()));
    Ok(r)
}

pub(crate) fn get<P: Part>(c: &Call<'_>, kind: DocKind) -> Result<Response, ApiError> {
    let (caps, ctx, raw) = (c.caps, c.ctx, c.id);
    let id = parse_id(raw, &P::label(kind))?;
    let txn = caps.store.begin_read()?;
    let child = P::load(txn.as_ref(), ctx, kind, id)?;
    let doc = document_for::<P>(txn.as_ref(), ctx, kind, &child)?;
    Ok(Response::doc(200, element::<P>(kind, &child, doc.as_ref())))
}

pub(crate) fn create<P: Part>(c: &Call<'_>, kind: DocKind) -> Result<Response, ApiError> {
    let (caps, ctx, req) = (c.caps, c.ctx, c.req);
    let changes = decode_changes(P::fields(kind), &req.document()?, P::singular(kind))?;
    let (child, doc) = in_write(caps, |txn| {
        let child = P::create(ctx, txn, kind, &changes)?;
        let doc = document_for::<P>(txn.as_read(), ctx, kind, &child)?;
        Ok((child, doc))
    })?;
    Ok(Response::doc(201, element::<P>(kind, &child, doc.as_ref())))
}

pub(crate) fn update<P: Changeable>(c: &Call<'_>, kind: DocKind) -> Result<Response, ApiError> {
    let (caps, ctx, raw, req) = (c.caps, c.ctx, c.id, c.req);
    let id = parse_id(raw, &P::label(kind))?;
    {
        // An unknown id is a 404 even when the body is also wrong.
        let txn = caps.store.begin_read()?;
        P::load(txn.as_ref(), ctx, kind, id)?;
    }
    let mut changes = decode_changes(P::fields(kind), &req.document()?, P::singular(kind))?;
    // A part stays with its document: its id may be sent (it is ignored), not emptied.
    let parent = kind.parent_field();
    if let Some(None) = changes.get(parent) {
        return Err(ApiError::bad(format!("{parent} must not be empty")));
    }
    changes.values.retain(|(n, _)| *n != parent);
    let (child, doc) = in_write(caps, |txn| {
        let child = P::change(ctx, txn, kind, id, &changes)?;
        let doc = document_for::<P>(txn.as_read(), ctx, kind, &child)?;
        Ok((child, doc))
    })?;
    Ok(Response::doc(200, element::<P>(kind, &child, doc.as_ref())))
}

pub(crate) fn delete<P: Part>(c: &Call<'_>, kind: DocKind) -> Result<Response, ApiError> {
    let (caps, ctx, raw) = (c.caps, c.ctx, c.id);
    let id = parse_id(raw, &P::label(kind))?;
    in_write(caps, |txn| Ok(P::delete(ctx, txn, kind, id)?))?;
    Ok(Response::empty())
}

/// The record shape of a part for the API description; its list names the document.
pub(crate) fn schema<P: Part>(kind: DocKind) -> crate::http::described::Schema {
    let document = kind.parent_field();
    crate::http::described::Schema {
        singular: P::singular(kind),
        plural: P::plural(kind),
        fields: P::fields(kind),
        filters: Vec::new(),
        owner: Some((document, false)),
    }
}
