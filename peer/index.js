export { Peer } from './peer.js'
export { peerDefaults } from './options.js'
