/** The slice of autocannon 9's programmatic API the bench uses (the package ships no types). */
declare module "autocannon" {
  export interface RawRequest {
    method?: string
    path?: string
    headers?: Record<string, string>
    body?: string
  }
  export interface Request extends RawRequest {
    setupRequest?: (request: RawRequest, context: Record<string, unknown>) => RawRequest | undefined
    onResponse?: (status: number, body: string, context: Record<string, unknown>, headers: Record<string, string>) => void
  }
  export interface Options {
    url: string
    connections?: number
    duration?: number
    amount?: number
    timeout?: number
    headers?: Record<string, string>
    requests?: Request[]
  }
  export interface Histogram {
    average: number
    p50: number
    p99: number
    total: number
  }
  export interface Result {
    requests: Histogram
    latency: Histogram
    duration: number
    errors: number
    timeouts: number
    non2xx: number
    "2xx": number
    statusCodeStats: Record<string, { count: number }>
  }
  function autocannon(options: Options): Promise<Result>
  export default autocannon
}
