// zeromesh/jetstream's pure parts, without NATS: the consumer name rule, the subject check,
// the options' checks, and the error when the NATS packages are missing.
import { expect } from 'chai'
import { consumerName, escapeName, subjectProblem } from '../../jetstream/names.js'
import { resolveDurableOptions, durableDefaults } from '../../jetstream/options.js'
import { loadNats } from '../../jetstream/load.js'
import { DurableSetupError } from '../../jetstream/errors.js'
import { PullBudget } from '../../jetstream/budget.js'
import { InvalidArgumentError } from '../../index.js'

// What NATS accepts in a durable name (nats-server: no whitespace, '.', '*', '>', path separators).
const VALID_DURABLE = /^[A-Za-z0-9_-]+$/

describe('durable events: names (jetstream/names.js)', () => {
  const table = [
    // group, event, consumer name
    ['billing', 'orders.placed', 'zm-billing-orders_2eplaced'],
    ['orders.placed', 'orders.placed', 'zm-orders_2eplaced-orders_2eplaced'], // the default group: the event's name
    ['billing@eu.v2', 'orders.placed', 'zm-billing_40eu_2ev2-orders_2eplaced'],
    ['a-b', 'c', 'zm-a_2db-c'],
    ['a', 'b-c', 'zm-a-b_2dc'],
    ['a_b', 'c', 'zm-a_5fb-c'],
    ['zé', 'x', 'zm-z_c3_a9-x'],
  ]
  for (const [group, event, name] of table) {
    it(`group ${JSON.stringify(group)}, event ${JSON.stringify(event)} -> ${name}`, () => {
      expect(consumerName(group, event)).to.equal(name)
      expect(name).to.match(VALID_DURABLE)
    })
  }

  it('different (group, event) pairs never share a name, a "-" in either included', () => {
    const pairs = [['a-', 'b'], ['a', '-b'], ['a', 'b'], ['a.b', 'c'], ['a', 'b.c'], ['a_2e', 'b'], ['a.', 'b']]
    const names = pairs.map(([g, e]) => consumerName(g, e))
    expect(new Set(names).size).to.equal(pairs.length)
    for (const n of names) expect(n).to.match(VALID_DURABLE)
  })

  it('a name past 200 characters is cut and ends in a hash of the whole: still valid, still distinct', () => {
    const g = 'g'.repeat(256)
    const a = consumerName(g, 'x.'.repeat(100) + 'y')
    const b = consumerName(g, 'x.'.repeat(100) + 'z')
    expect(a.length).to.be.at.most(200)
    expect(a).to.match(VALID_DURABLE)
    expect(a).to.not.equal(b)
  })

  it('escapeName keeps letters and digits only', () => {
    expect(escapeName('Ab9 .@')).to.equal('Ab9_20_2e_40')
  })

  it('a durable event name must be a run of subject tokens', () => {
    expect(subjectProblem('orders.placed')).to.equal(null)
    expect(subjectProblem('orders.placed.v2@eu')).to.equal(null)
    for (const bad of ['', 'a b', 'a..b', '.a', 'a.', 'a.*', 'a.>', 'a\tb', 'a\u0000b', 'x'.repeat(257)]) expect(subjectProblem(bad), JSON.stringify(bad)).to.be.a('string')
  })
})

describe('durable events: options (jetstream/options.js)', () => {
  it('fills the defaults, derives the dead-letter stream and its subjects beside the stream\'s', () => {
    const o = resolveDurableOptions({ events: ['a.b'] })
    expect(o).to.include({ stream: durableDefaults.stream, deadLetterStream: 'ZEROMESH_EVENTS_DEAD', deadSubjects: 'zeromesh.events-dead', maxDeliver: 5, start: 'new' })
    expect(o.servers).to.deep.equal(['nats://127.0.0.1:4222'])
  })

  const refused = [
    [{}, /events must list/],
    [{ events: [] }, /events must list/],
    [{ events: ['a b'] }, /"a b" has whitespace/],
    [{ events: ['a'], start: 'first' }, /start must be 'new'/],
    [{ events: ['a'], backoff: [] }, /backoff must be a list/],
    [{ events: ['a'], stream: 'a.b' }, /stream must be a stream name/],
    [{ events: ['a'], maxDeliver: 0 }, /maxDeliver must be a whole number/],
    [{ events: ['a'], nope: 1 }, /unknown durableEvents options key "nope"/],
  ]
  for (const [given, message] of refused) {
    it(`refuses ${JSON.stringify(given)}`, () => {
      expect(() => resolveDurableOptions(given)).to.throw(InvalidArgumentError, message)
    })
  }
})

describe('durable events: without the NATS packages (optional peer dependencies)', () => {
  it('loadNats names the packages to install', async () => {
    const err = await loadNats(['@nats-io/not-installed-here', '@nats-io/neither']).catch((e) => e)
    expect(err).to.be.instanceOf(DurableSetupError)
    expect(err.code).to.equal('ERR_ZEROMESH_DURABLE_SETUP')
    expect(err.message).to.include('npm install @nats-io/not-installed-here@^3.4.0 @nats-io/neither@^3.4.0')
  })

  it('zeromesh/jetstream loads without touching them (only durableEvents() does)', async () => {
    const m = await import('zeromesh/jetstream')
    expect(m.durableEvents).to.be.a('function')
  })
})

describe('durable events: what a peer asks for (jetstream/budget.js)', () => {
  it('asks for its free places less what it asked for, within maxInflight; a settled event makes room', () => {
    let free = 4
    const b = new PullBudget({ free: () => free, maxInflight: 3 })
    expect(b.room()).to.equal(3)
    expect(b.claim(10)).to.equal(3)
    expect(b.room()).to.equal(0)
    b.arrived(); b.arrived()
    b.unclaim(1) // the pull ended with one not received
    expect(b.running).to.equal(2)
    free = 2 // the two running hold two of the four places
    expect(b.room()).to.equal(1)
    free = 0 // requests took the rest
    expect(b.room()).to.equal(0)
    free = 3
    b.settled()
    expect(b.room()).to.equal(2)
  })
})
