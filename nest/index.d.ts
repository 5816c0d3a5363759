// Types of zeromesh/nest (docs/guides/nestjs.md). The Nest packages are the application's.
import { Server, ClientProxy, BaseRpcContext, ReadPacket, WritePacket, RpcException } from '@nestjs/microservices'
import type { ExceptionFilter, ArgumentsHost } from '@nestjs/common'
import type { Observable } from 'rxjs'
import type { Peer, PeerOptions, RequestContext } from '../peer/index.js'
import type { Client, ClientOptions, RequestOptions, PublishOptions, Delivery } from '../client/index.js'
import type { Contract, InputOf, OutputOf, StandardSchemaV1 } from '../runtime/contract.js'
import type { ZeromeshError } from '../protocol/index.js'

/** ZeromeshServer's options: a Peer's, without handlers and events (the application's patterns are those). */
export interface ZeromeshServerOptions extends Omit<PeerOptions, 'handlers' | 'events' | 'threads'> {
  /** Worker threads the handlers run in; 0 (the default) runs them on the main thread. */
  threads?: number
  /** With threads: the file (path or file: URL) of the application module each thread bootstraps. */
  module?: string | URL
  /** Its export. Default 'AppModule'. */
  moduleExport?: string
  /** The group of every @EventPattern whose extras name none: the instances of one group share each event (NATS's queue). Default: none, every instance runs each event (Redis, NATS without queue). */
  group?: string
  /** The Nest log levels of each thread's application. Default ['error', 'warn']. */
  threadLogger?: Array<'log' | 'error' | 'warn' | 'debug' | 'verbose' | 'fatal'> | false
}

/** The transport id of ZeromeshServer: @MessagePattern('x', ZEROMESH_TRANSPORT) serves 'x' through zeromesh alone in a hybrid app. */
export declare const ZEROMESH_TRANSPORT: unique symbol

/** A NestJS custom transport strategy: the application's patterns as a zeromesh peer's methods and subscriptions. */
export declare class ZeromeshServer extends Server {
  constructor(options?: ZeromeshServerOptions)
  listen(callback: (err?: unknown, ...optionalParams: unknown[]) => void): void
  /** Graceful: the peer leaves, finishes what runs, and closes. */
  close(): Promise<void>
  /** The peer's events ('member', 'error'). */
  on(event: string, callback: Function): void
  /** The zeromesh Peer, after listen(). */
  unwrap<T = Peer>(): T
  /** Nest 11.2 and 12: runs around every handler (main thread and threads), from the peer's main thread. */
  setOnProcessingStartHook(hook: (transportId: symbol | number, context: unknown, done: () => Promise<any>) => void): void
  setOnProcessingEndHook(hook: (transportId: symbol | number, context: unknown) => void): void
}

/** ZeromeshClient's options: a zeromesh Client's, and how long close() waits for the calls in flight. */
export interface ZeromeshClientOptions extends ClientOptions {
  /** Milliseconds close() lets the calls in flight finish before it closes the client. Default: the client's timeout. */
  drainTimeout?: number
  /** Milliseconds a call waits for a first peer to answer before it fails with code ECONNREFUSED (never past its timeout). Default 1000. */
  connectTimeout?: number
  /** Every send() goes to every server that serves the pattern, as Nest's broker transports (NATS, Redis, MQTT) deliver one send() to every subscribed server; a record's `all` overrides it. Default false: one server, as Nest's TCP transport. */
  all?: boolean
}

/** A ZeromeshRecord's options: a request's, and for send() waitForPeer, for emit() groups, ack and broadcast. */
export interface ZeromeshRecordOptions extends Omit<RequestOptions, 'values'>, Pick<PublishOptions, 'groups' | 'ack'> {
  /** send(): when the live peers known serve no such pattern, wait (within the timeout) for one that does, instead of failing at once. Default false. */
  waitForPeer?: boolean
  /** send(): to every server that serves the pattern (Nest's broadcast and multicast): each one's values as its handler emits them; completes once all completed. Default false: one server. */
  all?: boolean
  /** emit(): every subscribing server instance runs it, grouped or not (client.broadcast()). Default false: one instance of each group. */
  broadcast?: boolean
}

/** A contract's method (contract.methods.x): send() checks its input and is typed by it. */
export type ContractMethodPattern = { readonly input: StandardSchemaV1, readonly output: StandardSchemaV1, readonly stream: boolean, readonly wire: string }
/** A contract's event (contract.events.y): emit() checks its payload and is typed by it. */
export type ContractEventPattern = { readonly schema: StandardSchemaV1, readonly wire: string }

/** A pattern that is not a contract's: a string, or an object Nest names by its keys ({ cmd: 'sum' }). */
export type PlainPattern = string | number | ({ readonly wire?: never } & Record<string, unknown>)

/** A NestJS ClientProxy over a zeromesh Client: send() is a request or a stream, emit() an event. */
export declare class ZeromeshClient extends ClientProxy {
  constructor(options: ZeromeshClientOptions)
  connect(): Promise<Client>
  /** Lets the calls in flight finish (drainTimeout), then closes the client. */
  close(): Promise<void>
  /** The client's events ('peer', 'error'). */
  on(event: string, callback: Function): void
  /** The zeromesh Client. */
  unwrap<T = Client>(): T
  /** A contract's method: the input checked before it is sent; the output typed. */
  send<M extends ContractMethodPattern>(pattern: M, data: InputOf<M['input']> | ZeromeshRecord<InputOf<M['input']>>): Observable<OutputOf<M['output']>>
  send<TResult = any, TInput = any>(pattern: PlainPattern, data: TInput): Observable<TResult>
  /** A contract's event: the payload checked before it is published. Gives { delivered } once each group's handler finished. */
  emit<E extends ContractEventPattern>(pattern: E, data: InputOf<E['schema']> | ZeromeshRecord<InputOf<E['schema']>>): Observable<{ delivered: Delivery[] } | { sent: Delivery[] }>
  emit<TResult = any, TInput = any>(pattern: PlainPattern, data: TInput): Observable<TResult>
  protected publish(packet: ReadPacket, callback: (packet: WritePacket) => void): () => void
  protected dispatchEvent<T = any>(packet: ReadPacket): Promise<T>
}

/** Data with its call's options: client.send('x', new ZeromeshRecord(data, { headers, timeout })). */
export declare class ZeromeshRecord<T = unknown> {
  constructor(data: T, options?: ZeromeshRecordOptions)
  readonly data: T
  readonly options: ZeromeshRecordOptions
}

/** What a handler run by zeromesh gets as its RPC context (@Ctx()). */
export declare class ZeromeshContext extends BaseRpcContext<[RequestContext]> {
  /** The zeromesh ctx: publish(), broadcast(), remaining(), trace. */
  getContext(): RequestContext
  getHeaders(): Readonly<Record<string, string>>
  getSignal(): AbortSignal
  /** A performance.now() time; Infinity for none. */
  getDeadline(): number
  getPattern(): string
  /** An event's group; null for a message or a broadcast. */
  getGroup(): string | null
  /** Nest 12's packet metadata, as the caller's dispatch hook set it; undefined when none. */
  getMetadata(): Record<string, string> | undefined
}

/** An HTTP exception filter for zeromesh errors: 503 with Retry-After, 504, 400, else 500 (zeromesh/http). */
export declare class ZeromeshExceptionFilter implements ExceptionFilter<ZeromeshError> {
  catch(err: ZeromeshError, host: ArgumentsHost): any
}

/** @MessagePattern for a contract's method: its wire name, its input checked, a stream when the contract says so. */
export declare function ContractPattern<C extends Contract>(contract: C, method: keyof C['methods'] & string, extras?: Record<string, any>): MethodDecorator
/** @EventPattern for a contract's event: its wire name, its payload checked. */
export declare function ContractEventPattern<C extends Contract>(contract: C, event: keyof C['events'] & string, extras?: Record<string, any>): MethodDecorator

/**
 * A validation pipe's exceptionFactory for zeromesh/nest payloads:
 * `new StandardSchemaValidationPipe({ exceptionFactory: invalidInput })`. The caller gets
 * InvalidInputError with the issues, as for a contract's refusal (HTTP 400 through zeromesh/http).
 */
export declare function invalidInput(issues: ReadonlyArray<{ readonly message: string, readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> }>): RpcException
