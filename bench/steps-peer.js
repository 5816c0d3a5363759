// Preloaded into the peer child of bench/steps.js (`node --import`): times the peer's steps of
// each request in wall-clock nanoseconds. SIGUSR2 writes the totals so far to the file named
// by ZEROMESH_STEPS_OUT (JSON: { requests, steps: step -> { calls, ns } }) and starts them
// again from zero.
import { writeFileSync } from 'node:fs'
import { Peer } from '../peer/peer.js'
import { ZmqListener } from '../transport/zmq-listener.js'
import { timeCalls } from './steps-timing.js'

const steps = {}
timeCalls(steps, Peer.prototype, 'onMessage', 'message in: everything the peer does with it')
const requests = timeCalls(steps, Peer.prototype, 'onRequests', 'the request: duplicates memory, handler, reply packed and sent')
timeCalls(steps, ZmqListener.prototype, 'send', 'ZeroMQ send of the reply (native)')

process.on('SIGUSR2', () => {
  writeFileSync(process.env.ZEROMESH_STEPS_OUT, JSON.stringify({ requests: requests.calls, steps }))
  for (const s of Object.values(steps)) { s.calls = 0; s.ns = 0 }
})
