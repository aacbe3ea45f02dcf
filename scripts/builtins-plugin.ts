/**
 * A rolldown plugin for the serve bundle (E-531): each Node builtin the bundle imports is taken with
 * `process.getBuiltinModule` instead of an ESM import. An ESM import of a builtin builds its module facade, which
 * reads every export once, getters included, and several getters load whole subsystems: node:http's `WebSocket`
 * loads undici (about 20 ms), node:crypto's `webcrypto` the Web Crypto implementation, node:fs's `promises` and so on.
 * The bundle's thirteen builtins cost some 30 ms of CPU at every start that way (a warm start is about 400 ms).
 *
 * The virtual module exports the builtin as its default and each of its data properties by name; a getter is exported
 * only when the bundle imports it by name (GETTERS_IMPORTED, read then, once), so the rest are never run. A name the
 * bundle imports that is neither fails the build (rolldown's MISSING_EXPORT), never the start.
 */
import { isBuiltin } from "node:module"
import type { Plugin } from "rolldown"

const PREFIX = "\0sokoni-builtin:"

/** Getters some bundled module imports by name: each is read once when its builtin loads. */
const GETTERS_IMPORTED: Readonly<Record<string, ReadonlyArray<string>>> = {
  "node:fs": ["promises"]
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/
// Names a `const` cannot take; none is an export of a builtin today, but the module must never fail to parse.
const RESERVED = new Set(["default", "delete", "new", "class", "function", "import", "export", "in", "with", "yield", "await", "let", "static", "enum"])

/** `node:x` for `x` or `node:x`: one virtual module per builtin however it was named. */
const canonical = (specifier: string) => (specifier.startsWith("node:") ? specifier : `node:${specifier}`)

/** The source of the virtual module for `name`, from the builtin as this Node has it. */
export const builtinModuleSource = (name: string): string => {
  const builtin = process.getBuiltinModule(name) as Record<string, unknown>
  const getters = new Set(GETTERS_IMPORTED[name] ?? [])
  const names = Object.entries(Object.getOwnPropertyDescriptors(builtin))
    .filter(([key, descriptor]) => IDENTIFIER.test(key) && !RESERVED.has(key) && ("value" in descriptor || getters.has(key)))
    .map(([key]) => key)
  const lines = [`const builtin = process.getBuiltinModule(${JSON.stringify(name)})`, "export default builtin"]
  if (names.length > 0) lines.push(`export const { ${names.join(", ")} } = builtin`)
  return lines.join("\n")
}

export const builtinsWithoutFacades = (): Plugin => ({
  name: "sokoni-builtins-without-facades",
  resolveId(source) {
    return isBuiltin(source) ? `${PREFIX}${canonical(source)}` : null
  },
  load(id) {
    return id.startsWith(PREFIX) ? builtinModuleSource(id.slice(PREFIX.length)) : null
  }
})
