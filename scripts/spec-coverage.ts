/**
 * `npm run spec:coverage`: every operation of the contract (spec/openapi.yaml), marked implemented or not yet by the
 * engine. The engine's routes are declared by operationId (engine/http/routes), so this compares ids directly.
 * Prints a table and the counts; exits 0 (it reports progress, it does not gate).
 */
import { PARTNER_OPERATIONS } from "../engine/contract/catalogue.gen.ts"
import { ROUTES } from "../engine/http/routes/index.ts"

const implemented = new Set(ROUTES.filter((r) => r.mount !== "control").map((r) => r.operationId))
const rows = PARTNER_OPERATIONS.map((o) => ({ op: `${o.method} ${o.path}`, id: o.operationId, done: implemented.has(o.operationId) }))
const width = Math.max(...rows.map((r) => r.op.length))
for (const r of rows) console.log(`${r.done ? "implemented" : "not yet    "}  ${r.op.padEnd(width)}  ${r.id}`)
const done = rows.filter((r) => r.done).length
console.log(`\n${done} of ${rows.length} contract operations implemented (${rows.length - done} not yet)`)
