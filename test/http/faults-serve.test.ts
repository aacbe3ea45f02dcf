/**
 * `serve --faults FILE` over a real socket: a YAML plan file is read and in force from the start (GET /_sim/faults
 * lists it), a bad one is refused naming the field, and a timeout fault holds the socket with no answer until its
 * hold has passed on the engine clock, then closes it (the client sees the connection end, not an answer).
 */
import { mkdtemp, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { loadFaultPlan } from "../../engine/cli/fault-file.ts"
import { startServer } from "../../engine/http/node-server.ts"
import { config, portOf, send } from "./node-server-kit.ts"

const planFile = async (name: string, text: string) => {
  const dir = await mkdtemp(join(tmpdir(), "sokoni-faults-"))
  const file = join(dir, name)
  await writeFile(file, text)
  return file
}

describe("serve --faults FILE", () => {
  it("reads a YAML plan, in force from the start; a timeout holds the socket until its hold passes, then hangs up", async () => {
    const file = await planFile("plan.yaml", "seed: 9\nrules:\n  - fault: timeout\n    operations: [getServiceStatus]\n    holdSeconds: 5\n")
    const plan = await loadFaultPlan(file)
    const server = await startServer({ ...config, faults: plan }, 0)
    try {
      const port = portOf(server)
      const admin = { authorization: "Bearer t", "content-type": "application/json" }
      const state = JSON.parse((await send(port, "GET", "/_sim/faults", admin)).body)
      expect(state).toMatchObject({ seed: 9, rules: [{ fault: "timeout", operations: ["getServiceStatus"], holdSeconds: 5, matched: 0 }] })
      let outcome: string | undefined
      const held = send(port, "GET", "/api/v1/status", {}).then(
        (r) => `answered ${r.status}`,
        (error: NodeJS.ErrnoException) => error.code ?? error.message
      )
      void held.then((o) => {
        outcome = o
      })
      // Wait for the request to be held (the rule counted it), never on real time.
      while (JSON.parse((await send(port, "GET", "/_sim/faults", admin)).body).rules[0].injected === 0) await new Promise((r) => setImmediate(r))
      await send(port, "POST", "/_sim/clock/advance", admin, JSON.stringify({ seconds: 4 }))
      expect(outcome).toBeUndefined()
      await send(port, "POST", "/_sim/clock/advance", admin, JSON.stringify({ seconds: 1 }))
      expect(await held).toBe("ECONNRESET")
    } finally {
      await server.stop({ idleLingerMs: 0 })
    }
  })

  it("refuses a plan file that breaks a rule, naming the field", async () => {
    const file = await planFile("plan.json", JSON.stringify({ rules: [{ fault: "503", every: 2, probability: 0.5 }] }))
    await expect(loadFaultPlan(file)).rejects.toThrow(`--faults ${file}: rules[0].every: a rule fires \`every\` N or with a \`probability\`, not both`)
    await expect(loadFaultPlan(`${file}.missing`)).rejects.toThrow(/ENOENT/)
  })
})
