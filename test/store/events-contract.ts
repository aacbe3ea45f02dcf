/**
 * The store contract for reading a partition's event log from a position (what a webhook attempt and a resumed stream
 * do): exactly the events after it, in order, at most `limit`, whatever the log's length; a transaction's own appended
 * events follow the committed ones. Run against every adapter, as store-contract.ts.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { Store } from "../../engine/store/port.ts"

const PARTITION = "evlog:sandbox"

export const eventsContract = (name: string, storeLayer: Layer.Layer<Store, unknown>) =>
  layer(storeLayer, { timeout: "60 seconds" })(name, (it) => {
    it.effect("reads the events after a position, at most limit, from a log of any length", () =>
      Effect.gen(function* () {
        const store = yield* Store
        yield* store.transact((tx) =>
          Effect.forEach(
            Array.from({ length: 50 }, (_, i) => i + 1),
            (n) => tx.appendEvent(PARTITION, { eventId: `evt_log_${n}`, name: "n", timestamp: n, payload: { n } }),
            { discard: true }
          )
        )
        const positions = (after: number, limit: number) =>
          store.read((tx) => tx.readEvents(PARTITION, after, limit)).pipe(Effect.map((es) => es.map((e) => e.position)))
        assert.deepStrictEqual(yield* positions(17, 5), [18, 19, 20, 21, 22])
        assert.deepStrictEqual(yield* positions(0, 3), [1, 2, 3])
        assert.deepStrictEqual(yield* positions(49, 10), [50])
        assert.deepStrictEqual(yield* positions(50, 10), [])
        assert.deepStrictEqual(yield* positions(17, 0), [])
        const inside = yield* store.transact((tx) =>
          Effect.andThen(
            tx.appendEvent(PARTITION, { eventId: "evt_log_51", name: "n", timestamp: 51, payload: {} }),
            Effect.map(tx.readEvents(PARTITION, 48, 10), (es) => es.map((e) => e.position))
          )
        )
        assert.deepStrictEqual(inside, [49, 50, 51])
      })
    )
  })
