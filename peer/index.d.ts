export { Peer, peerDefaults, PeerOptions, PeerStats, Handler, Handlers, RequestContext } from '../index.js'
