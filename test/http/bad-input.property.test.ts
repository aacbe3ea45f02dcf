/**
 * Property: no generated bad request gets anything but a 4xx the contract declares for its operation, in the error
 * envelope, and none changes the store. Over 2,000 requests spread over every implemented operation (stocks,
 * quote, trade, orders, getOrder on production, the status route, the control API) and wrong methods: wrong types,
 * missing fields, huge values, odd encodings (bad percent-escapes, unicode), deep nesting, garbage content types,
 * duplicated and absurd headers, bad Idempotency-Keys and cursors.
 *
 * The harness's `call` already throws when an answer breaks spec/openapi.yaml or spec/control.yaml. "Unchanged" is
 * observed as: every partner's order list in both environments, the desk queue and the trace's event lines equal
 * before and after; each wallet answers a 0.01 credit with exactly its old balance + 0.01; the open quote the bad
 * trades aimed at still places an order; and no quote was issued (advancing past the TTL expires none).
 * A failure prints fast-check's seed and counterexample; FC_SEED=<seed> replays it.
 */
import fc from "fast-check"
import { afterAll, describe, expect, it } from "vitest"
import { CONTROL_OPERATIONS, PARTNER_OPERATIONS } from "../../engine/contract/catalogue.gen.ts"
import { startEngine } from "./harness.ts"

const SANDBOX = "/api/sandbox/v1/partner"
const PROD = "/api/v1/partner"
const FC_SEED = process.env.FC_SEED === undefined ? undefined : Number(process.env.FC_SEED)

const declared = (operationId: string) => {
  const row = [...PARTNER_OPERATIONS, ...CONTROL_OPERATIONS].find((o) => o.operationId === operationId)
  if (row === undefined) throw new Error(`no operation ${operationId}`)
  return row.statuses as ReadonlyArray<number>
}

interface BadRequest {
  readonly operationId: string | undefined
  readonly method: string
  readonly path: string
  readonly headers: Record<string, string>
  readonly rawBody?: string
}

type Env = "sandbox" | "production"
interface Partner {
  readonly partnerId: string
  readonly sandboxKey: string
  readonly liveKey: string
}

/** An engine with two enterprise partners, a pending order in each environment and one open BUY 10 SCOM quote. */
const world = async () => {
  const engine = startEngine()
  const partner = async (name: string) => {
    const r = await engine.admin("POST", "/_sim/partners", { businessName: name, email: `${name.toLowerCase()}@p.test`, tier: "enterprise" })
    expect(r.status).toBe(201)
    return r.body as Partner
  }
  const a = await partner("Alpha")
  const b = await partner("Beta")
  for (const p of [a, b])
    expect((await engine.admin("POST", `/_sim/partners/${p.partnerId}/wallet/credit`, { environment: "production", amount: 1000 })).status).toBe(200)
  const keyOf = (p: Partner, env: Env) => (env === "sandbox" ? p.sandboxKey : p.liveKey)
  const base = (env: Env) => (env === "sandbox" ? SANDBOX : PROD)
  const place = async (env: Env, quantity: number, key: string) => {
    const headers = { "x-api-key": keyOf(a, env) }
    const q = await engine.call("GET", `${base(env)}/quote/SCOM?side=BUY&quantity=${quantity}`, { headers })
    const r = await engine.call("POST", `${base(env)}/trade`, {
      headers: { ...headers, "idempotency-key": key },
      body: { symbol: "SCOM", type: "BUY", quantity, quoteId: q.body.quoteId }
    })
    expect(r.status).toBe(202)
    return r.body.orderId as string
  }
  const sandboxOrder = await place("sandbox", 2, "setup-key-sandbox")
  const prodOrder = await place("production", 1, "setup-key-production")
  const open = await engine.call("GET", `${SANDBOX}/quote/SCOM?side=BUY&quantity=10`, { headers: { "x-api-key": a.sandboxKey } })
  expect(open.status).toBe(200)
  return { engine, a, b, keyOf, base, sandboxOrder, prodOrder, quoteId: open.body.quoteId as string }
}
type World = Awaited<ReturnType<typeof world>>

const observe = async (w: World) => {
  const lists: Array<unknown> = []
  for (const p of [w.a, w.b])
    for (const env of ["sandbox", "production"] as const)
      lists.push((await w.engine.call("GET", `${w.base(env)}/orders`, { headers: { "x-api-key": w.keyOf(p, env) } })).body)
  const queue = (await w.engine.admin("GET", "/_sim/desk/queue")).body
  const events = String((await w.engine.admin("GET", "/_sim/trace")).body)
    .split("\n")
    .filter((l) => l.includes('"kind":"event"'))
  return { lists, queue, events }
}

const balances = async (w: World) => {
  const out: Array<number> = []
  for (const p of [w.a, w.b])
    for (const environment of ["sandbox", "production"]) {
      const r = await w.engine.admin("POST", `/_sim/partners/${p.partnerId}/wallet/credit`, { environment, amount: 0.01 })
      expect(r.status).toBe(200)
      out.push(Math.round(r.body.newBalance * 100))
    }
  return out
}

// ---- generators -------------------------------------------------------------------------------------------------

/** Printable Latin-1 (what a header value may carry), no leading/trailing blanks to be trimmed away. */
const headerText = (max: number) =>
  fc
    .string({
      unit: fc
        .integer({ min: 0x21, max: 0xff })
        .filter((c) => c !== 0x7f && (c < 0x80 || c >= 0xa1))
        .map((c) => String.fromCharCode(c)),
      maxLength: max
    })
    .filter((s) => s.length > 0)

const oddText = fc.oneof(
  fc.constantFrom(
    "%",
    "%ZZ",
    "%E0%A4%A",
    "%C0%AF",
    "%FF%FE",
    "%00",
    "%F0%9F%92%A9",
    "%EF%BF%BF",
    "%ED%A0%80",
    "\u{1F4A9}",
    "١٢٣",
    "ＡＢＣ",
    "a%20b",
    "+",
    "null"
  ),
  fc.string({ unit: "grapheme", minLength: 1, maxLength: 12 }).map(encodeURIComponent),
  fc.string({ unit: "binary", minLength: 1, maxLength: 12 }).map((s) => encodeURIComponent(s.replace(/[\uD800-\uDFFF]/g, "x")))
)
const badInteger = fc.oneof(
  fc.constantFrom("", "abc", "0", "-1", "1.5", "1e3", " 1", "0x10", "NaN", "Infinity", "99999999999999999999", "١", "1,0"),
  fc.integer({ min: 201, max: 1_000_000 }).map(String),
  fc.integer({ max: 0 }).map(String),
  oddText
)
const badDecimal = fc.constantFrom("", "abc", "0", "-1", "-0.5", "0.001", "1.999", "1e3", ".5", "5.", "NaN", "%F0%9F%92%A9", "1,5", "99999999999999999")
const badDate = fc.constantFrom(
  "",
  "2026-02-30",
  "2026-02-29",
  "2026-13-01",
  "2026-00-10",
  "2026-04-31",
  "yesterday",
  "2026-11-23T08:00:00",
  "2026-11-23T24:00Z",
  "23/11/2026",
  "%E0%A4%A"
)
const garbageCursor = fc.oneof(fc.constant(""), headerText(40).map(encodeURIComponent), oddText, fc.constant("eyJ4IjoxfQ"))
const unknownParam = fc.tuple(fc.constantFrom("page", "foo", "LIMIT", "Status", "%F0%9F%92%A9", "a[b]", "__proto__"), fc.oneof(oddText, fc.constant("1")))

/** A query string from pairs, extras mixed in at random places (never a known name twice). */
const queryOf = (pairs: ReadonlyArray<readonly [string, string]>) => (pairs.length === 0 ? "" : `?${pairs.map(([k, v]) => `${k}=${v}`).join("&")}`)
const withExtras = (bad: fc.Arbitrary<ReadonlyArray<readonly [string, string]>>) =>
  fc.tuple(bad, fc.array(unknownParam, { maxLength: 3 })).chain(([b, extra]) => fc.shuffledSubarray([...b, ...extra], { minLength: b.length + extra.length }))

/** Noise headers that must not change the outcome, plus absurd ones. */
const noise = fc.dictionary(
  fc.constantFrom("accept", "accept-language", "user-agent", "x-forwarded-for", "x-request-id", "x-noise", "cache-control", "if-none-match", "origin"),
  headerText(200),
  { maxKeys: 3 }
)

/** How the request authenticates: mostly the right key, sometimes none, a wrong one, or a duplicated header. */
const credential = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom("bearer", "x-api-key") },
  { weight: 1, arbitrary: fc.constantFrom("none", "garbage", "other-env", "duplicated", "bearer-empty", "basic") }
)
const authHeaders = (kind: string, key: string, other: string): Record<string, string> => {
  switch (kind) {
    case "bearer":
      return { authorization: `Bearer ${key}` }
    case "x-api-key":
      return { "x-api-key": key }
    case "garbage":
      return { "x-api-key": "sk_sandbox_not_a_key" }
    case "other-env":
      return { "x-api-key": other }
    case "duplicated":
      return { "x-api-key": `${key}, ${key}` }
    case "bearer-empty":
      return { authorization: "Bearer " }
    case "basic":
      return { authorization: `Basic ${Buffer.from(`${key}:`).toString("base64")}` }
    default:
      return {}
  }
}

const contentTypes = fc.constantFrom(
  "application/json",
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/json; charset=latin1",
  "application/xml",
  "garbage",
  "",
  "application/json, application/json"
)

/** Wraps a JSON text `levels` deep. */
const deep = (levels: number, inner: string) => `${'{"a":'.repeat(levels)}${inner}${"}".repeat(levels)}`

/** Serialisations of a body: as JSON, or broken, or buried, or padded. */
const serialise = (body: unknown) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constant(JSON.stringify(body)) },
    { weight: 1, arbitrary: fc.integer({ min: 33, max: 5000 }).map((n) => deep(n, JSON.stringify(body))) },
    { weight: 1, arbitrary: fc.integer({ min: 33, max: 5000 }).map((n) => `${"[".repeat(n)}${"]".repeat(n)}`) },
    { weight: 1, arbitrary: fc.constant(JSON.stringify(body).slice(0, -1)) },
    { weight: 1, arbitrary: fc.constantFrom("", "null", "[]", "42", '"text"', "symbol=SCOM&type=BUY", "<trade/>", "\u0000", "{'a':1}") }
  )

const pickEnv = fc.constantFrom<Env>("sandbox", "production")

const request = (w: World, operationId: string | undefined, method: string, env: Env, path: string, extra: Record<string, string>, rawBody?: string) =>
  fc.tuple(credential, fc.constantFrom(w.a, w.b), noise).map(([kind, p, n]): BadRequest => {
    const key = w.keyOf(p, env)
    const other = w.keyOf(p, env === "sandbox" ? "production" : "sandbox")
    return {
      operationId,
      method,
      path: `${w.base(env)}${path}`,
      headers: { ...n, ...authHeaders(kind, key, other), ...extra },
      ...(rawBody === undefined ? {} : { rawBody })
    }
  })

const stocks = (w: World) => {
  const bad = fc.oneof(
    badInteger.map((v) => [["limit", v]] as const),
    fc.constantFrom("stock", "etf", "BOND", "", "STOCK,ETF", "%E0%A4%A").map((v) => [["assetType", v]] as const),
    garbageCursor.map((v) => [["cursor", v]] as const),
    fc.constantFrom("exchange", "sector", "search").map((k) => [[k, ""]] as const)
  )
  return fc.tuple(pickEnv, withExtras(bad)).chain(([env, pairs]) => request(w, "listStocks", "GET", env, `/stocks${queryOf(pairs)}`, {}))
}

const quote = (w: World) => {
  const badSymbol = fc.oneof(fc.constantFrom("ZZZZ", "S", "!!", "SCOM.XX", "A".repeat(300), "%E0%A4%A", "%2F", "scom%00"), oddText)
  const badParam = fc.oneof(
    fc.constantFrom("buy", "sell", "", "HOLD", "BUY,SELL").map((v) => [["side", v]] as const),
    badInteger.filter((v) => !/^\d+$/.test(v) || Number(v) === 0).map((v) => [["quantity", v]] as const),
    badDecimal.map((v) => [["cashValue", v]] as const),
    fc.constant([
      ["quantity", "5"],
      ["cashValue", "5"]
    ] as const),
    fc.oneof(fc.constantFrom("", "usr_missing", "master2"), oddText).map((v) => [["subAccountId", v]] as const),
    fc.constantFrom("ZZZ", "", "%00", "NSEX").map((v) => [["exchange", v]] as const)
  )
  const good = fc.constantFrom(
    [],
    [["side", "BUY"]],
    [["quantity", "5"]],
    [
      ["side", "SELL"],
      ["cashValue", "10"]
    ]
  ) as fc.Arbitrary<ReadonlyArray<readonly [string, string]>>
  const target = fc.oneof(
    fc.tuple(fc.constantFrom("SCOM", "KCB", "EQTY", "NPN"), withExtras(badParam)),
    fc.tuple(badSymbol, fc.oneof(good, withExtras(badParam)))
  )
  return fc.tuple(pickEnv, target).chain(([env, [symbol, pairs]]) => request(w, "getQuote", "GET", env, `/quote/${symbol}${queryOf(pairs)}`, {}))
}

/** A mutation that makes the valid trade on the open quote bad (invalid, or not matching the quote). */
const tradeMutation = fc.oneof(
  fc.constantFrom("symbol", "type").map((k) => (b: Record<string, unknown>) => {
    delete b[k]
  }),
  fc.constant((b: Record<string, unknown>) => {
    delete b.quoteId
  }),
  fc
    .tuple(
      fc.constantFrom("symbol", "type", "quantity", "cashValue", "quoteId", "limitPrice", "clientOrderId", "orderType", "timeInForce"),
      fc.constantFrom<unknown>(5, "10", null, [], {}, true, -0.5, "")
    )
    // a string of at most 64 characters is a valid clientOrderId; 5 would be a fine limitPrice or quantity
    .filter(([k, v]) => !(k === "clientOrderId" && typeof v === "string") && !((k === "quantity" || k === "limitPrice") && v === 5))
    .map(([k, v]) => (b: Record<string, unknown>) => {
      b[k] = v
    }),
  fc.constantFrom("buy", "Buy", "HOLD", "SELL").map((v) => (b: Record<string, unknown>) => {
    b.type = v
  }),
  fc.constantFrom("market", "LIMIT", "STOP", "X").map((v) => (b: Record<string, unknown>) => {
    b.orderType = v
  }),
  fc.constantFrom<unknown>(0, -1, 1.5, 1e300, 11, 9, Number.MAX_SAFE_INTEGER + 2, 999_999_999_999_999).map((v) => (b: Record<string, unknown>) => {
    b.quantity = v
  }),
  fc.constantFrom(0, -5, 1.001, 500, 1e300).map((v) => (b: Record<string, unknown>) => {
    b.cashValue = v
  }),
  fc
    .oneof(fc.constantFrom("qt_nope", "", "x".repeat(500)), fc.string({ unit: "grapheme", minLength: 1, maxLength: 10 }))
    .map((v) => (b: Record<string, unknown>) => {
      b.quoteId = v
    }),
  // symbols resolve case-insensitively (`scom`, `SCOM.NSE` name the quoted listing): none of those here
  fc
    .oneof(fc.constantFrom("ZZZZ", "KCB", "", "\u{1F4A9}", "SCOM.JSE", "A".repeat(100)), fc.string({ maxLength: 8 }))
    .filter((v) => !["SCOM", "SCOM.NSE"].includes(v.toUpperCase()))
    .map((v) => (b: Record<string, unknown>) => {
      b.symbol = v
    }),
  fc
    .constantFrom<[string, unknown]>(["timeInForce", "day"], ["expiresAt", 5], ["clientOrderId", "x".repeat(65)], ["exchange", "ZZZ"], ["exchange", 3])
    .map(([k, v]) => (b: Record<string, unknown>) => {
      b[k] = v
    })
)

const trade = (w: World) => {
  let n = 0
  const validKey = fc.constant(undefined).map(() => `prop-key-${String(++n).padStart(6, "0")}`)
  const badKey = fc.oneof(
    fc.string({ unit: fc.constantFrom("a", "b", "1", "-"), minLength: 1, maxLength: 7 }),
    fc.integer({ min: 201, max: 400 }).map((l) => "k".repeat(l)),
    fc.constant("")
  )
  const mutated = fc
    .tuple(fc.array(tradeMutation, { minLength: 1, maxLength: 3 }), fc.option(fc.integer({ min: 1_000, max: 30_000 }), { freq: 8 }))
    .map(([mutations, pad]) => {
      const body: Record<string, unknown> = { symbol: "SCOM", type: "BUY", quantity: 10, quoteId: w.quoteId }
      for (const m of mutations) m(body)
      if (pad !== null) body.note = "\u00e9\u{1F4A9}".repeat(pad / 3)
      return body
    })
  const valid = { symbol: "SCOM", type: "BUY", quantity: 10, quoteId: w.quoteId }
  const shape = fc.oneof(
    // a bad body under a good key
    { weight: 5, arbitrary: fc.tuple(mutated.chain(serialise), validKey) },
    // a valid body (or one only broken in transit) under a bad key
    { weight: 2, arbitrary: fc.tuple(fc.oneof(fc.constant(JSON.stringify(valid)), serialise(valid)), badKey) },
    // a valid body broken in transit under a good key
    {
      weight: 1,
      arbitrary: fc.tuple(
        serialise(valid).filter((s) => s !== JSON.stringify(valid)),
        validKey
      )
    }
  )
  return fc
    .tuple(fc.constantFrom<Env>("sandbox", "sandbox", "production"), shape, contentTypes, fc.boolean())
    .chain(([env, [rawBody, key], contentType, forceGarbage]) =>
      request(
        w,
        "placeTrade",
        "POST",
        env,
        "/trade",
        {
          "content-type": contentType,
          ...(key === undefined ? {} : { "idempotency-key": key }),
          ...(forceGarbage ? { "x-sandbox-force-status": "418" } : {})
        },
        rawBody
      )
    )
}

const orders = (w: World) => {
  const bad = fc.oneof(
    fc.constantFrom("filled", "pending", "", "DONE", "FILLED,PENDING", "%E0%A4%A").map((v) => [["status", v]] as const),
    fc.tuple(fc.constantFrom("from", "to"), badDate).map(([k, v]) => [[k, v]] as const),
    badInteger.map((v) => [["limit", v]] as const),
    garbageCursor.map((v) => [["cursor", v]] as const),
    fc.constant([["symbol", ""]] as const)
  )
  return fc.tuple(pickEnv, withExtras(bad)).chain(([env, pairs]) => request(w, "listOrders", "GET", env, `/orders${queryOf(pairs)}`, {}))
}

const getOrder = (w: World) => {
  const missing = fc
    .oneof(fc.constantFrom("ord_missing", "ORD", "%2F", "%E0%A4%A", "%00", "x".repeat(2000), "null"), oddText)
    .filter((id) => !/^(\.|%2e)+$/i.test(id) && id !== "blotter")
  return fc.oneof(
    // production: ids that are not this partner's order
    fc.tuple(missing, fc.constant(false)).chain(([id]) => request(w, "getOrder", "GET", "production", `/orders/${id}`, {})),
    fc.tuple(fc.constantFrom(w.sandboxOrder, w.prodOrder), credential).map(
      ([id, kind]): BadRequest => ({
        operationId: "getOrder",
        method: "GET",
        path: `${PROD}/orders/${id}`,
        headers: authHeaders(kind, w.b.liveKey, w.b.sandboxKey)
      })
    ),
    fc.tuple(pickEnv).chain(() => request(w, "getOrder", "GET", "production", `/orders/${w.sandboxOrder}`, {})),
    // sandbox: getOrder is production-only (403), whatever the id
    fc.oneof(missing, fc.constant(w.sandboxOrder)).chain((id) => request(w, "getOrder", "GET", "sandbox", `/orders/${id}`, {}))
  )
}

const ADMIN_TOKEN = "test-admin"
const control = (w: World) => {
  const badAuth = fc.constantFrom<Record<string, string>>(
    {},
    { authorization: "Bearer wrong" },
    { authorization: "test-admin" },
    { authorization: "Basic dGVzdC1hZG1pbg==" },
    { "x-api-key": ADMIN_TOKEN }
  )
  const anyRoute = fc.constantFrom(
    ["getSimClock", "GET", "/_sim/clock"],
    ["getSimDeskQueue", "GET", "/_sim/desk/queue"],
    ["getSimTrace", "GET", "/_sim/trace"],
    ["getSimTraceHash", "GET", "/_sim/trace/hash"],
    ["advanceSimClock", "POST", "/_sim/clock/advance"],
    ["createSimPartner", "POST", "/_sim/partners"],
    ["creditSimMasterWallet", "POST", `/_sim/partners/${w.a.partnerId}/wallet/credit`],
    ["fillSimOrder", "POST", `/_sim/desk/orders/${w.sandboxOrder}/fill`],
    ["rejectSimOrder", "POST", `/_sim/desk/orders/${w.sandboxOrder}/reject`],
    ["failSimOrderSettlement", "POST", `/_sim/desk/orders/${w.sandboxOrder}/fail-settlement`],
    ["getSimDeskPolicy", "GET", "/_sim/desk/policy"],
    ["setSimDeskPolicy", "PUT", "/_sim/desk/policy"]
  )
  // without the admin token, even a valid body is refused
  const unauthorised = fc.tuple(anyRoute, badAuth).map(
    ([[op, method, path], headers]): BadRequest => ({
      operationId: op,
      method,
      path,
      headers,
      ...(method === "POST"
        ? {
            rawBody: JSON.stringify({
              seconds: 60,
              businessName: "Sneaky",
              email: "s@s.test",
              environment: "sandbox",
              amount: 5,
              price: 1,
              rejectionCode: "X",
              rejectionReason: "y"
            })
          }
        : {})
    })
  )
  /** `optional`: the contract makes the body optional, so an empty one is a request with no body, not a bad one (E-310). */
  const body = (op: string, path: string, bodies: fc.Arbitrary<unknown>, method = "POST", optional = false) =>
    fc.tuple(optional ? bodies.chain(serialise).filter((raw) => raw !== "") : bodies.chain(serialise), contentTypes).map(
      ([rawBody, contentType]): BadRequest => ({
        operationId: op,
        method,
        path,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": contentType },
        rawBody
      })
    )
  const partners = body(
    "createSimPartner",
    "/_sim/partners",
    fc.constantFrom<unknown>(
      {},
      { businessName: "Ok Partner" },
      { businessName: "X", email: "x@x.test" },
      { businessName: 5, email: "x@x.test" },
      { businessName: "Ok Partner", email: "nope" },
      { businessName: "Ok Partner", email: "" },
      { businessName: "Ok Partner", email: "x@x.test", tier: "STARTER" },
      { businessName: "Ok Partner", email: "x@x.test", markupBps: 1001 },
      { businessName: "Ok Partner", email: "x@x.test", markupBps: 1.5 },
      { businessName: "Ok Partner", email: "x@x.test", markupBps: "5" }
    )
  )
  const credit = fc.oneof(
    body(
      "creditSimMasterWallet",
      `/_sim/partners/${w.a.partnerId}/wallet/credit`,
      fc.constantFrom<unknown>(
        {},
        { environment: "sandbox" },
        { amount: 5 },
        { environment: "SANDBOX", amount: 5 },
        { environment: "test", amount: 5 },
        { environment: "sandbox", amount: 0 },
        { environment: "sandbox", amount: -1 },
        { environment: "sandbox", amount: 0.001 },
        { environment: "sandbox", amount: "5" },
        { environment: "sandbox", amount: 1e20 },
        { environment: "production", amount: null }
      )
    ),
    fc
      .oneof(fc.constantFrom("ptn_missing", "%E0%A4%A", "%00"), oddText)
      .chain((id) => body("creditSimMasterWallet", `/_sim/partners/${id}/wallet/credit`, fc.constant({ environment: "sandbox", amount: 5 })))
  )
  const advance = body(
    "advanceSimClock",
    "/_sim/clock/advance",
    fc.constantFrom<unknown>(
      {},
      { seconds: 0 },
      { seconds: -5 },
      { seconds: "60" },
      { seconds: null },
      { seconds: 60, to: "2026-11-23T09:00:00Z" },
      { to: "yesterday" },
      { to: "" },
      { to: "2020-01-01T00:00:00Z" },
      { to: 5 }
    )
  )
  const fillOrReject = fc.oneof(
    body(
      "fillSimOrder",
      `/_sim/desk/orders/${w.sandboxOrder}/fill`,
      fc.constantFrom<unknown>(
        { price: 0 },
        { price: -1 },
        { price: "18" },
        { quantity: 0 },
        { quantity: 1.5 },
        { quantity: "1" },
        { price: 18, quantity: -1 }
      ),
      "POST",
      true
    ),
    body(
      "rejectSimOrder",
      `/_sim/desk/orders/${w.sandboxOrder}/reject`,
      fc.constantFrom<unknown>(
        {},
        { rejectionCode: "X" },
        { rejectionReason: "y" },
        { rejectionCode: "", rejectionReason: "y" },
        { rejectionCode: "X", rejectionReason: 5 }
      )
    ),
    fc
      .oneof(fc.constantFrom("ord_missing", "%E0%A4%A"), oddText)
      .chain((id) =>
        fc.oneof(
          body("fillSimOrder", `/_sim/desk/orders/${id}/fill`, fc.constant({})),
          body("rejectSimOrder", `/_sim/desk/orders/${id}/reject`, fc.constant({ rejectionCode: "X", rejectionReason: "y" }))
        )
      )
  )
  const desk = fc.oneof(
    body(
      "setSimDeskPolicy",
      "/_sim/desk/policy",
      fc.constantFrom<unknown>(
        {},
        { mode: "fast" },
        { mode: "auto", delaySeconds: -1 },
        { mode: "auto", delaySeconds: 1.5 },
        { mode: "auto", price: "best" },
        { mode: "manual", delaySeconds: 5 },
        { mode: "random", rejectionRate: 2 },
        { mode: "random", rejectionRate: 0.12345 },
        { mode: "random", rejectionCodes: [] },
        { mode: "random", rejectionCodes: [""] },
        { mode: "random", rejectionRate: 0.7, settlementFailureRate: 0.7 },
        { mode: "scripted" },
        { mode: "scripted", scripts: [] },
        { mode: "scripted", scripts: [{ steps: [] }] },
        { mode: "scripted", scripts: [{ steps: [{ afterSeconds: 1, action: "reject" }] }] },
        { mode: "scripted", scripts: [{ steps: [{ afterSeconds: 1, action: "explode" }] }] },
        { mode: "scripted", scripts: [{ steps: [{ afterSeconds: 1, action: "fill", percent: 101 }] }] },
        {
          mode: "scripted",
          scripts: [
            {
              steps: [
                { afterSeconds: 1, action: "failSettlement" },
                { afterSeconds: 2, action: "fill" }
              ]
            }
          ]
        },
        {
          mode: "scripted",
          scripts: [
            { orderId: "ord_a", steps: [{ afterSeconds: 1, action: "fill" }] },
            { orderId: "ord_a", steps: [{ afterSeconds: 1, action: "fill" }] }
          ]
        }
      ),
      "PUT"
    ),
    // its body is optional (an empty one is `{}`), so only a bad order id is a bad request whatever the body
    fc
      .oneof(fc.constantFrom("ord_missing", "%E0%A4%A"), oddText)
      .chain((id) => body("failSimOrderSettlement", `/_sim/desk/orders/${id}/fail-settlement`, fc.constant({})))
  )
  return fc.oneof(unauthorised, partners, credit, advance, fillOrReject, desk)
}

/** Methods a served path does not take (HEAD is left out: its answer has no body to hold the envelope). */
const wrongMethods = (w: World) => {
  const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
  const paths: ReadonlyArray<readonly [Env | "public", string, ReadonlyArray<string>]> = [
    ["sandbox", "/stocks", ["GET"]],
    ["production", "/quote/SCOM", ["GET"]],
    ["sandbox", "/trade", ["POST"]],
    ["production", "/orders", ["GET"]],
    // DELETE is the contract's cancelOrder: served, so not a wrong method here
    ["production", `/orders/${w.prodOrder}`, ["GET", "DELETE"]],
    ["public", "/status", ["GET"]]
  ]
  return fc
    .constantFrom(...paths)
    .chain(([env, path, served]) =>
      fc.tuple(fc.constant(env), fc.constant(path), fc.constantFrom(...METHODS.filter((m) => !served.includes(m))), fc.option(fc.constant('{"symbol":"SCOM"}')))
    )
    .chain(([env, path, method, body]) =>
      env === "public"
        ? fc.constant<BadRequest>({
            operationId: method === "GET" ? "getServiceStatus" : undefined,
            method,
            path: `/api/v1${path}`,
            headers: { "idempotency-key": "wrong-method-01" },
            ...(body === null || method === "GET" ? {} : { rawBody: body })
          })
        : request(w, undefined, method, env, path, { "idempotency-key": "wrong-method-01" }, body === null || method === "GET" ? undefined : body)
    )
}

// ---- the property -----------------------------------------------------------------------------------------------

let total = 0
let familiesRun = 0
const FAMILIES = 7
const started = Date.now()

const family = (name: string, runs: number, generate: (w: World) => fc.Arbitrary<BadRequest>, minCodes = 2) =>
  it(`${name}: ${runs} bad requests answer a declared 4xx in the envelope and change nothing`, async () => {
    familiesRun++
    const w = await world()
    try {
      const balancesBefore = await balances(w)
      const before = await observe(w)
      const codes = new Map<string, number>()
      await fc.assert(
        fc.asyncProperty(generate(w), async (req) => {
          total++
          const r = await w.engine.call(req.method, req.path, { headers: req.headers, ...(req.rawBody === undefined ? {} : { rawBody: req.rawBody }) })
          const code = r.body?.error?.code
          codes.set(`${r.status} ${code}`, (codes.get(`${r.status} ${code}`) ?? 0) + 1)
          expect(r.status, JSON.stringify(r.body)).toBeGreaterThanOrEqual(400)
          expect(r.status, JSON.stringify(r.body)).toBeLessThan(500)
          // the rate limit must not mask the inputs (the partners are enterprise, 2,000/min)
          expect(r.status).not.toBe(429)
          if (req.operationId !== undefined) expect(declared(req.operationId)).toContain(r.status)
          expect(typeof code).toBe("string")
          expect(typeof r.body.error.message).toBe("string")
          expect(r.body.error.message.length).toBeGreaterThan(5)
          if (code === "MISSING_PARAM" || code === "INVALID_TYPE") expect(typeof r.body.error.param).toBe("string")
        }),
        { numRuns: runs, ...(FC_SEED === undefined ? {} : { seed: FC_SEED }) }
      )
      const after = await observe(w)
      expect(after.lists).toEqual(before.lists)
      expect(after.queue).toEqual(before.queue)
      expect(after.events).toEqual(before.events)
      const balancesAfter = await balances(w)
      expect(balancesAfter).toEqual(balancesBefore.map((c) => c + 1))
      // the quote every bad trade aimed at was not used up
      const ok = await w.engine.call("POST", `${SANDBOX}/trade`, {
        headers: { "x-api-key": w.a.sandboxKey, "idempotency-key": "final-trade-key" },
        body: { symbol: "SCOM", type: "BUY", quantity: 10, quoteId: w.quoteId }
      })
      expect(ok.status).toBe(202)
      // no bad request issued a quote: past the 60 s TTL, none expires
      expect((await w.engine.admin("POST", "/_sim/clock/advance", { seconds: 61 })).status).toBe(200)
      const expired = String((await w.engine.admin("GET", "/_sim/trace")).body)
        .split("\n")
        .filter((l) => l.includes('"quote.expired"'))
      expect(expired).toEqual([])
      // the generator reaches several refusals, not one
      expect(codes.size).toBeGreaterThanOrEqual(minCodes)
    } finally {
      await w.engine.dispose()
    }
  })

describe("bad requests (fast-check)", () => {
  family("GET /stocks", 300, stocks)
  family("GET /quote/{symbol}", 350, quote)
  family("POST /trade", 500, trade)
  family("GET /orders", 300, orders)
  family("GET /orders/{orderId}", 200, getOrder)
  family("control API", 300, control)
  family("wrong methods, status route included", 150, wrongMethods, 1)

  afterAll(() => {
    // the families above ran at least 2,000 generated requests between them (more when fast-check shrank)
    // (checked only when every family ran: a `-t` filter runs fewer)
    // (the count and the time are said when the check fails, not printed into every green run)
    if (familiesRun === FAMILIES) expect(total, `bad-input property: ${total} requests in ${Date.now() - started} ms`).toBeGreaterThanOrEqual(2_000)
  })
})

/**
 * Bad requests this property found that the engine answers 5xx (engine/app and routes code, outside this test's
 * remit). `it.fails` keeps them visible: each passes while the bug is there and fails once it is fixed, so the
 * fixer turns it into a plain `it` (and the generators above can then include these inputs).
 */
describe("known engine bugs found by the property (it.fails until fixed)", () => {
  it("GET /quote/SCOM?quantity=999999999999999 answers 400, not 500 (money overflow in grossCents)", async () => {
    const engine = startEngine()
    try {
      const p = await engine.newPartner()
      const r = await engine.call("GET", `${SANDBOX}/quote/SCOM?quantity=999999999999999`, { headers: { "x-api-key": p.sandboxKey } })
      expect(r.status).toBe(400)
    } finally {
      await engine.dispose()
    }
  })

  it("POST /trade with quantity 999999999999999 on a quote that binds no quantity answers 4xx, not 500", async () => {
    const engine = startEngine()
    try {
      const p = await engine.newPartner()
      const headers = { "x-api-key": p.sandboxKey }
      const q = await engine.call("GET", `${SANDBOX}/quote/SCOM`, { headers })
      const r = await engine.call("POST", `${SANDBOX}/trade`, {
        headers: { ...headers, "idempotency-key": "overflow-key-1" },
        body: { symbol: "SCOM", type: "BUY", quantity: 999_999_999_999_999, quoteId: q.body.quoteId }
      })
      expect(r.status).toBeLessThan(500)
    } finally {
      await engine.dispose()
    }
  })

  it("POST /_sim/clock/advance {seconds: 1e308} answers 400 and leaves the clock usable (today: 500, clock bricked)", async () => {
    const engine = startEngine()
    try {
      const r = await engine.admin("POST", "/_sim/clock/advance", { seconds: 1e308 })
      expect(r.status).toBe(400)
      expect((await engine.admin("GET", "/_sim/clock")).status).toBe(200)
    } finally {
      await engine.dispose()
    }
  })
})
