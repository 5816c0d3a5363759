// Reads an OpenAPI or AsyncAPI document (JSON) on stdin and prints what the outside
// validators refuse in it, as a JSON array ([] for a valid one): test/helpers/api-docs.js,
// for the Python suite's tests of `zeromesh describe --openapi` / `--asyncapi`.
import { openapiErrors, asyncapiErrors } from '../../../test/helpers/api-docs.js'

let text = ''
for await (const chunk of process.stdin) text += chunk
const doc = JSON.parse(text)
const errors = doc.openapi !== undefined ? await openapiErrors(doc) : await asyncapiErrors(doc)
process.stdout.write(JSON.stringify(errors) + '\n')
