/**
 * Text kept for good (ids, sort keys, partitions, descriptions of stored documents) built as one flat string.
 *
 * Why: V8 keeps a string built with `+`, `+=` or a template literal as a tree of its parts (a "cons string", 32 bytes
 * a node; an id built a character at a time is a chain of them), and flattening it later leaves the node in place.
 * Stored in a document that lives as long as the engine, the tree costs more than the text: about 1 KB per order on
 * the memory store before this (docs/performance.md, E-401). `Array.prototype.join` builds a flat string at once.
 */
export const joinFlat = (parts: ReadonlyArray<string>, separator = ""): string => parts.join(separator)

let lastMs = Number.NaN
let lastIso = ""
/**
 * `new Date(ms).toISOString()`, the last answer remembered: one answer stamps the same instant several times (an
 * order's createdAt, queuedAt, fxRateAsOf; a quote's issue and rate times), and a remembered text is made once and
 * shared by every document that keeps it, instead of one copy each (issue 25: allocation and what a pair keeps).
 */
export const isoOf = (ms: number): string => {
  if (ms === lastMs) return lastIso
  const text = new Date(ms).toISOString()
  lastMs = ms
  lastIso = text
  return text
}
