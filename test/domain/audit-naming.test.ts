/**
 * How the audit log names a resource (domain/audit/actions.ts, D-260): from the path parameter or the answer's field
 * the operation's rule says, a key only by its mask, and the partition of a document stripped to its partner
 * environment; the desk's expiry is recorded only for an order that expired.
 */
import { describe, expect, it } from "vitest"
import { basePartition, CONTROL_ACTIONS, maskedKey, PARTNER_ACTIONS, resourceIdOf, SYSTEM_EVENTS } from "../../engine/domain/audit/actions.ts"

const rule = (operationId: string) => {
  const found = PARTNER_ACTIONS[operationId]
  if (found === undefined) throw new Error(`no rule for ${operationId}`)
  return found
}

describe("naming the resource", () => {
  it("takes the id from the path parameter or the answer's field the rule names", () => {
    expect(resourceIdOf(rule("cancelOrder"), { orderId: "ord_1" }, { orderId: "ord_2" })).toBe("ord_1")
    expect(resourceIdOf(rule("placeTrade"), {}, { orderId: "ord_2" })).toBe("ord_2")
    expect(resourceIdOf(rule("placeTrade"), {}, "not an object")).toBeNull()
    expect(resourceIdOf(rule("resetSandbox"), {}, { anything: 1 })).toBeNull()
  })

  it("names a key by its mask only, never by itself", () => {
    expect(resourceIdOf(rule("rotateDataKey"), {}, { dataKey: "pk_data_0123456789abcdef" })).toBe(maskedKey("cdef"))
    expect(maskedKey("3f9a")).toBe("key_****3f9a")
  })

  it("reads a document's partition as its partner environment", () => {
    expect(basePartition("ptn_x:sandbox/usr_y")).toBe("ptn_x:sandbox")
    expect(basePartition("ptn_x:production|master")).toBe("ptn_x:production")
    expect(basePartition("ptn_x:production")).toBe("ptn_x:production")
  })
})

describe("who acts", () => {
  it("a compliance freeze or unfreeze is named by the flag it sets", () => {
    const freeze = CONTROL_ACTIONS.freezeSimSubAccount?.action
    if (typeof freeze !== "function") throw new Error("the freeze rule names its action from the request")
    expect(freeze({ frozen: true })).toBe("subaccount.freeze")
    expect(freeze({ frozen: false })).toBe("subaccount.unfreeze")
  })

  it("the desk's cancellation is audited as an expiry only when the order expired", () => {
    const when = SYSTEM_EVENTS["order.cancelled"]?.when
    expect(when?.({ orderLifecycle: "EXPIRED" })).toBe(true)
    expect(when?.({ orderLifecycle: "CANCELLED" })).toBe(false)
  })
})
