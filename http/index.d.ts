/** The HTTP status of each zeromesh code that has one other than 500 (docs/guides/http-api.md). */
export declare const httpStatusOfCode: Readonly<Partial<Record<import('../protocol/index.js').ErrorCode, number>>>
/** Seconds a 503 asks the caller to wait before trying again (its Retry-After). */
export declare const RETRY_AFTER_S: number
/** How to answer an error a zeromesh call rejected with. */
export declare function httpAnswerOf(err: unknown): {
  /** 503 (busy, draining, no peers, no subscribers, closed), 504 (timeout), 400 (invalid input or argument), else 500. */
  status: number
  /** Seconds for a Retry-After header (a 503), or null. */
  retryAfter: number | null
  /** The answer's JSON: the message ('internal error' for a 500), the zeromesh code, and a contract's issues for a 400. */
  body: { error: string, code: string | null, issues?: unknown[] }
}
