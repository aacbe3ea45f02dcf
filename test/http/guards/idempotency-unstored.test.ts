/**
 * What is NOT stored under an Idempotency-Key (issue 9, item 5; E-076), through the gateway, on the memory store and
 * (DATABASE_URL set) on PostgreSQL, every answer checked against the contract:
 * - a request-shape failure found while decoding (400 INVALID_TYPE): the corrected request with the same key runs
 *   (were the failure stored, it would be a replay or a 422 IDEMPOTENCY_KEY_REUSED);
 * - failures the handler itself answers after the key was claimed: a dependency's 503 SERVICE_UNAVAILABLE, a request
 *   shape failure, a typed store failure (500) and a defect (500): each time the same request with the same key runs
 *   the handler again, and the key is free at once (no 409 from a claim left behind);
 * - then the first stored answer (201) is replayed byte for byte, the handler not run again;
 * - a stored answer lives 24 h on the engine clock (replayed at 24 h less 1 s, forgotten at 24 h).
 * The scripted failures wrap the real `createSubAccount` route, so the success is the real one.
 */
import { Effect, Exit, ManagedRuntime, Scope } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { ApiFailure, fail } from "../../../engine/domain/errors.ts"
import type { EngineRequest } from "../../../engine/http/exchange.ts"
import { Gateway } from "../../../engine/http/gateway.ts"
import type { Route } from "../../../engine/http/route.ts"
import { ROUTES, type RouteServices } from "../../../engine/http/routes/index.ts"
import { engineLayer } from "../../../engine/runtime.ts"
import { withTemporaryDatabase } from "../../../engine/store/pg-temp-db.ts"
import { StoreError } from "../../../engine/store/port.ts"
import { engineLog } from "../../support/engine-log.ts"
import { ADMIN, contractProblems, MONDAY_OPEN } from "../harness.ts"
import { tagsFor } from "../../support/stores.ts"

const DATABASE_URL = process.env.DATABASE_URL
const SANDBOX = "/api/sandbox/v1/partner"

type Outcome = Effect.Effect<never, ApiFailure | StoreError>

for (const store of ["memory", "postgres"] as const) {
  describe.skipIf(store === "postgres" && (DATABASE_URL === undefined || DATABASE_URL === ""))(
    `answers not stored under the key (${store})`,
    tagsFor(store),
    () => {
      let scope = Effect.runSync(Scope.make())
      let runtime: ManagedRuntime.ManagedRuntime<Gateway, unknown>
      let gateway: Gateway["Service"]
      /** Outcomes the wrapped createSubAccount answers with, in order; empty: the real handler. */
      const script: Array<Outcome> = []
      let runs = 0
      /** The engine's log: a test captures the errors it provokes on purpose (a store failure, a defect). */
      let log = engineLog()

      beforeEach(async () => {
        log = engineLog()
        scope = Effect.runSync(Scope.make())
        const databaseUrl = store === "memory" ? undefined : await Effect.runPromise(Scope.provide(withTemporaryDatabase(DATABASE_URL ?? ""), scope))
        runtime = ManagedRuntime.make(
          engineLayer({ store, databaseUrl, clock: "manual", start: MONDAY_OPEN, seed: 1, desk: "manual", adminToken: ADMIN, logger: log.logger })
        ) as ManagedRuntime.ManagedRuntime<Gateway, unknown>
        const real = ROUTES.find((r) => r.operationId === "createSubAccount") as Route<RouteServices>
        const scripted: Route<RouteServices> = {
          ...real,
          run: (input, principal, request) => {
            runs++
            return script.shift() ?? real.run(input, principal, request)
          }
        }
        const routes = ROUTES.map((r) => (r === real ? scripted : r))
        gateway = await runtime.runPromise(Gateway.make({ adminToken: ADMIN }, routes) as Effect.Effect<Gateway["Service"], never, never>)
        script.length = 0
        runs = 0
      }, 60_000)
      afterEach(async () => {
        await runtime.dispose()
        await Effect.runPromise(Scope.close(scope, Exit.void))
      }, 60_000)

      const send = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
        const request: EngineRequest = {
          method,
          path,
          query: new URLSearchParams(),
          search: "",
          headers: { "content-type": "application/json", ...headers },
          body: body === undefined ? undefined : JSON.stringify(body)
        }
        const r = await runtime.runPromise(gateway.handle(request))
        const reply = { status: r.status, headers: new Headers(r.headers), body: r.body === "" ? null : JSON.parse(r.body) }
        const problems = contractProblems(method, path, headers, reply)
        if (problems.length > 0) throw new Error(`response breaks the contract:\n  ${problems.join("\n  ")}`)
        return { ...reply, text: r.body, raw: r.headers }
      }
      const newPartner = async () => {
        const r = await send("POST", "/_sim/partners", { authorization: `Bearer ${ADMIN}` }, { businessName: "Key Partner", email: "k@p.test" })
        expect(r.status).toBe(201)
        return r.body as { sandboxKey: string }
      }

      it("a decode failure is not stored: the corrected request with the same key runs", async () => {
        const p = await newPartner()
        const headers = { "x-api-key": p.sandboxKey, "idempotency-key": "shape-key-0001" }
        const bad = await send("POST", `${SANDBOX}/users`, headers, { externalId: 42 })
        expect([bad.status, bad.body.error.code]).toEqual([400, "INVALID_TYPE"])
        expect(runs).toBe(0)
        const corrected = await send("POST", `${SANDBOX}/users`, headers, { externalId: "cust-1" })
        expect(corrected.status).toBe(201)
        expect(corrected.raw["idempotent-replayed"]).toBeUndefined()
        expect(runs).toBe(1)
        // The same bad body again is refused again, not replayed as the 201, and not a 422 either.
        const badAgain = await send("POST", `${SANDBOX}/users`, headers, { externalId: 42 })
        expect([badAgain.status, badAgain.body.error.code]).toEqual([400, "INVALID_TYPE"])
      })

      it("503, a handler's shape failure, a store failure and a defect are not stored; the first 201 is, and is replayed byte for byte", async () => {
        const p = await newPartner()
        const headers = { "x-api-key": p.sandboxKey, "idempotency-key": "unstored-key-01" }
        const body = { externalId: "cust-7", displayName: "Amina" }
        script.push(
          Effect.fail(new ApiFailure({ code: "SERVICE_UNAVAILABLE", message: "the KYC registry is unavailable; nothing was processed", retryAfter: 5 })),
          Effect.fail(fail("VALIDATION_ERROR", "country is not an ISO 3166-1 alpha-2 code", { param: "country" })),
          Effect.fail(new StoreError({ message: "connection reset" })),
          Effect.die(new Error("a bug"))
        )
        const expected: Array<[number, string]> = [
          [503, "SERVICE_UNAVAILABLE"],
          [400, "VALIDATION_ERROR"],
          [500, "INTERNAL_ERROR"],
          [500, "INTERNAL_ERROR"]
        ]
        /** What each attempt logs: nothing for the answers the handler meant, one ERROR for each 500. */
        const logs: Array<ReadonlyArray<RegExp>> = [
          [],
          [],
          [/^ERROR unexpected failure in createSubAccount StoreError: connection reset/],
          [/^ERROR unexpected failure in createSubAccount Error: a bug/]
        ]
        for (const [i, [status, code]] of expected.entries()) {
          const { value: r, lines } = await log.during(() => send("POST", `${SANDBOX}/users`, headers, body))
          expect(
            lines.map((l) => l.text),
            `attempt ${i + 1}`
          ).toEqual(logs[i]?.map((pattern) => expect.stringMatching(pattern)))
          expect([r.status, r.body.error.code], `attempt ${i + 1}`).toEqual([status, code])
          expect(r.raw["idempotent-replayed"], `attempt ${i + 1}`).toBeUndefined()
          if (status === 503) expect(r.raw["retry-after"]).toBe("5")
          // The handler ran for this very request: nothing was replayed, and the key was given back (no 409 next).
          expect(runs).toBe(i + 1)
        }
        const created = await send("POST", `${SANDBOX}/users`, headers, body)
        expect(created.status).toBe(201)
        expect(created.body.externalId).toBe("cust-7")
        expect(runs).toBe(5)
        const replay = await send("POST", `${SANDBOX}/users`, headers, body)
        expect(runs).toBe(5)
        expect(replay.status).toBe(201)
        expect(replay.text).toBe(created.text)
        expect(replay.raw["idempotent-replayed"]).toBe("true")
        const { "idempotent-replayed": _r, "x-ratelimit-remaining": _a, ...replayed } = replay.raw
        const { "x-ratelimit-remaining": _b, ...original } = created.raw
        expect(replayed).toEqual(original)
        // The stored answer is a 201: the same key with another body is now a reuse.
        const other = await send("POST", `${SANDBOX}/users`, headers, { externalId: "cust-8" })
        expect([other.status, other.body.error.code]).toEqual([422, "IDEMPOTENCY_KEY_REUSED"])
      })

      it("a stored answer lives 24 h on the engine clock: replayed at 24 h less 1 s, the request runs afresh at 24 h", async () => {
        const p = await newPartner()
        const headers = { "x-api-key": p.sandboxKey, "idempotency-key": "day-long-key-01" }
        const advance = async (seconds: number) =>
          expect((await send("POST", "/_sim/clock/advance", { authorization: `Bearer ${ADMIN}` }, { seconds })).status).toBe(200)
        const first = await send("POST", `${SANDBOX}/users`, headers, { externalId: "cust-day" })
        expect([first.status, runs]).toEqual([201, 1])
        await advance(86_399)
        const replay = await send("POST", `${SANDBOX}/users`, headers, { externalId: "cust-day" })
        expect([replay.status, replay.raw["idempotent-replayed"], replay.text, runs]).toEqual([201, "true", first.text, 1])
        // Another body is still a reuse within the 24 h.
        expect((await send("POST", `${SANDBOX}/users`, headers, { externalId: "cust-other" })).status).toBe(422)
        await advance(1)
        // At 24 h the key is forgotten: the handler runs again (the externalId now exists: 409, not a replay).
        const again = await send("POST", `${SANDBOX}/users`, headers, { externalId: "cust-day" })
        expect([again.status, again.body.error.code, again.raw["idempotent-replayed"], runs]).toEqual([409, "CONFLICT", undefined, 2])
      })
    }
  )
}
