/**
 * Values of the PG sequences (`nextId`, job seqs) drawn a block at a time (E-435). Owns: the values drawn and not yet
 * handed out, per sequence, in this store instance. Does not own the sequences (migrations) nor which statement draws
 * them (postgres.ts).
 *
 * Each value was a round trip of its own on the request path: a trade's audit id, a quote's expiry job seq. A block
 * of `size` values is drawn in one statement when the last one is handed out; in between, a value costs no statement.
 * In one process values are handed out in the order they are asked for, each once, never given back (a rolled-back
 * transaction leaves a gap, as before); a process that stops leaves the rest of its block unused (a gap), and values
 * of two processes interleave by block.
 */
import { Effect, Semaphore } from "effect"
import type { StoreError } from "./port.ts"

export const ID_BLOCK_SIZE = 32

export interface IdBlocks {
  /** The next value of `sequence`; `draw(n)` gets `n` fresh values of it from the database, in increasing order. */
  readonly next: (sequence: string, draw: (count: number) => Effect.Effect<ReadonlyArray<number>, StoreError>) => Effect.Effect<number, StoreError>
}

interface Block {
  values: ReadonlyArray<number>
  at: number
  /** One refill at a time: values come out in the order they were asked for. */
  readonly refill: Semaphore.Semaphore
}

export const makeIdBlocks = (size: number = ID_BLOCK_SIZE): IdBlocks => {
  const blocks = new Map<string, Block>()
  const take = (block: Block): number | undefined => (block.at < block.values.length ? (block.values[block.at++] as number) : undefined)
  return {
    next: (sequence, draw) =>
      Effect.suspend(() => {
        let block = blocks.get(sequence)
        if (block === undefined) {
          block = { values: [], at: 0, refill: Semaphore.makeUnsafe(1) }
          blocks.set(sequence, block)
        }
        const ready = take(block)
        if (ready !== undefined) return Effect.succeed(ready)
        const b = block
        return b.refill.withPermit(
          Effect.suspend(() => {
            // Another fiber may have refilled while this one waited.
            const refilled = take(b)
            if (refilled !== undefined) return Effect.succeed(refilled)
            return Effect.map(draw(size), (values) => {
              b.values = values
              b.at = 1
              return values[0] as number
            })
          })
        )
      })
  }
}
