/**
 * `sokoni` as a user runs it: a child process of this Node on engine/cli/bin.ts, from the repository's root, with
 * its whole output kept. For the process tests of the CLI's commands.
 */
import { spawn } from "node:child_process"
import { join } from "node:path"

export const ROOT = join(import.meta.dirname, "..", "..")
export const BIN = join(ROOT, "engine", "cli", "bin.ts")

export interface Finished {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs `sokoni ...args` to its end; `env` is laid over this process's environment (undefined removes a variable). */
export const sokoni = (args: ReadonlyArray<string>, env: Record<string, string | undefined> = {}) =>
  new Promise<Finished>((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString("utf8")
    })
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString("utf8")
    })
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

/** `promise`, or a failure naming `what` after `ms`: a failure bound on a process's readiness or exit, never a pace. */
export const within = <A>(ms: number, what: string, promise: Promise<A>): Promise<A> => {
  const late = new Promise<never>((_, reject) => {
    setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms).unref()
  })
  return Promise.race([promise, late])
}
