/** Runs one load (cannon.ts) in a child process pinned to the load core and returns what it measured. */
import type { LoadResult, LoadSpec } from "./cannon.ts"
import { LOAD_CORE, spawnPinned } from "./targets.ts"

export type { LoadResult, LoadSpec }

export const runLoad = (spec: LoadSpec): Promise<LoadResult> =>
  new Promise((resolve, reject) => {
    const child = spawnPinned(LOAD_CORE, ["scripts/bench/cannon.ts", JSON.stringify(spec)])
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
      if (code === 0 && line.startsWith("{")) resolve(JSON.parse(line) as LoadResult)
      else reject(new Error(`load generator exited with ${code ?? signal}: ${err.trim().slice(-1000)}`))
    })
  })
