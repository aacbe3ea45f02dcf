/** Runs one load (cannon.ts) in a child process pinned to the load core and returns what it measured. */
import type { LoadResult, LoadSpec } from "./cannon.ts"
import { LOAD_CORE, spawnPinned } from "./targets.ts"

export type { LoadResult, LoadSpec }

/**
 * Runs a bench script (`scripts/bench/<name>.ts`) on the load core with `spec` as its argument; resolves with the JSON
 * object of its last output line, or rejects with what it printed to stderr. `what` names it in the error.
 */
export const runChild = <A>(
  script: string,
  spec: unknown,
  what: string,
  options: { core?: string; nodeFlags?: ReadonlyArray<string>; realtime?: boolean } = {}
): Promise<A> =>
  new Promise((resolve, reject) => {
    const child = spawnPinned(
      options.core ?? LOAD_CORE,
      [...(options.nodeFlags ?? []), script, JSON.stringify(spec)],
      process.env,
      "pipe",
      undefined,
      options.realtime
    )
    let out = ""
    let err = ""
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString()
    })
    child.stderr?.on("data", (chunk: Buffer) => {
      err += chunk.toString()
    })
    child.on("error", reject)
    child.on("exit", (code, signal) => {
      const line = out.trim().split("\n").pop() ?? ""
      if (code === 0 && line.startsWith("{")) resolve(JSON.parse(line) as A)
      else reject(new Error(`${what} exited with ${code ?? signal}: ${err.trim().slice(-1000)}`))
    })
  })

export const runLoad = (spec: LoadSpec): Promise<LoadResult> => runChild<LoadResult>("scripts/bench/cannon.ts", spec, "load generator")
