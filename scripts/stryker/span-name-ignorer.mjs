// A Stryker ignorer plugin (E-273): the name given to `Effect.fn("Service.method")` (or `Effect.fnUntraced`) labels
// the method's tracing span and stack frames; no answer, write or event depends on it, so a mutant that blanks it can
// only survive and would count against the score as untested behaviour. Only that first string argument is ignored;
// the function body passed to the returned function is mutated as usual.
import { declareValuePlugin, PluginKind } from "@stryker-mutator/api/plugin"

const SPAN_NAMING = new Set(["fn", "fnUntraced"])

/** @param {import("@babel/core").NodePath} path */
const isSpanName = (path) => {
  if (!path.isStringLiteral() || path.listKey !== "arguments" || path.key !== 0) return false
  const call = path.parentPath
  if (!call?.isCallExpression()) return false
  const callee = call.node.callee
  return (
    callee.type === "MemberExpression" &&
    callee.object.type === "Identifier" &&
    callee.object.name === "Effect" &&
    callee.property.type === "Identifier" &&
    SPAN_NAMING.has(callee.property.name)
  )
}

export const strykerPlugins = [
  declareValuePlugin(PluginKind.Ignore, "span-names", {
    shouldIgnore: (path) => (isSpanName(path) ? "an Effect.fn span name labels traces; no behaviour depends on it (E-273)" : undefined)
  })
]
