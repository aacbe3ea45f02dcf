/**
 * `kill -9` mid-traffic on PostgreSQL (issue #22, E-289): `sokoni serve --store postgres` takes deposits and
 * withdrawals from several workers, each with its own Idempotency-Key and a `reference` equal to it; once the server
 * has answered a number of them in a round, it is killed with SIGKILL while requests are on the wire. It restarts on
 * the same database and every cut request is resent with its key, as the spec tells clients to do. Eight kills, with
 * a fixed seed and with a fresh seed on every start. Then, over the whole run:
 * - no key executed twice: each reference appears at most once in its wallet's history;
 * - nothing committed but refused: a reference is in the history exactly when its key's answer is a 200;
 * - every answer to a key is the same (a replay repeats the original byte for byte, `idempotent-replayed` aside);
 * - each wallet's balance is the sum of its history and never negative, and money is conserved (master + wallets).
 * When to kill is drawn from the counts of answers, not from time; every wait has a generous failure bound only.
 */
import { spawn } from "node:child_process"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { onPostgres } from "../support/stores.ts"
import { adminUrl, freePort, send, withDatabase } from "./node-server-kit.ts"

const ROOT = join(import.meta.dirname, "..", "..")
const BIN = join(ROOT, "engine", "cli", "bin.ts")
const KILLS = 8
const WORKERS = 6
const ACCOUNTS = 3
/** Answers a round collects before its kill, so requests are surely under way when it comes. */
const ANSWERS_PER_ROUND = 24
const SANDBOX = "/api/sandbox/v1/partner"
const MASTER_START_CENTS = 100_000 * 100

interface Op {
  readonly key: string
  readonly path: string
  readonly body: string
  readonly account: string
}

interface Answer {
  readonly status: number
  readonly body: string
}

const startServe = (port: number, url: string, seed: string | undefined) => {
  const args = ["serve", "--store", "postgres", "--database-url", url, "--port", String(port), "--admin-token", "t", "--clock", "manual", "--desk", "manual"]
  const child = spawn(process.execPath, [BIN, ...args, ...(seed === undefined ? [] : ["--seed", seed])], {
    cwd: ROOT,
    env: { ...process.env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let out = ""
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve not ready after 90 s:\n${out}`)), 90_000)
    timer.unref()
    child.stdout?.on("data", (c: Buffer) => {
      out += c.toString("utf8")
      if (out.includes("ready in")) resolve()
    })
    child.stderr?.on("data", (c: Buffer) => {
      out += c.toString("utf8")
    })
    child.on("exit", () => reject(new Error(`serve exited before it was ready:\n${out}`)))
  })
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()))
  return { child, ready, exited }
}

/** The JSON answer of a request that must succeed. */
const call = async (port: number, method: string, path: string, headers: Record<string, string>, body?: unknown) => {
  const r = await send(port, method, path, { "content-type": "application/json", ...headers }, body === undefined ? undefined : JSON.stringify(body))
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.body}`)
  return JSON.parse(r.body)
}

/** Sends `op`; an answer, or undefined when the connection was cut (the server died under it). */
const attempt = async (port: number, apiKey: string, op: Op): Promise<Answer | undefined> => {
  const headers = { "x-api-key": apiKey, "idempotency-key": op.key, "content-type": "application/json" }
  try {
    const r = await send(port, "POST", op.path, headers, op.body)
    return { status: r.status, body: r.body }
  } catch {
    return undefined
  }
}

const runWithKills = async (url: string, seed: string | undefined) => {
  let port = await freePort()
  let server = startServe(port, url, seed)
  await server.ready
  const partner = await call(port, "POST", "/_sim/partners", { authorization: "Bearer t" }, { businessName: "Kill", email: "k@kill.test" })
  const key: string = partner.sandboxKey
  const accounts: Array<string> = []
  for (let i = 0; i < ACCOUNTS; i++) {
    const made = await call(port, "POST", `${SANDBOX}/users`, { "x-api-key": key, "idempotency-key": `acct-${i}-0000` }, { externalId: `kill-${i}` })
    accounts.push(made.subAccountId)
  }
  const answers = new Map<string, Array<Answer>>()
  const ops: Array<Op> = []
  const cut: Array<Op> = []
  let cuts = 0
  let n = 0
  const nextOp = (worker: number): Op => {
    const i = n++
    const account = accounts[i % ACCOUNTS] as string
    const deposit = i % 3 !== 2
    const cents = 100 + ((i * 7919) % 9_900)
    const key = `kill-${worker}-${i}-op`
    const op = {
      key,
      account,
      path: `${SANDBOX}/users/${account}/${deposit ? "deposit" : "withdraw"}`,
      body: JSON.stringify({ amount: cents / 100, reference: key })
    }
    ops.push(op)
    return op
  }
  const record = (op: Op, answer: Answer) => answers.set(op.key, [...(answers.get(op.key) ?? []), answer])

  /** Resends every cut request with its key until it is answered below 500 (503 and 500 say: resend). */
  const retryCut = async () => {
    while (cut.length > 0) {
      const op = cut.shift() as Op
      for (;;) {
        const a = await attempt(port, key, op)
        if (a === undefined) throw new Error(`the restarted server cut ${op.key}`)
        if (a.status < 500) {
          record(op, a)
          break
        }
      }
    }
  }

  for (let round = 0; round < KILLS; round++) {
    let answered = 0
    let killed = false
    const worker = async (w: number) => {
      while (!killed) {
        const op = nextOp(w)
        const a = await attempt(port, key, op)
        if (a === undefined || a.status >= 500) {
          cuts++
          cut.push(op)
        } else record(op, a)
        if (++answered >= ANSWERS_PER_ROUND && !killed) {
          killed = true
          server.child.kill("SIGKILL")
        }
      }
    }
    await Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)))
    await server.exited
    port = await freePort()
    server = startServe(port, url, seed)
    await server.ready
    await retryCut()
  }

  const history = new Map<string, Array<{ amount: number; reference: string | null }>>()
  const balances = new Map<string, number>()
  for (const account of accounts) {
    const page = await call(port, "GET", `${SANDBOX}/users/${account}/transactions?limit=200`, { "x-api-key": key })
    if (page.hasMore === true) throw new Error("more than one page of history: raise the limit or page")
    history.set(account, page.transactions)
    balances.set(account, Math.round((await call(port, "GET", `${SANDBOX}/users/${account}`, { "x-api-key": key })).walletBalance * 100))
  }
  const master = Math.round((await call(port, "GET", `${SANDBOX}/wallet`, { "x-api-key": key })).balance * 100)
  server.child.kill("SIGTERM")
  await server.exited
  return { ops, answers, history, balances, master, accounts, cuts }
}

const check = (run: Awaited<ReturnType<typeof runWithKills>>) => {
  const problems: Array<string> = []
  const seen = new Map<string, number>()
  for (const entries of run.history.values()) for (const e of entries) if (e.reference !== null) seen.set(e.reference, (seen.get(e.reference) ?? 0) + 1)
  for (const op of run.ops) {
    const given = run.answers.get(op.key) ?? []
    if (given.length === 0) {
      problems.push(`${op.key}: never answered`)
      continue
    }
    const first = given[0] as Answer
    if (given.some((a) => a.status !== first.status || a.body !== first.body))
      problems.push(`${op.key}: answers differ: ${given.map((a) => a.status).join(",")}`)
    const times = seen.get(op.key) ?? 0
    if (times > 1) problems.push(`${op.key}: executed ${times} times`)
    if (first.status === 200 && times !== 1) problems.push(`${op.key}: answered 200 but in the history ${times} times`)
    if (first.status !== 200 && times !== 0) problems.push(`${op.key}: answered ${first.status} but committed`)
  }
  let wallets = 0
  for (const account of run.accounts) {
    const sum = (run.history.get(account) ?? []).reduce((total, e) => total + Math.round(e.amount * 100), 0)
    const balance = run.balances.get(account) ?? Number.NaN
    if (balance !== sum) problems.push(`${account}: balance ${balance} is not the sum of its history ${sum}`)
    if (balance < 0) problems.push(`${account}: negative balance ${balance}`)
    wallets += balance
  }
  if (run.master + wallets !== MASTER_START_CENTS) problems.push(`money not conserved: master ${run.master} + wallets ${wallets} != ${MASTER_START_CENTS}`)
  return problems
}

const admin = adminUrl
describe.skipIf(admin === undefined)("kill -9 mid-traffic on PostgreSQL, every cut request retried with its key", onPostgres, () => {
  for (const seed of ["7", undefined]) {
    it(`${KILLS} kills, ${seed === undefined ? "a fresh seed on every start" : `seed ${seed}`}: nothing twice, nothing committed but refused, money conserved`, async () => {
      const run = await withDatabase(admin ?? "", (url) => runWithKills(url, seed))
      expect(run.ops.length).toBeGreaterThan(KILLS * ANSWERS_PER_ROUND)
      // Requests were on the wire at each kill: at least one cut a round on average.
      expect(run.cuts).toBeGreaterThanOrEqual(KILLS)
      expect(check(run)).toEqual([])
    }, 600_000)
  }
})
