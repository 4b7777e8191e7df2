//! The module graph of a crate, read from its sources, and the check that it has no cycle:
//! `component/src/layers.rs` and `host/src/layers.rs` run it on their crates.
//!
//! Every path a module names outside its tests (`crate::…`, `super::…`, `self::…`, or one
//! that starts at a child module or at a name the module imports) is an edge to the module
//! the path leads to: the longest module its segments name, followed on through that
//! module's `use` declarations when the next segment is a name it imports, so that a name
//! the crate root re-exports leads to the module that defines it. A path to one of a
//! module's ancestors (a layer's shared vocabulary: `domain::Error`) is no edge, and
//! neither is a re-export (`pub use`, `pub(crate) use`): whoever names a re-exported item
//! depends on the module that defines it, not the facade.
//!
//! It reads text, not Rust: a string literal or a trailing comment that looks like a path
//! counts. It must not grow into a parser; a crate that outgrows it wants a tool.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// An edge that may close a cycle, and why.
#[derive(Debug, Clone, Copy)]
pub struct Exception {
    pub from: &'static str,
    pub to: &'static str,
    /// Why the edge is there and the cycle it closes is acceptable; said where the
    /// exception is written, for the reader of the test.
    pub reason: &'static str,
}

/// The modules of a crate and the edges between them.
#[derive(Debug)]
pub struct Graph {
    /// The modules that count (the crate root is `""`), each with what its source says.
    sources: BTreeMap<String, Source>,
    /// For each module, the modules it depends on.
    edges: BTreeMap<String, BTreeSet<String>>,
}

/// What the check reads of one module.
#[derive(Debug, Default)]
struct Source {
    /// Its `use` declarations.
    uses: Vec<Use>,
    /// The paths it names outside them.
    inline: Vec<Vec<String>>,
}

/// One name a `use` declaration brings in.
#[derive(Debug)]
struct Use {
    name: String,
    path: Vec<String>,
    /// `pub use`, `pub(crate) use`, …: a facade, not a dependency of the module.
    reexport: bool,
}

/// The longest chain of `use` declarations followed for one path.
const HOPS_MAX: u32 = 8;

impl Graph {
    /// The graph of the crate whose root is `src/lib.rs`. The `test_only` modules (and
    /// those below them) are left out: their paths are no edges, nor are paths to them. A
    /// binary's root, `src/main.rs`, is another crate and is left out too.
    pub fn read(src: &Path, test_only: &[&str]) -> Graph {
        let left_out = |m: &str| {
            m == "main"
                || test_only
                    .iter()
                    .any(|t| m == *t || m.starts_with(&format!("{t}::")))
        };
        let sources: BTreeMap<String, Source> = modules(src)
            .into_iter()
            .map(|(module, file)| {
                let code = std::fs::read_to_string(&file)
                    .unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
                (module, read_source(&code))
            })
            .collect();
        let mut graph = Graph {
            sources,
            edges: BTreeMap::new(),
        };
        let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (module, source) in &graph.sources {
            // The root is every module's ancestor: no edge leads to it, so none of its own
            // can close a cycle.
            if module.is_empty() || left_out(module) {
                continue;
            }
            let named = source
                .uses
                .iter()
                .filter(|u| !u.reexport)
                .map(|u| &u.path)
                .chain(&source.inline);
            for path in named {
                let Some(to) = graph.resolve(module, path, 0) else {
                    continue;
                };
                if to != *module && !is_ancestor(&to, module) && !left_out(&to) {
                    edges.entry(module.clone()).or_default().insert(to);
                }
            }
        }
        graph.edges = edges;
        graph
    }

    /// Whether `from` names something of `to`.
    pub fn depends(&self, from: &str, to: &str) -> bool {
        self.edges.get(from).is_some_and(|e| e.contains(to))
    }

    /// Panics with a cycle of the graph without the `exceptions`, if it has one, and when
    /// an exception is no edge of the graph: none outlives its reason.
    pub fn assert_acyclic(&self, exceptions: &[Exception]) {
        for e in exceptions {
            assert!(
                self.depends(e.from, e.to),
                "the exception {} -> {} is no edge any more: remove it",
                e.from,
                e.to
            );
        }
        let mut edges = self.edges.clone();
        for e in exceptions {
            if let Some(to) = edges.get_mut(e.from) {
                to.remove(e.to);
            }
        }
        let mut done = BTreeSet::new();
        for module in self.sources.keys() {
            if let Some(cycle) = visit(module, &edges, &mut done, &mut Vec::new()) {
                panic!("a module cycle: {}", cycle.join(" -> "));
            }
        }
    }

    /// The module `path`, named in `from`, leads to; `None` outside the crate.
    fn resolve(&self, from: &str, path: &[String], hops: u32) -> Option<String> {
        if hops > HOPS_MAX {
            return None;
        }
        let first = path.first()?.as_str();
        let (mut module, mut rest) = match first {
            "crate" => (String::new(), &path[1..]),
            "self" => (from.to_owned(), &path[1..]),
            "super" => {
                let mut module = from.to_owned();
                let mut rest = path;
                while rest.first().map(String::as_str) == Some("super") {
                    module = parent(&module)?.to_owned();
                    rest = &rest[1..];
                }
                (module, rest)
            }
            _ if self.sources.contains_key(&join(from, first)) => (from.to_owned(), path),
            _ => {
                // A name `from` imports: where its import leads.
                let import = self
                    .sources
                    .get(from)?
                    .uses
                    .iter()
                    .find(|u| u.name == first)?;
                let mut full = import.path.clone();
                full.extend_from_slice(&path[1..]);
                return self.resolve(from, &full, hops + 1);
            }
        };
        while let Some(next) = rest.first() {
            let child = join(&module, next);
            if self.sources.contains_key(&child) {
                module = child;
                rest = &rest[1..];
                continue;
            }
            // A name the module imports (a re-export, or a parent's import a child names
            // through `super`) leads on to the module of what it stands for.
            let import = self
                .sources
                .get(&module)
                .and_then(|s| s.uses.iter().find(|u| u.name == *next));
            if let Some(import) = import {
                let mut full = import.path.clone();
                full.extend_from_slice(&rest[1..]);
                if let Some(to) = self.resolve(&module, &full, hops + 1) {
                    return Some(to);
                }
            }
            break;
        }
        Some(module)
    }
}

/// Depth-first search; a module met again while it is on the stack closes a cycle.
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

fn join(module: &str, name: &str) -> String {
    if module.is_empty() {
        name.to_owned()
    } else {
        format!("{module}::{name}")
    }
}

fn parent(module: &str) -> Option<&str> {
    if module.is_empty() {
        return None;
    }
    Some(module.rsplit_once("::").map_or("", |(p, _)| p))
}

fn is_ancestor(ancestor: &str, of: &str) -> bool {
    ancestor.is_empty() || of.starts_with(&format!("{ancestor}::"))
}

/// The module path of each source file (`domain/documents/mod.rs` is `domain::documents`,
/// `lib.rs` is `""`).
fn modules(src: &Path) -> BTreeMap<String, PathBuf> {
    fn walk(dir: &Path, prefix: &str, out: &mut BTreeMap<String, PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
            .map(|e| e.expect("a directory entry").path())
            .collect();
        entries.sort();
        for path in entries {
            let Some(name) = path.file_stem().and_then(|n| n.to_str()) else {
                continue;
            };
            if path.is_dir() {
                walk(&path, &join(prefix, name), out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let module = match name {
                    "mod" => prefix.to_owned(),
                    "lib" if prefix.is_empty() => String::new(),
                    _ => join(prefix, name),
                };
                out.insert(module, path);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(src, "", &mut out);
    out
}

/// The `use` declarations and inline paths of a file, without its `#[cfg(test)] mod
/// tests`, its comments and its `mod` declarations.
fn read_source(code: &str) -> Source {
    let code = match code.find("#[cfg(test)]\nmod tests") {
        Some(at) => &code[..at],
        None => code,
    };
    let mut source = Source::default();
    let mut rest = Vec::new();
    let mut lines = code.lines().map(str::trim_start);
    while let Some(line) = lines.next() {
        if line.starts_with("//") || declares_module(line) {
            continue;
        }
        let Some((reexport, tree)) = use_declaration(line) else {
            rest.push(line);
            continue;
        };
        let mut statement = tree.to_owned();
        while !statement.contains(';') {
            let Some(more) = lines.next() else { break };
            statement.push(' ');
            statement.push_str(more);
        }
        let statement = statement.split(';').next().unwrap_or_default();
        let tokens = tokens(statement);
        let mut imported = Vec::new();
        use_tree(&tokens, &mut 0, &[], &mut imported);
        source
            .uses
            .extend(imported.into_iter().map(|(name, path)| Use {
                name,
                path,
                reexport,
            }));
    }
    source.inline = paths(&rest.join("\n"));
    source
}

/// Whether a line declares a module (`mod x;`, `pub(crate) mod x {`).
fn declares_module(line: &str) -> bool {
    without_visibility(line).starts_with("mod ")
}

/// The use tree of a line that begins a `use` declaration, and whether it re-exports.
fn use_declaration(line: &str) -> Option<(bool, &str)> {
    let bare = without_visibility(line);
    let tree = bare.strip_prefix("use ")?;
    Some((bare.len() != line.len(), tree))
}

/// A line without its leading `pub`, `pub(crate)`, `pub(super)` or `pub(in …)`.
fn without_visibility(line: &str) -> &str {
    let Some(rest) = line.strip_prefix("pub") else {
        return line;
    };
    let rest = match rest.strip_prefix('(') {
        Some(inner) => match inner.find(')') {
            Some(end) => &inner[end + 1..],
            None => return line,
        },
        None => rest,
    };
    rest.strip_prefix(' ').unwrap_or(line)
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn is_ident(token: &str) -> bool {
    token.bytes().next().is_some_and(is_ident_byte)
}

/// Identifiers, `::` and single punctuation characters.
fn tokens(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if is_ident_byte(bytes[i]) {
            let start = i;
            while i < bytes.len() && is_ident_byte(bytes[i]) {
                i += 1;
            }
            out.push(&text[start..i]);
        } else if bytes[i..].starts_with(b"::") {
            out.push("::");
            i += 2;
        } else if bytes[i].is_ascii_whitespace() || !bytes[i].is_ascii() {
            i += 1;
        } else {
            out.push(&text[i..=i]);
            i += 1;
        }
    }
    out
}

/// Reads one use tree at `at` below `prefix` into `out`: each name it brings in with the
/// path it stands for (`a::{self as b, c::D}` brings in `b` for `a` and `D` for `a::c::D`).
fn use_tree(
    tokens: &[&str],
    at: &mut usize,
    prefix: &[String],
    out: &mut Vec<(String, Vec<String>)>,
) {
    let mut path = prefix.to_vec();
    loop {
        match tokens.get(*at).copied() {
            Some("{") => {
                *at += 1;
                while tokens.get(*at).is_some_and(|t| *t != "}") {
                    use_tree(tokens, at, &path, out);
                    if tokens.get(*at) == Some(&",") {
                        *at += 1;
                    } else {
                        break;
                    }
                }
                *at += 1;
                return;
            }
            Some(segment) if is_ident(segment) && segment != "as" => {
                path.push(segment.to_owned());
                *at += 1;
                if tokens.get(*at) == Some(&"::") {
                    *at += 1;
                    continue;
                }
                break;
            }
            // A glob names nothing the check follows; anything else is not a use tree.
            _ => {
                *at += 1;
                return;
            }
        }
    }
    if path.last().map(String::as_str) == Some("self") {
        path.pop();
    }
    let mut name = path.last().cloned().unwrap_or_default();
    if tokens.get(*at) == Some(&"as") {
        name = tokens.get(*at + 1).copied().unwrap_or_default().to_owned();
        *at += 2;
    }
    if name != "_" && !name.is_empty() {
        out.push((name, path));
    }
}

/// Every path of two or more segments in `code` (`a::b`, `crate::a::B`), as segments.
fn paths(code: &str) -> Vec<Vec<String>> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts = is_ident_byte(bytes[i])
            && (i == 0 || !(is_ident_byte(bytes[i - 1]) || bytes[i - 1] == b':'));
        if !starts {
            i += 1;
            continue;
        }
        let mut segments = Vec::new();
        let mut j = i;
        loop {
            let start = j;
            while j < bytes.len() && is_ident_byte(bytes[j]) {
                j += 1;
            }
            segments.push(code[start..j].to_owned());
            if bytes[j..].starts_with(b"::") && j + 2 < bytes.len() && is_ident_byte(bytes[j + 2]) {
                j += 2;
            } else {
                break;
            }
        }
        if segments.len() > 1 {
            out.push(segments);
        }
        i = j;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segments(path: &str) -> Vec<String> {
        path.split("::").map(str::to_owned).collect()
    }

    fn check_uses(code: &str, expected: &[(&str, &str, bool)]) {
        let source = read_source(code);
        let found: Vec<(String, String, bool)> = source
            .uses
            .iter()
            .map(|u| (u.name.clone(), u.path.join("::"), u.reexport))
            .collect();
        let expected: Vec<(String, String, bool)> = expected
            .iter()
            .map(|(n, p, r)| ((*n).to_owned(), (*p).to_owned(), *r))
            .collect();
        assert_eq!(found, expected, "{code}");
    }

    #[test]
    fn use_declarations_are_read_with_their_lists_aliases_and_visibility() {
        check_uses("use crate::a::B;", &[("B", "crate::a::B", false)]);
        check_uses(
            "use super::{a, b::C};",
            &[("a", "super::a", false), ("C", "super::b::C", false)],
        );
        check_uses(
            "pub use engine::{Limits, check as engine_check};",
            &[
                ("Limits", "engine::Limits", true),
                ("engine_check", "engine::check", true),
            ],
        );
        check_uses(
            "pub(crate) use self::backend::{\n    Backend,\n    DbError,\n};",
            &[
                ("Backend", "self::backend::Backend", true),
                ("DbError", "self::backend::DbError", true),
            ],
        );
        check_uses(
            "use crate::x::{self as wit, y::{Z, W as V}, *};",
            &[
                ("wit", "crate::x", false),
                ("Z", "crate::x::y::Z", false),
                ("V", "crate::x::y::W", false),
            ],
        );
        check_uses("use std::io::Write as _;", &[]);
    }

    #[test]
    fn inline_paths_are_read_whole_and_once() {
        let found = paths("let x = crate::store::keys::record(1); a::B::c(); f(y);");
        assert_eq!(
            found,
            vec![segments("crate::store::keys::record"), segments("a::B::c")]
        );
    }

    #[test]
    fn comments_module_declarations_and_tests_are_left_out() {
        let source = read_source(
            "//! crate::a::B\nmod a;\npub(crate) mod b;\nfn f() { c::D }\n\
             #[cfg(test)]\nmod tests {\n    use crate::e::F;\n}\n",
        );
        assert!(source.uses.is_empty());
        assert_eq!(source.inline, vec![segments("c::D")]);
    }

    /// A crate of `files` (path, text) in a temporary directory.
    fn graph(files: &[(&str, &str)], test_only: &[&str]) -> Graph {
        static CRATES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = CRATES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("faktura-layers-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for (path, text) in files {
            let path = dir.join(path);
            std::fs::create_dir_all(path.parent().expect("a file has a directory"))
                .expect("creating a directory");
            std::fs::write(&path, text).expect("writing a file");
        }
        let graph = Graph::read(&dir, test_only);
        std::fs::remove_dir_all(&dir).expect("removing the directory");
        graph
    }

    #[test]
    fn a_name_the_root_re_exports_leads_to_the_module_that_defines_it() {
        let g = graph(
            &[
                ("lib.rs", "mod a;\nmod b;\npub use a::Thing;\n"),
                ("a.rs", "pub struct Thing;\nfn f() { crate::b::g() }\n"),
                ("b.rs", "use crate::Thing;\npub fn g() {}\n"),
                ("main.rs", "use faktura::Thing;\n"),
            ],
            &[],
        );
        assert!(g.depends("b", "a"));
        assert!(g.depends("a", "b"));
        let cycle = std::panic::catch_unwind(|| g.assert_acyclic(&[]));
        assert!(cycle.is_err(), "a -> b -> a is a cycle");
        g.assert_acyclic(&[Exception {
            from: "b",
            to: "a",
            reason: "the test's",
        }]);
    }

    #[test]
    fn ancestors_children_and_imports_are_told_apart() {
        let g = graph(
            &[
                ("lib.rs", "mod m;\nmod n;\n"),
                (
                    "m/mod.rs",
                    "mod c;\nuse crate::n;\nfn f() { c::g(); n::h(); }\n",
                ),
                ("m/c.rs", "use super::f;\nuse crate::m::X;\n"),
                ("n.rs", "pub fn h() {}\n"),
            ],
            &[],
        );
        assert!(g.depends("m", "m::c"), "a path through a child module");
        assert!(g.depends("m", "n"), "an import");
        assert!(!g.depends("m::c", "m"), "an ancestor is no edge");
        g.assert_acyclic(&[]);
    }

    #[test]
    fn test_only_modules_have_no_edges() {
        let g = graph(
            &[
                ("lib.rs", "mod a;\nmod t;\n"),
                ("a.rs", "use crate::t::X;\n"),
                ("t.rs", "use crate::a::Y;\n"),
            ],
            &["t"],
        );
        assert!(!g.depends("a", "t") && !g.depends("t", "a"));
    }

    #[test]
    #[should_panic(expected = "no edge any more")]
    fn an_exception_that_is_no_edge_fails() {
        graph(&[("lib.rs", "mod a;\n"), ("a.rs", "")], &[]).assert_acyclic(&[Exception {
            from: "a",
            to: "b",
            reason: "none",
        }]);
    }
}
