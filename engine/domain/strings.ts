/**
 * Text kept for good (ids, sort keys, partitions, descriptions of stored documents) built as one flat string.
 *
 * Why: V8 keeps a string built with `+`, `+=` or a template literal as a tree of its parts (a "cons string", 32 bytes
 * a node; an id built a character at a time is a chain of them), and flattening it later leaves the node in place.
 * Stored in a document that lives as long as the engine, the tree costs more than the text: about 1 KB per order on
 * the memory store before this (docs/performance.md, E-401). `Array.prototype.join` builds a flat string at once.
 */
export const joinFlat = (parts: ReadonlyArray<string>, separator = ""): string => parts.join(separator)

/** How many texts `shared` remembers before it starts over. */
const SHARED_MAX = 4096
const sharedTexts = new Map<string, string>()
/**
 * One copy of a text that many kept documents repeat (a sub-account's partition on each of its wallet transactions, a
 * ledger account's name on each posting), instead of one per document, as `isoAt` does for instants (E-485). It is
 * forgotten all at once past 4,096 texts (names of partners and accounts long gone go with it), which only costs a
 * copy per document again. Give it a flat string (`joinFlat`): the one it keeps is the first it is given.
 */
export const shared = (text: string): string => {
  const known = sharedTexts.get(text)
  if (known !== undefined) return known
  if (sharedTexts.size >= SHARED_MAX) sharedTexts.clear()
  sharedTexts.set(text, text)
  return text
}

const ISO_SLOTS = 4
const isoMs: Array<number> = new Array<number>(ISO_SLOTS).fill(Number.NaN)
const isoText: Array<string> = new Array<string>(ISO_SLOTS).fill("")
let isoNext = 0
/**
 * `new Date(ms).toISOString()`, the last four answers remembered: one answer stamps a few instants several times each
 * (an order's createdAt, queuedAt, deadline and quote expiry; a quote's issue, expiry and rate times), and a remembered
 * text is made once and shared by every document that keeps it, instead of one copy each (issue 25, E-410).
 */
export const isoOf = (ms: number): string => {
  for (let i = 0; i < ISO_SLOTS; i++) if (isoMs[i] === ms) return isoText[i] as string
  const text = new Date(ms).toISOString()
  isoMs[isoNext] = ms
  isoText[isoNext] = text
  isoNext = (isoNext + 1) % ISO_SLOTS
  return text
}
