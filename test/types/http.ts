// zeromesh/http's documents and gateway (issue 77): what compiles, and what must not.
import http from 'node:http'
import { z } from 'zod'
import { Client, contract, implement, on } from 'zeromesh'
import { openapiOf, asyncapiOf, gateway, gatewayDefaults, type Gateway } from 'zeromesh/http'

const orders = contract('orders', {
  version: '1.0.0',
  methods: { get: { input: z.object({ id: z.string() }), output: z.object({ id: z.string() }) } },
  events: { placed: z.object({ id: z.string() }) },
})
const client = new Client({ seeds: ['tcp://127.0.0.1:5555'] })

const api = openapiOf([orders], { routes: { 'GET /': 'countdown', 'GET /orders': { method: 'orders.get', idempotent: true } }, problemJson: true })
const title: string = api.info.title
void title
openapiOf(client, { strict: true, onWarning: (m: string) => console.warn(m) })
const events = asyncapiOf([orders, on(orders, 'placed', () => {}, { group: 'billing' }), implement(orders, { get: ({ id }) => ({ id }) })])
const version: string = events.asyncapi
void version

const gw: Gateway = gateway(client, { contracts: [orders], timeout: 2000, maxTimeout: gatewayDefaults.maxTimeout, openapiPath: '/docs/openapi.json', asyncapiPath: null })
http.createServer(gw)
const doc = gw.openapi()
void doc.paths

// @ts-expect-error: timeout is milliseconds, a number
gateway(client, { timeout: '2s' })
// @ts-expect-error: routes map to a method name or { method }
openapiOf([orders], { routes: { 'GET /': 42 } })
