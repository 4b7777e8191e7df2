//! The harness's own checks: a test component older than its sources is refused, and the
//! harness hashes the sources as tests/sources_digest.py (`make test-component`) does.

use std::path::Path;

use faktura_tests::{check_component_sources, component_sources_digest, run_ok, sources_record};

/// A workspace of a few source files and a component built from them, recorded as
/// `make test-component` records it.
fn built_workspace() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    for (path, contents) in [
        ("Cargo.lock", "# lock\n"),
        ("Cargo.toml", "[workspace]\n"),
        ("component/Cargo.toml", "[package]\n"),
        ("component/src/lib.rs", "pub fn answer() -> u32 { 42 }\n"),
        ("component/src/http/mod.rs", "//! Routes.\n"),
        ("wit/faktura.wit", "package faktura:service;\n"),
        ("wit/deps/io/streams.wit", "package wasi:io;\n"),
        // Not a source: the host's own code does not go into the component.
        ("host/src/main.rs", "//! The host.\n"),
    ] {
        let file = root.path().join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, contents).unwrap();
    }
    let component = root.path().join("target/faktura-test.wasm");
    std::fs::create_dir_all(component.parent().unwrap()).unwrap();
    std::fs::write(&component, b"\0asm").unwrap();
    let digest = component_sources_digest(root.path()).unwrap();
    std::fs::write(sources_record(&component), format!("{digest}\n")).unwrap();
    root
}

fn component(root: &Path) -> std::path::PathBuf {
    root.join("target/faktura-test.wasm")
}

#[test]
fn a_component_built_from_the_sources_as_they_are_is_accepted() {
    let root = built_workspace();
    assert_eq!(
        check_component_sources(&component(root.path()), root.path()),
        Ok(())
    );
    // Files outside the sources change nothing.
    std::fs::write(root.path().join("host/src/main.rs"), "//! Changed.\n").unwrap();
    std::fs::write(root.path().join("README.md"), "# Faktura\n").unwrap();
    assert_eq!(
        check_component_sources(&component(root.path()), root.path()),
        Ok(())
    );
}

#[test]
fn a_component_older_than_its_sources_is_refused() {
    for changed in [
        "component/src/lib.rs",
        "component/src/http/new.rs",
        "component/Cargo.toml",
        "wit/deps/io/streams.wit",
        "Cargo.lock",
        "Cargo.toml",
    ] {
        let root = built_workspace();
        std::fs::write(root.path().join(changed), "// changed\n").unwrap();
        let refused = check_component_sources(&component(root.path()), root.path());
        assert_eq!(
            refused,
            Err(
                "target/faktura-test.wasm is older than its sources: run `make test-component`"
                    .into()
            ),
            "{changed}"
        );
    }
    // A file moved is a change too, though no contents changed.
    let root = built_workspace();
    std::fs::rename(
        root.path().join("component/src/http/mod.rs"),
        root.path().join("component/src/http/routes.rs"),
    )
    .unwrap();
    assert!(check_component_sources(&component(root.path()), root.path()).is_err());
}

#[test]
fn a_component_without_a_record_of_its_sources_is_refused() {
    let root = built_workspace();
    let wasm = component(root.path());
    std::fs::remove_file(sources_record(&wasm)).unwrap();
    assert_eq!(
        check_component_sources(&wasm, root.path()),
        Err("target/faktura-test.wasm has no record of its sources \
             (target/faktura-test.wasm.sources): run `make test-component`"
            .into())
    );
    std::fs::remove_file(&wasm).unwrap();
    assert_eq!(
        check_component_sources(&wasm, root.path()),
        Err("target/faktura-test.wasm is missing: run `make test-component`".into())
    );
}

#[test]
fn the_makefile_and_the_harness_hash_the_sources_alike() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("sources_digest.py");
    let root = built_workspace();
    let out = run_ok(
        std::process::Command::new("python3")
            .arg(&script)
            .arg(root.path()),
        "python3 runs",
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().trim(),
        component_sources_digest(root.path()).unwrap()
    );
}
