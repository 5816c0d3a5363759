export { Client, clientDefaults, strategyNames, ClientOptions, RequestOptions, PeerInfo, ClientStats, Strategy, StrategyPeer } from '../index.js'
