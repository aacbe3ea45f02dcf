import type { RegisteredCheck } from "./conform.ts"
export type StatefulCheck = RegisteredCheck
export const statefulChecks = (): ReadonlyArray<StatefulCheck> => []
