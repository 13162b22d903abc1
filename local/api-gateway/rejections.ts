/**
 * Requests the stand-in refuses before it can route them: an `Expect` it cannot meet, and what
 * Node's HTTP parser refuses. API Gateway documents its limits (10,240 bytes of headers) but not
 * its answers to these, so they are answered as the stack answers every rejection it makes:
 * DEFAULT_4XX (400/40000), with a request id and the gateway responses' CORS headers.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from '../../functions/shared/platform/logger.ts';
import { gatewayCorsHeaders, gatewayResponseFor, writeResponse } from './responses.ts';

/** What a rejection needs of the gateway. */
export interface RejectingGateway {
  readonly logger: Logger;
  readonly allowedOrigins: readonly string[];
  /** The resource path a request line names, for the log (never the path as sent). */
  resourcePathOf(method: string | undefined, target: string | undefined): string | null;
}

/** An `Expect` other than 100-continue, which Node would answer with an empty 417 itself. */
export function answerUnmetExpectation(
  gateway: RejectingGateway,
  request: IncomingMessage,
  response: ServerResponse,
): void {
  const requestId = randomUUID();
  const answer = gatewayResponseFor('DEFAULT_4XX');
  writeResponse(
    response,
    {
      ...answer,
      headers: {
        ...answer.headers,
        ...gatewayCorsHeaders(gateway.allowedOrigins, request.headers.origin),
      },
    },
    requestId,
  );
  gateway.logger.info('request', {
    requestId,
    method: request.method,
    resourcePath: gateway.resourcePathOf(request.method, request.url),
    status: 400,
    durationMs: 0,
  });
}

/** Sockets whose request the parser refused: a body read on them did not end with the client. */
export const refusedByParser = new WeakSet<object>();

/**
 * A request Node's HTTP parser refused (headers over its 16 KiB limit, a control byte in a
 * header, broken syntax), which never reaches the handler and which Node would answer with an
 * empty 400 or 431. The CORS headers are those for the `Origin` among the bytes it read.
 */
export function answerParserRejection(
  gateway: RejectingGateway,
  error: NodeJS.ErrnoException & { rawPacket?: Buffer },
  socket: Duplex,
): void {
  // The client closed the connection mid-message (HPE_INVALID_EOF_STATE) or reset it: nobody
  // to answer; the request's own handler logs it as abandoned.
  if (error.code === 'ECONNRESET' || error.code === 'HPE_INVALID_EOF_STATE' || !socket.writable) {
    socket.destroy();
    return;
  }
  refusedByParser.add(socket);
  const requestId = randomUUID();
  gateway.logger.info('request refused by the HTTP parser', {
    requestId,
    status: 400,
    reason: error.code,
  });
  const answer = gatewayResponseFor('DEFAULT_4XX');
  const headers = {
    ...answer.headers,
    ...gatewayCorsHeaders(gateway.allowedOrigins, originOf(error.rawPacket)),
    'x-amzn-RequestId': requestId,
  };
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  socket.end(
    `HTTP/1.1 ${answer.statusCode} Bad Request\r\n${lines.join('')}` +
      `Content-Length: ${answer.body.length}\r\nConnection: close\r\n\r\n${answer.body}`,
  );
}

/** The `Origin` header among the bytes the parser had read, if it is there and well-formed. */
function originOf(raw: Buffer | undefined): string | undefined {
  const head = raw?.toString('latin1').split('\r\n\r\n', 1)[0] ?? '';
  const line = head.split('\r\n').find((candidate) => /^origin:/i.test(candidate));
  const origin = line?.slice('origin:'.length).trim();
  return origin !== undefined && /^https?:\/\/[\w.:[\]-]+$/.test(origin) ? origin : undefined;
}
