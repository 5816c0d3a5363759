// zeromesh/nest: NestJS on zeromesh (docs/guides/nestjs.md). Nothing here loads unless this
// entry is imported; @nestjs/common, @nestjs/core, @nestjs/microservices and rxjs are the
// application's (optional peer dependencies of zeromesh).
import { MessagePattern, EventPattern, RpcException } from '@nestjs/microservices'
import { isContract } from '../runtime/contract.js'
import { invalidArgument, RemoteCode } from '../protocol/errors.js'
import { wireIssues, readIssues, issuesText } from '../protocol/issues.js'

export { ZeromeshServer } from './server.js'
export { ZEROMESH_TRANSPORT } from './handlers.js'
export { ZeromeshClient, ZeromeshRecord } from './client.js'
export { ZeromeshContext } from './context.js'
export { ZeromeshExceptionFilter } from './exception-filter.js'

/**
 * @MessagePattern for `contract`'s `method`: its wire name (orders.get), its input checked
 * before the handler's pipes run (a refusal answers ERR_ZEROMESH_INVALID_INPUT with issues),
 * a stream when the contract says so, and the contract stated in the peer's service answer.
 * Every method of a contract used this way needs its pattern.
 */
export function ContractPattern (contract, method, extras = {}) {
  if (!isContract(contract) || contract.methods[method] === undefined) throw invalidArgument(`ContractPattern(contract, method): ${isContract(contract) ? `${contract.name} has no method ${JSON.stringify(method)} (it has ${Object.keys(contract.methods).join(', ')})` : 'contract must be made by contract()'}`)
  return MessagePattern(contract.methods[method].wire, { ...extras, zeromeshContract: { contract, name: method } })
}

/** @EventPattern for `contract`'s `event`: its wire name (orders.placed), its payload checked before the handler runs. */
export function ContractEventPattern (contract, event, extras = {}) {
  if (!isContract(contract) || contract.events[event] === undefined) throw invalidArgument(`ContractEventPattern(contract, event): ${isContract(contract) ? `${contract.name} has no event ${JSON.stringify(event)} (it has ${Object.keys(contract.events).join(', ') || 'none'})` : 'contract must be made by contract()'}`)
  return EventPattern(contract.events[event].wire, { ...extras, zeromeshContract: { contract, name: event } })
}

/**
 * A validation pipe's exceptionFactory for zeromesh/nest payloads, e.g.
 * `new StandardSchemaValidationPipe({ exceptionFactory: invalidInput })` (Nest 12.5): the
 * refused payload's Standard Schema issues reach the caller as InvalidInputError with
 * `issues` [{ path, message }] (an HTTP 400 through zeromesh/http), as a contract's refusal does.
 */
export function invalidInput (issues) {
  const them = readIssues(wireIssues(issues)) ?? []
  return new RpcException({ message: `invalid input: ${issuesText(them)}`, code: RemoteCode.INVALID_INPUT, issues: them })
}
