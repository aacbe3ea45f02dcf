/**
 * The contract covers the prose spec: every operation the spec names (its tables and the "Named elsewhere" list) is
 * under `paths`, every event of the catalogue (aliases included) is under `webhooks`, the designed families the
 * issue lists exist, every `x-decision` points at an entry of docs/decisions.md, and both documents are valid
 * OpenAPI 3.1 (official 3.1 schema shipped with Spectral, JSON Schema 2020-12 meta-schema for every Schema Object,
 * and `redocly lint`).
 */
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { Ajv2020 } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"
import { describe, expect, it } from "vitest"
import { parse } from "yaml"

const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv2020) => void

const root = join(import.meta.dirname, "..", "..")
const load = (file: string) => parse(readFileSync(join(root, file), "utf8")) as Record<string, any>
const doc = load("spec/openapi.yaml")
const control = load("spec/control.yaml")

const METHODS = ["get", "put", "post", "delete", "patch", "head", "options", "trace"] as const

/** Where a spec path lives in the contract: the sandbox root and the status endpoint use path-level servers. */
const contractPath = (specPath: string): { path: string; server?: string } =>
  specPath === "/api/v1/status" ? { path: "/status", server: "/api/v1" } : { path: specPath }

const hasOperation = (method: string, specPath: string) => {
  const { path, server } = contractPath(specPath)
  const item = doc.paths?.[path]
  if (!item) return false
  if (server !== undefined && !(item.servers ?? []).some((s: { url: string }) => s.url === server)) return false
  return method === "*" ? METHODS.some((m) => item[m]) : Boolean(item[method])
}

// Every operation the prose spec names, as written there ("*" = method not shown).
const SPEC_OPERATIONS: ReadonlyArray<readonly [string, string]> = [
  // Key, session and portal operations
  ["post", "/register"],
  ["post", "/session"],
  ["get", "/me"],
  ["post", "/me"],
  ["post", "/upgrade-request"],
  ["post", "/api-keys/revoke"],
  ["post", "/api-keys/data-key"],
  ["post", "/oauth/token"],
  // Sub-accounts and orders
  ["post", "/users"],
  ["get", "/users"],
  ["get", "/users/summary"],
  ["get", "/orders"],
  ["get", "/orders/blotter"],
  ["get", "/orders/{orderId}"],
  // Price alerts
  ["post", "/price-alerts"],
  ["get", "/price-alerts"],
  ["get", "/price-alerts/{alertId}"],
  ["delete", "/price-alerts/{alertId}"],
  // Webhooks
  ["post", "/webhooks"],
  ["get", "/webhooks"],
  ["delete", "/webhooks/{id}"],
  ["post", "/webhooks/{id}/test"],
  ["get", "/webhooks/{id}/deliveries"],
  // Market data
  ["get", "/stocks"],
  ["get", "/market-data/quotes"],
  // Named elsewhere, shape of request and response not shown
  ["get", "/quote/{symbol}"],
  ["post", "/trade"],
  ["post", "/users/{userId}/trade"],
  ["post", "/users/{userId}/deposit"],
  ["post", "/users/{userId}/withdraw"],
  ["post", "/users/{userId}/kyc"],
  ["delete", "/users/{userId}"],
  ["delete", "/orders/{orderId}"],
  ["patch", "/users/{userId}/orders/{orderId}"],
  ["get", "/users/{userId}/orders"],
  ["get", "/users/{userId}/transactions"],
  ["get", "/market/quotes"],
  ["get", "/market/status"],
  ["get", "/market/movers"],
  ["get", "/market-intel"],
  ["get", "/stream"],
  ["*", "/users/{userId}/devices"],
  ["get", "/audit"],
  ["get", "/test-tools/orders"],
  ["post", "/reset"],
  ["get", "/api/v1/status"]
]

// Operations the issue requires beyond the spec's explicit names (designed; see docs/decisions.md).
const DESIGNED_OPERATIONS: ReadonlyArray<readonly [string, string]> = [
  ["post", "/apply"],
  ["post", "/auto-register"],
  ["post", "/users/{userId}/freeze"],
  ["post", "/users/{userId}/unfreeze"],
  ["get", "/reports"],
  ["post", "/reports"],
  ["get", "/reports/{reportId}"],
  ["get", "/usage"],
  ["get", "/settings"],
  ["patch", "/settings"],
  ["post", "/subscriptions"],
  ["post", "/users/{userId}/subscriptions"]
]

// Endpoints the real service publishes (docs/real-service facts, section 9), with whether a data key may call them.
const PUBLISHED_OPERATIONS: ReadonlyArray<readonly [string, boolean]> = [
  ["/stocks/{symbol}/candles", true],
  ["/stocks/{symbol}/history", true],
  ["/market/ohlcv", true],
  ["/market/snapshot", true],
  ["/market/exchanges", true],
  ["/market/holidays", true],
  ["/companies/tickers", true],
  ["/companies/{symbol}/news", true],
  ["/dividends/calendar", true],
  ["/dividends/{symbol}/history", true],
  ["/fx/rates", true],
  ["/corporate-actions", false],
  ["/corporate-actions/{actionId}", false],
  ["/sla", false],
  ["/assets", false]
]

const READ_ONLY_FAMILIES = ["/etfs", "/bonds", "/funds", "/opportunities", "/dividends", "/companies", "/fx"]

const EVENTS = [
  "order.pending",
  "order.filled",
  "trade.settled",
  "order.rejected",
  "trade.rejected",
  "order.cancelled",
  "order.replaced",
  "deposit.confirmed",
  "withdraw.confirmed",
  "wallet.credited",
  "kyc.updated",
  "account.frozen",
  "account.closed",
  "dividend.paid",
  "corporateaction.declared",
  "corporateaction.split",
  "corporateaction.suspension",
  "corporateaction.delisting",
  "corporateaction.rights_issue",
  "corporateaction.symbol_changed",
  "quote.expired",
  "price.alert",
  "market.status",
  "incident.declared",
  "incident.resolved",
  "test.event"
]

const deref = (node: any): any => {
  if (node && typeof node.$ref === "string" && node.$ref.startsWith("#/")) {
    return deref(
      node.$ref
        .slice(2)
        .split("/")
        .reduce((acc: any, key: string) => acc?.[key], doc)
    )
  }
  return node
}

const collect = (node: unknown, key: string, out: unknown[] = []): unknown[] => {
  if (Array.isArray(node)) for (const item of node) collect(item, key, out)
  else if (node && typeof node === "object") {
    for (const [k, v] of Object.entries(node)) {
      if (k === key) out.push(v)
      collect(v, key, out)
    }
  }
  return out
}

describe("the contract covers the spec", () => {
  it.each(SPEC_OPERATIONS)("names %s %s", (method, path) => {
    expect(hasOperation(method, path), `${method.toUpperCase()} ${path} missing from spec/openapi.yaml`).toBe(true)
  })

  it.each(DESIGNED_OPERATIONS)("has the designed operation %s %s", (method, path) => {
    expect(hasOperation(method, path)).toBe(true)
  })

  it("places register and reset at the sandbox root, auto-register on the partner base, status at /api/v1", () => {
    for (const path of ["/register", "/reset"]) {
      expect(doc.paths[path].servers.map((s: { url: string }) => s.url)).toEqual(["/api/sandbox/v1"])
    }
    // D-012 revised (facts 3.2): an API-key call on the partner base, idempotent by uid.
    const autoRegister = doc.paths["/auto-register"]
    expect(autoRegister.servers).toBeUndefined()
    expect(autoRegister.post.security.some((req: Record<string, unknown>) => "apiKeyBearer" in req)).toBe(true)
    expect(autoRegister.post.security.some((req: Record<string, unknown>) => "idToken" in req)).toBe(false)
    expect(deref(autoRegister.post.requestBody.content["application/json"].schema).required).toEqual(["uid"])
    expect(doc.paths["/status"].servers.map((s: { url: string }) => s.url)).toEqual(["/api/v1"])
    expect(doc.servers.map((s: { url: string }) => s.url)).toEqual(["/api/v1/partner", "/api/sandbox/v1/partner"])
  })

  it.each(PUBLISHED_OPERATIONS)("has the published GET %s with a decision, data keys allowed: %s", (path, dataKey) => {
    const op = doc.paths[path]?.get
    expect(op, `GET ${path}`).toBeDefined()
    expect(op["x-decision"]).toMatch(/^D-\d{3}$/)
    expect(op.security.some((req: Record<string, unknown>) => "dataKeyBearer" in req)).toBe(dataKey)
    expect(op.responses["200"].headers["X-RateLimit-Limit"]).toBeDefined()
  })

  it.each(READ_ONLY_FAMILIES)("has list and detail GETs for the read-only family %s, open to data keys", (family) => {
    const list = doc.paths[family]?.get
    const detailPath = Object.keys(doc.paths).find((p) => p.startsWith(`${family}/{`) && p.split("/").length === 3)
    expect(list, `GET ${family}`).toBeDefined()
    expect(detailPath, `GET ${family}/{id}`).toBeDefined()
    for (const op of [list, doc.paths[detailPath!].get]) {
      expect(op.security.some((req: Record<string, unknown>) => "dataKeyBearer" in req)).toBe(true)
    }
  })

  it("aliases every /market/** operation under /market-data/**, deprecated, with the same response schema", () => {
    const marketPaths = Object.keys(doc.paths).filter((p) => p.startsWith("/market/"))
    expect(marketPaths.length).toBeGreaterThanOrEqual(3)
    for (const path of marketPaths) {
      const alias = doc.paths[path.replace("/market/", "/market-data/")]
      expect(alias, `alias of ${path}`).toBeDefined()
      for (const method of METHODS.filter((m) => doc.paths[path][m])) {
        expect(alias[method]?.deprecated, `${method} alias of ${path} deprecated`).toBe(true)
        expect(alias[method].responses["200"].content).toEqual(doc.paths[path][method].responses["200"].content)
      }
    }
  })

  it("offers subscriptions for every asset class the spec names, accepted with 202", () => {
    expect(doc.components.schemas.AssetClass.enum).toEqual(["TREASURY_BILL", "BOND", "FUND", "PRIVATE_CREDIT", "PRE_IPO"])
    expect(doc.paths["/subscriptions"].post.responses["202"]).toBeDefined()
    expect(doc.paths["/users/{userId}/subscriptions"].post.responses["202"]).toBeDefined()
  })

  it.each(EVENTS)("has the event %s under webhooks with the envelope and the signature header", (event) => {
    const op = doc.webhooks?.[event]?.post
    expect(op, `webhooks.${event}`).toBeDefined()
    const params = op.parameters.map(deref)
    expect(params.some((p: { in: string; name: string; required: boolean }) => p.in === "header" && p.name === "x-service-signature" && p.required)).toBe(true)
    const schema = deref(op.requestBody.content["application/json"].schema)
    expect(schema.allOf[0].$ref).toBe("#/components/schemas/EventEnvelope")
    expect(schema.allOf[1].properties.event.const).toBe(event)
  })

  it("lists exactly the catalogue in webhooks, the EventName enum and the stream's event names", () => {
    expect(Object.keys(doc.webhooks).sort()).toEqual([...EVENTS].sort())
    expect([...doc.components.schemas.EventName.enum].sort()).toEqual([...EVENTS].sort())
    expect([...doc.paths["/stream"].get["x-sse-events"]].sort()).toEqual([...EVENTS].sort())
  })

  it("has the envelope fields of the spec on every event", () => {
    const envelope = doc.components.schemas.EventEnvelope
    expect(Object.keys(envelope.properties)).toEqual(["eventId", "event", "timestamp", "data", "isSandbox"])
    expect(envelope.required).toEqual(["eventId", "event", "timestamp", "data"])
  })

  it("has every error code of the spec in the ErrorCode enum with its status", () => {
    const spec: Record<string, number> = {
      AUTH_MISSING: 401,
      AUTH_INVALID: 401,
      AUTH_SUSPENDED: 403,
      AUTH_REVOKED: 403,
      RATE_LIMITED: 429,
      MISSING_PARAM: 400,
      MISSING_IDEMPOTENCY_KEY: 400,
      INVALID_SYMBOL: 400,
      UNKNOWN_EXCHANGE: 400,
      INVALID_TYPE: 400,
      VALIDATION_ERROR: 400,
      BATCH_LIMIT_EXCEEDED: 400,
      NOT_FOUND: 404,
      CONFLICT: 409,
      QUOTE_REQUIRED: 400,
      QUOTE_NOT_FOUND: 404,
      QUOTE_SCOPE_MISMATCH: 403,
      STALE_QUOTE: 409,
      QUOTE_ORDER_MISMATCH: 409,
      INSUFFICIENT_FUNDS: 400,
      KYC_REQUIRED: 403,
      MARKET_CLOSED: 422,
      FORBIDDEN: 403,
      INTERNAL_ERROR: 500,
      MAINTENANCE: 503,
      SERVICE_UNAVAILABLE: 503
    }
    const code = doc.components.schemas.ErrorCode
    for (const [name, status] of Object.entries(spec)) {
      expect(code.enum).toContain(name)
      expect(code["x-error-statuses"][name], name).toBe(status)
    }
    const extras = Object.keys(doc.components.schemas.ErrorBody.properties)
    for (const extra of ["param", "params", "invalid", "max", "received", "mode", "endsAt", "statusPage", "activeConnections", "limit"]) {
      expect(extras).toContain(extra)
    }
  })

  it("qualifies symbols with the country suffix of every exchange code (D-080)", () => {
    const { enum: codes, "x-symbol-suffix": suffix } = doc.components.schemas.ExchangeCode
    expect(Object.keys(suffix).sort()).toEqual([...codes].sort())
    expect(suffix).toMatchObject({ NSE: "KE", NGX: "NG", JSE: "ZA", GSE: "GH", ZSE: "ZW", DSE: "TZ", USE: "UG" })
    const qualified = new RegExp(doc.components.schemas.QualifiedSymbol.pattern)
    for (const cc of Object.values(suffix) as string[]) expect(qualified.test(`ABC.${cc}`)).toBe(true)
    for (const bad of ["SCOM", "SCOM.NSE", "SCOM.XX"]) expect(qualified.test(bad), bad).toBe(false)
    const input = doc.components.schemas.SymbolInput
    expect([input.minLength, input.maxLength]).toEqual([2, 20])
    for (const name of ["SymbolPath", "SymbolQuery", "MarketQuoteSymbol"]) {
      expect(doc.components.parameters[name].schema.$ref).toBe("#/components/schemas/SymbolInput")
    }
  })

  it("shapes market status as an exchange map and movers as one list chosen by direction (D-043, D-044)", () => {
    const status = doc.components.schemas.MarketStatusResponse
    expect(status.required).toEqual(["anyOpen", "checkedAt", "serverTime", "exchanges"])
    expect(status.properties.exchanges.additionalProperties.$ref).toBe("#/components/schemas/ExchangeStatus")
    const movers = doc.paths["/market/movers"].get.parameters.map(deref)
    expect(movers.find((p: { name: string }) => p.name === "direction").schema.enum).toEqual(["gainers", "losers"])
    expect(doc.components.schemas.MoversResponse.required).toEqual(["direction", "exchange", "movers", "count", "asOf"])
    expect(doc.components.schemas.SubAccount.required).toContain("wallet")
  })

  it("uses each pagination-table default and maximum", () => {
    const table: ReadonlyArray<readonly [string, number, number]> = [
      ["/users", 100, 200],
      ["/market-intel", 20, 100],
      ["/orders", 50, 200],
      ["/users/{userId}/orders", 50, 200],
      ["/users/{userId}/transactions", 50, 200],
      ["/audit", 50, 200],
      ["/webhooks/{id}/deliveries", 20, 100],
      ["/stocks", 50, 200],
      ["/orders/blotter", 50, 200]
    ]
    for (const [path, def, max] of table) {
      const op = doc.paths[path].get
      const limit = op.parameters.map(deref).find((p: { name: string; in: string }) => p.name === "limit" && p.in === "query")
      expect(limit.schema.default, `${path} default`).toBe(def)
      expect(limit.schema.maximum, `${path} max`).toBe(max)
      expect(op["x-paginated"]).toBe(true)
    }
  })

  it("points every x-decision at an entry of docs/decisions.md", () => {
    const decisions = readFileSync(join(root, "docs", "decisions.md"), "utf8")
    const headings = new Set([...decisions.matchAll(/^### (D-\d{3})$/gm)].map((m) => m[1]))
    const used = new Set(collect([doc, control], "x-decision") as string[])
    expect(used.size).toBeGreaterThan(40)
    for (const id of used) expect(headings.has(id), `${id} has no "### ${id}" entry`).toBe(true)
    expect(decisions).toMatch(/^## Engine decisions\n\n\(entries E-xxx are maintained by the engine team\)/m)
  })
})

describe("the contract is valid OpenAPI 3.1", () => {
  const schemasDir = join(root, "node_modules", "@stoplight", "spectral-rulesets", "dist", "oas", "schemas", "oas", "v3.1")
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  addFormats(ajv)
  ajv.addFormat("media-range", true)
  // The official document schema checks Schema Objects only through this dialect anchor; they are checked below
  // against the JSON Schema 2020-12 meta-schema instead.
  ajv.addSchema({ $id: "https://spec.openapis.org/oas/3.1/dialect/base", $dynamicAnchor: "meta", type: ["object", "boolean"] })
  const validateDocument = ajv.compile(JSON.parse(readFileSync(join(schemasDir, "index.json"), "utf8")))

  it.each([
    ["spec/openapi.yaml", doc],
    ["spec/control.yaml", control]
  ])("%s validates against the OpenAPI 3.1 schema", (_name, document) => {
    expect(document.openapi).toBe("3.1.0")
    expect(validateDocument(document), ajv.errorsText(validateDocument.errors)).toBe(true)
  })

  it("the document check can fail", () => {
    const broken = structuredClone(doc)
    broken.paths["/stocks"].get.responses = "none"
    expect(validateDocument(broken)).toBe(false)
  })

  it("every Schema Object is valid JSON Schema 2020-12", () => {
    const schemas: Array<[string, unknown]> = Object.entries(doc.components.schemas)
    for (const [name, schema] of schemas) {
      expect(ajv.validateSchema(schema as object), `${name}: ${ajv.errorsText(ajv.errors)}`).toBe(true)
    }
  })

  it("passes redocly lint (recommended rules)", () => {
    const bin = join(root, "node_modules", "@redocly", "cli", "bin", "cli.js")
    const out = execFileSync(process.execPath, [bin, "lint", "spec/openapi.yaml", "spec/control.yaml", "--format=summary"], {
      cwd: root,
      env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 60_000
    })
    expect(out).not.toMatch(/error/i)
  }, 90_000)
})
