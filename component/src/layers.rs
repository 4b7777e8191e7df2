//! The module graph of the component, and that of the e-invoice crate it builds on
//! (`einvoice/`), has no cycle: every path a module names (outside its tests) is an edge
//! to the module that path leads to, and the graph of those edges is acyclic
//! (`faktura_layers`, which the host's test shares). A path to one of a module's ancestors
//! (the layer's shared vocabulary: `domain::Error`, `domain::Ctx`) and a re-export are
//! not edges.

use std::path::Path;

#[test]
fn the_module_graph_has_no_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let test_only = ["http::golden", "http::grouping_tests", "layers", "wit"];
    let graph = faktura_layers::Graph::read(&src, &test_only);
    graph.assert_acyclic(&[]);
    // The test reads real edges: the documents layers are there.
    let documents = |from: &str, to: &str| {
        graph.depends(
            &format!("domain::documents::{from}"),
            &format!("domain::documents::{to}"),
        )
    };
    assert!(documents("commands", "storage"));
    assert!(documents("storage", "tallies"));
    assert!(documents("query", "tallies"));
    assert!(!documents("tallies", "storage"));
}

/// The component builds on the e-invoice crate, whose modules are held to the same rule.
#[test]
fn the_einvoice_crates_module_graph_has_no_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../einvoice/src");
    let graph = faktura_layers::Graph::read(&src, &["pdf::tests", "read::tests"]);
    graph.assert_acyclic(&[]);
    // The test reads real edges: the writers and the PDF reader's layers are there.
    assert!(graph.depends("ubl", "cii"));
    assert!(graph.depends("pdf::xref", "pdf::syntax"));
    assert!(graph.depends("pdf::attachments", "pdf::xref"));
    assert!(!graph.depends("pdf::syntax", "pdf::xref"));
}
