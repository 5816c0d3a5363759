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

export interface Contract<Name extends string = string, Methods extends Record<string, MethodDefinition> = Record<string, MethodDefinition>> {
  readonly name: Name
  readonly version: string | null
  readonly methods: { readonly [K in keyof Methods]: Methods[K] & { readonly stream: boolean, readonly wire: `${Name}.${K & string}` } }
}

/**
 * A service described once, imported by peers and clients: `name` (letters, digits, '_', '-'),
 * an optional semver `version`, and its methods. On the wire `get` of `orders` is `orders.get`.
 */
export declare function contract<const Name extends string, const Methods extends Record<string, MethodDefinition>>(
  name: Name, definition: { version?: string, methods: Methods }): Contract<Name, Methods>

export type { Issue, DescribedContract, DescribedMethod } from '../protocol/index.js'
