/**
 * Entropy: the engine's only source of randomness, and the ids derived from it. Owns the seeded generator
 * (sfc32, seeded through splitmix32), id formatting and secret generation.
 * Does not own what ids are for. In simulation every value, secrets included, follows from the seed, so a run
 * can be replayed; `realEntropyForSecrets` lets a production deployment draw API keys from the OS instead.
 */
import { randomBytes, randomInt } from "node:crypto"
import { Context, Effect, Layer } from "effect"
import { Store } from "../store/port.ts"
import { joinFlat } from "../domain/strings.ts"

const splitmix32 = (seed: number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x9e3779b9) >>> 0
    let t = a ^ (a >>> 16)
    t = Math.imul(t, 0x21f0aaad)
    t ^= t >>> 15
    t = Math.imul(t, 0x735a2d97)
    return (t ^ (t >>> 15)) >>> 0
  }
}

/** sfc32: small, fast, well-distributed 32-bit generator. Returns uint32 values. */
export const makeGenerator = (seed: number) => {
  const init = splitmix32(seed)
  // The state in a typed array, not four closure variables: a uint32 above 2^30 is no small integer, so each step
  // boxed new numbers (about 1.9 KB per quote->trade pair, E-410). Every step is arithmetic modulo 2^32, so a word
  // kept unsigned here where it was kept signed gives the same draws.
  const s = new Uint32Array([init(), init(), init(), init()])
  return () => {
    const a = s[0] as number
    const b = s[1] as number
    const c = s[2] as number
    const d = s[3] as number
    const t = (((a + b) >>> 0) + d) >>> 0
    s[3] = d + 1
    s[0] = b ^ (b >>> 9)
    s[1] = c + (c << 3)
    const rotated = (c << 21) | (c >>> 11)
    s[2] = rotated + t
    return t
  }
}

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz" // Crockford base32, lower case

export class Entropy extends Context.Service<
  Entropy,
  {
    readonly seed: number
    /** Uniform integer in [0, bound). */
    readonly nextInt: (bound: number) => Effect.Effect<number>
    /** `prefix_` followed by 16 base32 characters. */
    readonly id: (prefix: string) => Effect.Effect<string>
    /**
     * `id` drawn when called, as a finished effect a generator passes without a step of the runtime (some ten ids per
     * order of a simulated week: E-503). Yielded where it is called, as `putHere` (the at-once guard), so the draws
     * come in the same order as `id`'s.
     */
    readonly idHere: (prefix: string) => Effect.Effect<string>
    /** A credential: `prefix` followed by 32 base32 characters. */
    readonly secret: (prefix: string) => Effect.Effect<string>
    /**
     * A generator of its own for `label` (uint32 draws), from `seed` (default the run's seed): drawing from it moves
     * no id of the run, so a fault plan's draws leave every other id where it was (E-371).
     */
    readonly stream: (label: string, seed?: number) => () => number
  }
>()("sokoni/Entropy") {
  static readonly make = (seed: number, options: { readonly realEntropyForSecrets?: boolean; readonly epoch?: number } = {}) =>
    Effect.sync(() => {
      const next = makeGenerator(streamSeed(seed, options.epoch ?? 1))
      const chars = (n: number, draw: () => number) => {
        const out = new Array<string>(n)
        for (let i = 0; i < n; i++) out[i] = ALPHABET[draw() % 32] ?? ""
        return joinFlat(out)
      }
      const osDraw = () => randomBytes(1)[0] ?? 0
      return Entropy.of({
        seed,
        nextInt: (bound) => Effect.sync(() => next() % Math.max(1, Math.floor(bound))),
        id: (prefix) => Effect.sync(() => joinFlat([prefix, chars(16, next)], "_")),
        idHere: (prefix) => Effect.succeed(joinFlat([prefix, chars(16, next)], "_")),
        secret: (prefix) => Effect.sync(() => `${prefix}${chars(32, options.realEntropyForSecrets === true ? osDraw : next)}`),
        stream: (label, given) => makeGenerator(labelledSeed(given ?? seed, label))
      })
    })

  static readonly layer = (seed: number, options?: { readonly realEntropyForSecrets?: boolean }) => Layer.effect(Entropy, Entropy.make(seed, options))

  /**
   * The engine's Entropy on a store: each start takes the next epoch from the store's durable counter, in a
   * transaction of its own, and draws its ids from the stream of (seed, epoch) (E-291). The first start on a fresh
   * store is epoch 1, the seed's own stream, so a replay from a fresh store gives the same trace; a restart on the same
   * database, or a second process beside the first, gets a stream of its own, so no id, key or event id repeats.
   */
  static readonly layerDurable = (seed: number, options?: { readonly realEntropyForSecrets?: boolean }) =>
    Layer.effect(
      Entropy,
      Effect.gen(function* () {
        const store = yield* Store
        const epoch = yield* store.transact((tx) => tx.nextSeq(EPOCH_COUNTER))
        return yield* Entropy.make(seed, { ...options, epoch })
      })
    )
}

/** The store counter whose value is the number of engine starts on that store (E-291). */
export const EPOCH_COUNTER = "entropy-epoch"

/** The generator's seed for a start: the run's seed itself on the first, a stream apart from it on every later one. */
export const streamSeed = (seed: number, epoch: number): number => {
  if (epoch <= 1) return seed
  const mix = splitmix32((seed ^ Math.imul(epoch, 0x85ebca6b)) >>> 0)
  mix()
  return mix()
}

/** The seed of the stream named `label` under `seed`: FNV-1a of the label mixed with the seed (E-371). Pure. */
export const labelledSeed = (seed: number, label: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193) >>> 0
  const mix = splitmix32((seed ^ h) >>> 0)
  return mix()
}

/** A fresh seed for a run that was not given one (printed first, so the run can be replayed). */
export const freshSeed = (): number => randomInt(1, 2 ** 31 - 1)
