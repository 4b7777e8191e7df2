//! The `pdf` interface: the guest's records handed to the shared renderer
//! (`faktura_backend::render`), which lays out the pages and draws the thumbnails.

use faktura_backend::render;

use crate::State;
use crate::bindings::faktura::service::pdf::{
    self as wit, Document, ImageFormat, MetaRow, PageText,
};

fn rows(rows: Vec<MetaRow>) -> Vec<render::MetaRow> {
    rows.into_iter()
        .map(|r| render::MetaRow {
            label: r.label,
            value: r.value,
        })
        .collect()
}

fn document(doc: Document) -> render::Document {
    render::Document {
        title: doc.title,
        sender: doc.sender,
        recipient: doc.recipient,
        meta: rows(doc.meta),
        preamble: doc.preamble,
        items: render::Table {
            header: doc.items.header,
            rows: doc.items.rows,
            right_aligned: doc.items.right_aligned,
        },
        totals: rows(doc.totals),
        closing: doc.closing,
        footer: doc.footer,
        print: doc.print,
    }
}

impl wit::Host for State {
    async fn render(&mut self, doc: Document) -> wasmtime::Result<Result<Vec<u8>, String>> {
        Ok(render::render(&document(doc)))
    }

    async fn thumbnail(
        &mut self,
        page: PageText,
        format: ImageFormat,
    ) -> wasmtime::Result<Result<Vec<u8>, String>> {
        let format = match format {
            ImageFormat::Png => render::ImageFormat::Png,
            ImageFormat::Gif => render::ImageFormat::Gif,
            ImageFormat::Jpg => render::ImageFormat::Jpg,
        };
        Ok(render::thumbnail(&page.paragraphs, format))
    }
}
