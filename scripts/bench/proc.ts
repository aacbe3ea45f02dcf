/** Readings of another process from /proc (Linux only): CPU time and resident memory. */
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"

const clockTicks = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100
  } catch {
    return 100
  }
})()

/** User + system CPU time the process has used so far, in microseconds (resolution: one clock tick, usually 10 ms). */
export const cpuMicros = (pid: number): number => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
  // Fields after the command name, which is in parentheses and may hold spaces: state is [0], utime [11], stime [12].
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / clockTicks
}

/** Resident set size in MB (VmRSS), or VmHWM (the peak) when asked. */
export const residentMB = (pid: number, field: "VmRSS" | "VmHWM" = "VmRSS"): number => {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"))
  if (match === null) throw new Error(`no ${field} for pid ${pid}`)
  return Number(match[1]) / 1024
}
