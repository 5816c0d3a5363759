// ZeromeshExceptionFilter: a NestJS exception filter for HTTP gateways that answers an error a
// zeromesh call rejected with (a ZeromeshClient's send() or emit(), or a Client's request())
// by its HTTP status, zeromesh/http's mapping: 503 with Retry-After (busy, draining, no peers,
// no subscribers, closed), 504 (timeout), 400 (invalid input or argument), else 500. It
// answers through the response object Express and Fastify both give (status, header, send).
// In an RPC context (a microservice whose handler called another) it passes the error on.
import { Catch } from '@nestjs/common'
import { throwError } from 'rxjs'
import { ZeromeshError } from '../protocol/errors.js'
import { httpAnswerOf } from '../http/index.js'

export class ZeromeshExceptionFilter {
  catch (err, host) {
    if (host.getType() !== 'http') return throwError(() => err)
    const res = host.switchToHttp().getResponse()
    const { status, retryAfter, body } = httpAnswerOf(err)
    if (retryAfter !== null) res.header('Retry-After', String(retryAfter))
    res.status(status).send(body)
  }
}
Catch(ZeromeshError)(ZeromeshExceptionFilter)
