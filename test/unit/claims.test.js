// The rules every receiver of a membership claim applies, peers and clients alike
// (protocol/claims.js, PROTOCOL.md 4.6 rules 1-3), as a table; and that both sides take them
// from there: a client given a list applies the same rules a peer does.
import { expect } from 'chai'
import { readFileSync, readdirSync } from 'node:fs'
import { incarnationHorizon, beyondHorizon, authored, isNews, endpointAllowed } from '../../protocol/claims.js'
import { MemberState as S, INCARNATION_HORIZON_MS } from '../../protocol/constants.js'
import { setup, tick, A, B, C } from '../helpers/fake-client.js'
import { insideOf } from '../../client/client.js'

const claim = (endpoint, incarnation, state) => ({ endpoint, incarnation, state, meta: {} })

describe('membership claims: the rules both sides apply', () => {
  it('rule 1, the horizon: 24 h above the wall clock', () => {
    const h = incarnationHorizon(1000)
    expect(h).to.equal(1000 + INCARNATION_HORIZON_MS)
    expect(beyondHorizon(claim(A, h, S.ALIVE), h)).to.equal(false)
    expect(beyondHorizon(claim(A, h + 1, S.ALIVE), h)).to.equal(true)
  })

  const news = [
    // [held, claim, news?]
    [undefined, [5, S.ALIVE], true],
    [undefined, [5, S.SUSPECT], false], // rule 2: only alive introduces
    [undefined, [5, S.DEAD], false],
    [undefined, [5, S.LEFT], false],
    [[5, S.ALIVE], [5, S.SUSPECT], true], //  graver at the same incarnation
    [[5, S.SUSPECT], [5, S.ALIVE], false],
    [[5, S.DEAD], [6, S.ALIVE], true], //     a higher incarnation
    [[6, S.ALIVE], [5, S.LEFT], false],
  ]
  for (const [held, c, out] of news) {
    it(`news: ${held === undefined ? 'not held' : `held ${held}`}, claim ${c} -> ${out}`, () => {
      expect(isNews(held === undefined ? undefined : { incarnation: held[0], state: held[1] }, claim(A, c[0], c[1]))).to.equal(out)
    })
  }

  it('rule 3: left is the member\'s own word; relayed, it reads as dead', () => {
    expect(authored(claim(A, 5, S.LEFT), A).state).to.equal(S.LEFT)
    expect(authored(claim(A, 5, S.LEFT), B).state).to.equal(S.DEAD)
    expect(authored(claim(A, 5, S.LEFT), undefined).state).to.equal(S.DEAD)
    expect(authored(claim(A, 5, S.SUSPECT), B).state).to.equal(S.SUSPECT)
  })

  it('a receiver plain by default takes loopback endpoints only; a secured one (or one plain on purpose) any', () => {
    expect(endpointAllowed('tcp://127.0.0.1:1', false)).to.equal(true)
    expect(endpointAllowed('tcp://10.0.0.7:1', false)).to.equal(false)
    expect(endpointAllowed('tcp://10.0.0.7:1', true)).to.equal(true)
  })

  it('a client does not take in a member a list introduces as suspect (rule 2), as a peer does not', async () => {
    const { clock, client } = setup({ discover: true }, [A])
    insideOf(client).learn([claim(B, Date.now(), S.SUSPECT), claim(C, Date.now(), S.ALIVE)], A)
    await tick(clock, 5)
    const known = client.peers().map((p) => p.endpoint)
    expect(known).to.include(C)
    expect(known).to.not.include(B)
    await client.close()
  })

  it('the horizon, the left rule and the order of claims are written once: only protocol/claims.js spells them', () => {
    const files = []
    for (const dir of ['peer', 'client', 'protocol', 'transport']) {
      for (const f of readdirSync(new URL(`../../${dir}/`, import.meta.url), { recursive: true })) if (String(f).endsWith('.js')) files.push(`${dir}/${f}`)
    }
    // protocol/index.js lists the constant among its exports: a re-export, not a use.
    const spelled = files.filter((f) => f !== 'protocol/claims.js' && f !== 'protocol/constants.js' && f !== 'protocol/index.js').filter((f) => {
      const src = readFileSync(new URL(`../../${f}`, import.meta.url), 'utf8')
      return /INCARNATION_HORIZON_MS|State\.LEFT && author|\boutranks\(/.test(src)
    })
    expect(spelled).to.deep.equal(['peer/membership/member-table.js']) // the table's own merge (applying, not admitting)
  })
})
