// A handler module for bench/request-path/events.js: the demo's `echo`, and a subscription to
// `bench.ping` that does nothing (what is measured is the delivery and its ack).
export { echo } from '../../demo/handlers.js'
export const events = { 'bench.ping': () => {} }
