export { Peer, peerDefaults, membershipDefaults, Member, MembershipOptions, PeerOptions, PeerStats, Handler, Handlers, RequestContext } from '../index.js'
