//! The module graph of the host has no cycle (`faktura_layers`, shared with the
//! component's test): every path a module names outside its tests is an edge to the module
//! it leads to, a name the crate root re-exports leads to where it is defined, and a path
//! to an ancestor or a re-export is no edge.

use std::path::Path;

use faktura_layers::{Exception, Graph};

/// The one cycle the host has, and why it stays.
const EXCEPTIONS: &[Exception] = &[Exception {
    from: "bindings",
    to: "store",
    reason: "bindgen! maps the WIT resources read-txn and write-txn onto the host's \
             store::ReadTxn and store::WriteTxn (`with:`), as wasmtime's own bindings map \
             theirs; store implements the generated traits in turn. The two are one \
             interface's two halves.",
}];

#[test]
fn the_module_graph_has_no_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = Graph::read(&src, &["layers"]);
    graph.assert_acyclic(EXCEPTIONS);
    // The test reads real edges: the capabilities sit below the state, the engines below
    // their interface, and the pool below them all.
    for (from, to) in [
        ("state", "store"),
        ("state", "mail"),
        ("state", "ratelimit"),
        ("state", "pdf"),
        ("engine", "state"),
        ("server", "engine"),
        ("store::postgres", "postgres"),
        ("mail::postgres", "postgres"),
        ("ratelimit::postgres", "postgres"),
        ("mail::files", "mail::smtp"),
        ("mail::postgres", "mail::smtp"),
        ("operations", "engine"),
    ] {
        assert!(graph.depends(from, to), "{from} -> {to}");
    }
    for (from, to) in [
        ("metrics", "engine"),
        ("store", "state"),
        ("mail", "state"),
        ("postgres", "store"),
    ] {
        assert!(!graph.depends(from, to), "{from} -> {to}");
    }
}
