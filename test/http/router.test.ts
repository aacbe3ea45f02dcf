/**
 * engine/http/router.ts: literal segments beat parameters whatever the declaration order, fewer parameters beat
 * more, a path under other methods reports them (sorted, once each), parameters are percent-decoded and a bad
 * escape matches nothing, empty segments are ignored.
 */
import { describe, expect, it } from "vitest"
import { makeRouter } from "../../engine/http/router.ts"

const route = (method: string, path: string, name: string) => ({ method, path, name })

describe("makeRouter", () => {
  const router = makeRouter([
    route("GET", "/orders/{orderId}", "getOrder"),
    route("DELETE", "/orders/{orderId}", "cancelOrder"),
    route("GET", "/orders/blotter", "blotter"),
    route("GET", "/orders", "listOrders"),
    route("POST", "/trade", "placeTrade"),
    route("GET", "/a/{x}/{y}", "twoParams"),
    route("GET", "/a/b/{y}", "oneParam"),
    route("GET", "/", "root")
  ])
  const found = (method: string, path: string) => {
    const m = router.find(method, path)
    if (m._tag !== "Found") throw new Error(`${method} ${path}: ${m._tag}`)
    return { name: m.route.name, params: m.params }
  }

  it("matches literal paths with no parameters", () => {
    expect(found("GET", "/orders")).toEqual({ name: "listOrders", params: {} })
    expect(found("POST", "/trade")).toEqual({ name: "placeTrade", params: {} })
    expect(found("GET", "/")).toEqual({ name: "root", params: {} })
  })
  it("captures parameters by name", () => {
    expect(found("GET", "/orders/ord_1")).toEqual({ name: "getOrder", params: { orderId: "ord_1" } })
    expect(found("DELETE", "/orders/ord_1")).toEqual({ name: "cancelOrder", params: { orderId: "ord_1" } })
    expect(found("GET", "/a/p/q")).toEqual({ name: "twoParams", params: { x: "p", y: "q" } })
  })
  it("lets a literal segment beat a parameter, though the parameter route was declared first", () => {
    expect(found("GET", "/orders/blotter")).toEqual({ name: "blotter", params: {} })
    expect(found("GET", "/a/b/q")).toEqual({ name: "oneParam", params: { y: "q" } })
    const reversed = makeRouter([route("GET", "/orders/blotter", "blotter"), route("GET", "/orders/{orderId}", "getOrder")])
    const m = reversed.find("GET", "/orders/blotter")
    expect(m._tag === "Found" && m.route.name).toBe("blotter")
  })
  it("percent-decodes parameters, not literals", () => {
    expect(found("GET", "/orders/a%20b")).toEqual({ name: "getOrder", params: { orderId: "a b" } })
    expect(found("GET", "/orders/%F0%9F%92%A9")).toEqual({ name: "getOrder", params: { orderId: "💩" } })
    expect(found("GET", "/orders/%2F")).toEqual({ name: "getOrder", params: { orderId: "/" } })
    expect(router.find("POST", "/tr%61de")).toEqual({ _tag: "NotFound" })
  })
  it("matches nothing on an invalid percent-escape", () => {
    expect(router.find("GET", "/orders/%E0%A4%A")).toEqual({ _tag: "NotFound" })
    expect(router.find("GET", "/orders/%")).toEqual({ _tag: "NotFound" })
    expect(router.find("GET", "/orders/%ZZ")).toEqual({ _tag: "NotFound" })
    // a bad escape in one parameter route does not stop a literal route of the same length from matching
    expect(found("GET", "/orders/blotter")).toEqual({ name: "blotter", params: {} })
  })
  it("ignores empty segments (double and trailing slashes)", () => {
    expect(found("GET", "//orders//ord_2/")).toEqual({ name: "getOrder", params: { orderId: "ord_2" } })
    expect(found("GET", "")).toEqual({ name: "root", params: {} })
  })
  it("answers NotFound for other lengths and other literals", () => {
    expect(router.find("GET", "/orders/x/y")).toEqual({ _tag: "NotFound" })
    expect(router.find("GET", "/ordersx")).toEqual({ _tag: "NotFound" })
    expect(router.find("GET", "/nothing/here/at/all")).toEqual({ _tag: "NotFound" })
    expect(router.find("GET", "/ORDERS")).toEqual({ _tag: "NotFound" })
  })
  it("lists the methods a path has, sorted and once each, when the method is not one of them", () => {
    expect(router.find("PATCH", "/orders/ord_1")).toEqual({ _tag: "MethodNotAllowed", allow: ["DELETE", "GET"] })
    expect(router.find("GET", "/trade")).toEqual({ _tag: "MethodNotAllowed", allow: ["POST"] })
    expect(router.find("get", "/orders")).toEqual({ _tag: "MethodNotAllowed", allow: ["GET"] })
    // /orders/blotter is matched by both GET routes and the DELETE one
    expect(router.find("PUT", "/orders/blotter")).toEqual({ _tag: "MethodNotAllowed", allow: ["DELETE", "GET"] })
    expect(router.find("POST", "/a/b/c")).toEqual({ _tag: "MethodNotAllowed", allow: ["GET"] })
  })
  it("treats a template segment as a parameter only when it has a name between braces", () => {
    const odd = makeRouter([route("GET", "/x/{}", "emptyBraces"), route("GET", "/y/a{b}", "partial")])
    expect(odd.find("GET", "/x/{}")).toMatchObject({ _tag: "Found", params: {} })
    expect(odd.find("GET", "/x/anything")).toEqual({ _tag: "NotFound" })
    expect(odd.find("GET", "/y/a{b}")).toMatchObject({ _tag: "Found", params: {} })
    expect(odd.find("GET", "/y/ab")).toEqual({ _tag: "NotFound" })
  })
  it("an empty router finds nothing", () => {
    expect(makeRouter([]).find("GET", "/")).toEqual({ _tag: "NotFound" })
  })
})
