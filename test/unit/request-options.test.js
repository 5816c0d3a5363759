// A call's options are checked on every call, so only the keys given are checked
// (runtime/options.js checkGiven) over what each checker makes of undefined: a call that gives
// some options must get exactly what checking every key would give.
import { expect } from 'chai'
import { requestOptionsChecker } from '../../client/options.js'
import { checkOptions } from '../../runtime/options.js'

const defaults = { timeout: 5000, idempotent: false, attemptTimeout: 0, hedge: 0, where: null }

describe('request options, checked per call', () => {
  const check = requestOptionsChecker(defaults)

  it('a call without options, with {} and with keys set to undefined all get the defaults', () => {
    const none = check(undefined)
    expect(Object.isFrozen(none)).to.equal(true)
    expect(check({})).to.deep.equal(none)
    expect(check({ timeout: undefined, signal: undefined, headers: undefined })).to.deep.equal(none)
    expect(none).to.include({ timeout: 5000, idempotent: false, endpoint: null, headers: null, values: false })
  })

  it('the keys given are checked and the rest are the defaults, as a check of every key gives', () => {
    const signal = new AbortController().signal
    const given = { timeout: 250, idempotent: true, key: 'user-1', headers: { a: '1' }, signal }
    const got = check(given)
    expect(got).to.deep.equal({ ...check(undefined), ...given, headers: { a: '1' } })
    expect(Object.keys(got)).to.deep.equal(Object.keys(check(undefined)))
    expect(check({ headers: {} }).headers).to.equal(null)
  })

  it('refuses what checkOptions refuses: an unknown key (naming the known ones), a bad value, a non-object', () => {
    expect(() => check({ timeuot: 5 })).to.throw(/unknown request options key "timeuot"; known keys: timeout, idempotent/)
    expect(() => check({ timeout: 0 })).to.throw(/timeout must be a whole number/)
    expect(() => check({ version: 'not a range' })).to.throw(/version must be a semver range/)
    for (const bad of [null, 5, 'x', []]) expect(() => check(bad), String(bad)).to.throw(/request options must be an object/)
    expect(() => checkOptions('request options', null, {})).to.throw(/request options must be an object/)
  })

  it('ignores what an options object inherits, as checkOptions does', () => {
    const given = Object.create({ timeuot: 5 })
    given.timeout = 100
    expect(check(given).timeout).to.equal(100)
  })
})
