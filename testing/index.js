// zeromesh/testing: test handlers, clients and whole clusters in one process, without
// sockets or sleeping. docs/guides/testing.md.
//   MemoryNetwork  the in-memory twin of the ZeroMQ transports (transport/memory.js): hosts
//                  with their own clock and sockets, delay, loss, partitions, freezes, kills
//   VirtualClock   time that moves only when told (advance), for every host's timers
//   seededRandom   a random source that replays from its seed
export { MemoryNetwork } from '../transport/memory.js'
export { VirtualClock } from './virtual-clock.js'
export { seededRandom } from './random.js'
