//! The module graph of the component, and that of the e-invoice crate it builds on
//! (`einvoice/`), has no cycle: every `crate::…` and `super::…` path a module names
//! (outside its tests) is an edge to the module that path leads to, and the graph of those
//! edges is acyclic. A path to one of a module's ancestors (the layer's shared vocabulary:
//! `domain::Error`, `domain::Ctx`) and a parent's re-exports are not edges.

#![expect(
    clippy::disallowed_methods,
    reason = "the test reads the component's sources, not the component"
)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The module path of each source file (`domain/documents/mod.rs` is `domain::documents`).
fn modules(src: &Path) -> BTreeMap<String, PathBuf> {
    fn walk(dir: &Path, prefix: &str, out: &mut BTreeMap<String, PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            let name = path.file_stem().unwrap().to_str().unwrap().to_owned();
            let join = |n: &str| {
                if prefix.is_empty() {
                    n.to_owned()
                } else {
                    format!("{prefix}::{n}")
                }
            };
            if path.is_dir() {
                walk(&path, &join(&name), out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let module = match name.as_str() {
                    "mod" => prefix.to_owned(),
                    "lib" => String::new(),
                    _ => join(&name),
                };
                out.insert(module, path);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(src, "", &mut out);
    out
}

/// The code of a file that counts: without its `#[cfg(test)] mod tests`, the files of
/// test-only modules, `mod` declarations and `pub use` re-exports.
fn counted(code: &str) -> String {
    let code = match code.find("#[cfg(test)]\nmod tests") {
        Some(at) => &code[..at],
        None => code,
    };
    code.lines()
        .map(str::trim_start)
        .filter(|l| !l.starts_with("//") && !l.starts_with("pub use") && !l.starts_with("mod "))
        .filter(|l| !l.starts_with("pub mod") && !l.starts_with("pub(super) mod"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `crate::a::b` and `super::…::x` path in `code`, as segments.
fn paths(code: &str) -> Vec<Vec<String>> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut i = 0;
    while i < bytes.len() {
        let starts = (bytes[i..].starts_with(b"crate::") || bytes[i..].starts_with(b"super::"))
            && (i == 0 || !ident(bytes[i - 1]));
        if !starts {
            i += 1;
            continue;
        }
        let mut segments = Vec::new();
        let mut j = i;
        loop {
            let start = j;
            while j < bytes.len() && ident(bytes[j]) {
                j += 1;
            }
            segments.push(code[start..j].to_owned());
            if bytes[j..].starts_with(b"::") && j + 2 < bytes.len() && ident(bytes[j + 2]) {
                j += 2;
            } else {
                break;
            }
        }
        // `use super::{a, b}` names several modules.
        if bytes[j..].starts_with(b"::{") {
            let end = bytes[j..]
                .iter()
                .position(|b| *b == b'}')
                .map_or(bytes.len(), |e| j + e);
            for name in code[j + 3..end].split(',') {
                let name = name.trim().split([':', ' ']).next().unwrap_or("");
                if !name.is_empty() && name != "self" {
                    let mut s = segments.clone();
                    s.push(name.to_owned());
                    out.push(s);
                }
            }
        }
        out.push(segments);
        i = j.max(i + 1);
    }
    out
}

/// The module a path leads to: the longest module its segments name.
fn resolve(from: &str, segments: &[String], known: &BTreeMap<String, PathBuf>) -> Option<String> {
    let mut base: Vec<&str> = if from.is_empty() {
        Vec::new()
    } else {
        from.split("::").collect()
    };
    let mut rest = segments;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            base.clear();
            rest = &rest[1..];
        }
        Some("super") => {
            while rest.first().map(String::as_str) == Some("super") {
                base.pop();
                rest = &rest[1..];
            }
        }
        _ => return None,
    }
    let mut best = None;
    let mut path: Vec<&str> = base.clone();
    for s in rest {
        path.push(s);
        let name = path.join("::");
        if known.contains_key(&name) {
            best = Some(name);
        }
    }
    best
}

fn is_ancestor(ancestor: &str, of: &str) -> bool {
    ancestor.is_empty() || of.starts_with(&format!("{ancestor}::"))
}

/// The edges between the modules of the crate whose sources are `src`, leaving out the
/// modules `test_only` names.
fn edges(src: &Path, test_only: &[&str]) -> BTreeMap<String, BTreeSet<String>> {
    let known = modules(src);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, file) in &known {
        if test_only.contains(&module.as_str()) || module.is_empty() {
            continue;
        }
        let code = counted(&std::fs::read_to_string(file).unwrap());
        for segments in paths(&code) {
            let Some(to) = resolve(module, &segments, &known) else {
                continue;
            };
            if to != *module && !is_ancestor(&to, module) && !test_only.contains(&to.as_str()) {
                edges.entry(module.clone()).or_default().insert(to);
            }
        }
    }
    edges
}

/// A cycle of `edges`, if there is one.
fn cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    // Depth-first search; a node met again while on the stack closes a cycle.
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        done: &mut BTreeSet<String>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = stack.iter().position(|n| n == node) {
            let mut cycle = stack[at..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        stack.push(node.to_owned());
        for next in edges.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, edges, done, stack) {
                return Some(cycle);
            }
        }
        stack.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|module| visit(module, edges, &mut done, &mut Vec::new()))
}

#[test]
fn the_module_graph_has_no_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let test_only = ["http::golden", "http::grouping_tests", "layers", "wit"];
    let edges = edges(&src, &test_only);
    if let Some(cycle) = cycle(&edges) {
        panic!("a module cycle: {}", cycle.join(" -> "));
    }
    // The test reads real edges: the documents layers are there.
    let documents = |m: &str| {
        edges
            .get(&format!("domain::documents::{m}"))
            .cloned()
            .unwrap_or_default()
    };
    assert!(documents("commands").contains("domain::documents::storage"));
    assert!(documents("storage").contains("domain::documents::kept"));
    assert!(documents("query").contains("domain::documents::kept"));
    assert!(!documents("kept").contains("domain::documents::storage"));
}

/// The component builds on the e-invoice crate, whose modules are held to the same rule.
#[test]
fn the_einvoice_crates_module_graph_has_no_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../einvoice/src");
    let edges = edges(&src, &["pdf::tests", "read::tests"]);
    if let Some(cycle) = cycle(&edges) {
        panic!("a module cycle in faktura-einvoice: {}", cycle.join(" -> "));
    }
    // The test reads real edges: the writers and the PDF reader's layers are there.
    let of = |m: &str| edges.get(m).cloned().unwrap_or_default();
    assert!(of("ubl").contains("cii"));
    assert!(of("pdf::xref").contains("pdf::syntax"));
    assert!(of("pdf::attachments").contains("pdf::xref"));
    assert!(!of("pdf::syntax").contains("pdf::xref"));
}

/// The edges of `domain::documents`, as the closing note of a change shows them.
#[test]
fn paths_are_read_from_use_lists_and_inline_paths() {
    let found = paths("use super::{a, b::C};\nlet x = crate::store::keys::record(1);");
    assert!(found.contains(&vec!["super".into(), "a".into()]));
    assert!(found.contains(&vec!["super".into(), "b".into()]));
    assert!(found.contains(&vec![
        "crate".into(),
        "store".into(),
        "keys".into(),
        "record".into()
    ]));
}
