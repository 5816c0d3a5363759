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

/**
 * What a document describes, or a gateway serves: a Client (its peers' statements, by
 * client.peers()), contracts (contract()), implement() results and on() subscriptions (the
 * groups that subscribe), or service descriptors (client.describe(), `zeromesh describe --json`);
 * one or an array of them.
 */
export type DescribeSource = DescribeItem | DescribeItem[]
export type DescribeItem =
  | import('../client/index.js').Client
  | import('../runtime/contract.js').Contract
  | import('../runtime/contract.js').Subscription
  | import('../protocol/index.js').ServiceDescriptor
  | Record<string, (...args: any[]) => unknown>

/** A route of its own for an operation: 'VERB /path' (GET, POST, PUT, PATCH, DELETE; no path parameters) -> the method's wire name, or { method, idempotent }. A GET's or DELETE's input is its query string. */
export type GatewayRoutes = Record<string, string | { method: string, idempotent?: boolean }>

export interface DescribeOptions {
  /** A schema with no JSON Schema (no Standard JSON Schema in its library, or one JSON Schema cannot express, or a peer stated none) throws InvalidArgumentError naming it and its vendor, instead of an open schema `{}` and a warning. Default false. */
  strict?: boolean
  /** Where the warnings of open schemas go. Default: process.emitWarning (code ZEROMESH_HTTP_SCHEMA). */
  onWarning?: (message: string) => void
  /** info.title. Default: the contracts' names, or 'zeromesh mesh'. */
  title?: string
  /** info.version. Default: the contracts' version when they have one, else '0.0.0'. */
  version?: string
  description?: string
}

export interface OpenApiOptions extends DescribeOptions {
  /** OpenAPI servers, as given. */
  servers?: Array<{ url: string, description?: string }>
  /** Operations at routes of their own, instead of their default POST /{contract}/{method}. */
  routes?: GatewayRoutes
  /** Errors as RFC 9457 application/problem+json (type, title, status, detail, code, issues) instead of the { error, code, issues } body. Default false. */
  problemJson?: boolean
}

/** An OpenAPI 3.1 document: one operation per method, operationId its wire name, tagged by contract, JSON Schema 2020-12, one error schema from httpStatusOfCode. */
export declare function openapiOf(source: DescribeSource, options?: OpenApiOptions): Record<string, any> & { openapi: string, info: { title: string, version: string }, paths: Record<string, any> }

/** An AsyncAPI 3.0 document: each event a channel (its payload schema from the contract that publishes it), each subscribing group a receive operation, each publishing contract a send operation. */
export declare function asyncapiOf(source: DescribeSource, options?: DescribeOptions): Record<string, any> & { asyncapi: string, info: { title: string, version: string }, channels: Record<string, any>, operations: Record<string, any> }

export interface GatewayOptions extends OpenApiOptions {
  /** Contracts (contract()) or implement() results: their routes, and each input checked before the call. Default []. */
  contracts?: Array<import('../runtime/contract.js').Contract | Record<string, (...args: any[]) => unknown>>
  /** Serve what the client's peers say they serve too. Default true. */
  mesh?: boolean
  /** A call's deadline in ms when the request has no x-zeromesh-timeout header. Default: the client's timeout. */
  timeout?: number
  /** The most x-zeromesh-timeout may ask, in ms. Default gatewayDefaults.maxTimeout (60000). */
  maxTimeout?: number
  /** The largest JSON body read, in bytes; 413 beyond. Default gatewayDefaults.maxBody (1 MiB). */
  maxBody?: number
  /** A request whose caller hangs up is aborted in the client (its signal, the handler's ctx.signal). Default false: it costs about 20 us of CPU a call on a cold front. A stream ends when its caller hangs up whatever this says. */
  abortOnClose?: boolean
  /** A request with no route looks at the peers' statements again at most this often, in ms. Default gatewayDefaults.meshCheckMs (1000). */
  meshCheckMs?: number
  /** Where the OpenAPI document is served, or null for nowhere. Default '/openapi.json'. */
  openapiPath?: string | null
  /** Where the AsyncAPI document is served, or null for nowhere. Default '/asyncapi.json'. */
  asyncapiPath?: string | null
}

/** A node:http request handler (Express, Nest's Express adapter, http.createServer): the routes of openapiOf(), a route it does not serve to `next` (or 404). */
export interface Gateway {
  (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse, next?: (err?: unknown) => void): void
  /** The OpenAPI document it serves now. */
  openapi(): ReturnType<typeof openapiOf>
  /** The AsyncAPI document it serves now. */
  asyncapi(): ReturnType<typeof asyncapiOf>
}

/** The gateway's defaults. */
export declare const gatewayDefaults: Readonly<{ maxTimeout: number, maxBody: number, abortOnClose: boolean, meshCheckMs: number, openapiPath: string, asyncapiPath: string }>

/** An HTTP gateway in front of `client`: docs/guides/http-api.md. */
export declare function gateway(client: import('../client/index.js').Client, options?: GatewayOptions): Gateway
