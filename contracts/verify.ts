/**
 * Pact provider verification in a child process whose output the test captures (contracts/verify-child.ts).
 *
 * Pact's Rust core prints its whole report (every interaction, then "Failures:") to the process's stdout and stderr
 * from native code, so in the test's own process it reaches the run's output whatever the test does, ~100 lines per
 * verification, and the deliberately broken providers' failures read like real ones. In a child, the report is
 * captured: `verifyInChild` resolves, or rejects with the verifier's error, carrying it as `output`, and each test
 * asserts on what it says (which interaction failed, and on what).
 *
 * The state handlers and message providers keep running here, in the test's process (where the engine and the
 * captured deliveries are): the child calls them over IPC. Their arguments and results cross as structured clones.
 */
import { fork } from "node:child_process"
import { join } from "node:path"
import { stripVTControlCharacters } from "node:util"
import type { MessageDescriptor, VerifierOptions } from "@pact-foundation/pact"
import type { Answer, Call, Outcome, VerifyRequest } from "./verify-child.ts"

/** The verifier's options, with plain functions as state handlers (no setup/teardown pairs) and message providers. */
export type ChildVerifierOptions = Omit<VerifierOptions, "stateHandlers" | "messageProviders" | "requestFilter" | "beforeEach" | "afterEach"> & {
  readonly stateHandlers?: Record<string, (parameters?: unknown) => Promise<unknown>>
  readonly messageProviders?: Record<string, (descriptor: MessageDescriptor) => unknown>
}

export interface Verified {
  /** The verifier's JSON result. */
  readonly result: unknown
  /** What the verification printed (Pact's report, its logs), stdout then stderr, without terminal colours. */
  readonly output: string
}

/** A failed verification: the verifier's error message, and what it printed. */
export class VerificationFailed extends Error {
  readonly output: string
  constructor(message: string, output: string) {
    super(message)
    this.name = "VerificationFailed"
    this.output = output
  }
}

const CHILD = join(import.meta.dirname, "verify-child.ts")

export const verifyInChild = (options: ChildVerifierOptions): Promise<Verified> => {
  const { stateHandlers = {}, messageProviders = {}, ...plain } = options
  const child = fork(CHILD, [], {
    stdio: ["ignore", "pipe", "pipe", "ipc"],
    serialization: "advanced",
    // The child's own flags, not the test worker's (vitest's). DEP0060: pact's verifier proxies the provider through
    // http-proxy 1.x, which calls the deprecated util._extend on every proxied request (Object.assign semantics, so
    // harmless); it cannot be configured away, and its warning would only add to the captured output.
    execArgv: ["--disable-warning=DEP0060"],
    // No telemetry call from Pact's core, and no notice about it in the output.
    env: { ...process.env, PACT_DO_NOT_TRACK: "true" }
  })
  const stdout: Array<Buffer> = []
  const stderr: Array<Buffer> = []
  child.stdout?.on("data", (chunk: Buffer) => stdout.push(chunk))
  child.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk))
  // Pact's report is coloured (bold names, red and green verdicts): the colours go, the words stay.
  const output = () => stripVTControlCharacters(`${Buffer.concat(stdout).toString("utf8")}${Buffer.concat(stderr).toString("utf8")}`)

  const answer = async (call: Call) => {
    const fn = call.kind === "state" ? stateHandlers[call.name] : messageProviders[call.name]
    let reply: Answer
    try {
      if (fn === undefined) throw new Error(`no ${call.kind === "state" ? "state handler" : "message provider"} named ${call.name}`)
      reply = { type: "answer", id: call.id, value: await fn(call.argument as never) }
    } catch (error) {
      reply = { type: "answer", id: call.id, error: error instanceof Error ? error.message : String(error) }
    }
    if (child.connected) child.send(reply)
  }

  return new Promise<Verified>((resolve, reject) => {
    let outcome: Outcome | undefined
    child.on("message", (message: Call | Outcome) => {
      if (message.type === "call") void answer(message)
      else outcome = message
    })
    child.on("error", reject)
    // "close": the child has exited and its stdout and stderr are read to the end.
    child.on("close", (code, signal) => {
      if (outcome === undefined) reject(new VerificationFailed(`the verifier's process ended (${signal ?? `exit ${code}`}) without an outcome`, output()))
      else if (outcome.passed) resolve({ result: outcome.result, output: output() })
      else reject(new VerificationFailed(outcome.message, output()))
    })
    const request: VerifyRequest = {
      type: "verify",
      options: plain as VerifierOptions,
      stateHandlers: Object.keys(stateHandlers),
      messageProviders: Object.keys(messageProviders)
    }
    child.send(request)
  })
}
