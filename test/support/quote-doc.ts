/** An open quote as the store keeps it (QuoteDoc), for the tests of how stored documents are read and decoded. */
export const QUOTE_PARTITION = "ptn_a:sandbox"

export const openQuoteBody = {
  quoteId: "qt_1",
  partition: QUOTE_PARTITION,
  account: "master",
  symbol: "SCOM.KE",
  side: "BUY" as const,
  quantity: 10,
  cashValue: null,
  derivedQuantity: null,
  price: 180_288,
  rate: 129_250_000,
  issuedAt: 1,
  expiresAt: 60_001,
  status: "OPEN" as const
}
