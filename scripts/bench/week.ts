/**
 * The simulated week in `npm run bench` (issue 25): `sokoni simulate` at rising order counts (linear in orders?),
 * the 10,000-order week against its 5 s goal, and a generated 1,000-order scenario file through `sokoni scenario run`
 * against the 1,000-order week in-process (within 3x?). Each run is its own process, pinned to the server core; the
 * figures are CPU time (the week's own as the command prints it, and a whole child's from /proc/self/stat), so a
 * busy machine disturbs them less than wall time.
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ordersScenario } from "../../scenarios/generate.ts"
import { table, type Verdict } from "./report.ts"
import { root, SERVER_CORE } from "./targets.ts"

const BIN = join(root, "engine", "cli", "bin.ts")
const TICKS_PER_SECOND = 100

export interface WeekRow {
  readonly orders: number
  readonly subAccounts: number
  readonly cpuSeconds: number
  readonly wallSeconds: number
  readonly simulatedPerWallSecond: number
  readonly events: number
  readonly deliveries: number
  readonly retries: number
  readonly verdict: string
}

/** CPU seconds of this process's waited-for children so far (cutime + cstime). */
const childrenCpuSeconds = () => {
  const stat = readFileSync("/proc/self/stat", "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return (Number(fields[13]) + Number(fields[14])) / TICKS_PER_SECOND
}

/** Runs `sokoni ...args` pinned to the server core; its output and the CPU seconds the whole process used. */
const sokoni = (args: ReadonlyArray<string>) => {
  const before = childrenCpuSeconds()
  const run = spawnSync("taskset", ["-c", SERVER_CORE, process.execPath, BIN, ...args], { cwd: root, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 })
  if (run.status !== 0) throw new Error(`sokoni ${args.join(" ")} exited ${run.status}: ${(run.stdout + run.stderr).slice(-2000)}`)
  return { stdout: run.stdout, processCpuSeconds: childrenCpuSeconds() - before }
}

const number = (text: string, pattern: RegExp) => Number((pattern.exec(text)?.[1] ?? "NaN").replace(/,/g, ""))

const simulate = (orders: number) => {
  const subAccounts = Math.max(10, Math.round(orders / 10))
  const { stdout, processCpuSeconds } = sokoni(["simulate", "--seed", "1", "--orders", String(orders), "--sub-accounts", String(subAccounts)])
  const row: WeekRow = {
    orders,
    subAccounts,
    cpuSeconds: number(stdout, /\(([\d.]+) s CPU\)/),
    wallSeconds: number(stdout, /in ([\d.]+) s wall/),
    simulatedPerWallSecond: number(stdout, /: ([\d,]+) simulated seconds per wall second/),
    events: number(stdout, /^events ([\d,]+)/m),
    deliveries: number(stdout, /webhook deliveries ([\d,]+)/),
    retries: number(stdout, /retries ([\d,]+)/),
    verdict: /every rule holds; money: \d+ ledgers conserved$/m.test(stdout) ? "holds" : "FAILED"
  }
  return { row, processCpuSeconds }
}

export const weekTable = (rows: ReadonlyArray<WeekRow>): string =>
  table(
    ["orders", "sub-accounts", "CPU s", "µs CPU / order", "wall s", "sim s / wall s", "events", "deliveries", "retries", "history + money"],
    rows.map((r) => [
      r.orders.toLocaleString("en"),
      r.subAccounts.toLocaleString("en"),
      r.cpuSeconds.toFixed(2),
      ((r.cpuSeconds * 1e6) / r.orders).toFixed(0),
      r.wallSeconds.toFixed(2),
      r.simulatedPerWallSecond.toLocaleString("en"),
      r.events.toLocaleString("en"),
      r.deliveries.toLocaleString("en"),
      r.retries.toLocaleString("en"),
      r.verdict
    ])
  )

/** The week at each size, then the scenario file against the in-process week of as many orders. */
export const measureWeek = (sizes: ReadonlyArray<number>, log: (line: string) => void) => {
  const rows: Array<WeekRow> = []
  let weekProcessCpu = Number.NaN
  for (const orders of sizes) {
    process.stdout.write(`  [week] ${orders.toLocaleString("en")} orders… `)
    const { row, processCpuSeconds } = simulate(orders)
    if (orders === 1_000) weekProcessCpu = processCpuSeconds
    log(`${row.cpuSeconds.toFixed(2)} s CPU, ${row.wallSeconds.toFixed(2)} s wall, ${row.retries} retries, history and money ${row.verdict}`)
    rows.push(row)
  }
  if (Number.isNaN(weekProcessCpu)) weekProcessCpu = simulate(1_000).processCpuSeconds
  const dir = mkdtempSync(join(tmpdir(), "sokoni-bench-week-"))
  let scenarioCpu: number
  try {
    const file = join(dir, "orders-1000.yaml")
    writeFileSync(file, ordersScenario(1_000))
    process.stdout.write("  [week] a 1,000-order scenario file through `sokoni scenario run`… ")
    const run = sokoni(["scenario", "run", file, "--seed", "1"])
    if (!/ 0 failed$/m.test(run.stdout)) throw new Error(`the generated scenario failed: ${run.stdout.slice(-2000)}`)
    scenarioCpu = run.processCpuSeconds
    log(`${scenarioCpu.toFixed(2)} s CPU (the 1,000-order week's process: ${weekProcessCpu.toFixed(2)} s)`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  return { rows, scenarioCpu, weekProcessCpu }
}

export const weekVerdicts = (measured: ReturnType<typeof measureWeek>): Array<Verdict> => {
  const verdicts: Array<Verdict> = []
  const ten = measured.rows.find((r) => r.orders === 10_000)
  if (ten !== undefined)
    verdicts.push({
      name: "a simulated week: 1,000 sub-accounts, 10,000 orders with webhook retries (CPU)",
      measured: `${ten.cpuSeconds.toFixed(2)} s`,
      target: "< 5 s",
      pass: ten.cpuSeconds < 5
    })
  // The marginal CPU per order (what one more order costs, start-up and fixed work aside) between the two largest
  // sizes against the two smallest: linear when they agree.
  const rows = measured.rows
  const marginal = (a: WeekRow | undefined, b: WeekRow | undefined) =>
    a === undefined || b === undefined ? Number.NaN : (b.cpuSeconds - a.cpuSeconds) / (b.orders - a.orders)
  if (rows.length >= 3) {
    const growth = marginal(rows.at(-2), rows.at(-1)) / marginal(rows[0], rows[1])
    verdicts.push({
      name: `the week linear in orders: marginal CPU per order, ${rows.at(-2)?.orders.toLocaleString("en")}->${rows.at(-1)?.orders.toLocaleString("en")} / ${rows[0]?.orders.toLocaleString("en")}->${rows[1]?.orders.toLocaleString("en")}`,
      measured: `${growth.toFixed(2)}x`,
      target: "≤ 1.25x",
      pass: growth <= 1.25
    })
  }
  const ratio = measured.scenarioCpu / measured.weekProcessCpu
  verdicts.push({
    name: "a 1,000-order scenario file through `sokoni scenario run` / the 1,000-order week in-process (process CPU)",
    measured: `${ratio.toFixed(2)}x`,
    target: "≤ 3.00x",
    pass: ratio <= 3
  })
  return verdicts
}
