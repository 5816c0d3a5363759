// The outside validators of the documents zeromesh/http makes: an OpenAPI 3.1 validator
// (@seriousme/openapi-schema-validator: the OpenAPI Initiative's JSON Schemas of the
// specification, every $ref resolved) and the AsyncAPI parser (@asyncapi/parser, with its
// Spectral rules). Each resolves with the list of what it refused: [] for a valid document.
import { Validator } from '@seriousme/openapi-schema-validator'
import { Parser, DiagnosticSeverity } from '@asyncapi/parser'

// Each compiles its schemas or rules when made: one of each serves every document.
let validator = null
let parser = null

/** What the OpenAPI validator refuses in `doc` (it must say 3.1), as strings. */
export async function openapiErrors (doc) {
  const v = validator ??= new Validator()
  const r = await v.validate(structuredClone(doc))
  if (v.version !== '3.1') return [`validated as OpenAPI ${v.version}, not 3.1`]
  return r.valid ? [] : (Array.isArray(r.errors) ? r.errors : [r.errors]).map((e) => typeof e === 'string' ? e : JSON.stringify(e))
}

/** What the AsyncAPI parser reports as errors or warnings in `doc` (its hints, such as a newer version existing, aside). */
export async function asyncapiErrors (doc) {
  const { document, diagnostics } = await (parser ??= new Parser()).parse(JSON.stringify(doc))
  const bad = diagnostics.filter((d) => d.severity === DiagnosticSeverity.Error || d.severity === DiagnosticSeverity.Warning).map((d) => `${d.code}: ${d.message} at ${d.path.join('.')}`)
  if (document === undefined && bad.length === 0) bad.push('the parser gave no document')
  if (document !== undefined && document.version() !== '3.0.0') bad.push(`parsed as AsyncAPI ${document.version()}`)
  return bad
}
