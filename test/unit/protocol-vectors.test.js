// Holds the spec's vectors (protocol/vectors.json, PROTOCOL.md section 6) and the codec to each
// other: every vector is encoded and decoded here, byte for byte; and the document names each one.
import { readFileSync } from 'node:fs'
import { expect } from 'chai'
import {
  encodeRequest, encodeReply, encodePing, encodePong, encodeError, encodeGossip, encodeMembersGet,
  encodeMembers, encodeCancel, Accepts, Limits, encodeServiceGet, encodeService, describeService, encodeStreamOpen, encodeStreamItems, encodeStreamCredit, encodeStreamEnd, decode, MessageType, ProtocolError,
} from '../../protocol/index.js'
import { classify, Kind } from '../../protocol/flp.js'
import { encodeEvent } from '../../protocol/event-codec.js'
import { eventsDigest, eventsElement } from '../../protocol/events.js'
import { streamsDigest, streamsElement } from '../../protocol/stream-methods.js'
import { seal, sealKey, unseal } from '../../protocol/seal.js'
import { keyProof, checkKeyProof } from '../../protocol/key-proof.js'
import { encodeKeyProof } from '../../protocol/codec.js'
import { z85Decode, z85Encode } from '../../transport/keys.js'
import { bulkReplyFrame } from '../../protocol/bulk.js'
import { ItemFrameBuilder, packItem } from '../../protocol/stream-codec.js'
import { replyHead } from '../../protocol/frames.js'

const sealKeyOf = (z85) => sealKey(z85Decode(z85))
const keypair = (secret, pub) => ({ secret: z85Decode(secret), publicKey: z85Decode(pub) })

// The vectors have one source, which every implementation's tests read (PROTOCOL.md section 6).
const file = JSON.parse(readFileSync(new URL('../../protocol/vectors.json', import.meta.url), 'utf8'))
const vectors = file.vectors.map((v) => ({ id: v.id, spec: v.message, bytes: Buffer.from(v.hex.replace(/ /g, ''), 'hex') }))

const encoders = {
  request: (b) => encodeRequest(b),
  reply: (b) => encodeReply(b[0], b[1]),
  ping: (b) => encodePing(b[0]),
  pong: (b) => encodePong(b[0], b[1]),
  error: (b) => encodeError(b[0], b[1]),
  event: (b) => encodeEvent(b),
}
const specEncoders = {
  gossip: (v) => encodeGossip(v.seq, v.msg),
  'members-get': (v) => encodeMembersGet(v.seq),
  members: (v) => encodeMembers(v.seq, v.digest, v.members),
  cancel: (v) => encodeCancel(v.ids),
  sealed: (v) => seal(sealKeyOf(v.clusterSecretKey), Buffer.from(v.frame, 'hex')),
  'service-get': (v) => encodeServiceGet(v.seq),
  // The client computes the mac from its keys and the cluster's public key.
  'key-proof': (v) => encodeKeyProof(z85Decode(v.clientPublicKey), keyProof(keypair(v.clientSecretKey, v.clientPublicKey), z85Decode(v.clusterPublicKey), Buffer.from(v.ch, 'hex'))),
  service: (v) => encodeService(v.seq, describeService(v.service), v.features),
  'stream-open': (v) => encodeStreamOpen(v.id, v.method, v.args, v.timeoutMs, v.items, v.bytes, v.input, v.trace ?? null, v.accepts ?? 0, v.headers ?? null),
  'stream-item': (v) => encodeStreamItems(v.id, v.items.map(fromJson)),
  'stream-credit': (v) => encodeStreamCredit(v.id, v.items, v.bytes),
  'stream-end': (v) => encodeStreamEnd(v.id, v.status, v.value, v.count),
  // The peer's frame for one bulk entry; the vector's bulk frames are checked by decoding.
  'bulk-reply': (v) => bulkReplyFrame(replyHead(v.body[0]), v.body[1][0][0]),
  // The producer's frame: a nil item at each position is a bulk item, the vector's frame there.
  'bulk-item': (v) => {
    const b = new ItemFrameBuilder(v.id, Limits.maxMessageSize)
    v.items.forEach((x, i) => { if (v.at.includes(i)) b.addBulk(Buffer.from(v.bulk[v.at.indexOf(i)], 'hex')); else b.add(packItem(fromJson(x))) })
    return b.take()
  },
}
// JSON has no bytes: { hex } stands for a Uint8Array in the stream vectors.
const fromJson = (x) => x !== null && typeof x === 'object' && typeof x.hex === 'string' ? Buffer.from(x.hex, 'hex') : x
const toJson = (x) => x instanceof Uint8Array ? { hex: Buffer.from(x).toString('hex') } : x
const specDecoded = {
  gossip: (m) => ({ kind: 'gossip', seq: m.seq, msg: m.gossip }),
  'members-get': (m) => ({ kind: 'members-get', seq: m.seq }),
  members: (m) => ({ kind: 'members', seq: m.seq, digest: m.membersVersion, members: m.members }),
  cancel: (m) => ({ kind: 'cancel', ids: m.ids }),
  'service-get': (m) => ({ kind: 'service-get', seq: m.seq }),
  service: (m) => ({ kind: 'service', seq: m.seq, digest: m.service.digest, service: { methods: [...m.service.methods], version: m.service.version, labels: { ...m.service.labels }, capacity: m.service.capacity, ...(m.service.contracts === null ? {} : { contracts: m.service.contracts }), ...(m.service.events === null ? {} : { events: m.service.events }), ...(m.service.streams === null ? {} : { streams: m.service.streams }) }, features: m.features }),
  'stream-open': (m) => ({ kind: 'stream-open', id: m.id, method: m.method, args: m.args, timeoutMs: m.timeoutMs, items: m.items, bytes: m.bytes, input: m.input, ...(m.trace === null ? {} : { trace: { ...m.trace } }), ...(m.bulk ? { accepts: Accepts.BULK } : {}), ...(Object.keys(m.headers).length === 0 ? {} : { headers: { ...m.headers } }) }),
  'stream-item': (m) => ({ kind: 'stream-item', id: m.id, items: m.items.map(toJson) }),
  'bulk-item': (m, v) => {
    const bulk = v.bulk.map((hex) => Buffer.from(hex, 'hex'))
    const at = []
    const items = m.items.map((x, i) => { const k = x instanceof Uint8Array ? bulk.findIndex((b) => b.equals(x)) : -1; if (k < 0) return toJson(x); at.push(i); return null })
    return { kind: 'bulk-item', id: m.id, items, at, bulk: v.bulk }
  },
  'stream-credit': (m) => ({ kind: 'stream-credit', id: m.id, items: m.items, bytes: m.bytes }),
  'stream-end': (m) => ({ kind: 'stream-end', id: m.id, status: m.status, value: m.status === 0 ? null : errorValue(m), count: m.count }),
  'bulk-reply': (m, v) => {
    const bulk = []
    const entries = m.replies.map((r) => { if (r.value instanceof Uint8Array) { bulk.push(Buffer.from(r.value).toString('hex')); return [r.id, r.status, null, bulk.length - 1] } return [r.id, r.status, r.value] })
    return { kind: 'bulk-reply', body: [m.meta, entries], bulk }
  },
  // The peer checks the mac from the cluster's keys and the frame's client key: it holds for
  // the vector's challenge and for no other.
  'key-proof': (m, v) => {
    const cluster = keypair(v.clusterSecretKey, v.clusterPublicKey)
    expect(checkKeyProof(cluster, m.key, Buffer.alloc(16), m.mac)).to.equal(false)
    expect(checkKeyProof(cluster, m.key, Buffer.from(v.ch, 'hex'), m.mac)).to.equal(true)
    return { ...v, clientPublicKey: z85Encode(m.key), mac: m.mac.toString('hex') }
  },
  // The tag must check out with the vector's key, and with no other.
  sealed: (m, v) => {
    expect(unseal(sealKeyOf('0'.repeat(40)), m)).to.equal(null)
    return { kind: 'sealed', clusterSecretKey: v.clusterSecretKey, frame: unseal(sealKeyOf(v.clusterSecretKey), m)?.toString('hex') }
  },
}

// An error's value as it travels: [message, code], and its issues (4.2.2) when it has them.
const errorValue = (r) => r.issues == null ? [r.message, r.code] : [r.message, r.code, r.issues.map((i) => [i.message, i.path])]

function decodedBody (msg) {
  switch (msg.type) {
    case MessageType.REQUEST: return msg.requests.map((r) => {
      const entry = [r.id, r.method, r.args, r.timeoutMs]
      const headers = Object.keys(r.headers).length > 0
      if (r.trace !== null || r.bulk || r.values || headers) entry.push(r.trace === null ? null : { ...r.trace })
      const accepts = (r.bulk ? Accepts.BULK : 0) | (r.values ? Accepts.VALUES : 0)
      if (accepts !== 0 || headers) entry.push(accepts)
      if (headers) entry.push({ ...r.headers })
      return entry
    })
    case MessageType.REPLY: return [msg.meta, msg.replies.map((r) => [r.id, r.status, r.status === 0 || r.status === 6 ? r.value : errorValue(r)])]
    case MessageType.PING: return [msg.seq]
    case MessageType.PONG: return [msg.seq, msg.meta]
    case MessageType.EVENT: return msg.events.map((e) => {
      const entry = [e.id, e.event, e.payload, e.timeoutMs, e.group, e.ack]
      const headers = Object.keys(e.headers).length > 0
      if (e.trace !== null || headers) entry.push(e.trace === null ? null : { ...e.trace })
      if (headers) entry.push({ ...e.headers })
      return entry
    })
    default: return [msg.code, msg.message, msg.minVersion, msg.maxVersion]
  }
}

describe('PROTOCOL.md test vectors', () => {
  it('the vectors have unique ids, each named by the document, which has no vector of its own any more', () => {
    const doc = readFileSync(new URL('../../protocol/PROTOCOL.md', import.meta.url), 'utf8')
    expect(new Set(vectors.map((v) => v.id)).size).to.equal(vectors.length)
    for (const v of vectors) expect(doc, v.id).to.include(`\`${v.id}\``)
    expect(doc).to.not.include('```vector')
    for (const v of file.vectors) expect(v.note, v.id).to.be.a('string').and.not.equal('')
  })

  it('the file has vectors of every kind', () => {
    const kinds = new Set(vectors.map((v) => v.spec.kind))
    expect([...kinds].sort()).to.deep.equal(['bulk-item', 'bulk-reply', 'cancel', 'error', 'event', 'flp', 'gossip', 'key-proof', 'members', 'members-get', 'ping', 'pong', 'reject', 'reply', 'request', 'sealed', 'service', 'service-get', 'stream-credit', 'stream-end', 'stream-item', 'stream-open'])
    expect(vectors.length).to.be.at.least(40)
  })

  it('the events label check value of 4.11 holds', () => {
    expect(eventsDigest(eventsElement([['orders.placed', 'billing'], ['cache.drop', 'cache.drop']]))).to.equal('7e3d4cb6')
  })

  it('the streams label check value of 4.8.2 holds', () => {
    expect(streamsDigest(streamsElement(['rows', 'count']))).to.equal('6c05645f')
  })

  it('the service digest check values of 4.8 hold', () => {
    expect(describeService({ methods: ['echo'], version: null, labels: {}, capacity: null }).digest).to.equal(0xbc7798c4)
    expect(describeService({ methods: [], version: null, labels: {}, capacity: null }).digest).to.equal(0x4b95f515)
  })

  for (const { spec, bytes } of vectors) {
    if (spec.kind === 'flp') {
      it(`FLP frame ${spec.frames[0]} is ${bytes.toString('hex')} and is not a zeromesh message`, () => {
        expect(Buffer.from(spec.frames[0])).to.deep.equal(bytes)
        expect(classify([bytes])).to.equal(spec.frames[0] === 'PING' ? Kind.FLP_PING : Kind.INVALID)
      })
    } else if (spec.kind === 'reject') {
      it(`rejects: ${spec.why}`, () => {
        let err
        try { decode(bytes) } catch (e) { err = e }
        expect(err).to.be.instanceOf(ProtocolError)
        expect(err.protocolCode).to.equal(spec.errorCode)
      })
    } else if (specEncoders[spec.kind] !== undefined) {
      it(`${spec.kind} ${JSON.stringify(spec.msg?.type ?? spec.members?.[0]?.service ?? spec.seq ?? spec.ids ?? spec.body ?? (spec.id === undefined ? undefined : `${spec.id} ${JSON.stringify(spec.items ?? spec.status ?? spec.method)}`) ?? (spec.ch === undefined ? undefined : `for challenge ${spec.ch}`) ?? `${spec.frame.slice(0, 10)}...`)} encodes and decodes`, () => {
        expect(specEncoders[spec.kind](spec).toString('hex')).to.equal(bytes.toString('hex'))
        expect(classify([bytes])).to.equal(Kind.ZEROMESH)
        const bulk = (spec.bulk ?? []).map((hex) => Buffer.from(hex, 'hex'))
        expect(specDecoded[spec.kind](decode(bytes, Limits, bulk), spec)).to.deep.equal(spec)
      })
    } else {
      it(`${spec.kind} ${JSON.stringify(spec.body)} encodes and decodes`, () => {
        expect(encoders[spec.kind](spec.body).toString('hex')).to.equal(bytes.toString('hex'))
        expect(classify([bytes])).to.equal(Kind.ZEROMESH)
        expect(decodedBody(decode(bytes))).to.deep.equal(spec.body)
      })
    }
  }
})

describe('the digests\' hash (PROTOCOL.md 4.6, 4.8)', () => {
  it('FNV-1a folds each UTF-16 code unit in whole: the check values PROTOCOL.md gives', async () => {
    const { fnv1a } = await import('../../protocol/fnv.js')
    const { readFileSync } = await import('node:fs')
    const spec = readFileSync(new URL('../../protocol/PROTOCOL.md', import.meta.url), 'utf8')
    const cases = [['tcp://127.0.0.1:5001#7', 0xd3aabeb1], ['é', 0x6c0b6c44], ['commande.créer', 0x3aab0e64], ['😀', 0xcb31c4b8]]
    for (const [text, h] of cases) {
      expect(fnv1a(text), text).to.equal(h)
      expect(spec).to.include(`0x${h.toString(16).padStart(8, '0')}`)
    }
  })
})
