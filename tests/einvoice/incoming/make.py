#!/usr/bin/env python3
"""Makes the incoming hybrid e-invoice PDFs beside this script, with software other than
Faktura's, for the tests of `einvoice/src/pdf/`.

Needs: `pip install factur-x pikepdf reportlab` and Ghostscript (`apt-get install
ghostscript`). Run from anywhere: `python3 tests/einvoice/incoming/make.py`.

1. `facturx-gs.pdf`: a one-page invoice drawn by reportlab, made PDF/A-3b by Ghostscript
   (pdfwrite, sRGB output intent), and the XML attached by the `factur-x` library (pypdf
   underneath: classic cross-reference table, `/Names /EmbeddedFiles` and `/AF`).
2. `facturx-objstm.pdf`: 1. saved again by pikepdf (qpdf) with object streams and a
   cross-reference stream (`object_stream_mode=generate`).
3. `zugferd-named.pdf`: 1. with the attachment renamed `zugferd-invoice.xml` by pikepdf,
   `/UF` written as UTF-16BE with BOM (a hex string), plus a second, non-XML attachment.

The XML in all three is `../samples/01.01a-INVOICE_uncefact.xml` (KoSIT, Apache-2.0),
embedded byte for byte. Timestamps are fixed so that a rerun makes the same files, bar
what the tools' versions change.
"""

import hashlib
import io
import os
import pathlib
import re
import subprocess
import tempfile

import facturx
import facturx.facturx
import pikepdf
from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas

HERE = pathlib.Path(__file__).resolve().parent
XML = (HERE.parent / "samples" / "01.01a-INVOICE_uncefact.xml").read_bytes()
EPOCH = "1700000000"  # 2023-11-14, for reportlab, Ghostscript and the factur-x ModDate
GS_PDFA_DEF = "/usr/share/ghostscript/{v}/lib/PDFA_def.ps"
SRGB = "/usr/share/color/icc/ghostscript/srgb.icc"


def drawn() -> bytes:
    """A plain one-page invoice picture (no XML yet)."""
    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=A4, invariant=1)
    c.setTitle("Invoice 123456XX")
    c.setFont("Helvetica", 14)
    c.drawString(72, 770, "Invoice 123456XX")
    c.setFont("Helvetica", 10)
    lines = [
        "Issued 2016-04-04",
        "Sample invoice of the XRechnung test suite (KoSIT), 01.01a.",
        "The structured data is attached as factur-x.xml.",
    ]
    for i, line in enumerate(lines):
        c.drawString(72, 740 - 14 * i, line)
    c.showPage()
    c.save()
    return buf.getvalue()


def pdfa(pdf: bytes, tmp: pathlib.Path) -> bytes:
    """`pdf` made PDF/A-3b by Ghostscript."""
    version = subprocess.run(
        ["gs", "--version"], check=True, capture_output=True, text=True
    ).stdout.strip()
    definition = pathlib.Path(GS_PDFA_DEF.format(v=version)).read_text()
    definition = definition.replace("(srgb.icc)", f"({SRGB})").replace(
        "/Title (Title)", "/Title (Invoice 123456XX)"
    )
    (tmp / "PDFA_def.ps").write_text(definition)
    (tmp / "in.pdf").write_bytes(pdf)
    subprocess.run(
        [
            "gs",
            "-q",
            "-dPDFA=3",
            "-dBATCH",
            "-dNOPAUSE",
            "-dNOSAFER",
            "-sColorConversionStrategy=RGB",
            "-dPDFACompatibilityPolicy=1",
            "-sDEVICE=pdfwrite",
            f"-sOutputFile={tmp / 'pdfa.pdf'}",
            str(tmp / "PDFA_def.ps"),
            str(tmp / "in.pdf"),
        ],
        check=True,
        env={**os.environ, "SOURCE_DATE_EPOCH": EPOCH},
    )
    out = (tmp / "pdfa.pdf").read_bytes()
    # Ghostscript's file identifier hashes the time and the file's path; a fixed one of
    # the same length keeps every offset.
    fixed = hashlib.md5(XML).hexdigest().upper().encode()
    ident = b"/ID [<" + fixed + b"><" + fixed + b">]"
    return re.sub(rb"/ID \[<[0-9A-F]{32}><[0-9A-F]{32}>\]", ident, out)


def main() -> None:
    os.environ["SOURCE_DATE_EPOCH"] = EPOCH
    # The ModDate of the attachment, otherwise the time of the run.
    facturx.facturx._get_pdf_timestamp = lambda *_: "D:20231114221320+00'00'"
    facturx.facturx._get_metadata_timestamp = lambda: "2023-11-14T22:13:20+00:00"
    with tempfile.TemporaryDirectory() as t:
        base = pdfa(drawn(), pathlib.Path(t))

    # 1. Attached by the factur-x library.
    # generate_from_binary returns the new PDF.
    one = facturx.generate_from_binary(
        base,
        XML,
        flavor="factur-x",
        level="en16931",
        check_xsd=False,
        pdf_metadata={
            "author": "Lieferant GmbH",
            "keywords": "Factur-X",
            "title": "Invoice 123456XX",
            "subject": "Factur-X invoice 123456XX",
        },
        lang="de-DE",
    )
    (HERE / "facturx-gs.pdf").write_bytes(one)

    # 2. Object streams and a cross-reference stream.
    with pikepdf.open(io.BytesIO(one)) as pdf:
        pdf.save(
            HERE / "facturx-objstm.pdf",
            object_stream_mode=pikepdf.ObjectStreamMode.generate,
            compress_streams=True,
            deterministic_id=True,
        )

    # 3. Renamed zugferd-invoice.xml, /UF in UTF-16BE, and a second attachment.
    name = "zugferd-invoice.xml"
    with pikepdf.open(io.BytesIO(one)) as pdf:
        root = pdf.Root
        tree = root.Names.EmbeddedFiles
        spec = tree.Names[1]
        spec.F = pikepdf.String(name)
        spec.UF = pikepdf.String(b"\xfe\xff" + name.encode("utf-16-be"))
        spec.Desc = pikepdf.String("ZUGFeRD invoice data")
        note = pikepdf.AttachedFileSpec(
            pdf,
            b"Delivery note: two boxes.\n",
            description="A note",
            filename="note.txt",
            mime_type="text/plain",
        )
        note_spec = pdf.make_indirect(note.obj)
        tree.Names = pikepdf.Array(
            [pikepdf.String(name), spec, pikepdf.String("note.txt"), note_spec]
        )
        root.AF = pikepdf.Array([spec, note_spec])
        pdf.save(HERE / "zugferd-named.pdf", deterministic_id=True)

    for f in ("facturx-gs.pdf", "facturx-objstm.pdf", "zugferd-named.pdf"):
        print(f, (HERE / f).stat().st_size, "bytes")


if __name__ == "__main__":
    main()
