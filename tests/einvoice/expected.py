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
        (BG-25, top-level lines only, document order),
    profile (BT-24, the specification identifier as the file states it),
    line_total (BT-106), allowances (BT-107), charges (BT-108), rounding (BT-114), each ""
        when absent,
    absent: the totals among net, tax, gross, prepaid, payable the file does not state
        (`tax`, `prepaid` and `payable` then hold "0", "0" and ""),
    derived: for each absent total, the value the calculation rules of EN 16931 give from
        the totals the file does state (BR-CO-13: BT-109 = BT-106 - BT-107 + BT-108; BR-CO-14:
        BT-110 = the sum of BT-117; BR-CO-15: BT-112 = BT-109 + BT-110; BR-CO-16: BT-115 =
        BT-112 - BT-113 + BT-114), when they give one.

Amounts and quantities are the file's text, untouched (`derived` excepted). A FILE ending in
.pdf is a hybrid invoice (Factur-X/ZUGFeRD): its embedded XML is taken out with the
`factur-x` library first.

Besides CII (every ZUGFeRD 2.x / Factur-X profile, MINIMUM and BASIC WL without lines) and
UBL, ZUGFeRD 1.0 (`CrossIndustryDocument`, namespace urn:ferd:CrossIndustryDocument:invoice:1p0)
is read, each term where ZUGFeRD 1.0 keeps it: the document under HeaderExchangedDocument, the
totals under SpecifiedTradeSettlementMonetarySummation, a VAT rate in ApplicablePercent; syntax
is "cii" for it too. Its line items that carry nothing but a note (free-text items: no
product, quantity or amount) are no invoice lines (BG-25 needs an item name, a quantity and
a net amount) and are not among `lines`.
Exits 2 when a file cannot be read as any of them.
"""

import json
import sys
from decimal import Decimal, InvalidOperation

from lxml import etree

NS = {
    "rsm": "urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100",
    "ram": "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100",
    "udt": "urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100",
    "inv": "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2",
    "cn": "urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2",
    "cac": "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2",
    "cbc": "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2",
    # ZUGFeRD 1.0: a root namespace of its own over older versions of the UN/CEFACT
    # vocabularies (ram 12, udt 15).
    "z1": "urn:ferd:CrossIndustryDocument:invoice:1p0",
    "z1ram": "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:12",
    "z1udt": "urn:un:unece:uncefact:data:standard:UnqualifiedDataType:15",
}

# The totals `absent` and `derived` speak of.
TOTALS = ("net", "tax", "gross", "prepaid", "payable")

# UNTDID 1001 codes of credit notes (EN 16931 code list for BT-3).
CREDIT_NOTE_CODES = {"81", "83", "261", "262", "296", "308", "381", "396", "420", "458", "532"}


def text(node, path, default="", ns=NS):
    """The trimmed text of the first node `path` finds under `node`, else `default`."""
    found = node.xpath(path, namespaces=ns)
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
    prepaid = text(root, f"{sums}/ram:TotalPrepaidAmount")
    out = {
        "syntax": "cii",
        "profile": text(
            root,
            "rsm:ExchangedDocumentContext/ram:GuidelineSpecifiedDocumentContextParameter/ram:ID",
        ),
        "line_total": text(root, f"{sums}/ram:LineTotalAmount"),
        "allowances": text(root, f"{sums}/ram:AllowanceTotalAmount"),
        "charges": text(root, f"{sums}/ram:ChargeTotalAmount"),
        "rounding": text(root, f"{sums}/ram:RoundingAmount"),
        "stated_tax": tax,
        "stated_prepaid": prepaid,
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
        "prepaid": prepaid or "0",
        "payable": text(root, f"{sums}/ram:DuePayableAmount"),
        "taxes": taxes,
        "lines": lines,
    }
    return with_derived(out)


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
    tax = text(tax_total, "cbc:TaxAmount") if tax_total is not None else ""
    prepaid = text(root, f"{total}/cbc:PrepaidAmount")
    out = {
        "syntax": "ubl",
        "profile": text(root, "cbc:CustomizationID"),
        "line_total": text(root, f"{total}/cbc:LineExtensionAmount"),
        "allowances": text(root, f"{total}/cbc:AllowanceTotalAmount"),
        "charges": text(root, f"{total}/cbc:ChargeTotalAmount"),
        "rounding": text(root, f"{total}/cbc:PayableRoundingAmount"),
        "stated_tax": tax,
        "stated_prepaid": prepaid,
        "number": text(root, "cbc:ID"),
        "date": text(root, "cbc:IssueDate"),
        "due_date": due,
        "currency": currency,
        "type_code": type_code,
        "kind": "credit-note" if credit_note else "invoice",
        "net": text(root, f"{total}/cbc:TaxExclusiveAmount"),
        "tax": tax or "0",
        "gross": text(root, f"{total}/cbc:TaxInclusiveAmount"),
        "prepaid": prepaid or "0",
        "payable": text(root, f"{total}/cbc:PayableAmount"),
        "taxes": taxes,
        "lines": lines,
    }
    return with_derived(out)


def zugferd1(root):
    """ZUGFeRD 1.0: the terms of `cii`, where ZUGFeRD 1.0 keeps them."""
    ns = {"rsm": NS["z1"], "ram": NS["z1ram"], "udt": NS["z1udt"]}

    def get(node, path, default=""):
        return text(node, path, default, ns)

    doc = "rsm:HeaderExchangedDocument"
    trade = "rsm:SpecifiedSupplyChainTradeTransaction"
    settlement = f"{trade}/ram:ApplicableSupplyChainTradeSettlement"
    sums = f"{settlement}/ram:SpecifiedTradeSettlementMonetarySummation"
    currency = get(root, f"{settlement}/ram:InvoiceCurrencyCode")
    tax = get(root, f"{sums}/ram:TaxTotalAmount[@currencyID='{currency}']") if currency else ""
    if not tax:
        tax = get(root, f"{sums}/ram:TaxTotalAmount[not(@currencyID)]")
    if not tax and not currency:
        tax = get(root, f"{sums}/ram:TaxTotalAmount")
    type_code = get(root, f"{doc}/ram:TypeCode")
    taxes = [
        {
            "category": get(t, "ram:CategoryCode"),
            "rate": get(t, "ram:ApplicablePercent"),
            "taxable": get(t, "ram:BasisAmount"),
            "amount": get(t, "ram:CalculatedAmount"),
        }
        for t in root.xpath(f"{settlement}/ram:ApplicableTradeTax", namespaces=ns)
    ]
    lines = []
    for item in root.xpath(f"{trade}/ram:IncludedSupplyChainTradeLineItem", namespaces=ns):
        delivery = "ram:SpecifiedSupplyChainTradeDelivery"
        line_settlement = "ram:SpecifiedSupplyChainTradeSettlement"
        line_tax = f"{line_settlement}/ram:ApplicableTradeTax"
        net_amount = get(
            item, f"{line_settlement}/ram:SpecifiedTradeSettlementMonetarySummation/ram:LineTotalAmount"
        )
        quantity = get(item, f"{delivery}/ram:BilledQuantity")
        has_product = bool(item.xpath("ram:SpecifiedTradeProduct", namespaces=ns))
        if not (has_product or quantity or net_amount):
            continue
        lines.append(
            {
                "id": get(item, "ram:AssociatedDocumentLineDocument/ram:LineID"),
                "name": get(item, "ram:SpecifiedTradeProduct/ram:Name"),
                "quantity": quantity,
                "unit_code": get(item, f"{delivery}/ram:BilledQuantity/@unitCode"),
                "net_price": get(
                    item,
                    "ram:SpecifiedSupplyChainTradeAgreement/ram:NetPriceProductTradePrice/"
                    "ram:ChargeAmount",
                ),
                "net_amount": net_amount,
                "category": get(item, f"{line_tax}/ram:CategoryCode"),
                "rate": get(item, f"{line_tax}/ram:ApplicablePercent"),
            }
        )
    prepaid = get(root, f"{sums}/ram:TotalPrepaidAmount")
    out = {
        "syntax": "cii",
        "profile": get(
            root,
            "rsm:SpecifiedExchangedDocumentContext/"
            "ram:GuidelineSpecifiedDocumentContextParameter/ram:ID",
        ),
        "line_total": get(root, f"{sums}/ram:LineTotalAmount"),
        "allowances": get(root, f"{sums}/ram:AllowanceTotalAmount"),
        "charges": get(root, f"{sums}/ram:ChargeTotalAmount"),
        "rounding": "",
        "stated_tax": tax,
        "stated_prepaid": prepaid,
        "number": get(root, f"{doc}/ram:ID"),
        "date": iso(get(root, f"{doc}/ram:IssueDateTime/udt:DateTimeString")),
        "due_date": iso(
            get(
                root,
                f"{settlement}/ram:SpecifiedTradePaymentTerms/ram:DueDateDateTime/"
                "udt:DateTimeString",
            )
        ),
        "currency": currency,
        "type_code": type_code,
        "kind": "credit-note" if type_code in CREDIT_NOTE_CODES else "invoice",
        "net": get(root, f"{sums}/ram:TaxBasisTotalAmount"),
        "tax": tax or "0",
        "gross": get(root, f"{sums}/ram:GrandTotalAmount"),
        "prepaid": prepaid or "0",
        "payable": get(root, f"{sums}/ram:DuePayableAmount"),
        "taxes": taxes,
        "lines": lines,
    }
    return with_derived(out)


def number(value):
    """`value` as a Decimal, None when it is empty or no decimal number."""
    try:
        return Decimal(value.strip()) if value.strip() else None
    except InvalidOperation:
        return None


def with_derived(out):
    """`out` with `absent` and `derived` (see the module's doc); the readers' `stated_tax`
    and `stated_prepaid` (the text before the "0" of an absent term) are taken out."""
    stated = {
        "net": out["net"],
        "tax": out.pop("stated_tax"),
        "gross": out["gross"],
        "prepaid": out.pop("stated_prepaid"),
        "payable": out["payable"],
    }
    out["absent"] = [t for t in TOTALS if not stated[t]]
    value = {t: number(v) for t, v in stated.items()}
    zero = Decimal(0)
    derived = {}
    if value["net"] is None:
        line_total = number(out["line_total"])
        if line_total is not None:
            allowances = number(out["allowances"]) or zero
            charges = number(out["charges"]) or zero
            value["net"] = derived["net"] = line_total - allowances + charges
    if value["tax"] is None:
        amounts = [number(t["amount"]) for t in out["taxes"]]
        if amounts and None not in amounts:
            value["tax"] = derived["tax"] = sum(amounts, zero)
    if value["gross"] is None and value["net"] is not None and value["tax"] is not None:
        value["gross"] = derived["gross"] = value["net"] + value["tax"]
    if value["payable"] is None and value["gross"] is not None:
        prepaid = value["prepaid"] or zero
        rounding = number(out["rounding"]) or zero
        derived["payable"] = value["gross"] - prepaid + rounding
    out["derived"] = {t: str(v) for t, v in derived.items()}
    return out


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
    if name.namespace == NS["z1"] and name.localname == "CrossIndustryDocument":
        return zugferd1(root)
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
