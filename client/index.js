export { Client } from './client.js'
export { clientDefaults } from './options.js'
export { strategyNames } from './strategies/index.js'
export { contract } from '../runtime/contract.js'
