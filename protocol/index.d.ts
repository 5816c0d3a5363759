// The wire format: see protocol/PROTOCOL.md.
export {
  ZeromeshError, TimeoutError, NoPeersError, UnknownMethodError, RemoteError, BusyError, DrainingError,
  ClosedError, InvalidArgumentError, ConnectionLostError, AbortError, ProtocolError, ErrorCode,
} from '../index.js'

export declare const SIGNATURE: readonly number[]
export declare const HEADER_SIZE: 5
export declare const PROTOCOL_VERSION: number
export declare const PROTOCOL_VERSION_MIN: number
export declare const PROTOCOL_VERSION_MAX: number
export declare const MessageType: Readonly<{ REQUEST: 1, REPLY: 2, PING: 3, PONG: 4, ERROR: 5 }>
export declare const Status: Readonly<{ OK: 0, UNKNOWN_METHOD: 1, REMOTE: 2, BUSY: 3, DRAINING: 4, INVALID_REQUEST: 5 }>
export declare const ProtocolErrorCode: Readonly<{ UNSUPPORTED_VERSION: 1, UNKNOWN_TYPE: 2 }>
export declare const FLP_PING: 'PING'
export declare const FLP_PONG: 'PONG'
export declare const MAX_REQUEST_ID: number
export declare const Limits: Readonly<{ maxMessageSize: number, maxDepth: number, maxBatch: number, maxMethodLength: number }>

export type RequestEntry = [id: number, method: string, args: unknown, timeoutMs: number]
export type ReplyEntry = [id: number, status: number, value: unknown]

export interface DecodedRequest { type: 1, version: number, requests: Array<{ id: number, method: string, args: unknown, timeoutMs: number }>, invalid: Array<{ id: number, reason: string }> }
export interface DecodedReply { type: 2, version: number, meta: Record<string, unknown>, replies: Array<{ id: number, status: number, value?: unknown, message?: string, code?: string | null }> }
export interface DecodedPing { type: 3, version: number, seq: number }
export interface DecodedPong { type: 4, version: number, seq: number, meta: Record<string, unknown> }
export interface DecodedError { type: 5, version: number, code: number, message: string, minVersion: number, maxVersion: number }
export type Decoded = DecodedRequest | DecodedReply | DecodedPing | DecodedPong | DecodedError

export declare function encodeRequest(entries: RequestEntry[]): Buffer
export declare function encodeReply(meta: Record<string, unknown>, entries: ReplyEntry[]): Buffer
export declare function encodePing(seq: number): Buffer
export declare function encodePong(seq: number, meta: Record<string, unknown>): Buffer
export declare function encodeError(code: number, message: string): Buffer
export declare function decode(frame: Uint8Array, limits?: Partial<{ maxMessageSize: number, maxDepth: number, maxBatch: number, maxMethodLength: number }>): Decoded
export declare function hasSignature(frame: Uint8Array): boolean
export declare const Kind: Readonly<{ ZEROMESH: 'zeromesh', FLP_PING: 'flp-ping', FLP_REQUEST: 'flp-request', INVALID: 'invalid' }>
export declare function classify(frames: Buffer[]): 'zeromesh' | 'flp-ping' | 'flp-request' | 'invalid'
export declare function checkValue(value: unknown, maxDepth: number): string | null
