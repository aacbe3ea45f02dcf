/**
 * A scanner for the reads and writes made when called, not when their effect runs (`putHere`, `getHere`,
 * `getWithHere`, `getDocHere`: store/port.ts, app/docs.ts, E-425/E-429): each is right only where its effect is yielded
 * at once (`yield* x.putHere(...)`). An effect built to run later, or maybe never (an `andThen` after a check, a
 * `forEach`), would read or write at the wrong time, and nothing in the types says so. A function whose body is such a
 * call (`const saveOrder = (tx, o) => Orders.putHere(...)`) is one too, and so are its calls.
 */

/** The primitives; `.` before one is a collection's (app/docs.ts), the clock's (`nowHere`), the scheduler's or the entropy's (`idHere`). */
export const AT_ONCE = ["putHere", "getHere", "getWithHere", "getDocHere", "nowHere", "scheduleHere", "peekHere", "idHere"] as const

/** Where the primitives are defined (by name, in object literals and as exports), not called. */
export const DEFINED_IN = ["engine/store/port.ts", "engine/app/docs.ts", "engine/sim/clock.ts"]

export interface SourceFile {
  readonly path: string
  readonly text: string
}

const callsOf = (name: string) => new RegExp(`(?<![\\w$])${name}\\(`, "g")

/** `const name = (...) =>` right before `at` (whitespace between): the call is that function's body, a wrapper. */
const wrapperAt = (text: string, at: number): string | undefined => {
  const before = text.slice(Math.max(0, at - 300), at)
  return /const (\w+) = \([^()]*\)(?::[^=]*)? =>\s*(?:\w+\.)?$/.exec(before)?.[1]
}

/** `yield* ` right before `at` (a collection's `X.`, a service's `clock.` or `d.clock.` between). */
const yieldedAt = (text: string, at: number): boolean => /yield\* (?:\w+\.){0,2}$/.test(text.slice(Math.max(0, at - 80), at))

const scannedOf = (files: ReadonlyArray<SourceFile>) => files.filter((f) => !DEFINED_IN.includes(f.path))

/** The at-once functions: the primitives, and every function whose body is a call of one. */
export const atOnceNames = (files: ReadonlyArray<SourceFile>): ReadonlySet<string> => {
  const names = new Set<string>(AT_ONCE)
  const scanned = scannedOf(files)
  // Wrappers of wrappers: until no new name is found.
  for (let size = 0; size !== names.size; ) {
    size = names.size
    for (const file of scanned)
      for (const name of [...names])
        for (const m of file.text.matchAll(callsOf(name))) {
          const wrapper = wrapperAt(file.text, m.index)
          if (wrapper !== undefined) names.add(wrapper)
        }
  }
  return names
}

/** Every call of an at-once function (the primitives and the wrappers found) that is not yielded at once, as `path:line name`. */
export const notYieldedAtOnce = (files: ReadonlyArray<SourceFile>): ReadonlyArray<string> => {
  const names = atOnceNames(files)
  const scanned = scannedOf(files)
  const found: Array<string> = []
  for (const file of scanned)
    for (const name of names)
      for (const m of file.text.matchAll(callsOf(name))) {
        if (yieldedAt(file.text, m.index) || wrapperAt(file.text, m.index) !== undefined) continue
        // A definition of the name itself (`export const putHere = (` is in DEFINED_IN; a property `putHere: (` too).
        if (/(?:const|function) $/.test(file.text.slice(Math.max(0, m.index - 9), m.index))) continue
        const line = file.text.slice(0, m.index).split("\n").length
        found.push(`${file.path}:${line} ${name}`)
      }
  return found
}
