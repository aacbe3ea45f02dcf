/**
 * Text kept for good (ids, sort keys, partitions, descriptions of stored documents) built as one flat string.
 *
 * Why: V8 keeps a string built with `+`, `+=` or a template literal as a tree of its parts (a "cons string", 32 bytes
 * a node; an id built a character at a time is a chain of them), and flattening it later leaves the node in place.
 * Stored in a document that lives as long as the engine, the tree costs more than the text: about 1 KB per order on
 * the memory store before this (docs/performance.md, E-401). `Array.prototype.join` builds a flat string at once.
 */
export const joinFlat = (parts: ReadonlyArray<string>, separator = ""): string => parts.join(separator)
