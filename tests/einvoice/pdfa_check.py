#!/usr/bin/env python3
"""Structural PDF/A-3b and Factur-X checks of one PDF, with pikepdf and `qpdf --check`.

    python3 tests/einvoice/pdfa_check.py FILE.pdf [--xml EXPECTED.xml]

Prints one line per check, `ok NAME DETAIL` or `FAIL NAME DETAIL`, then a JSON line
`{"passed": n, "failed": m}`; exits 1 if any check failed (2 on bad usage).

These are the checks of ISO 19005-3 (level B) and of the Factur-X 1.0 / ZUGFeRD 2
specification that a structural reading can do: file header and trailer, XMP metadata
(PDF/A identification, title, producer, Info consistency, the Factur-X extension schema
and values), the PDF/A OutputIntent, embedded files and their associations, fonts,
actions, transparency, filters and colour spaces. It is no full validator (veraPDF is):
it does not check glyph widths, .notdef use or the ICC profile's contents beyond its
header. Needs `pip install pikepdf` and Debian's `qpdf`.

A sample to check: `cargo run -p faktura-providers --example pdfa_sample -- /tmp/s.pdf
/tmp/s.xml && python3 tests/einvoice/pdfa_check.py /tmp/s.pdf --xml /tmp/s.xml`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from typing import Any, Callable, Iterator

try:
    import pikepdf
except ImportError:  # pragma: no cover - reported as a failed check
    pikepdf = None

NS = {
    "x": "adobe:ns:meta/",
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "pdfaid": "http://www.aiim.org/pdfa/ns/id/",
    "dc": "http://purl.org/dc/elements/1.1/",
    "pdf": "http://ns.adobe.com/pdf/1.3/",
    "xmp": "http://ns.adobe.com/xap/1.0/",
    "pdfaExtension": "http://www.aiim.org/pdfa/ns/extension/",
    "pdfaSchema": "http://www.aiim.org/pdfa/ns/schema#",
    "pdfaProperty": "http://www.aiim.org/pdfa/ns/property#",
    "fx": "urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#",
}
FX_NS = NS["fx"]
FX_PROPERTIES = ("DocumentType", "DocumentFileName", "Version", "ConformanceLevel")
FX_DOCUMENT_TYPES = {"INVOICE", "ORDER", "ORDER_RESPONSE", "ORDER_CHANGE"}
FX_LEVELS = {"MINIMUM", "BASIC WL", "BASIC", "EN 16931", "EXTENDED", "XRECHNUNG"}
RELATIONSHIPS = {"Source", "Data", "Alternative", "Supplement", "Unspecified"}
FX_RELATIONSHIPS = {"Alternative", "Data", "Source"}
FX_FILENAMES = {"factur-x.xml", "zugferd-invoice.xml", "xrechnung.xml", "ZUGFeRD-invoice.xml"}
FORBIDDEN_ACTIONS = {
    "Launch", "Sound", "Movie", "ResetForm", "ImportData", "Hide", "SetOCGState",
    "Rendition", "Trans", "GoTo3DView", "JavaScript",
}


class CheckFailed(Exception):
    """A check's failure, with its detail."""


def require(condition: Any, detail: str) -> None:
    if not condition:
        raise CheckFailed(detail)


def tag(prefix: str, local: str) -> str:
    return f"{{{NS[prefix]}}}{local}"


def pdf_date(text: str) -> tuple[dt.datetime, bool]:
    """A PDF date as a datetime and whether it has a time zone."""
    m = re.fullmatch(
        r"D:(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?"
        r"(?:(Z)(?:00'?(?:00'?)?)?|([+-])(\d{2})'?(?:(\d{2})'?)?)?",
        text.strip(),
    )
    if not m:
        raise ValueError(f"not a PDF date: {text!r}")
    y, mo, d, h, mi, s, z, sign, oh, om = m.groups()
    value = dt.datetime(int(y), int(mo or 1), int(d or 1), int(h or 0), int(mi or 0), int(s or 0))
    if z:
        return value.replace(tzinfo=dt.timezone.utc), True
    if sign:
        delta = dt.timedelta(hours=int(oh), minutes=int(om or 0))
        tz = dt.timezone(delta if sign == "+" else -delta)
        return value.replace(tzinfo=tz), True
    return value, False


def xmp_date(text: str) -> tuple[dt.datetime, bool]:
    """An XMP (ISO 8601) date as a datetime and whether it has a time zone."""
    m = re.fullmatch(
        r"(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?"
        r"(Z|[+-]\d{2}:\d{2})?)?)?)?",
        text.strip(),
    )
    if not m:
        raise ValueError(f"not an XMP date: {text!r}")
    y, mo, d, h, mi, s, zone = m.groups()
    value = dt.datetime(int(y), int(mo or 1), int(d or 1), int(h or 0), int(mi or 0), int(s or 0))
    if zone == "Z":
        return value.replace(tzinfo=dt.timezone.utc), True
    if zone:
        delta = dt.timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
        return value.replace(tzinfo=dt.timezone(delta if zone[0] == "+" else -delta)), True
    return value, False


def same_instant(a: tuple[dt.datetime, bool], b: tuple[dt.datetime, bool]) -> bool:
    if a[1] != b[1]:
        return False
    return a[0] == b[0]


class Checker:
    def __init__(self, path: str, xml_path: str | None) -> None:
        self.path = path
        self.xml_path = xml_path
        self.results: list[tuple[bool, str, str]] = []
        with open(path, "rb") as f:
            self.raw = f.read()
        self.pdf = None
        self.xmp: ET.Element | None = None
        self.xmp_text = ""

    # -- plumbing ---------------------------------------------------------------------

    def check(self, name: str, fn: Callable[[], str | None]) -> None:
        try:
            detail = fn() or ""
            ok = True
        except CheckFailed as e:
            ok, detail = False, str(e)
        except Exception as e:  # a check that cannot run fails
            ok, detail = False, f"{type(e).__name__}: {e}"
        detail = " ".join(str(detail).split())
        self.results.append((ok, name, detail))
        print(f"{'ok' if ok else 'FAIL'} {name} {detail}".rstrip(), flush=True)

    def need_pdf(self):
        require(self.pdf is not None, "the file could not be opened with pikepdf")
        return self.pdf

    def need_xmp(self) -> ET.Element:
        require(self.xmp is not None, "no parsable XMP metadata")
        return self.xmp

    def objects(self) -> Iterator[Any]:
        """Every indirect object, dictionaries and streams."""
        for obj in self.need_pdf().objects:
            if isinstance(obj, (pikepdf.Dictionary, pikepdf.Stream)):
                yield obj

    def dicts(self) -> Iterator[Any]:
        """Every dictionary reachable from the trailer, direct or indirect, once each."""
        pdf = self.need_pdf()
        seen: set[tuple[int, int]] = set()
        stack: list[Any] = [pdf.trailer]
        while stack:
            obj = stack.pop()
            if not isinstance(obj, (pikepdf.Dictionary, pikepdf.Stream, pikepdf.Array)):
                continue
            if obj.is_indirect:
                key = obj.objgen
                if key in seen:
                    continue
                seen.add(key)
            if isinstance(obj, (pikepdf.Dictionary, pikepdf.Stream)):
                yield obj
                stack.extend(obj[k] for k in obj.keys() if k != "/Parent" or not obj[k].is_indirect)
            elif isinstance(obj, pikepdf.Array):
                stack.extend(obj)

    def xmp_values(self, prefix: str, local: str) -> list[str]:
        """The values of one XMP property, as an element or an attribute."""
        root = self.need_xmp()
        out: list[str] = []
        for desc in root.iter(tag("rdf", "Description")):
            attr = desc.get(tag(prefix, local))
            if attr is not None:
                out.append(attr)
            for el in desc.findall(tag(prefix, local)):
                items = list(el.iter(tag("rdf", "li")))
                if items:
                    out.extend((li.text or "") for li in items)
                else:
                    out.append(el.text or "")
        return out

    def embedded_files(self) -> dict[str, Any]:
        """Name tree key -> file specification."""
        pdf = self.need_pdf()
        names = pdf.Root.get("/Names")
        require(names is not None and "/EmbeddedFiles" in names, "no /Names /EmbeddedFiles")
        tree = pikepdf.NameTree(names.EmbeddedFiles)
        return {str(k): v for k, v in tree.items()}

    def factur_x_spec(self) -> tuple[str, Any]:
        files = self.embedded_files()
        wanted = self.xmp_values("fx", "DocumentFileName") if self.xmp is not None else []
        for name in wanted + sorted(FX_FILENAMES):
            if name in files:
                return name, files[name]
        raise CheckFailed(f"no factur-x.xml among embedded files {sorted(files)}")

    @staticmethod
    def stream_of(spec: Any) -> Any:
        ef = spec.get("/EF")
        require(ef is not None, "filespec has no /EF")
        stream = ef.get("/UF", ef.get("/F"))
        require(isinstance(stream, pikepdf.Stream), "/EF has no embedded file stream")
        return stream

    # -- checks -----------------------------------------------------------------------

    def run(self) -> int:
        self.check("pikepdf_open", self.c_open)
        self.check("header_version", self.c_header)
        self.check("binary_comment", self.c_binary)
        self.check("eof_marker", self.c_eof)
        self.check("no_encryption", self.c_encrypt)
        self.check("trailer_id", self.c_id)
        self.check("metadata_stream", self.c_metadata)
        self.check("metadata_uncompressed", self.c_metadata_filter)
        self.check("xmp_packet", self.c_xmp_packet)
        self.check("xmp_pdfaid_part", lambda: self.c_pdfaid("part", "3"))
        self.check("xmp_pdfaid_conformance", lambda: self.c_pdfaid("conformance", "B"))
        self.check("xmp_dc_title", self.c_title)
        self.check("xmp_producer", self.c_producer)
        self.check("info_matches_xmp", self.c_info)
        self.check("factur_x_extension_schema", self.c_fx_schema)
        self.check("factur_x_values", self.c_fx_values)
        self.check("output_intent_pdfa", self.c_output_intent)
        self.check("dest_output_profile", self.c_profile)
        self.check("catalog_af", self.c_af)
        self.check("embedded_files_tree", self.c_tree)
        self.check("embedded_files_associated", self.c_associated)
        self.check("filespec_entries", self.c_filespecs)
        self.check("factur_x_relationship", self.c_fx_relationship)
        self.check("embedded_file_subtype", self.c_subtype)
        self.check("embedded_file_size", self.c_size)
        self.check("embedded_file_moddate", self.c_moddate)
        self.check("embedded_xml", self.c_xml)
        self.check("fonts_embedded", self.c_fonts)
        self.check("cid_fonts_pdfa", self.c_cid_fonts)
        self.check("no_javascript", self.c_javascript)
        self.check("no_forbidden_actions", self.c_actions)
        self.check("no_transparency", self.c_transparency)
        self.check("no_lzw_or_external_streams", self.c_filters)
        self.check("colour_spaces", self.c_colour)
        self.check("annotations_printable", self.c_annotations)
        self.check("qpdf_check", self.c_qpdf)
        passed = sum(1 for ok, _, _ in self.results if ok)
        failed = len(self.results) - passed
        print(json.dumps({"passed": passed, "failed": failed}))
        return 1 if failed else 0

    def c_open(self) -> str:
        require(pikepdf is not None, "pikepdf is not installed (pip install pikepdf)")
        self.pdf = pikepdf.open(self.path)
        return f"pikepdf {pikepdf.__version__}, {len(self.pdf.pages)} page(s)"

    def c_header(self) -> str:
        m = re.match(rb"%PDF-1\.([0-7])\r?\n", self.raw)
        require(m, f"header {self.raw[:9]!r} is not %PDF-1.0 .. %PDF-1.7")
        if self.pdf is not None and "/Version" in self.pdf.Root:
            version = str(self.pdf.Root.Version)
            require(version <= "/1.7", f"catalog /Version {version} above 1.7")
        return self.raw[:8].decode()

    def c_binary(self) -> str:
        line = self.raw.split(b"\n", 2)[1].rstrip(b"\r")
        require(line.startswith(b"%") and len(line) >= 5, f"second line {line[:8]!r} is no comment")
        require(all(b > 127 for b in line[1:5]), f"comment {line[:5]!r} lacks 4 bytes > 127")
        return line[:5].hex()

    def c_eof(self) -> str:
        tail = self.raw[-8:]
        require(re.search(rb"%%EOF(\r\n|\r|\n)?$", tail), f"file ends with {tail!r}")
        return ""

    def c_encrypt(self) -> str:
        pdf = self.need_pdf()
        require(not pdf.is_encrypted, "the file is encrypted")
        require("/Encrypt" not in pdf.trailer, "trailer has /Encrypt")
        return ""

    def c_id(self) -> str:
        ids = self.need_pdf().trailer.get("/ID")
        require(isinstance(ids, pikepdf.Array) and len(ids) == 2, f"trailer /ID is {ids!r}")
        parts = [bytes(x) for x in ids]
        require(all(len(p) >= 16 for p in parts), "ID strings shorter than 16 bytes")
        return parts[0].hex()

    def c_metadata(self) -> str:
        meta = self.need_pdf().Root.get("/Metadata")
        require(isinstance(meta, pikepdf.Stream), "catalog has no /Metadata stream")
        require(meta.get("/Type") == "/Metadata", f"/Type is {meta.get('/Type')}")
        require(meta.get("/Subtype") == "/XML", f"/Subtype is {meta.get('/Subtype')}")
        self.xmp_text = bytes(meta.read_bytes()).decode("utf-8")
        return f"{len(self.xmp_text)} characters"

    def c_metadata_filter(self) -> str:
        meta = self.need_pdf().Root.get("/Metadata")
        require(meta is not None, "no /Metadata")
        require("/Filter" not in meta, f"metadata has /Filter {meta.get('/Filter')}")
        require(b"<x:xmpmeta" in self.raw or b"xmpmeta" in self.raw, "XMP not legible in file")
        return ""

    def c_xmp_packet(self) -> str:
        text = self.xmp_text
        require(text, "no metadata read")
        m = re.match(r'\s*<\?xpacket begin=["\'](\ufeff)?["\'] id=["\']W5M0MpCehiHzreSzNTczkc9d["\']\?>', text)
        require(m, "no xpacket header with the standard id (and no bytes/encoding attributes)")
        require(re.search(r'<\?xpacket end=["\'][rw]["\']\?>\s*$', text), "no xpacket trailer")
        self.xmp = ET.fromstring(text.encode("utf-8"))
        require(self.xmp.tag in (tag("x", "xmpmeta"), tag("rdf", "RDF")), f"root {self.xmp.tag}")
        return "well-formed"

    def c_pdfaid(self, key: str, expected: str) -> str:
        values = self.xmp_values("pdfaid", key)
        require(values == [expected], f"pdfaid:{key} is {values}, want {expected}")
        return expected

    def c_title(self) -> str:
        values = self.xmp_values("dc", "title")
        require(values, "no dc:title")
        return repr(values[0])

    def c_producer(self) -> str:
        values = self.xmp_values("pdf", "Producer")
        require(values, "no pdf:Producer")
        return repr(values[0])

    def c_info(self) -> str:
        pdf = self.need_pdf()
        info = pdf.trailer.get("/Info")
        if info is None:
            return "no Info dictionary"
        pairs = {
            "/Title": ("dc", "title"),
            "/Author": ("dc", "creator"),
            "/Subject": ("dc", "description"),
            "/Keywords": ("pdf", "Keywords"),
            "/Creator": ("xmp", "CreatorTool"),
            "/Producer": ("pdf", "Producer"),
        }
        compared = []
        for key, (prefix, local) in pairs.items():
            if key in info:
                value = str(info[key])
                xmp = self.xmp_values(prefix, local)
                require(xmp, f"Info {key} {value!r} without XMP {prefix}:{local}")
                require(xmp[0] == value, f"Info {key} {value!r} != XMP {prefix}:{local} {xmp[0]!r}")
                compared.append(key)
        for key, local in (("/CreationDate", "CreateDate"), ("/ModDate", "ModifyDate")):
            if key in info:
                value = pdf_date(str(info[key]))
                xmp = self.xmp_values("xmp", local)
                require(xmp, f"Info {key} without XMP xmp:{local}")
                require(
                    same_instant(value, xmp_date(xmp[0])),
                    f"Info {key} {info[key]} != xmp:{local} {xmp[0]}",
                )
                compared.append(key)
        for key in ("/Trapped",):
            if key in info:
                require(str(info[key]) in ("/True", "/False"), f"Info {key} {info[key]}")
        return " ".join(compared)

    def c_fx_schema(self) -> str:
        root = self.need_xmp()
        for schema in root.iter(tag("pdfaExtension", "schemas")):
            for li in schema.iter(tag("rdf", "li")):
                uri = li.find(tag("pdfaSchema", "namespaceURI"))
                if uri is None or (uri.text or "").strip() != FX_NS:
                    continue
                prefix = li.find(tag("pdfaSchema", "prefix"))
                require(prefix is not None and prefix.text == "fx", "schema prefix is not fx")
                require(li.find(tag("pdfaSchema", "schema")) is not None, "no pdfaSchema:schema")
                found = {}
                for prop in li.iter(tag("rdf", "li")):
                    name = prop.find(tag("pdfaProperty", "name"))
                    if name is None:
                        continue
                    found[name.text] = {
                        k: (prop.find(tag("pdfaProperty", k)).text or "")
                        for k in ("valueType", "category", "description")
                        if prop.find(tag("pdfaProperty", k)) is not None
                    }
                for name in FX_PROPERTIES:
                    require(name in found, f"extension schema lacks fx:{name}")
                    p = found[name]
                    require(p.get("valueType") == "Text", f"fx:{name} valueType {p.get('valueType')}")
                    require(p.get("category") == "external", f"fx:{name} category {p.get('category')}")
                    require("description" in p, f"fx:{name} has no description")
                return "fx: " + ", ".join(FX_PROPERTIES)
        raise CheckFailed(f"no pdfaExtension schema with namespaceURI {FX_NS}")

    def c_fx_values(self) -> str:
        values = {name: self.xmp_values("fx", name) for name in FX_PROPERTIES}
        for name, v in values.items():
            require(len(v) == 1 and v[0].strip(), f"fx:{name} is {v}")
        require(values["DocumentType"][0] in FX_DOCUMENT_TYPES, f"fx:DocumentType {values['DocumentType']}")
        require(values["ConformanceLevel"][0] in FX_LEVELS, f"fx:ConformanceLevel {values['ConformanceLevel']}")
        name = values["DocumentFileName"][0]
        require(name in self.embedded_files(), f"fx:DocumentFileName {name!r} is not embedded")
        return "; ".join(f"{k}={v[0]}" for k, v in values.items())

    def c_output_intent(self) -> str:
        intents = self.need_pdf().Root.get("/OutputIntents")
        require(isinstance(intents, pikepdf.Array) and len(intents) > 0, "no /OutputIntents")
        pdfa = [i for i in intents if i.get("/S") == "/GTS_PDFA1"]
        require(pdfa, "no OutputIntent with /S /GTS_PDFA1")
        profiles = {i.DestOutputProfile.objgen for i in intents if "/DestOutputProfile" in i}
        require(len(profiles) <= 1, "OutputIntents with different DestOutputProfiles")
        require("/OutputConditionIdentifier" in pdfa[0], "no /OutputConditionIdentifier")
        return str(pdfa[0].OutputConditionIdentifier)

    def c_profile(self) -> str:
        intents = self.need_pdf().Root.get("/OutputIntents") or []
        pdfa = [i for i in intents if i.get("/S") == "/GTS_PDFA1"]
        require(pdfa and "/DestOutputProfile" in pdfa[0], "no DestOutputProfile")
        profile = pdfa[0].DestOutputProfile
        require(isinstance(profile, pikepdf.Stream), "DestOutputProfile is no stream")
        n = int(profile.get("/N", 0))
        require(n == 3, f"/N is {n}, want 3 (RGB)")
        data = bytes(profile.read_bytes())
        require(len(data) >= 132 and data[36:40] == b"acsp", "not an ICC profile")
        require(int.from_bytes(data[:4], "big") == len(data), "ICC size field != length")
        cls, space, major = data[12:16], data[16:20], data[8]
        require(cls in (b"mntr", b"prtr"), f"ICC class {cls!r}, want mntr or prtr")
        require(space == b"RGB ", f"ICC colour space {space!r}")
        require(major <= 4, f"ICC version {major}")
        return f"ICC v{major}.{data[9] >> 4} {cls.decode()} {space.decode().strip()} {len(data)} bytes"

    def c_af(self) -> str:
        af = self.need_pdf().Root.get("/AF")
        require(isinstance(af, pikepdf.Array) and len(af) > 0, "catalog has no /AF array")
        for spec in af:
            require(spec.get("/Type") in ("/Filespec", "/F") or "/EF" in spec, "AF entry is no filespec")
        return f"{len(af)} file(s)"

    def c_tree(self) -> str:
        files = self.embedded_files()
        require(files, "EmbeddedFiles name tree is empty")
        name, _ = self.factur_x_spec()
        return f"{sorted(files)}; Factur-X XML {name}"

    def c_associated(self) -> str:
        af = self.need_pdf().Root.get("/AF") or []
        associated = {spec.objgen for spec in af if spec.is_indirect}
        for obj in self.dicts():
            for spec in obj.get("/AF", []) if "/AF" in obj else []:
                if spec.is_indirect:
                    associated.add(spec.objgen)
        for name, spec in self.embedded_files().items():
            require(spec.is_indirect and spec.objgen in associated, f"{name} is in no /AF array")
        return ""

    def c_filespecs(self) -> str:
        for name, spec in self.embedded_files().items():
            for key in ("/F", "/UF", "/Desc", "/AFRelationship", "/EF"):
                require(key in spec, f"{name}: filespec lacks {key}")
            rel = str(spec.AFRelationship).lstrip("/")
            require(rel in RELATIONSHIPS, f"{name}: AFRelationship {rel}")
            require(str(spec.UF) == name or str(spec.F) == name, f"{name}: F/UF {spec.F}/{spec.UF}")
            self.stream_of(spec)
        return ""

    def c_fx_relationship(self) -> str:
        name, spec = self.factur_x_spec()
        rel = str(spec.get("/AFRelationship", "/None")).lstrip("/")
        require(rel in FX_RELATIONSHIPS, f"{name}: AFRelationship {rel}, want Alternative, Data or Source")
        return rel

    def c_subtype(self) -> str:
        for name, spec in self.embedded_files().items():
            stream = self.stream_of(spec)
            require(stream.get("/Type") in (None, "/EmbeddedFile"), f"{name}: /Type {stream.get('/Type')}")
            sub = stream.get("/Subtype")
            require(sub is not None and "/" in str(sub)[1:], f"{name}: /Subtype {sub} is no MIME type")
        name, spec = self.factur_x_spec()
        sub = str(self.stream_of(spec).Subtype)
        require(sub in ("/text/xml", "/application/xml"), f"{name}: /Subtype {sub}")
        return sub

    def c_size(self) -> str:
        out = []
        for name, spec in self.embedded_files().items():
            stream = self.stream_of(spec)
            params = stream.get("/Params")
            require(params is not None and "/Size" in params, f"{name}: no /Params /Size")
            real = len(stream.read_bytes())
            require(int(params.Size) == real, f"{name}: /Size {params.Size} != {real}")
            out.append(f"{name}={real}")
        return " ".join(out)

    def c_moddate(self) -> str:
        out = []
        for name, spec in self.embedded_files().items():
            params = self.stream_of(spec).get("/Params")
            require(params is not None and "/ModDate" in params, f"{name}: no /Params /ModDate")
            pdf_date(str(params.ModDate))
            out.append(f"{name}={params.ModDate}")
        return " ".join(out)

    def c_xml(self) -> str:
        name, spec = self.factur_x_spec()
        data = bytes(self.stream_of(spec).read_bytes())
        if self.xml_path:
            with open(self.xml_path, "rb") as f:
                expected = f.read()
            require(data == expected, f"{name} ({len(data)} bytes) differs from {self.xml_path} ({len(expected)} bytes)")
            return f"equals {self.xml_path}"
        root = ET.fromstring(data)
        return f"well-formed, root {root.tag} (no --xml to compare)"

    def fonts(self) -> Iterator[tuple[str, Any]]:
        """Every font dictionary: from page and form resources, and every indirect one."""
        seen: set[Any] = set()

        def key(obj: Any) -> Any:
            return obj.objgen if obj.is_indirect else id(obj)

        def from_resources(resources: Any, depth: int = 0) -> Iterator[tuple[str, Any]]:
            if resources is None or depth > 20:
                return
            for fname, font in (resources.get("/Font") or {}).items():
                yield fname, font
                if font.get("/Subtype") == "/Type3":
                    yield from from_resources(font.get("/Resources"), depth + 1)
            for _, xobj in (resources.get("/XObject") or {}).items():
                if xobj.get("/Subtype") == "/Form":
                    yield from from_resources(xobj.get("/Resources"), depth + 1)

        pdf = self.need_pdf()
        for page in pdf.pages:
            for fname, font in from_resources(page.obj.get("/Resources")):
                if key(font) not in seen:
                    seen.add(key(font))
                    yield fname, font
        for obj in self.objects():
            if obj.get("/Type") == "/Font" and key(obj) not in seen:
                seen.add(key(obj))
                yield str(obj.get("/BaseFont", "?")), obj

    def c_fonts(self) -> str:
        checked: set[Any] = set()
        for fname, font in self.fonts():
            sub = font.get("/Subtype")
            if sub == "/Type3":
                continue
            members = list(font.DescendantFonts) if sub == "/Type0" else [font]
            for member in members:
                if member.is_indirect:
                    if member.objgen in checked:
                        continue
                    checked.add(member.objgen)
                desc = member.get("/FontDescriptor")
                base = str(member.get("/BaseFont", fname))
                require(desc is not None, f"{base}: no FontDescriptor")
                files = [k for k in ("/FontFile", "/FontFile2", "/FontFile3") if k in desc]
                require(files, f"{base}: font program not embedded")
                require(len(bytes(desc[files[0]].read_bytes())) > 0, f"{base}: empty font program")
                checked.add(base)
        require(checked, "no fonts")
        return f"{len({c for c in checked if isinstance(c, str)})} font(s) embedded"

    def c_cid_fonts(self) -> str:
        out = []
        for _, font in self.fonts():
            if font.get("/Subtype") != "/Type0":
                continue
            enc = font.get("/Encoding")
            require(enc is not None, "Type0 font without /Encoding")
            for member in font.DescendantFonts:
                base = str(member.get("/BaseFont"))
                if member.get("/Subtype") == "/CIDFontType2":
                    require("/CIDToGIDMap" in member, f"{base}: CIDFontType2 without CIDToGIDMap")
                info = member.get("/CIDSystemInfo")
                require(info is not None, f"{base}: no CIDSystemInfo")
                if isinstance(enc, pikepdf.Name) and str(enc) in ("/Identity-H", "/Identity-V"):
                    pass  # Identity CMaps are compatible with any CIDSystemInfo.
                desc = member.FontDescriptor
                if "/CIDSet" in desc:
                    require(isinstance(desc.CIDSet, pikepdf.Stream), f"{base}: CIDSet is no stream")
                out.append(f"{base}{' +ToUnicode' if '/ToUnicode' in font else ''}")
        return ", ".join(out) or "no CID fonts"

    def c_javascript(self) -> str:
        root = self.need_pdf().Root
        names = root.get("/Names")
        require(names is None or "/JavaScript" not in names, "/Names has /JavaScript")
        for obj in self.dicts():
            require("/JS" not in obj, "an object has /JS")
            require(obj.get("/S") != "/JavaScript", "a JavaScript action")
        require("/AA" not in root, "catalog has /AA")
        for page in self.need_pdf().pages:
            require("/AA" not in page.obj, "a page has /AA")
        open_action = root.get("/OpenAction")
        if isinstance(open_action, pikepdf.Dictionary):
            require(open_action.get("/S") != "/JavaScript", "OpenAction is JavaScript")
        return ""

    def c_actions(self) -> str:
        actions = []
        for obj in self.dicts():
            if obj.get("/Type") == "/Action":
                actions.append(obj)
            for key in ("/A", "/OpenAction", "/Next"):
                value = obj.get(key)
                values = list(value) if isinstance(value, pikepdf.Array) else [value]
                actions.extend(v for v in values if isinstance(v, pikepdf.Dictionary))
            aa = obj.get("/AA")
            if isinstance(aa, pikepdf.Dictionary):
                actions.extend(v for v in aa.values() if isinstance(v, pikepdf.Dictionary))
        for action in actions:
            kind = str(action.get("/S", "")).lstrip("/")
            require(kind not in FORBIDDEN_ACTIONS, f"forbidden action {kind}")
            if kind == "Named":
                named = str(action.get("/N", "")).lstrip("/")
                require(named in ("NextPage", "PrevPage", "FirstPage", "LastPage"), f"named action {named}")
        for obj in self.dicts():
            if obj.get("/Subtype") == "/Widget" or obj.get("/Type") == "/Annot":
                require("/AA" not in obj, "an annotation has /AA")
        root = self.need_pdf().Root
        form = root.get("/AcroForm")
        require(form is None or not form.get("/NeedAppearances", False), "AcroForm NeedAppearances true")
        require(form is None or "/XFA" not in form, "AcroForm has XFA")
        return f"{len(actions)} action(s)"

    def c_transparency(self) -> str:
        for obj in self.dicts():
            group = obj.get("/Group")
            if isinstance(group, pikepdf.Dictionary):
                require(group.get("/S") != "/Transparency", "a transparency group")
            smask = obj.get("/SMask")
            require(smask is None or smask == pikepdf.Name.None_, "an /SMask")
            for key in ("/CA", "/ca"):
                if key in obj:
                    require(float(obj[key]) >= 1.0, f"{key} {obj[key]} < 1")
            bm = obj.get("/BM")
            if bm is not None:
                modes = list(bm) if isinstance(bm, pikepdf.Array) else [bm]
                require(all(str(m) in ("/Normal", "/Compatible") for m in modes), f"/BM {bm}")
        return ""

    def c_filters(self) -> str:
        count = 0
        for obj in self.objects():
            if not isinstance(obj, pikepdf.Stream):
                continue
            count += 1
            filters = obj.get("/Filter")
            names = [str(f) for f in filters] if isinstance(filters, pikepdf.Array) else ([str(filters)] if filters else [])
            require("/LZWDecode" not in names and "/LZW" not in names, f"stream {obj.objgen} uses LZW")
            require("/Crypt" not in names, f"stream {obj.objgen} uses Crypt")
            for key in ("/F", "/FFilter", "/FDecodeParms"):
                require(key not in obj, f"stream {obj.objgen} has external {key}")
        return f"{count} streams"

    def c_colour(self) -> str:
        pdf = self.need_pdf()
        intents = pdf.Root.get("/OutputIntents") or []
        n = None
        for i in intents:
            if i.get("/S") == "/GTS_PDFA1" and "/DestOutputProfile" in i:
                n = int(i.DestOutputProfile.get("/N", 0))
        used: set[str] = set()
        for obj in self.dicts():
            cs = obj.get("/ColorSpace")
            if isinstance(cs, pikepdf.Name):
                used.add(str(cs))
            elif isinstance(cs, pikepdf.Dictionary):
                for v in cs.values():
                    if isinstance(v, pikepdf.Name):
                        used.add(str(v))
        ops = {"g": "/DeviceGray", "G": "/DeviceGray", "rg": "/DeviceRGB", "RG": "/DeviceRGB",
               "k": "/DeviceCMYK", "K": "/DeviceCMYK"}
        for page in pdf.pages:
            for operands, op in pikepdf.parse_content_stream(page):
                name = str(op)
                if name in ops:
                    used.add(ops[name])
                elif name in ("cs", "CS") and operands and isinstance(operands[0], pikepdf.Name):
                    used.add(str(operands[0]))
        if "/DeviceCMYK" in used:
            require(n == 4, "DeviceCMYK used without a CMYK OutputIntent")
        if "/DeviceRGB" in used:
            require(n == 3, "DeviceRGB used without an RGB OutputIntent")
        if "/DeviceGray" in used:
            require(n is not None, "DeviceGray used without an OutputIntent")
        return " ".join(sorted(used)) or "none explicit"

    def c_annotations(self) -> str:
        count = 0
        for page in self.need_pdf().pages:
            for annot in page.obj.get("/Annots") or []:
                count += 1
                sub = str(annot.get("/Subtype"))
                require(sub not in ("/FileAttachment", "/Sound", "/Movie", "/3D", "/RichMedia"), f"annotation {sub}")
                if sub != "/Popup":
                    flags = int(annot.get("/F", 0))
                    require(flags & 4, f"{sub} annotation not printable")
                    require(not flags & (1 | 2 | 32), f"{sub} annotation hidden/invisible/noview")
        return f"{count} annotation(s)"

    def c_qpdf(self) -> str:
        qpdf = shutil.which("qpdf")
        require(qpdf, "qpdf is not installed (apt-get install qpdf)")
        run = subprocess.run([qpdf, "--check", self.path], capture_output=True, text=True)
        out = (run.stdout + run.stderr).strip()
        require(run.returncode == 0, f"exit {run.returncode}: {out[-300:]}")
        require("No syntax or stream encoding errors" in out, out[-300:])
        require("WARNING" not in out.upper(), out[-300:])
        return "clean"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pdf", help="the PDF to check")
    parser.add_argument("--xml", help="the XML the Factur-X attachment must equal byte for byte")
    args = parser.parse_args(argv)
    return Checker(args.pdf, args.xml).run()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
