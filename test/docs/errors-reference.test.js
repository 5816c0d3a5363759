// docs/reference/errors.md and the HTTP guide's table against the code: every error class
// zeromesh exports is in the reference with its class name and its `retryable`, and the HTTP
// status the guide gives each code is what zeromesh/http's httpAnswerOf answers.
import { expect } from 'chai'
import { readFileSync } from 'node:fs'
import * as errors from '../../protocol/errors.js'
import { httpAnswerOf } from '../../http/index.js'

const read = (p) => readFileSync(new URL(`../../${p}`, import.meta.url), 'utf8')
/** The rows of the markdown tables of `text` whose first cell is a code: code -> the other cells. */
function rows (text) {
  const out = new Map()
  for (const m of text.matchAll(/^\| `(ERR_ZEROMESH_[A-Z_]+)` \|(.*)\|$/gm)) out.set(m[1], m[2].split(' | ').map((c) => c.trim()))
  return out
}
const classes = Object.values(errors).filter((c) => typeof c === 'function' && typeof c.code === 'string' && c.code !== 'ERR_ZEROMESH')

describe('the errors reference and the HTTP guide say what the code does', () => {
  it('every error class is in docs/reference/errors.md with its name and its retryable', () => {
    const table = rows(read('docs/reference/errors.md'))
    for (const cls of classes) {
      const row = table.get(cls.code)
      expect(row, cls.code).to.not.equal(undefined)
      expect(row[0], cls.code).to.equal(`\`${cls.name}\``)
      expect(row[1].startsWith(cls.retryable ? 'yes' : 'no'), `${cls.code}: ${row[1]}`).to.equal(true)
    }
  })

  it('each status in the HTTP guide is httpAnswerOf\'s, a retryable lost connection\'s too', () => {
    const table = rows(read('docs/guides/http-api.md'))
    const byCode = new Map(classes.map((c) => [c.code, c]))
    for (const [code, [status]] of table) {
      const cls = byCode.get(code)
      expect(cls, code).to.not.equal(undefined)
      const err = new cls('x')
      const given = [...status.matchAll(/\b([1-5]\d\d)\b/g)].map((m) => Number(m[1]))
      if (/err\.retryable/.test(status)) {
        // "N when err.retryable ...; else M"
        expect([httpAnswerOf(new cls('x', { retryable: true })).status, httpAnswerOf(err).status], code).to.deep.equal(given)
      } else {
        expect(httpAnswerOf(err).status, code).to.equal(given[0])
      }
      expect(httpAnswerOf(err).retryAfter !== null, code).to.equal(/Retry-After/.test(status) && !/err\.retryable/.test(status))
    }
  })
})
