/** Reading the parts of a REST proxy event (payload v1) that more than one function needs. */
import type { APIGatewayProxyEvent } from 'aws-lambda';

/** A header's value; names are case-insensitive, and API Gateway passes them as the client wrote them. */
export function findHeader(event: APIGatewayProxyEvent, name: string): string | undefined {
  for (const [key, value] of Object.entries(event.headers ?? {})) {
    if (key.toLowerCase() === name && value !== undefined) return value;
  }
  return undefined;
}

/** A list header (`If-Match`), sent on one line or several: its lines' values, joined by commas. */
export function findListHeader(event: APIGatewayProxyEvent, name: string): string | undefined {
  // Lines whose names differ only in case are the same header (RFC 9110 §5.1).
  const lines = Object.entries(event.multiValueHeaders ?? {})
    .filter(([key]) => key.toLowerCase() === name)
    .flatMap(([, values]) => values ?? []);
  return lines.length > 0 ? lines.join(', ') : findHeader(event, name);
}
