/**
 * `npm run spec:coverage`: every operation of the contract (spec/openapi.yaml), marked implemented or not yet by the
 * engine, from the engine's own generated OpenAPI (`OpenApi.fromApi`) plus the routes the gateway serves itself.
 * Prints a table and the counts; exits 0 (it reports progress, it does not gate).
 */
import { OpenApi } from "effect/http-api"
import { PartnerApi } from "../engine/http/api.ts"
import { makeValidator } from "../spec/validator.ts"

const METHODS = ["get", "post", "put", "patch", "delete"] as const
/** Routes the gateway answers outside the partner HttpApi (engine/http/gateway.ts). */
const GATEWAY_ROUTES = new Set(["GET /status"])

const engine = OpenApi.fromApi(PartnerApi) as { paths: Record<string, Record<string, unknown>> }
const implemented = new Set<string>(GATEWAY_ROUTES)
for (const [path, item] of Object.entries(engine.paths)) {
  for (const method of METHODS) if (item[method] !== undefined) implemented.add(`${method.toUpperCase()} ${path}`)
}

const contract = makeValidator().doc as { paths: Record<string, Record<string, { operationId?: string; deprecated?: boolean }>> }
const rows: Array<{ op: string; id: string; done: boolean }> = []
for (const [path, item] of Object.entries(contract.paths)) {
  for (const method of METHODS) {
    const operation = item[method]
    if (operation === undefined) continue
    const op = `${method.toUpperCase()} ${path}`
    rows.push({ op, id: operation.operationId ?? "", done: implemented.has(op) })
  }
}
const width = Math.max(...rows.map((r) => r.op.length))
for (const r of rows) console.log(`${r.done ? "implemented" : "not yet    "}  ${r.op.padEnd(width)}  ${r.id}`)
const done = rows.filter((r) => r.done).length
const extra = [...implemented].filter((op) => !rows.some((r) => r.op === op))
if (extra.length > 0) console.log(`\nengine routes missing from the contract: ${extra.join(", ")}`)
console.log(`\n${done} of ${rows.length} contract operations implemented (${rows.length - done} not yet)`)
process.exitCode = extra.length > 0 ? 1 : 0
