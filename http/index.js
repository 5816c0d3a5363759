// zeromesh/http: what an HTTP front of a mesh needs. Errors as HTTP answers (answer.js), the
// mesh's methods as an OpenAPI 3.1 document (openapi.js) and its events as an AsyncAPI 3
// document (asyncapi.js), both from contracts or a live Client's view, and a gateway that
// serves those routes and documents from a node:http request handler (gateway.js).
export { httpStatusOfCode, RETRY_AFTER_S, httpAnswerOf } from './answer.js'
export { openapiOf } from './openapi.js'
export { asyncapiOf } from './asyncapi.js'
export { gateway, gatewayDefaults } from './gateway.js'
