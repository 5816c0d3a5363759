import type { Registry } from 'prom-client'
import type { Peer } from '../peer/index.js'
import type { Client } from '../client/index.js'

/** Registers the peer's metrics (zeromesh_peer_*) in `registry` (default: a new one) and returns it. */
export declare function peerMetrics(peer: Peer, options?: { registry?: Registry, prefix?: string }): Registry
/** Registers the client's metrics (zeromesh_client_*) in `registry` (default: a new one) and returns it. */
export declare function clientMetrics(client: Client, options?: { registry?: Registry, prefix?: string }): Registry
