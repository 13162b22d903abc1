/**
 * The stand-in's own answers, and the writing of every answer: the gateway responses (with the
 * stage's CORS headers), what AWS answers itself, and the request body as API Gateway reads it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gatewayResponseCors } from '../../functions/shared/http/cors.ts';
import {
  apiGatewayMaxPayloadBytes,
  type awsOwnResponses,
  type GatewayResponse,
  type GatewayResponseType,
  gatewayResponses,
} from '../../infra/gateway-responses.ts';
import type { HttpResponse } from './gateway-types.ts';

/** The gateway response of `type`, as the stack deploys it. */
export function gatewayResponseFor(type: GatewayResponseType): HttpResponse {
  const response: GatewayResponse = gatewayResponses[type];
  return {
    statusCode: response.statusCode,
    headers: response.headers,
    body: Buffer.from(JSON.stringify(response.body)),
    gatewayResponse: true,
  };
}

/** An answer AWS gives itself, which no gateway response reshapes. */
export function awsResponse(
  answer: (typeof awsOwnResponses)[keyof typeof awsOwnResponses],
): HttpResponse {
  return { statusCode: answer.statusCode, headers: answer.headers, body: Buffer.from(answer.body) };
}

/**
 * Writes an answer. A 204 and a 304 have no content, so they get no `Content-Length` (RFC 9110
 * §8.6: a 204 must not have one, a 304 only the 200's), and a 304 no `Content-Type`: it describes
 * the representation the client already has (§15.4.5).
 */
export function writeResponse(
  response: ServerResponse,
  answer: HttpResponse,
  requestId: string,
): void {
  response.statusCode = answer.statusCode;
  for (const [name, value] of Object.entries(answer.headers)) response.setHeader(name, value);
  response.setHeader('x-amzn-RequestId', requestId);
  if (answer.statusCode === 204 || answer.statusCode === 304) response.removeHeader('Content-Type');
  if (answer.statusCode !== 204 && answer.statusCode !== 304) {
    response.setHeader('Content-Length', answer.body.length);
  }
  response.end(answer.body);
}

/** The CORS headers the stack gives every gateway response (`gatewayResponseCors`). */
export function gatewayCorsHeaders(
  allowedOrigins: readonly string[],
  origin: string | undefined,
): Record<string, string> {
  const cors = gatewayResponseCors(allowedOrigins);
  const echoed = cors.echoOrigin ? origin : undefined;
  return {
    ...cors.literals,
    ...(echoed === undefined ? {} : { 'Access-Control-Allow-Origin': echoed }),
  };
}

/**
 * The body's bytes as sent, `'too large'` past API Gateway's payload limit, or `'client gone'`
 * when the client disconnected before sending all of it. The
 * stack sets the binary media type `*\/*`, so API Gateway hands every body to the function
 * base64-encoded and unaltered: bytes that are not UTF-8 reach the function's strict decoder
 * (40001) instead of being turned into U+FFFD, which API Gateway does to a body it treats as text.
 */
export async function readBody(
  request: IncomingMessage,
): Promise<Buffer | 'too large' | 'client gone'> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of request as AsyncIterable<Buffer>) {
      size += chunk.length;
      // Keep reading (and dropping) the rest so the client sees the answer, not a reset.
      if (size <= apiGatewayMaxPayloadBytes) chunks.push(chunk);
    }
  } catch {
    // The connection closed mid-body ("aborted"): nobody is left to answer.
    return 'client gone';
  }
  if (!request.complete) return 'client gone';
  return size > apiGatewayMaxPayloadBytes ? 'too large' : Buffer.concat(chunks);
}
