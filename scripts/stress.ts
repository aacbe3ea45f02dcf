/**
 * `npm run test:stress [-- --runs N] [-- --ci] [-- --load N]`: the test suite under a background load that keeps
 * every core busy, as CI's machine is when other jobs ran a moment ago. Run it before a risky landing (docs/testing.md).
 *
 * - Default: the two passes CI runs, in this tree: `npm test` without DATABASE_URL, then the tests tagged `postgres`
 *   with DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres; without a server there, the first pass
 *   only). `--ci`: `bash .ci/run` itself, on a fresh clone of HEAD (commit first), as CI does.
 * - `--runs N` (default 3) repeats it; it stops at the first red run and exits 1, naming it. Green N times in a row
 *   exits 0.
 * - `--load N` (default: the number of cores) busy-loop processes, started before the first run and stopped after the
 *   last (or on Ctrl-C). `--load 0` runs idle, to compare.
 *
 * Each run's output goes to out/stress/run-K.log; the terminal gets one line a run with its time and closing line.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { createWriteStream, mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { availableParallelism, tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"

const ROOT = join(import.meta.dirname, "..")
const OUT = join(ROOT, "out", "stress")
const ADMIN_URL = process.env.DATABASE_URL_ADMIN ?? process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"

/** A process that spins one core until it is killed. */
const spinner = (): ChildProcess => spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" })

interface Outcome {
  readonly code: number
  readonly seconds: number
  readonly closing: string
}

/** Runs `command` with its output appended to `log`; resolves with its exit status and the last summary-like line. */
const run = (command: string, args: ReadonlyArray<string>, options: { cwd: string; env: NodeJS.ProcessEnv; log: string }) =>
  new Promise<Outcome>((resolve) => {
    const began = performance.now()
    const out = createWriteStream(options.log, { flags: "a" })
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"] })
    let tail = ""
    const keep = (chunk: Buffer) => {
      out.write(chunk)
      tail = (tail + chunk.toString("utf8")).slice(-4000)
    }
    child.stdout?.on("data", keep)
    child.stderr?.on("data", keep)
    child.on("close", (code) => {
      out.end()
      // biome-ignore lint/suspicious/noControlCharactersInRegex: strips the terminal colours vitest prints
      const plain = tail.replace(/\u001b\[[0-9;]*m/g, "")
      const closing =
        plain
          .match(/^.*(?:passed|failed).*$/gm)
          ?.at(-1)
          ?.trim() ?? "(no closing line)"
      resolve({ code: code ?? 1, seconds: (performance.now() - began) / 1000, closing })
    })
  })

const postgresUp = () => spawnSync("pg_isready", ["-q", "-d", ADMIN_URL]).status === 0

/** CI's two test passes in this tree, one after the other; the first red one ends the run. */
const testPasses = async (log: string): Promise<Outcome> => {
  const env: NodeJS.ProcessEnv = { ...process.env, PACT_DO_NOT_TRACK: "true" }
  delete env.DATABASE_URL
  const memory = await run("npx", ["vitest", "run"], { cwd: ROOT, env, log })
  if (memory.code !== 0 || !postgresUp()) return memory
  const postgres = await run("npx", ["vitest", "run", "--tags-filter=postgres"], { cwd: ROOT, env: { ...env, DATABASE_URL: ADMIN_URL }, log })
  return { code: postgres.code, seconds: memory.seconds + postgres.seconds, closing: `memory: ${memory.closing}; postgres: ${postgres.closing}` }
}

/** `.ci/run` on a fresh clone of HEAD, removed afterwards. */
const ciOnClone = async (log: string): Promise<Outcome> => {
  const dir = mkdtempSync(join(tmpdir(), "sokoni-stress-"))
  try {
    spawnSync("git", ["clone", "--quiet", ROOT, dir], { stdio: "inherit" })
    return await run("bash", [".ci/run"], { cwd: dir, env: { ...process.env, CI: "true" }, log })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const main = async () => {
  const { values } = parseArgs({
    options: { runs: { type: "string", default: "3" }, ci: { type: "boolean", default: false }, load: { type: "string" } }
  })
  const runs = Number(values.runs)
  const load = values.load === undefined ? availableParallelism() : Number(values.load)
  mkdirSync(OUT, { recursive: true })
  const spinners = Array.from({ length: load }, spinner)
  const stop = () => {
    for (const s of spinners) s.kill("SIGKILL")
  }
  process.on("SIGINT", () => {
    stop()
    process.exit(130)
  })
  console.log(
    `stress: ${runs} run(s) of ${values.ci ? ".ci/run on a fresh clone of HEAD" : "the memory and postgres test passes"}, ${load} busy-loop process(es) beside`
  )
  try {
    for (let k = 1; k <= runs; k++) {
      const log = join(OUT, `run-${k}.log`)
      rmSync(log, { force: true })
      const outcome = await (values.ci ? ciOnClone(log) : testPasses(log))
      console.log(`run ${k}: ${outcome.code === 0 ? "green" : "RED"} in ${Math.round(outcome.seconds)} s: ${outcome.closing} (${log})`)
      if (outcome.code !== 0) {
        console.log(`stress: run ${k} of ${runs} failed; its output is in ${log}`)
        process.exitCode = 1
        return
      }
    }
    console.log(`stress: ${runs} of ${runs} green in a row`)
  } finally {
    stop()
  }
}

await main()
