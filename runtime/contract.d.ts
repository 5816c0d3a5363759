// Types of contracts (docs/guides/contracts.md). The Standard Schema v1 interface is the one
// zod, valibot and arktype implement (https://standardschema.dev); zeromesh only reads it.

/** A Standard Schema v1 validator: what `input` and `output` of a contract's method must be. */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1
    readonly vendor: string
    readonly validate: (value: unknown) => StandardResult<Output> | Promise<StandardResult<Output>>
    readonly types?: { readonly input: Input, readonly output: Output } | undefined
  }
}
export type StandardResult<Output> =
  | { readonly value: Output, readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<{ readonly message: string, readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined }> }

/** What a schema accepts, and what it hands on (a transforming schema's coerced, defaulted value). */
export type InputOf<S> = S extends StandardSchemaV1<infer I, any> ? I : never
export type OutputOf<S> = S extends StandardSchemaV1<any, infer O> ? O : never

export interface MethodDefinition {
  input: StandardSchemaV1
  output: StandardSchemaV1
  /** The method streams its results: items of the output schema. */
  stream?: boolean
}

export interface Contract<Name extends string = string, Methods extends Record<string, MethodDefinition> = Record<string, MethodDefinition>, Events extends Record<string, StandardSchemaV1> = Record<string, StandardSchemaV1>> {
  readonly name: Name
  readonly version: string | null
  readonly methods: { readonly [K in keyof Methods]: Methods[K] & { readonly stream: boolean, readonly wire: `${Name}.${K & string}` } }
  /** The events the service publishes: each its payload's schema and its wire name (`orders.placed`). */
  readonly events: { readonly [K in keyof Events]: { readonly schema: Events[K], readonly wire: `${Name}.${K & string}`, readonly contract: Name, readonly name: K } }
}

/**
 * A service described once, imported by peers and clients: `name` (letters, digits, '_', '-'),
 * an optional semver `version`, its methods, and the events it publishes (the schema of each
 * payload). On the wire `get` of `orders` is `orders.get`, its event `placed` `orders.placed`.
 */
export declare function contract<const Name extends string, const Methods extends Record<string, MethodDefinition> = {}, const Events extends Record<string, StandardSchemaV1> = {}>(
  name: Name, definition: { version?: string, methods?: Methods, events?: Events }): Contract<Name, Methods, Events>

/** A subscription made by on(): for implement()'s `events`, a Peer's `events` (an array), peer.subscribe's handlers. */
export interface Subscription {
  readonly event: string
  readonly group: string
  readonly handler: (payload: unknown, ctx: any) => unknown
}

/**
 * A subscription to `contract`'s `event`: the payload is checked against the event's schema
 * before `handler` runs and reaches it as the schema's output. Its group: the implementing
 * contract's name in implement()'s `events`; elsewhere `group`, or the event's wire name.
 */
export declare function on<C extends Contract, E extends keyof C['events'] & string>(
  contract: C, event: E, handler: (payload: OutputOf<C['events'][E]['schema']>, ctx: any) => unknown, options?: { group?: string }): Subscription

export type { Issue, DescribedContract, DescribedMethod, DescribedEvent } from '../protocol/index.js'
