//! The `pdf` interface: the guest's records handed to the shared renderer
//! (`faktura_providers::render`), which lays out the pages and draws the thumbnails. It
//! owns only the mapping between the generated bindings and the renderer's types; it must
//! not lay out anything itself.

use faktura_providers::render;
use wasmtime::component::{HasData, Linker};

use crate::bindings::faktura::service::pdf::{
    self as wit, Document, ImageFormat, MetaRow, PageText,
};
use crate::metrics::PdfMetrics;

/// The renderer of every request: the interface's context.
pub(crate) struct PdfCtx {
    metrics: PdfMetrics,
}

impl PdfCtx {
    /// Renders, and reports each PDF's time to `metrics`.
    pub(crate) fn new(metrics: PdfMetrics) -> PdfCtx {
        PdfCtx { metrics }
    }
}

/// Adds the `pdf` import to `linker`; `ctx` finds the context in a request's data.
pub(crate) fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    ctx: fn(&mut T) -> &PdfCtx,
) -> wasmtime::Result<()> {
    wit::add_to_linker::<T, HasPdf>(linker, ctx)
}

/// What the generated `add_to_linker` hands the `Host` impl: the context alone.
struct HasPdf;

impl HasData for HasPdf {
    type Data<'a> = &'a PdfCtx;
}

fn rows(rows: Vec<MetaRow>) -> Vec<render::MetaRow> {
    rows.into_iter()
        .map(|r| render::MetaRow {
            label: r.label,
            value: r.value,
        })
        .collect()
}

fn document(doc: Document) -> (render::Document, render::Archive) {
    let archive = archive(doc.conformance, doc.attachments, doc.factur_x);
    let doc = render::Document {
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
        matrix: doc.matrix.map(|m| render::Matrix {
            caption: m.caption,
            modules: m.modules,
        }),
    };
    (doc, archive)
}

fn archive(
    conformance: wit::Conformance,
    attachments: Vec<wit::EmbeddedFile>,
    factur_x: Option<wit::FacturXInfo>,
) -> render::Archive {
    render::Archive {
        conformance: match conformance {
            wit::Conformance::Plain => render::Conformance::Plain,
            wit::Conformance::Pdfa3b => render::Conformance::PdfA3b,
        },
        attachments: attachments
            .into_iter()
            .map(|a| render::EmbeddedFile {
                filename: a.filename,
                mimetype: a.mimetype,
                description: a.description,
                relationship: a.relationship,
                modified: a.modified,
                content: a.content,
            })
            .collect(),
        factur_x: factur_x.map(|f| render::FacturX {
            document_type: f.document_type,
            filename: f.filename,
            version: f.version,
            conformance_level: f.conformance_level,
        }),
    }
}

impl wit::Host for &PdfCtx {
    async fn render(&mut self, doc: Document) -> wasmtime::Result<Result<Vec<u8>, String>> {
        let (doc, archive) = document(doc);
        let started = std::time::Instant::now();
        let pdf = render::render_archival(&doc, &archive);
        self.metrics.rendered(started.elapsed());
        Ok(pdf)
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
