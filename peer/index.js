export { Peer } from './peer.js'
export { peerDefaults } from './options.js'
export { membershipDefaults } from './membership/config.js'
