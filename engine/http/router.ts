/**
 * Matching a method and path to a declared route. Templates use the contract's `{name}` segments; a literal
 * segment beats a parameter (`/orders/blotter` wins over `/orders/{orderId}`). A path that exists under another
 * method reports the methods it has, for a 405 with `Allow`. Pure; built once at start-up.
 */
interface Compiled<R> {
  readonly route: R
  readonly segments: ReadonlyArray<{ readonly literal: string } | { readonly param: string }>
  readonly params: number
}

export type RouteMatch<R> =
  | { readonly _tag: "Found"; readonly route: R; readonly params: Readonly<Record<string, string>> }
  | { readonly _tag: "MethodNotAllowed"; readonly allow: ReadonlyArray<string> }
  | { readonly _tag: "NotFound" }

/** How many distinct method-and-path answers a router remembers before starting afresh. */
export const MAX_REMEMBERED = 10_000

const splitPath = (path: string) => path.split("/").filter((s) => s !== "")

export const makeRouter = <R extends { readonly method: string; readonly path: string }>(routes: ReadonlyArray<R>) => {
  const byLength = new Map<number, Array<Compiled<R>>>()
  for (const route of routes) {
    const segments = splitPath(route.path).map((s) => {
      const param = /^\{(.+)\}$/.exec(s)?.[1]
      return param === undefined ? { literal: s } : { param }
    })
    const list = byLength.get(segments.length) ?? []
    list.push({ route, segments, params: segments.filter((s) => "param" in s).length })
    byLength.set(segments.length, list)
  }
  for (const list of byLength.values()) list.sort((a, b) => a.params - b.params)

  const matchSegments = (compiled: Compiled<R>, parts: ReadonlyArray<string>): Record<string, string> | undefined => {
    const params: Record<string, string> = {}
    for (let i = 0; i < parts.length; i++) {
      const segment = compiled.segments[i]
      const part = parts[i] as string
      if (segment === undefined) return undefined
      if ("literal" in segment) {
        if (segment.literal !== part) return undefined
      } else {
        try {
          params[segment.param] = decodeURIComponent(part)
        } catch {
          return undefined
        }
      }
    }
    return params
  }

  const match = (method: string, path: string): RouteMatch<R> => {
    const parts = splitPath(path)
    const allow = new Set<string>()
    for (const compiled of byLength.get(parts.length) ?? []) {
      const params = matchSegments(compiled, parts)
      if (params === undefined) continue
      if (compiled.route.method === method) return { _tag: "Found", route: compiled.route, params }
      allow.add(compiled.route.method)
    }
    return allow.size > 0 ? { _tag: "MethodNotAllowed", allow: [...allow].sort() } : { _tag: "NotFound" }
  }

  // Matching is pure, so answers are remembered per method and path: most traffic repeats a few paths. Bounded by
  // starting afresh when full (paths with ids are unbounded); a match is read-only for its callers.
  const seen = new Map<string, RouteMatch<R>>()
  const find = (method: string, path: string): RouteMatch<R> => {
    const key = `${method} ${path}`
    let found = seen.get(key)
    if (found === undefined) {
      found = match(method, path)
      if (seen.size >= MAX_REMEMBERED) seen.clear()
      seen.set(key, found)
    }
    return found
  }

  return { find }
}
