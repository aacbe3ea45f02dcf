/**
 * The store contract: what every adapter of the store port (engine/store/port.ts) must do, run against one shared
 * instance of the adapter per suite. Tests isolate themselves by collection, partition and counter names; the job
 * queue is global, so job tests drain it first and leave it empty.
 */
import { assert, layer } from "@effect/vitest"
import { Cause, Data, Deferred, Effect, Exit, Fiber, type Layer, Option } from "effect"
import { type Doc, Store, type StoreError, type Tx } from "../../engine/store/port.ts"

class Boom extends Data.TaggedError("Boom")<{ readonly reason: string }> {}

const transact = <A, E>(work: (tx: Tx) => Effect.Effect<A, E>): Effect.Effect<A, E | StoreError, Store> =>
  Effect.gen(function* () {
    const store = yield* Store
    return yield* store.transact(work)
  })

/** Deletes every job, so job tests see only their own. */
const drainJobs = transact((tx) =>
  Effect.gen(function* () {
    for (;;) {
      const next = yield* tx.nextJob
      if (Option.isNone(next)) return
      yield* tx.deleteJob(next.value.seq)
    }
  })
)

const ids = (docs: ReadonlyArray<Doc>) => docs.map((d) => d.id)

/** A body whose key order is deliberately not alphabetical, with nested objects, arrays and non-ASCII text. */
const richBody = {
  zebra: 1,
  apple: { yak: 2, bee: [3, { dog: 4, cat: 5 }], "10": "numeric-like key", "2": "another" },
  mixed: 'ü😀\u0000"quoted"\n',
  nothing: null,
  yes: true,
  fraction: 1.5,
  negative: -3,
  big: 9007199254740991,
  empty: {},
  list: []
}

export const storeContract = (name: string, storeLayer: Layer.Layer<Store, unknown>) =>
  layer(storeLayer, { timeout: "60 seconds" })(name, (it) => {
    it.effect("read sees committed documents and events, never a transaction's uncommitted writes, and waits for no writer", () =>
      Effect.gen(function* () {
        const store = yield* Store
        const doc: Doc = { id: "r-1", partition: "rd:sandbox", sortKey: "0001|r-1", body: { v: 1 } }
        yield* transact((tx) => Effect.andThen(tx.put("rd", doc), tx.appendEvent("rd:sandbox", { eventId: "evt_r1", name: "x", timestamp: 1, payload: {} })))
        const seen = yield* store.read((tx) =>
          Effect.all([tx.get("rd", "r-1"), tx.list("rd", { partition: "rd:sandbox", limit: 5, order: "asc" }), tx.readEvents("rd:sandbox", 0, 5)])
        )
        assert.deepStrictEqual(Option.getOrThrow(seen[0]), doc)
        assert.deepStrictEqual(ids(seen[1]), ["r-1"])
        assert.deepStrictEqual(
          seen[2].map((e) => e.eventId),
          ["evt_r1"]
        )
        // While a writer (another fiber, as another request would be) holds its transaction open with an uncommitted
        // change, a read neither waits for it nor sees it.
        const inside = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const writer = yield* Effect.forkChild(
          transact((tx) =>
            tx.put("rd", { ...doc, body: { v: 2 } }).pipe(Effect.andThen(Deferred.succeed(inside, undefined)), Effect.andThen(Deferred.await(release)))
          )
        )
        yield* Deferred.await(inside)
        const during = yield* store.read((r) => r.get("rd", "r-1"))
        assert.deepStrictEqual(Option.getOrThrow(during).body, { v: 1 })
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(writer)
        const after = yield* store.read((r) => r.get("rd", "r-1"))
        assert.deepStrictEqual(Option.getOrThrow(after).body, { v: 2 })
        const missing = yield* store.read((r) => r.get("rd", "nope"))
        assert.isTrue(Option.isNone(missing))
      })
    )

    it.effect("put then get round-trips the document exactly, key order included", () =>
      Effect.gen(function* () {
        const doc: Doc = { id: "doc-1", partition: "p1:sandbox", sortKey: "2024-01-01T00:00:00.000Z#doc-1", body: richBody }
        yield* transact((tx) => tx.put("rt", doc))
        const got = yield* transact((tx) => tx.get("rt", "doc-1"))
        assert.isTrue(Option.isSome(got))
        const value = Option.getOrThrow(got)
        assert.deepStrictEqual(value, doc)
        assert.strictEqual(JSON.stringify(value.body), JSON.stringify(richBody))
        assert.deepStrictEqual(Object.keys(value.body as object), Object.keys(richBody))
        const listed = yield* transact((tx) => tx.list("rt", { partition: "p1:sandbox", limit: 10, order: "asc" }))
        assert.strictEqual(listed.length, 1)
        assert.strictEqual(JSON.stringify(listed[0]?.body), JSON.stringify(richBody))
        assert.deepStrictEqual(listed[0], doc)
        // non-object bodies too
        for (const [i, body] of [["a", 1], "plain", 42, null, [{ b: 1, a: 2 }]].entries()) {
          const d: Doc = { id: `scalar-${i}`, partition: "p2", sortKey: `${i}`, body }
          yield* transact((tx) => tx.put("rt", d))
          assert.deepStrictEqual(Option.getOrThrow(yield* transact((tx) => tx.get("rt", d.id))), d)
        }
      })
    )

    it.effect("get of a missing id, or of an id in another collection, is none", () =>
      Effect.gen(function* () {
        yield* transact((tx) => tx.put("missing-a", { id: "x", partition: "p", sortKey: "1", body: {} }))
        assert.isTrue(Option.isNone(yield* transact((tx) => tx.get("missing-a", "y"))))
        assert.isTrue(Option.isNone(yield* transact((tx) => tx.get("missing-b", "x"))))
      })
    )

    it.effect("put overwrites a document with the same id", () =>
      Effect.gen(function* () {
        yield* transact((tx) => tx.put("ow", { id: "a", partition: "p", sortKey: "1", body: { v: 1, old: true } }))
        yield* transact((tx) => tx.put("ow", { id: "a", partition: "p", sortKey: "2", body: { v: 2 } }))
        const got = Option.getOrThrow(yield* transact((tx) => tx.get("ow", "a")))
        assert.deepStrictEqual(got, { id: "a", partition: "p", sortKey: "2", body: { v: 2 } })
        const listed = yield* transact((tx) => tx.list("ow", { partition: "p", limit: 10, order: "asc" }))
        assert.deepStrictEqual(listed, [got])
      })
    )

    it.effect("list orders by sort key asc/desc with an exclusive after bound, a limit, per collection and partition", () =>
      Effect.gen(function* () {
        yield* transact((tx) =>
          Effect.gen(function* () {
            for (const key of ["b", "a", "d", "c", "e"]) {
              yield* tx.put("ls", { id: `id-${key}`, partition: "p1", sortKey: key, body: { key } })
            }
          })
        )
        yield* transact((tx) =>
          Effect.gen(function* () {
            yield* tx.put("ls", { id: "other-partition", partition: "p2", sortKey: "a0", body: {} })
            yield* tx.put("ls-other", { id: "other-collection", partition: "p1", sortKey: "a0", body: {} })
          })
        )
        const list = (options: { after?: string; limit: number; order: "asc" | "desc"; partition?: string }) =>
          transact((tx) => tx.list("ls", { partition: "p1", ...options })).pipe(Effect.map(ids))
        assert.deepStrictEqual(yield* list({ limit: 10, order: "asc" }), ["id-a", "id-b", "id-c", "id-d", "id-e"])
        assert.deepStrictEqual(yield* list({ limit: 10, order: "desc" }), ["id-e", "id-d", "id-c", "id-b", "id-a"])
        assert.deepStrictEqual(yield* list({ limit: 2, order: "asc" }), ["id-a", "id-b"])
        assert.deepStrictEqual(yield* list({ limit: 2, order: "desc" }), ["id-e", "id-d"])
        assert.deepStrictEqual(yield* list({ after: "b", limit: 2, order: "asc" }), ["id-c", "id-d"])
        assert.deepStrictEqual(yield* list({ after: "d", limit: 2, order: "desc" }), ["id-c", "id-b"])
        assert.deepStrictEqual(yield* list({ after: "bb", limit: 10, order: "asc" }), ["id-c", "id-d", "id-e"])
        assert.deepStrictEqual(yield* list({ after: "e", limit: 10, order: "asc" }), [])
        assert.deepStrictEqual(yield* list({ after: "a", limit: 10, order: "desc" }), [])
        assert.deepStrictEqual(yield* list({ limit: 0, order: "asc" }), [])
        assert.deepStrictEqual(yield* list({ partition: "p2", limit: 10, order: "asc" }), ["other-partition"])
        assert.deepStrictEqual(yield* list({ partition: "p3", limit: 10, order: "asc" }), [])
        const otherCollection = yield* transact((tx) => tx.list("ls-other", { partition: "p1", limit: 10, order: "asc" }))
        assert.deepStrictEqual(ids(otherCollection), ["other-collection"])
      })
    )

    it.effect("list compares sort keys by UTF-16 code units, as JavaScript does", () =>
      Effect.gen(function* () {
        // U+1F600 is the surrogate pair D83D DE00, below U+FF21 in UTF-16 though above it as a code point (and in UTF-8).
        const keys = ["\uff21", "\u{1f600}", "Z", "a", "aa", "", "é"]
        yield* transact((tx) =>
          Effect.forEach(keys, (key, i) => tx.put("utf16", { id: `k${i}`, partition: "p", sortKey: key, body: i }), {
            discard: true
          })
        )
        const listed = yield* transact((tx) => tx.list("utf16", { partition: "p", limit: 100, order: "asc" }))
        assert.deepStrictEqual(
          listed.map((d) => d.sortKey),
          [...keys].sort()
        )
        const after = yield* transact((tx) => tx.list("utf16", { partition: "p", after: "\u{1f600}", limit: 100, order: "asc" }))
        assert.deepStrictEqual(
          after.map((d) => d.sortKey),
          ["\uff21"]
        )
      })
    )

    it.effect("equal sort keys keep first-insertion order (reversed for desc), also across overwrites", () =>
      Effect.gen(function* () {
        const put = (tx: Tx, id: string, v: number) => tx.put("ties", { id, partition: "p", sortKey: "same", body: { v } })
        yield* transact((tx) => put(tx, "t-b", 1))
        yield* transact((tx) => Effect.all([put(tx, "t-a", 1), put(tx, "t-c", 1)]))
        yield* transact((tx) => put(tx, "t-b", 2))
        const inside = yield* transact((tx) =>
          Effect.gen(function* () {
            yield* put(tx, "t-0", 1)
            yield* put(tx, "t-a", 2)
            return ids(yield* tx.list("ties", { partition: "p", limit: 10, order: "asc" }))
          })
        )
        assert.deepStrictEqual(inside, ["t-b", "t-a", "t-c", "t-0"])
        const asc = yield* transact((tx) => tx.list("ties", { partition: "p", limit: 10, order: "asc" }))
        assert.deepStrictEqual(ids(asc), ["t-b", "t-a", "t-c", "t-0"])
        const desc = yield* transact((tx) => tx.list("ties", { partition: "p", limit: 10, order: "desc" }))
        assert.deepStrictEqual(ids(desc), ["t-0", "t-c", "t-a", "t-b"])
        assert.deepStrictEqual(
          desc.map((d) => d.body),
          [{ v: 1 }, { v: 1 }, { v: 2 }, { v: 2 }]
        )
      })
    )

    it.effect("reads inside a transaction see its own writes", () =>
      Effect.gen(function* () {
        yield* drainJobs
        yield* transact((tx) => tx.put("own", { id: "existing", partition: "p", sortKey: "2", body: { v: 1 } }))
        yield* transact((tx) =>
          Effect.gen(function* () {
            yield* tx.put("own", { id: "new", partition: "p", sortKey: "1", body: { v: "new" } })
            yield* tx.put("own", { id: "existing", partition: "p", sortKey: "2", body: { v: 2 } })
            assert.deepStrictEqual(Option.getOrThrow(yield* tx.get("own", "new")).body, { v: "new" })
            assert.deepStrictEqual(Option.getOrThrow(yield* tx.get("own", "existing")).body, { v: 2 })
            const listed = yield* tx.list("own", { partition: "p", limit: 10, order: "asc" })
            assert.deepStrictEqual(
              listed.map((d) => [d.id, d.body]),
              [
                ["new", { v: "new" }],
                ["existing", { v: 2 }]
              ]
            )
            assert.strictEqual(yield* tx.nextSeq("own-counter"), 1)
            assert.strictEqual(yield* tx.nextSeq("own-counter"), 2)
            const e1 = yield* tx.appendEvent("own-log", { eventId: "own-1", name: "n", timestamp: 1, payload: { a: 1 } })
            const e2 = yield* tx.appendEvent("own-log", { eventId: "own-2", name: "n", timestamp: 2, payload: { a: 2 } })
            assert.deepStrictEqual(yield* tx.readEvents("own-log", 0, 10), [e1, e2])
            const job = yield* tx.scheduleJob({ kind: "k", dueAt: 5, payload: { j: 1 } })
            assert.deepStrictEqual(yield* tx.nextJob, Option.some(job))
            yield* tx.deleteJob(job.seq)
            assert.isTrue(Option.isNone(yield* tx.nextJob))
          })
        )
        assert.strictEqual(yield* transact((tx) => tx.nextSeq("own-counter")), 3)
        assert.strictEqual((yield* transact((tx) => tx.readEvents("own-log", 0, 10))).length, 2)
        assert.isTrue(Option.isNone(yield* transact((tx) => tx.nextJob)))
      })
    )

    it.effect("a failed transaction rolls back docs, counters, events and jobs, and runs no afterCommit hook", () =>
      Effect.gen(function* () {
        yield* drainJobs
        yield* transact((tx) => tx.put("rb", { id: "kept", partition: "p", sortKey: "1", body: { v: "before" } }))
        const before = yield* transact((tx) =>
          Effect.all({ seq: tx.nextSeq("rb-counter"), event: tx.appendEvent("rb-log", { eventId: "rb-0", name: "n", timestamp: 0, payload: null }) })
        )
        assert.strictEqual(before.seq, 1)
        assert.strictEqual(before.event.position, 1)

        const hooks: Array<string> = []
        let seenInside: { seq: number; position: number; jobSeq: number } | undefined
        const exit = yield* Effect.exit(
          transact((tx) =>
            Effect.gen(function* () {
              yield* tx.put("rb", { id: "kept", partition: "p", sortKey: "1", body: { v: "after" } })
              yield* tx.put("rb", { id: "dropped", partition: "p", sortKey: "2", body: {} })
              const seq = yield* tx.nextSeq("rb-counter")
              const event = yield* tx.appendEvent("rb-log", { eventId: "rb-1", name: "n", timestamp: 1, payload: {} })
              const job = yield* tx.scheduleJob({ kind: "k", dueAt: 1, payload: {} })
              seenInside = { seq, position: event.position, jobSeq: job.seq }
              yield* tx.afterCommit(Effect.sync(() => void hooks.push("rolled back")))
              return yield* new Boom({ reason: "fail after writing" })
            })
          )
        )
        assert.isTrue(Exit.isFailure(exit))
        if (Exit.isFailure(exit)) {
          const error = Cause.findErrorOption(exit.cause)
          assert.isTrue(Option.isSome(error) && (error.value as { _tag?: string })._tag === "Boom")
        }
        assert.deepStrictEqual(hooks, [])
        assert.isDefined(seenInside)
        assert.strictEqual(seenInside?.seq, 2)
        assert.strictEqual(seenInside?.position, 2)

        const after = yield* transact((tx) =>
          Effect.all({
            kept: tx.get("rb", "kept"),
            dropped: tx.get("rb", "dropped"),
            listed: tx.list("rb", { partition: "p", limit: 10, order: "asc" }),
            events: tx.readEvents("rb-log", 0, 10),
            job: tx.nextJob
          })
        )
        assert.deepStrictEqual(Option.getOrThrow(after.kept).body, { v: "before" })
        assert.isTrue(Option.isNone(after.dropped))
        assert.deepStrictEqual(ids(after.listed), ["kept"])
        assert.deepStrictEqual(
          after.events.map((e) => e.eventId),
          ["rb-0"]
        )
        assert.isTrue(Option.isNone(after.job))

        // counters did not advance: the next transaction gets the values the rolled-back one saw; job seqs come from an
        // id sequence, which is not rolled back (E-321): the next one is past the rolled-back one
        const next = yield* transact((tx) =>
          Effect.all({
            seq: tx.nextSeq("rb-counter"),
            event: tx.appendEvent("rb-log", { eventId: "rb-2", name: "n", timestamp: 2, payload: {} }),
            job: tx.scheduleJob({ kind: "k", dueAt: 1, payload: {} })
          })
        )
        assert.strictEqual(next.seq, seenInside?.seq)
        assert.strictEqual(next.event.position, seenInside?.position)
        assert.isAbove(next.job.seq, seenInside?.jobSeq ?? Number.POSITIVE_INFINITY)
        yield* drainJobs
      })
    )

    it.effect("a defect in the work also rolls back", () =>
      Effect.gen(function* () {
        const exit = yield* Effect.exit(
          transact((tx) =>
            Effect.gen(function* () {
              yield* tx.put("rb-die", { id: "x", partition: "p", sortKey: "1", body: {} })
              yield* tx.nextSeq("rb-die-counter")
              return yield* Effect.die("boom")
            })
          )
        )
        assert.isTrue(Exit.isFailure(exit))
        assert.isTrue(Option.isNone(yield* transact((tx) => tx.get("rb-die", "x"))))
        assert.strictEqual(yield* transact((tx) => tx.nextSeq("rb-die-counter")), 1)
      })
    )

    it.effect("afterCommit hooks run after the work, in registration order, only on commit", () =>
      Effect.gen(function* () {
        const log: Array<string> = []
        const result = yield* transact((tx) =>
          Effect.gen(function* () {
            yield* tx.afterCommit(Effect.sync(() => void log.push("first")))
            yield* tx.put("hooks", { id: "h", partition: "p", sortKey: "1", body: {} })
            yield* tx.afterCommit(Effect.sync(() => void log.push("second")))
            yield* tx.afterCommit(Effect.sync(() => void log.push("third")))
            log.push("work done")
            return "result"
          })
        )
        assert.strictEqual(result, "result")
        assert.deepStrictEqual(log, ["work done", "first", "second", "third"])
        // the hook's transaction is visible to the next one
        assert.isTrue(Option.isSome(yield* transact((tx) => tx.get("hooks", "h"))))
      })
    )

    it.effect("nextSeq counts from 1 per counter, across transactions", () =>
      Effect.gen(function* () {
        const first = yield* transact((tx) => Effect.all([tx.nextSeq("seq-a"), tx.nextSeq("seq-a"), tx.nextSeq("seq-b")]))
        assert.deepStrictEqual(first, [1, 2, 1])
        const second = yield* transact((tx) => Effect.all([tx.nextSeq("seq-a"), tx.nextSeq("seq-b")]))
        assert.deepStrictEqual(second, [3, 2])
      })
    )

    it.effect("event positions are 1..n per partition, gapless, in commit order; readEvents pages by position", () =>
      Effect.gen(function* () {
        const payload = { zeta: [1, 2], alpha: { y: "y", x: "x" } }
        const appended = yield* transact((tx) =>
          Effect.all([
            tx.appendEvent("ev-a", { eventId: "a1", name: "Created", timestamp: 1_700_000_000_000, payload }),
            tx.appendEvent("ev-b", { eventId: "b1", name: "Created", timestamp: 1_700_000_000_001, payload: null }),
            tx.appendEvent("ev-a", { eventId: "a2", name: "Updated", timestamp: 1_700_000_000_002, payload: "s" })
          ])
        )
        assert.deepStrictEqual(appended[0], {
          position: 1,
          partition: "ev-a",
          eventId: "a1",
          name: "Created",
          timestamp: 1_700_000_000_000,
          payload
        })
        assert.deepStrictEqual(
          appended.map((e) => [e.partition, e.position]),
          [
            ["ev-a", 1],
            ["ev-b", 1],
            ["ev-a", 2]
          ]
        )
        for (let i = 3; i <= 6; i++) {
          const e = yield* transact((tx) => tx.appendEvent("ev-a", { eventId: `a${i}`, name: "Updated", timestamp: i, payload: { i } }))
          assert.strictEqual(e.position, i)
        }
        const all = yield* transact((tx) => tx.readEvents("ev-a", 0, 100))
        assert.deepStrictEqual(
          all.map((e) => e.position),
          [1, 2, 3, 4, 5, 6]
        )
        assert.deepStrictEqual(
          all.map((e) => e.eventId),
          ["a1", "a2", "a3", "a4", "a5", "a6"]
        )
        assert.deepStrictEqual(all[0], appended[0])
        assert.strictEqual(JSON.stringify(all[0]?.payload), JSON.stringify(payload))
        const page = yield* transact((tx) => tx.readEvents("ev-a", 2, 3))
        assert.deepStrictEqual(
          page.map((e) => e.position),
          [3, 4, 5]
        )
        assert.deepStrictEqual(yield* transact((tx) => tx.readEvents("ev-a", 6, 10)), [])
        assert.deepStrictEqual(yield* transact((tx) => tx.readEvents("ev-a", 0, 0)), [])
        const b = yield* transact((tx) => tx.readEvents("ev-b", 0, 10))
        assert.deepStrictEqual(b, [appended[1]])
        assert.deepStrictEqual(yield* transact((tx) => tx.readEvents("ev-none", 0, 10)), [])
      })
    )

    it.effect("deletePartition removes the partition's and its children's documents and events, nothing else, and keeps counters", () =>
      Effect.gen(function* () {
        const store = yield* Store
        const doc = (collection: string, id: string, partition: string) => transact((tx) => tx.put(collection, { id, partition, sortKey: id, body: { id } }))
        // the partition, a child, and neighbours whose names share its prefix
        for (const [id, partition] of [
          ["a1", "wp:sandbox"],
          ["a2", "wp:sandbox"],
          ["c1", "wp:sandbox/usr_1"],
          ["n1", "wp:sandbox2"],
          ["n2", "wp:sandbox0"],
          ["n3", "wp:sandbo"],
          ["n4", "wp:production"],
          ["n5", "wp:sandbox-x/usr_1"]
        ] as const) {
          yield* doc("wipe-a", id, partition)
        }
        yield* doc("wipe-b", "b1", "wp:sandbox")
        yield* transact((tx) =>
          Effect.all([
            tx.appendEvent("wp:sandbox", { eventId: "wp-1", name: "x", timestamp: 1, payload: null }),
            tx.appendEvent("wp:sandbox", { eventId: "wp-2", name: "x", timestamp: 2, payload: null }),
            tx.appendEvent("wp:sandbox2", { eventId: "o1", name: "x", timestamp: 3, payload: null })
          ])
        )
        const seqBefore = yield* transact((tx) => tx.nextSeq("wipe-counter"))
        yield* transact((tx) => tx.deletePartition("wp:sandbox"))
        const left = (collection: string, partition: string) =>
          store.read((tx) => Effect.map(tx.list(collection, { partition, limit: 100, order: "asc" }), ids))
        assert.deepStrictEqual(yield* left("wipe-a", "wp:sandbox"), [])
        assert.deepStrictEqual(yield* left("wipe-a", "wp:sandbox/usr_1"), [])
        assert.deepStrictEqual(yield* left("wipe-b", "wp:sandbox"), [])
        for (const [id, partition] of [
          ["n1", "wp:sandbox2"],
          ["n2", "wp:sandbox0"],
          ["n3", "wp:sandbo"],
          ["n4", "wp:production"],
          ["n5", "wp:sandbox-x/usr_1"]
        ] as const) {
          assert.deepStrictEqual(yield* left("wipe-a", partition), [id])
        }
        assert.isTrue(Option.isNone(yield* store.read((tx) => tx.get("wipe-a", "a1"))))
        assert.isTrue(Option.isNone(yield* store.read((tx) => tx.get("wipe-a", "c1"))))
        assert.isTrue(Option.isSome(yield* store.read((tx) => tx.get("wipe-a", "n1"))))
        assert.deepStrictEqual(yield* store.read((tx) => tx.readEvents("wp:sandbox", 0, 10)), [])
        assert.deepStrictEqual(
          (yield* store.read((tx) => tx.readEvents("wp:sandbox2", 0, 10))).map((e) => e.eventId),
          ["o1"]
        )
        // counters survive: positions and sequences keep growing
        const next = yield* transact((tx) => tx.appendEvent("wp:sandbox", { eventId: "wp-3", name: "x", timestamp: 4, payload: null }))
        assert.strictEqual(next.position, 3)
        assert.strictEqual(yield* transact((tx) => tx.nextSeq("wipe-counter")), seqBefore + 1)
        // a wiped id can be written again
        yield* doc("wipe-a", "a1", "wp:sandbox")
        assert.deepStrictEqual(yield* left("wipe-a", "wp:sandbox"), ["a1"])
      })
    )

    it.effect("an eventId is in the log once, whatever the partition; a wiped partition's ids are free again", () =>
      Effect.gen(function* () {
        const append = (tx: Tx, partition: string, eventId: string) => tx.appendEvent(partition, { eventId, name: "x", timestamp: 1, payload: null })
        yield* transact((tx) => append(tx, "once-a:sandbox", "once-1"))
        for (const [partition, repeat] of [
          ["once-a:sandbox", (tx: Tx) => append(tx, "once-a:sandbox", "once-1")],
          ["once-b:sandbox", (tx: Tx) => append(tx, "once-b:sandbox", "once-1")],
          ["once-b:sandbox", (tx: Tx) => Effect.andThen(append(tx, "once-b:sandbox", "once-2"), append(tx, "once-b:sandbox", "once-2"))]
        ] as const) {
          const exit = yield* Effect.exit(transact(repeat))
          assert.isTrue(Exit.isFailure(exit), `a repeated eventId was appended to ${partition}`)
        }
        const store = yield* Store
        assert.deepStrictEqual((yield* store.read((tx) => tx.readEvents("once-b:sandbox", 0, 10))).length, 0)
        yield* transact((tx) => Effect.andThen(tx.deletePartition("once-a:sandbox"), append(tx, "once-b:sandbox", "once-1")))
        assert.deepStrictEqual(
          (yield* store.read((tx) => tx.readEvents("once-b:sandbox", 0, 10))).map((e) => e.eventId),
          ["once-1"]
        )
      })
    )

    it.effect("inside a transaction, deletePartition hides earlier writes and keeps later ones; a rollback undoes it", () =>
      Effect.gen(function* () {
        const store = yield* Store
        const put = (tx: Tx, id: string, partition = "wq:sandbox") => tx.put("wipe-q", { id, partition, sortKey: id, body: { id } })
        yield* transact((tx) => Effect.all([put(tx, "old"), put(tx, "kid", "wq:sandbox/u")]))
        yield* transact((tx) => tx.appendEvent("wq:sandbox", { eventId: "old-e", name: "x", timestamp: 1, payload: null }))
        const rolledBack = yield* Effect.exit(
          transact((tx) =>
            Effect.gen(function* () {
              yield* tx.deletePartition("wq:sandbox")
              return yield* Effect.fail(new Boom({ reason: "undo" }))
            })
          )
        )
        assert.isTrue(Exit.isFailure(rolledBack))
        assert.isTrue(Option.isSome(yield* store.read((tx) => tx.get("wipe-q", "old"))))
        assert.strictEqual((yield* store.read((tx) => tx.readEvents("wq:sandbox", 0, 10))).length, 1)

        const seen = yield* transact((tx) =>
          Effect.gen(function* () {
            yield* put(tx, "before")
            yield* tx.appendEvent("wq:sandbox", { eventId: "before-e", name: "x", timestamp: 2, payload: null })
            yield* tx.deletePartition("wq:sandbox")
            const afterWipe = {
              old: Option.isSome(yield* tx.get("wipe-q", "old")),
              before: Option.isSome(yield* tx.get("wipe-q", "before")),
              list: ids(yield* tx.list("wipe-q", { partition: "wq:sandbox", limit: 10, order: "asc" })),
              kids: ids(yield* tx.list("wipe-q", { partition: "wq:sandbox/u", limit: 10, order: "asc" })),
              events: (yield* tx.readEvents("wq:sandbox", 0, 10)).length
            }
            yield* put(tx, "after")
            const e = yield* tx.appendEvent("wq:sandbox", { eventId: "after-e", name: "x", timestamp: 3, payload: null })
            return { afterWipe, position: e.position, list: ids(yield* tx.list("wipe-q", { partition: "wq:sandbox", limit: 10, order: "asc" })) }
          })
        )
        assert.deepStrictEqual(seen.afterWipe, { old: false, before: false, list: [], kids: [], events: 0 })
        assert.deepStrictEqual(seen.list, ["after"])
        // positions 1 (old) and 2 (before, wiped) were used: the next is 3
        assert.strictEqual(seen.position, 3)
        assert.deepStrictEqual(yield* store.read((tx) => Effect.map(tx.list("wipe-q", { partition: "wq:sandbox", limit: 10, order: "asc" }), ids)), ["after"])
        assert.deepStrictEqual(yield* store.read((tx) => Effect.map(tx.list("wipe-q", { partition: "wq:sandbox/u", limit: 10, order: "asc" }), ids)), [])
        assert.deepStrictEqual(
          (yield* store.read((tx) => tx.readEvents("wq:sandbox", 0, 10))).map((e) => e.eventId),
          ["after-e"]
        )
      })
    )

    it.effect("jobs come out by (dueAt, seq), with consecutive seqs when nothing rolls back, until deleted", () =>
      Effect.gen(function* () {
        yield* drainJobs
        const [late, early1, early2] = yield* transact((tx) =>
          Effect.all([
            tx.scheduleJob({ kind: "late", dueAt: 2_000, payload: { b: 1, a: 2 } }),
            tx.scheduleJob({ kind: "early-1", dueAt: 1_000, payload: null }),
            tx.scheduleJob({ kind: "early-2", dueAt: 1_000, payload: [1, "x"] })
          ])
        )
        assert.strictEqual(early1.seq, late.seq + 1)
        assert.strictEqual(early2.seq, late.seq + 2)
        const another = yield* transact((tx) => tx.scheduleJob({ kind: "later", dueAt: 3_000, payload: {} }))
        assert.strictEqual(another.seq, late.seq + 3)

        const taken: Array<string> = []
        for (;;) {
          const next = yield* transact((tx) =>
            Effect.gen(function* () {
              const job = yield* tx.nextJob
              if (Option.isSome(job)) yield* tx.deleteJob(job.value.seq)
              return job
            })
          )
          if (Option.isNone(next)) break
          taken.push(next.value.kind)
          if (next.value.kind === "late") {
            assert.deepStrictEqual(next.value, late)
            assert.strictEqual(JSON.stringify(next.value.payload), JSON.stringify({ b: 1, a: 2 }))
          }
        }
        assert.deepStrictEqual(taken, ["early-1", "early-2", "late", "later"])
        // deleting a job that is not there is a no-op, and says so
        assert.isFalse(yield* transact((tx) => tx.deleteJob(late.seq)))
        assert.isTrue(Option.isNone(yield* transact((tx) => tx.nextJob)))
      })
    )

    it.effect("claimJob takes the earliest job due by then, once: a claim that commits is gone, one rolled back is not", () =>
      Effect.gen(function* () {
        yield* drainJobs
        const [first, second, later] = yield* transact((tx) =>
          Effect.all([
            tx.scheduleJob({ kind: "first", dueAt: 1_000, payload: { n: 1 } }),
            tx.scheduleJob({ kind: "second", dueAt: 1_000, payload: { n: 2 } }),
            tx.scheduleJob({ kind: "later", dueAt: 5_000, payload: { n: 3 } })
          ])
        )
        assert.isTrue(Option.isNone(yield* transact((tx) => tx.claimJob(999))))
        const rolledBack = yield* Effect.exit(transact((tx) => Effect.andThen(tx.claimJob(1_000), Effect.fail(new Boom({ reason: "rollback" })))))
        assert.isTrue(Exit.isFailure(rolledBack))
        const claims = yield* transact((tx) => Effect.all([tx.claimJob(1_000), tx.claimJob(1_000), tx.claimJob(1_000)]))
        assert.deepStrictEqual(claims, [Option.some(first), Option.some(second), Option.none()])
        // Two transactions claiming at once never get the same job.
        const racing = yield* Effect.all([transact((tx) => tx.claimJob(5_000)), transact((tx) => tx.claimJob(5_000))], { concurrency: 2 })
        assert.deepStrictEqual(racing.filter(Option.isSome), [Option.some(later)])
        assert.isFalse(yield* transact((tx) => tx.deleteJob(later.seq)))
        assert.isTrue(Option.isNone(yield* transact((tx) => tx.nextJob)))
      })
    )

    it.effect("nextId counts from 1 per sequence, across transactions, and a rollback does not give a value back", () =>
      Effect.gen(function* () {
        const first = yield* transact((tx) => Effect.all([tx.nextId("auditRecords"), tx.nextId("auditRecords"), tx.nextId("unitChanges")]))
        assert.deepStrictEqual(first, [1, 2, 1])
        const rolledBack = yield* Effect.exit(transact((tx) => Effect.andThen(tx.nextId("auditRecords"), new Boom({ reason: "rollback" }))))
        assert.isTrue(Exit.isFailure(rolledBack))
        assert.deepStrictEqual(yield* transact((tx) => Effect.all([tx.nextId("auditRecords"), tx.nextId("unitChanges")])), [4, 2])
      })
    )

    for (const partition of ["claim-p", "global"]) {
      it.effect(`a key claimed when absent is claimed once by 10 concurrent transactions that did not lock first (${partition})`, () =>
        Effect.gen(function* () {
          // The idempotency guard's shape: look the key up (a miss says nothing of a partition), then write it.
          const id = `${partition}|k`
          const outcomes = yield* Effect.forEach(
            Array.from({ length: 10 }, (_, i) => i),
            (i) =>
              transact((tx) =>
                Effect.gen(function* () {
                  if (Option.isSome(yield* tx.get("claims", id))) return "replay"
                  yield* Effect.yieldNow
                  yield* tx.put("claims", { id, partition, sortKey: "k", body: { by: i } })
                  return "claimed"
                })
              ),
            { concurrency: "unbounded" }
          )
          assert.deepStrictEqual(outcomes.filter((o) => o === "claimed").length, 1, `outcomes: ${outcomes.join(", ")}`)
        })
      )
    }

    it.effect("concurrent transactions are serialised: 20 appends get positions 1..20, no lost updates", () =>
      Effect.gen(function* () {
        yield* transact((tx) => tx.put("conc", { id: "count", partition: "p", sortKey: "0", body: { n: 0 } }))
        const results = yield* Effect.forEach(
          Array.from({ length: 20 }, (_, i) => i),
          (i) =>
            transact((tx) =>
              Effect.gen(function* () {
                const current = Option.getOrThrow(yield* tx.get("conc", "count")).body as { n: number }
                yield* Effect.yieldNow
                yield* tx.put("conc", { id: "count", partition: "p", sortKey: "0", body: { n: current.n + 1 } })
                return yield* tx.appendEvent("conc-log", { eventId: `c${i}`, name: "Tick", timestamp: i, payload: { i } })
              })
            ),
          { concurrency: "unbounded" }
        )
        const positions = results.map((e) => e.position).sort((a, b) => a - b)
        assert.deepStrictEqual(
          positions,
          Array.from({ length: 20 }, (_, i) => i + 1)
        )
        const log = yield* transact((tx) => tx.readEvents("conc-log", 0, 100))
        assert.deepStrictEqual(
          log.map((e) => e.position),
          Array.from({ length: 20 }, (_, i) => i + 1)
        )
        assert.strictEqual(new Set(log.map((e) => e.eventId)).size, 20)
        const count = Option.getOrThrow(yield* transact((tx) => tx.get("conc", "count"))).body
        assert.deepStrictEqual(count, { n: 20 })
      })
    )
  })
