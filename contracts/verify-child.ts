/**
 * The child process of contracts/verify.ts: runs one Pact provider verification and reports its outcome to the
 * parent (the test) over IPC. The verifier's report goes to this process's stdout and stderr, which the parent
 * captures: Pact's Rust core writes it straight to file descriptors 1 and 2, past anything a test could intercept in
 * its own process.
 *
 * The state handlers and message providers stay in the parent, which holds the engine and the captured messages:
 * here each is a stub that asks the parent over IPC and answers with what the parent's function returned (or throws
 * what it threw).
 */
import { type MessageProviders, Verifier, type VerifierOptions } from "@pact-foundation/pact"

/** The parent's first message: the verifier's options without functions, and the names of the parent's functions. */
export interface VerifyRequest {
  readonly type: "verify"
  readonly options: VerifierOptions
  readonly stateHandlers: ReadonlyArray<string>
  readonly messageProviders: ReadonlyArray<string>
}
/** A call of one of the parent's functions, and the parent's answer to it. */
export interface Call {
  readonly type: "call"
  readonly id: number
  readonly kind: "state" | "message"
  readonly name: string
  readonly argument: unknown
}
export type Answer =
  | { readonly type: "answer"; readonly id: number; readonly value: unknown }
  | { readonly type: "answer"; readonly id: number; readonly error: string }
/** The outcome: the verifier's JSON result when it passed, its error's message when it failed. */
export type Outcome =
  | { readonly type: "done"; readonly passed: true; readonly result: unknown }
  | { readonly type: "done"; readonly passed: false; readonly message: string }

const send = (message: Call | Outcome) =>
  new Promise<void>((resolve, reject) => {
    if (process.send === undefined) return reject(new Error("verify-child.ts runs as a child of contracts/verify.ts (no IPC channel)"))
    process.send(message, undefined, {}, (error) => (error === null ? resolve() : reject(error)))
  })

const pending = new Map<number, (answer: Answer) => void>()
let next = 0
const ask = async (kind: Call["kind"], name: string, argument: unknown): Promise<any> => {
  const id = ++next
  const answered = new Promise<Answer>((resolve) => pending.set(id, resolve))
  await send({ type: "call", id, kind, name, argument })
  const answer = await answered
  if ("error" in answer) throw new Error(answer.error)
  return answer.value
}

const verify = async (request: VerifyRequest) => {
  const stateHandlers = Object.fromEntries(request.stateHandlers.map((name) => [name, (parameters?: unknown) => ask("state", name, parameters ?? null)]))
  const messageProviders: MessageProviders = Object.fromEntries(
    request.messageProviders.map((name) => [name, (descriptor: unknown) => ask("message", name, descriptor)])
  )
  try {
    const result = await new Verifier({
      ...request.options,
      ...(request.stateHandlers.length === 0 ? {} : { stateHandlers }),
      ...(request.messageProviders.length === 0 ? {} : { messageProviders })
    }).verifyProvider()
    await send({ type: "done", passed: true, result })
  } catch (error) {
    await send({ type: "done", passed: false, message: error instanceof Error ? error.message : String(error) })
  }
  // Pact's core may keep threads (and with them this process) alive after a verification; the parent has the
  // outcome, and stdout and stderr are pipes, written synchronously on Linux, so nothing is lost by leaving now.
  process.exit(0)
}

process.on("message", (message: VerifyRequest | Answer) => {
  if (message.type === "verify") void verify(message)
  else pending.get(message.id)?.(message)
})
// A parent that went away (a test killed or timed out) takes its verification with it.
process.on("disconnect", () => process.exit(1))
