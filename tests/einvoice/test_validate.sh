#!/usr/bin/env bash
# Self-test of tests/einvoice/validate.py: the official samples must come out clean, and
# copies mutated on the fly (in a temp dir) must be reported with the expected rule ids,
# which proves the validator can fail. All documents go through ONE validator process,
# as the integration tests do. Prints "einvoice-validator: N passed, N failed".
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

python3 - "$HERE" "$TMP" <<'PY'
import glob, json, os, re, subprocess, sys, time

here, tmp = sys.argv[1], sys.argv[2]
samples = sorted(glob.glob(os.path.join(here, "samples", "*.xml")))
cii = [p for p in samples if p.endswith("_uncefact.xml")]
ubl = [p for p in samples if p.endswith("_ubl.xml")]
assert cii and ubl, "no samples in %s/samples" % here

cases = []  # (path, profile, expectation); expectation: None = clean, else (source, id or None)


def add(path, profile, expect=None):
    cases.append((path, profile, expect))


def mutate(src, name, *subs):
    text = open(src, encoding="utf-8").read()
    for pattern, repl in subs:
        new = re.sub(pattern, repl, text, count=1, flags=re.S)
        assert new != text, "mutation %r did not apply to %s" % (pattern, src)
        text = new
    path = os.path.join(tmp, name)
    open(path, "w", encoding="utf-8").write(text)
    return path


for p in cii:
    add(p, "xrechnung-cii")
for p in ubl:
    add(p, "xrechnung-ubl")

c, u = cii[0], ubl[0]
# XRechnung: BuyerReference (BT-10) is mandatory -> BR-DE-15.
add(mutate(c, "cii-no-buyerref.xml", (r"<ram:BuyerReference>[^<]*</ram:BuyerReference>", "")),
    "xrechnung-cii", ("xrechnung", "BR-DE-15"))
add(mutate(u, "ubl-no-buyerref.xml", (r"<cbc:BuyerReference>[^<]*</cbc:BuyerReference>", "")),
    "xrechnung-ubl", ("xrechnung", "BR-DE-15"))
# EN 16931: total with VAT (BT-112) = total without VAT + VAT -> BR-CO-15.
add(mutate(c, "cii-bad-total.xml",
           (r"(<ram:GrandTotalAmount[^>]*>)([0-9.]+)", lambda m: m.group(1) + "%.2f" % (float(m.group(2)) + 1))),
    "xrechnung-cii", ("cen", "BR-CO-15"))
add(mutate(u, "ubl-bad-total.xml",
           (r"(<cbc:TaxInclusiveAmount[^>]*>)([0-9.]+)", lambda m: m.group(1) + "%.2f" % (float(m.group(2)) + 1))),
    "xrechnung-ubl", ("cen", "BR-CO-15"))
# Schema: an element UBL 2.1 does not know.
add(mutate(u, "ubl-bad-element.xml", (r"(<cbc:IssueDate>)", r"<cbc:NoSuchElement>x</cbc:NoSuchElement>\1")),
    "xrechnung-ubl", ("xsd", None))
# Not well-formed.
add(mutate(u, "ubl-broken.xml", (r"</cbc:IssueDate>", "")), "xrechnung-ubl", ("xsd", "XML-PARSE"))

# UBL CreditNote (the test suite has none): derived from the first UBL invoice.
cn_subs = [
    (r"<ubl:Invoice xmlns:ubl=\"urn:oasis:names:specification:ubl:schema:xsd:Invoice-2\"",
     '<ubl:CreditNote xmlns:ubl="urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2"'),
    (r"</ubl:Invoice>", "</ubl:CreditNote>"),
    (r"<cbc:InvoiceTypeCode>380</cbc:InvoiceTypeCode>", "<cbc:CreditNoteTypeCode>381</cbc:CreditNoteTypeCode>"),
]
cn = mutate(u, "creditnote.xml", *cn_subs)
text = open(cn, encoding="utf-8").read()
text = re.sub(r"<cbc:DueDate>[^<]*</cbc:DueDate>\s*", "", text)  # no DueDate in a UBL 2.1 CreditNote
text = re.sub(r"cac:InvoiceLine>", "cac:CreditNoteLine>", text)
text = re.sub(r"cbc:InvoicedQuantity\b", "cbc:CreditedQuantity", text)
open(cn, "w", encoding="utf-8").write(text)
add(cn, "xrechnung-ubl")
add(mutate(cn, "creditnote-no-buyerref.xml", (r"<cbc:BuyerReference>[^<]*</cbc:BuyerReference>", "")),
    "xrechnung-ubl", ("xrechnung", "BR-DE-15"))

# Factur-X EN16931: the CII sample with the plain EN 16931 specification identifier (BT-24).
fx = mutate(c, "facturx.xml", (r"(<ram:GuidelineSpecifiedDocumentContextParameter>\s*<ram:ID>)[^<]+",
                               r"\1urn:cen.eu:en16931:2017"))
add(fx, "factur-x")
# ... the XRechnung identifier is not a Factur-X profile: the Factur-X rules refuse it.
add(c, "factur-x", ("facturx", None))
add(mutate(fx, "facturx-bad-total.xml",
           (r"(<ram:GrandTotalAmount[^>]*>)([0-9.]+)", lambda m: m.group(1) + "%.2f" % (float(m.group(2)) + 1))),
    "factur-x", ("cen", "BR-CO-15"))

manifest = os.path.join(tmp, "manifest.json")
json.dump([{"path": p, "profile": prof} for p, prof, _ in cases], open(manifest, "w"))
t0 = time.perf_counter()
proc = subprocess.run([sys.executable, os.path.join(here, "validate.py"), manifest],
                      capture_output=True, text=True)
wall = time.perf_counter() - t0
if proc.returncode != 0:
    sys.stderr.write(proc.stderr)
    print("einvoice-validator: 0 passed, 1 failed")
    sys.exit(1)
out = json.loads(proc.stdout)
passed = failed = 0
for (path, profile, expect), res in zip(cases, out["results"]):
    assert res["path"] == path
    name = "%s [%s]" % (os.path.basename(path), profile)
    errs = res["errors"]
    if expect is None:
        ok = not errs
        why = "expected no error, got: " + "; ".join("%s %s %s" % (e["source"], e["id"], e["text"][:100]) for e in errs[:5])
    else:
        src, rid = expect
        ok = any(e["source"] == src and (rid is None or e["id"] == rid) for e in errs)
        why = "expected %s %s, got: %s" % (src, rid or "(any)", ", ".join(sorted({"%s %s" % (e["source"], e["id"]) for e in errs})) or "no error")
    if ok:
        passed += 1
        got = "clean" if expect is None else ", ".join(sorted({"%s:%s" % (e["source"], e["id"]) for e in errs}))[:120]
        print("ok    %s  %s" % (name, got))
    else:
        failed += 1
        print("FAIL  %s  %s" % (name, why))
print("rule sets:")
for r in out["rule_sets"]:
    print("  %s: %s" % (r["name"], r["version"]))
t = out["timing"]
print("timing: import %.2fs, load %.2fs, %d documents %.2fs (%.1f ms each), wall %.2fs"
      % (t["import_s"], t["load_s"], len(cases), t["validate_s"], t["per_document_ms"], wall))
print("einvoice-validator: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
PY
