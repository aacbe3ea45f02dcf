/**
 * AuditTrail: the partner's audit log (`GET /audit`, D-060, D-260) and the gateway's one hook after each answer.
 * `observe` sees every answered exchange: it counts authenticated answers for usage (UsageMeter) and, for a
 * successful mutation (a partner request other than GET, or a control-API action on a partner's state), writes one
 * audit record per partition it touched, with the actor (credential kind and masked last 4, or the operator), the
 * action, the resource, method, path, status, Idempotency-Key and request id, at the engine clock's time. Replays of
 * an Idempotency-Key change nothing and are not recorded again. Records are written in their own transaction right
 * after the change committed and before the answer leaves (E-140). The execution desk's decisions (fill, reject,
 * expiry), manual or automatic, are the service acting: recorded from their event, in its transaction (`system`). No raw key or secret is ever written (keys appear
 * as `key_****` + last 4; anything key-shaped in a path, Idempotency-Key or request id is masked).
 * Owns the audit records and the hook. How each operation and event is named is pure in domain/audit/actions.ts.
 * Does not own the change itself (each service) or usage numbers (UsageMeter).
 */
import { Context, Effect, Layer, Option } from "effect"
import type { Schemas } from "../contract/wire.ts"
import { type ApiFailure, fail, liftFailure } from "../domain/errors.ts"
import type { EngineRequest, EngineResponse } from "../http/exchange.ts"
import { redactText } from "../http/redact.ts"
import { EngineClock, isoAt } from "../sim/clock.ts"
import {
  basePartition,
  CONTROL_ACTIONS,
  type ControlRule,
  maskedKey,
  namedResource,
  PARTNER_ACTIONS,
  PORTAL_ACTIONS,
  type PortalRule,
  resourceIdOf,
  SYSTEM_EVENTS,
  tokenSubject
} from "../domain/audit/actions.ts"
import { type Doc, type Hint, type IdSequence, putHere, type ReadTx, Store, type StoreError, type Tx } from "../store/port.ts"
import { EventLog } from "../events/event-log.ts"
import { checkLimit, decodeCursor, encodeCursor } from "./cursor.ts"
import { AuditShape } from "./doc-shapes.ts"
import { Applications, ApplicationsByUid, collection, SubAccounts, timeSortKey } from "./docs.ts"
import { scopeOf } from "./pages.ts"
import { partitionOf, type Principal } from "./principal.ts"
import { UsageMeter } from "./billing/usage-meter.ts"

type ActorType = Schemas["AuditRecord"]["actorType"]

export interface AuditDoc {
  readonly auditId: string
  readonly partition: string
  readonly action: string
  readonly actorType: ActorType
  readonly actorId: string
  readonly resourceType: string
  readonly resourceId: string | null
  readonly method: string | null
  readonly path: string | null
  readonly statusCode: number | null
  readonly idempotencyKey: string | null
  readonly requestId: string | null
  readonly createdAt: number
}

/** The audit log, per partner environment, newest last by (createdAt, auditId). */
export const AuditRecords = collection<AuditDoc>("auditRecords", AuditShape)
/** Audit ids come from a store id sequence: every partner's mutating request takes one (E-321). */
const AUDIT_COUNTER: IdSequence = "auditRecords"
/** Records examined per page at most (spec: "scans at most 1000 records per request"). */
const SCAN_LIMIT = 1000

/** What the gateway learnt about an exchange while serving it; filled in as it goes, read once it has answered. */
export interface Observed {
  route?: { readonly operationId: string; readonly mount: string } | undefined
  params?: Readonly<Record<string, string>> | undefined
  principal?: Principal | undefined
  /** The engine time the request was taken at (its usage hour). */
  at?: number | undefined
  /** Set once the exchange was observed inside its command's transaction (E-289): not again after. */
  audited?: boolean | undefined
}

const parsed = (text: string | undefined): unknown => {
  if (text === undefined) return undefined
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** A short client-supplied string, with anything key-shaped masked (a key pasted into a header stays out of the log). */
const clientText = (value: string | undefined, max: number) => (value === undefined || value === "" ? null : redactText(value.slice(0, max)))

export interface AuditQuery {
  readonly from?: number | undefined
  readonly to?: number | undefined
  readonly action?: string | undefined
  readonly resourceType?: string | undefined
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

export const auditToWire = (a: AuditDoc): Schemas["AuditRecord"] => ({
  auditId: a.auditId,
  action: a.action,
  actorType: a.actorType,
  actorId: a.actorId,
  resourceType: a.resourceType,
  resourceId: a.resourceId,
  method: a.method,
  path: a.path,
  statusCode: a.statusCode,
  idempotencyKey: a.idempotencyKey,
  requestId: a.requestId,
  createdAt: isoAt(a.createdAt)
})

export class AuditTrail extends Context.Service<
  AuditTrail,
  {
    /** The gateway's hook: called once per answered exchange; never fails (a failure is logged). */
    readonly observe: (request: EngineRequest, seen: Observed, response: EngineResponse) => Effect.Effect<void>
    /** The rows recording an answer of `partition` reads (its usage counts not yet written), for `prefetch` (E-405). */
    readonly reads: (partition: string) => ReadonlyArray<Hint>
    readonly list: (principal: Principal, query: AuditQuery) => Effect.Effect<Schemas["AuditList"], ApiFailure | StoreError>
  }
>()("sokoni/AuditTrail") {
  static readonly make = Effect.gen(function* () {
    const store = yield* Store
    const clock = yield* EngineClock
    const usage = yield* UsageMeter
    const events = yield* EventLog

    /** The partitions a control action touched (none when its target is gone). */
    const controlPartitions = (rule: ControlRule, params: Readonly<Record<string, string>>, body: unknown, answer: unknown) =>
      store.read((tx: ReadTx) =>
        Effect.gen(function* () {
          const answered = typeof answer === "object" && answer !== null ? (answer as { partnerId?: unknown }).partnerId : undefined
          const partnerId = rule.scope === "answer-partner-production" ? (typeof answered === "string" ? answered : undefined) : params.partnerId
          switch (rule.scope) {
            case "partner-both":
              return partnerId === undefined ? [] : [partitionOf(partnerId, "sandbox"), partitionOf(partnerId, "production")]
            case "partner-production":
            case "answer-partner-production":
              return partnerId === undefined ? [] : [partitionOf(partnerId, "production")]
            case "partner-body-environment": {
              const environment = typeof body === "object" && body !== null ? (body as { environment?: unknown }).environment : undefined
              return partnerId === undefined || (environment !== "sandbox" && environment !== "production") ? [] : [partitionOf(partnerId, environment)]
            }
            case "subAccount": {
              const id = params.userId
              if (id === undefined) return []
              const doc = yield* SubAccounts.getDoc(tx, id)
              return Option.match(doc, { onNone: () => [], onSome: (d) => [basePartition(d.partition)] })
            }
          }
        })
      )

    /** The stored record numbered `seq`. */
    const auditDoc = (seq: number, record: Omit<AuditDoc, "auditId">): Doc => {
      const auditId = `aud_${String(seq).padStart(8, "0")}`
      // Its fields named, not spread: a spread left most of them in a property array of their own, an object and
      // some 50 bytes more for every record the log keeps for good (E-486).
      const body: AuditDoc = {
        auditId,
        partition: record.partition,
        action: record.action,
        actorType: record.actorType,
        actorId: record.actorId,
        resourceType: record.resourceType,
        resourceId: record.resourceId,
        method: record.method,
        path: record.path,
        statusCode: record.statusCode,
        idempotencyKey: record.idempotencyKey,
        requestId: record.requestId,
        createdAt: record.createdAt
      }
      return { id: auditId, partition: record.partition, sortKey: timeSortKey(record.createdAt, auditId), body }
    }
    const put = (tx: Tx, record: Omit<AuditDoc, "auditId">) =>
      Effect.flatMap(tx.nextId(AUDIT_COUNTER), (seq) => tx.put(AuditRecords.name, auditDoc(seq, record)))

    const writeIn = Effect.fnUntraced(function* (tx: Tx, records: ReadonlyArray<Omit<AuditDoc, "auditId">>) {
      // A partner's request writes one record: no set of partitions to build for it.
      const partitions = records.length === 1 ? records.map((r) => r.partition) : [...new Set(records.map((r) => r.partition))]
      for (const partition of partitions) yield* tx.lockPartition(partition)
      // Usage counts held in memory for these partitions ride along on this write (E-141); other partners' wait
      // for their own writes, so this one locks nothing else (E-320).
      yield* usage.flush(tx, partitions)
      // The record's number and its write in this generator, not one of its own per record (issue 25).
      for (const record of records) yield* putHere(tx, AuditRecords.name, auditDoc(yield* tx.nextId(AUDIT_COUNTER), record))
    })
    const write = (records: ReadonlyArray<Omit<AuditDoc, "auditId">>) => store.transact((tx) => writeIn(tx, records))

    // The desk's decisions, in the transaction that made them.
    yield* events.onAppend((tx, event) => {
      const rule = SYSTEM_EVENTS[event.name]
      const payload = (typeof event.payload === "object" && event.payload !== null ? event.payload : {}) as Record<string, unknown>
      if (rule === undefined || (rule.when !== undefined && !rule.when(payload))) return Effect.void
      return put(tx, {
        partition: basePartition(event.partition),
        action: rule.action,
        actorType: "system",
        actorId: "system",
        resourceType: "order",
        resourceId: typeof payload.orderId === "string" ? payload.orderId : null,
        method: null,
        path: null,
        statusCode: null,
        idempotencyKey: null,
        requestId: null,
        createdAt: event.timestamp
      })
    })

    const observe = (request: EngineRequest, seen: Observed, response: EngineResponse): Effect.Effect<void> => {
      const principal = seen.principal
      const route = seen.route
      // The sandbox reset wipes the partition's usage too: what was counted before it goes with it.
      if (route?.operationId === "resetSandbox" && principal !== undefined && response.status < 300) usage.forget(principal.partition)
      if (principal !== undefined && seen.at !== undefined) usage.count(principal.partition, seen.at, response.status)
      // Reads, refusals and replays end here, with no allocation beyond the count: this runs on every request.
      if (route === undefined || request.method === "GET" || response.status >= 300 || response.headers["idempotent-replayed"] === "true") return Effect.void
      return record(request, seen, response, route)
    }

    /** The fields every record of an exchange shares: what was asked, how it was answered, when. */
    type Common = Pick<AuditDoc, "method" | "path" | "statusCode" | "idempotencyKey" | "requestId" | "createdAt">

    /** A control-API action on a partner's state: one record per partition it touched, the operator or compliance acting. */
    const recordControl = (request: EngineRequest, rule: ControlRule, params: Readonly<Record<string, string>>, answer: unknown, common: Common) =>
      Effect.gen(function* () {
        const body = parsed(request.body)
        const partitions = yield* controlPartitions(rule, params, body, answer)
        if (partitions.length === 0) return
        const action = typeof rule.action === "string" ? rule.action : rule.action(body)
        const resourceId = resourceIdOf(rule, params, answer)
        const actorId = rule.actorType === "system" ? "system" : "compliance"
        yield* write(
          partitions.map((partition) => ({ partition, action, actorType: rule.actorType, actorId, resourceType: rule.resourceType, resourceId, ...common }))
        )
      })

    /** A portal operation: the member behind the verified ID token acting, in the partner its application belongs to. */
    const recordPortal = (request: EngineRequest, portal: PortalRule, params: Readonly<Record<string, string>>, answer: unknown, common: Common) =>
      Effect.gen(function* () {
        const uid = tokenSubject(request.headers.authorization)
        if (uid === undefined) return
        const partnerId = yield* store.read((tx) =>
          Effect.gen(function* () {
            const pointer = yield* ApplicationsByUid.get(tx, uid)
            if (Option.isNone(pointer)) return undefined
            const application = yield* Applications.get(tx, pointer.value.applicationId)
            return Option.isSome(application) ? (application.value.partnerId ?? undefined) : undefined
          })
        )
        if (partnerId === undefined) return
        const sent = portal.requestField === undefined ? undefined : parsed(request.body)
        const named = sent === undefined ? undefined : (sent as Record<string, unknown> | null)?.[portal.requestField ?? ""]
        const resourceId = typeof named === "string" ? namedResource(named) : resourceIdOf(portal, params, answer)
        yield* write([
          {
            partition: partitionOf(partnerId, portal.environment),
            action: typeof portal.action === "string" ? portal.action : portal.action(sent),
            actorType: "portal_member",
            actorId: redactText(uid),
            resourceType: portal.resourceType,
            resourceId,
            ...common
          }
        ])
      })

    const record: (request: EngineRequest, seen: Observed, response: EngineResponse, route: NonNullable<Observed["route"]>) => Effect.Effect<void> =
      Effect.fnUntraced(
        function* (request: EngineRequest, seen: Observed, response: EngineResponse, route: NonNullable<Observed["route"]>) {
          const now = yield* clock.nowHere()
          const principal = seen.principal
          const params = seen.params ?? {}
          const common: Common = {
            method: request.method,
            path: redactText(request.path),
            statusCode: response.status,
            idempotencyKey: clientText(request.headers["idempotency-key"], 200),
            requestId: clientText(request.headers["x-request-id"], 200),
            createdAt: now
          }
          const answer = response.value ?? parsed(response.body)
          if (route.mount === "control") {
            const rule = CONTROL_ACTIONS[route.operationId]
            if (rule !== undefined) yield* recordControl(request, rule, params, answer, common)
            return
          }
          const portal = PORTAL_ACTIONS[route.operationId]
          if (portal !== undefined) return yield* recordPortal(request, portal, params, answer, common)
          if (principal === undefined) return
          const rule = PARTNER_ACTIONS[route.operationId] ?? { action: route.operationId, resourceType: "other" }
          const credential = principal.credential
          yield* write([
            {
              partition: principal.partition,
              action: typeof rule.action === "string" ? rule.action : rule.action(parsed(request.body)),
              actorType: credential?.kind ?? "api_key",
              actorId: credential === undefined ? "unknown" : maskedKey(credential.last4),
              resourceType: rule.resourceType,
              resourceId: rule.field === "" ? null : resourceIdOf(rule, params, answer),
              ...common
            }
          ])
        },
        Effect.catchCause((cause) => Effect.logError("could not record the exchange in the audit log", cause))
      )

    const list = Effect.fn("AuditTrail.list")(function* (principal: Principal, query: AuditQuery) {
      const limit = yield* liftFailure(checkLimit(query.limit, 50, 200))
      const { from, to } = query
      if (from !== undefined && to !== undefined && from > to)
        return yield* Effect.fail(fail("VALIDATION_ERROR", "from must not be after to", { param: "from" }))
      const scope = scopeOf("audit", principal.partition, [from, to, query.action, query.resourceType])
      // Newest first: start below the cursor's key, or just past `to`.
      let after = to === undefined ? undefined : String(to + 1).padStart(15, "0")
      if (query.cursor !== undefined) after = yield* liftFailure(decodeCursor(scope, query.cursor))
      const scanned = yield* store.read((tx) => AuditRecords.listDocs(tx, { partition: principal.partition, after, limit: SCAN_LIMIT + 1, order: "desc" }))
      const records: Array<AuditDoc> = []
      let lastKey: string | undefined
      let more = false
      for (const [i, doc] of scanned.entries()) {
        const record = doc.body
        if (from !== undefined && record.createdAt < from) break
        if (i === SCAN_LIMIT || records.length === limit) {
          more = true
          break
        }
        lastKey = doc.sortKey
        if ((query.action === undefined || record.action === query.action) && (query.resourceType === undefined || record.resourceType === query.resourceType))
          records.push(record)
      }
      const answer: Schemas["AuditList"] = {
        records: records.map(auditToWire),
        count: records.length,
        hasMore: more,
        nextCursor: more && lastKey !== undefined ? encodeCursor(scope, lastKey) : null
      }
      return answer
    })

    return AuditTrail.of({ observe, reads: usage.reads, list })
  })

  static readonly layer = Layer.effect(AuditTrail, AuditTrail.make)
}
