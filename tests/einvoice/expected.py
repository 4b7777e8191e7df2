#!/usr/bin/env python3
"""Reads EN 16931 e-invoices the way the specification's syntax bindings say, with lxml
and XPath, independently of Faktura: what the integration tests expect an import to hold.

`python3 tests/einvoice/expected.py FILE...` prints one JSON object, each FILE as given on
the command line mapped to:

    number, date, due_date (ISO dates, "" when absent), currency, type_code,
    kind ("invoice" | "credit-note": a UBL CreditNote, or a CII type code of a credit note),
    syntax ("cii" | "ubl"), net (BT-109), tax (BT-110, in the document currency),
    gross (BT-112), prepaid (BT-113, "0" when absent), payable (BT-115),
    taxes: [{category, rate, taxable, amount}] (BG-23, document order),
    lines: [{id, name, quantity, unit_code, net_price, net_amount, category, rate}]
        (BG-25, top-level lines only, document order).

Amounts and quantities are the file's text, untouched. A FILE ending in .pdf is a hybrid
invoice (Factur-X/ZUGFeRD): its embedded XML is taken out with the `factur-x` library first.
Exits 2 when a file cannot be read as either syntax.
"""

import json
import sys

from lxml import etree

NS = {
    "rsm": "urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100",
    "ram": "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100",
    "udt": "urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100",
    "inv": "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2",
    "cn": "urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2",
    "cac": "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2",
    "cbc": "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2",
}

# UNTDID 1001 codes of credit notes (EN 16931 code list for BT-3).
CREDIT_NOTE_CODES = {"81", "83", "261", "262", "296", "308", "381", "396", "420", "458", "532"}


def text(node, path, default=""):
    """The trimmed text of the first node `path` finds under `node`, else `default`."""
    found = node.xpath(path, namespaces=NS)
    if not found:
        return default
    first = found[0]
    value = first if isinstance(first, str) else first.text
    return (value or "").strip()


def iso(value):
    """A CII date (format 102, YYYYMMDD) as YYYY-MM-DD; a UBL date as it is."""
    value = value.strip()
    if len(value) == 8 and value.isdigit():
        return f"{value[:4]}-{value[4:6]}-{value[6:]}"
    return value


def cii(root):
    doc = "rsm:ExchangedDocument"
    trade = "rsm:SupplyChainTradeTransaction"
    settlement = f"{trade}/ram:ApplicableHeaderTradeSettlement"
    sums = f"{settlement}/ram:SpecifiedTradeSettlementHeaderMonetarySummation"
    currency = text(root, f"{settlement}/ram:InvoiceCurrencyCode")
    # BT-110 is the TaxTotalAmount in the invoice currency; BT-111 (in the tax currency)
    # has the same element name.
    tax = text(root, f"{sums}/ram:TaxTotalAmount[@currencyID='{currency}']")
    if not tax:
        tax = text(root, f"{sums}/ram:TaxTotalAmount[not(@currencyID)]")
    type_code = text(root, f"{doc}/ram:TypeCode")
    taxes = [
        {
            "category": text(t, "ram:CategoryCode"),
            "rate": text(t, "ram:RateApplicablePercent"),
            "taxable": text(t, "ram:BasisAmount"),
            "amount": text(t, "ram:CalculatedAmount"),
        }
        for t in root.xpath(f"{settlement}/ram:ApplicableTradeTax", namespaces=NS)
    ]
    lines = []
    for item in root.xpath(f"{trade}/ram:IncludedSupplyChainTradeLineItem", namespaces=NS):
        line_tax = "ram:SpecifiedLineTradeSettlement/ram:ApplicableTradeTax"
        lines.append(
            {
                "id": text(item, "ram:AssociatedDocumentLineDocument/ram:LineID"),
                "name": text(item, "ram:SpecifiedTradeProduct/ram:Name"),
                "quantity": text(item, "ram:SpecifiedLineTradeDelivery/ram:BilledQuantity"),
                "unit_code": text(
                    item, "ram:SpecifiedLineTradeDelivery/ram:BilledQuantity/@unitCode"
                ),
                "net_price": text(
                    item,
                    "ram:SpecifiedLineTradeAgreement/ram:NetPriceProductTradePrice/ram:ChargeAmount",
                ),
                "net_amount": text(
                    item,
                    "ram:SpecifiedLineTradeSettlement/"
                    "ram:SpecifiedTradeSettlementLineMonetarySummation/ram:LineTotalAmount",
                ),
                "category": text(item, f"{line_tax}/ram:CategoryCode"),
                "rate": text(item, f"{line_tax}/ram:RateApplicablePercent"),
            }
        )
    return {
        "syntax": "cii",
        "number": text(root, f"{doc}/ram:ID"),
        "date": iso(text(root, f"{doc}/ram:IssueDateTime/udt:DateTimeString")),
        "due_date": iso(
            text(
                root,
                f"{settlement}/ram:SpecifiedTradePaymentTerms/ram:DueDateDateTime/udt:DateTimeString",
            )
        ),
        "currency": currency,
        "type_code": type_code,
        "kind": "credit-note" if type_code in CREDIT_NOTE_CODES else "invoice",
        "net": text(root, f"{sums}/ram:TaxBasisTotalAmount"),
        "tax": tax or "0",
        "gross": text(root, f"{sums}/ram:GrandTotalAmount"),
        "prepaid": text(root, f"{sums}/ram:TotalPrepaidAmount", "0"),
        "payable": text(root, f"{sums}/ram:DuePayableAmount"),
        "taxes": taxes,
        "lines": lines,
    }


def ubl(root, credit_note):
    currency = text(root, "cbc:DocumentCurrencyCode")
    total = "cac:LegalMonetaryTotal"
    # BT-110: the TaxTotal in the document currency (the one with subtotals); BT-111 is a
    # second TaxTotal in the tax currency.
    tax_totals = root.xpath(
        f"cac:TaxTotal[cbc:TaxAmount/@currencyID='{currency}']", namespaces=NS
    )
    tax_total = tax_totals[0] if tax_totals else None
    taxes = []
    if tax_total is not None:
        for sub in tax_total.xpath("cac:TaxSubtotal", namespaces=NS):
            taxes.append(
                {
                    "category": text(sub, "cac:TaxCategory/cbc:ID"),
                    "rate": text(sub, "cac:TaxCategory/cbc:Percent"),
                    "taxable": text(sub, "cbc:TaxableAmount"),
                    "amount": text(sub, "cbc:TaxAmount"),
                }
            )
    line_name, quantity_name = (
        ("cac:CreditNoteLine", "cbc:CreditedQuantity")
        if credit_note
        else ("cac:InvoiceLine", "cbc:InvoicedQuantity")
    )
    lines = []
    for item in root.xpath(line_name, namespaces=NS):
        lines.append(
            {
                "id": text(item, "cbc:ID"),
                "name": text(item, "cac:Item/cbc:Name"),
                "quantity": text(item, quantity_name),
                "unit_code": text(item, f"{quantity_name}/@unitCode"),
                "net_price": text(item, "cac:Price/cbc:PriceAmount"),
                "net_amount": text(item, "cbc:LineExtensionAmount"),
                "category": text(item, "cac:Item/cac:ClassifiedTaxCategory/cbc:ID"),
                "rate": text(item, "cac:Item/cac:ClassifiedTaxCategory/cbc:Percent"),
            }
        )
    type_code = text(root, "cbc:CreditNoteTypeCode" if credit_note else "cbc:InvoiceTypeCode")
    due = text(root, "cbc:DueDate") or text(root, "cac:PaymentMeans/cbc:PaymentDueDate")
    return {
        "syntax": "ubl",
        "number": text(root, "cbc:ID"),
        "date": text(root, "cbc:IssueDate"),
        "due_date": due,
        "currency": currency,
        "type_code": type_code,
        "kind": "credit-note" if credit_note else "invoice",
        "net": text(root, f"{total}/cbc:TaxExclusiveAmount"),
        "tax": text(tax_total, "cbc:TaxAmount", "0") if tax_total is not None else "0",
        "gross": text(root, f"{total}/cbc:TaxInclusiveAmount"),
        "prepaid": text(root, f"{total}/cbc:PrepaidAmount", "0"),
        "payable": text(root, f"{total}/cbc:PayableAmount"),
        "taxes": taxes,
        "lines": lines,
    }


def xml_of(path):
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".pdf"):
        from facturx import get_xml_from_pdf

        _, data = get_xml_from_pdf(data, check_xsd=False)
        if not data:
            raise ValueError("no embedded e-invoice")
    return data


def read(path):
    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    root = etree.fromstring(xml_of(path), parser)
    name = etree.QName(root)
    if name.namespace == NS["rsm"] and name.localname == "CrossIndustryInvoice":
        return cii(root)
    if name.namespace == NS["inv"] and name.localname == "Invoice":
        return ubl(root, credit_note=False)
    if name.namespace == NS["cn"] and name.localname == "CreditNote":
        return ubl(root, credit_note=True)
    raise ValueError(f"not an EN 16931 invoice: {{{name.namespace}}}{name.localname}")


def main(paths):
    out = {}
    for path in paths:
        try:
            out[path] = read(path)
        except Exception as e:  # noqa: BLE001 - any failure is reported with its file
            print(f"{path}: {e}", file=sys.stderr)
            return 2
    json.dump(out, sys.stdout, ensure_ascii=False, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
