// zeromesh/http: the one mapping of zeromesh errors to HTTP answers (examples/express and
// zeromesh/nest's exception filter use it).
import { expect } from 'chai'
import { httpAnswerOf } from '../../http/index.js'
import { BusyError, DrainingError, NoPeersError, NoSubscribersError, ClosedError, TimeoutError, InvalidInputError, ConnectionLostError, invalidArgument, remoteError } from '../../protocol/errors.js'

describe('httpAnswerOf', () => {
  it('nothing ran (busy, draining, no peers, no subscribers, closed): 503 with Retry-After 1', () => {
    for (const err of [new BusyError('b'), new DrainingError('d'), new NoPeersError('n'), new NoSubscribersError('s'), new ClosedError('c')]) {
      expect(httpAnswerOf(err), err.code).to.deep.equal({ status: 503, retryAfter: 1, body: { error: err.message, code: err.code } })
    }
  })

  it('a lost connection: 503 with Retry-After for an idempotent request (no retry left; safe to send again), 500 for one that may have run once', () => {
    const again = new ConnectionLostError('lost; the retry budget was spent', { retryable: true })
    expect(httpAnswerOf(again)).to.deep.equal({ status: 503, retryAfter: 1, body: { error: again.message, code: again.code } })
    expect(httpAnswerOf(new ConnectionLostError('lost; not idempotent')).status).to.equal(500)
  })

  it('a timeout: 504; the caller\'s input: 400, with a contract\'s issues', () => {
    const t = new TimeoutError('late')
    expect(httpAnswerOf(t)).to.deep.equal({ status: 504, retryAfter: null, body: { error: 'late', code: t.code } })
    const bad = invalidArgument('no')
    expect(httpAnswerOf(bad).status).to.equal(400)
    expect(httpAnswerOf(bad).body).to.not.have.property('issues')
    const input = new InvalidInputError('invalid input', { issues: [{ path: ['n'], message: 'Expected number' }] })
    expect(httpAnswerOf(input).body.issues).to.deep.equal([{ path: ['n'], message: 'Expected number' }])
  })

  it('anything else: 500 whose body keeps the handler\'s message to itself', () => {
    expect(httpAnswerOf(remoteError('secret detail', 'E_MINE'))).to.deep.include({ status: 500, retryAfter: null })
    expect(httpAnswerOf(remoteError('secret detail', 'E_MINE')).body.error).to.equal('internal error')
    expect(httpAnswerOf(new Error('x')).status).to.equal(500)
    expect(httpAnswerOf(undefined).status).to.equal(500)
    expect(httpAnswerOf('a string').status).to.equal(500)
  })

  it('a code that names an Object property (constructor, toString, __proto__) is not a status: 500', () => {
    for (const code of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      const err = Object.assign(new Error('odd'), { code })
      expect(httpAnswerOf(err), code).to.deep.equal({ status: 500, retryAfter: null, body: { error: 'internal error', code } })
    }
  })
})
