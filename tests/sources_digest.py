#!/usr/bin/env python3
"""Prints the SHA-256 of the test component's sources under ROOT (default: the current
directory), which `make test-component` records beside target/faktura-test.wasm.

The harness (tests/src/lib.rs, `component_sources_digest`) computes the same digest the
same way and refuses a component whose record differs: every file of SOURCES (directories
walked; missing ones and symbolic links skipped), sorted by its path relative to ROOT with
`/` between names, each hashed as `path NUL length NUL contents`.
"""

import hashlib
import os
import sys

SOURCES = [
    "Cargo.lock",
    "Cargo.toml",
    "component/Cargo.toml",
    "component/src",
    "component/plug/Cargo.toml",
    "component/plug/src",
    "einvoice/Cargo.toml",
    "einvoice/src",
    "host/providers/Cargo.toml",
    "host/providers/src",
    "wit",
]


def walk(root, relative, out):
    path = os.path.join(root, relative)
    if os.path.islink(path):
        return
    if os.path.isfile(path):
        out.append(relative)
    elif os.path.isdir(path):
        for name in os.listdir(path):
            walk(root, relative + "/" + name, out)


def digest(root):
    files = []
    for source in SOURCES:
        walk(root, source, files)
    files.sort(key=lambda f: f.encode())
    h = hashlib.sha256()
    for f in files:
        with open(os.path.join(root, f), "rb") as data:
            contents = data.read()
        h.update(f.encode() + b"\0" + str(len(contents)).encode() + b"\0" + contents)
    return h.hexdigest()


if __name__ == "__main__":
    print(digest(sys.argv[1] if len(sys.argv) > 1 else "."))
