"""Prints the text of every QR code on the first page of a PDF (rendered by pdftoppm at
300 dpi), or in a PNG, as zxing-cpp reads it: each code's text, codes separated by a line
holding `----`. Prints nothing when there is none. Used by tests/tests/portal.rs."""

import subprocess
import sys
import tempfile
from pathlib import Path

import zxingcpp
from PIL import Image


def codes_in(image_path):
    with Image.open(image_path) as image:
        return [r.text for r in zxingcpp.read_barcodes(image.convert("L"))
                if r.format == zxingcpp.BarcodeFormat.QRCode]


def main():
    path = Path(sys.argv[1])
    if path.suffix.lower() == ".pdf":
        with tempfile.TemporaryDirectory() as tmp:
            stem = Path(tmp) / "page"
            subprocess.run(["pdftoppm", "-r", "300", "-png", "-f", "1", "-l", "1",
                            str(path), str(stem)], check=True)
            pages = sorted(Path(tmp).glob("page*.png"))
            found = codes_in(pages[0]) if pages else []
    else:
        found = codes_in(path)
    sys.stdout.write("\n----\n".join(found))


if __name__ == "__main__":
    main()
