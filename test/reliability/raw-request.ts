/**
 * Requests over `node:http` with raw headers: unlike `fetch`, it sends a repeated header as
 * repeated lines (not joined with commas), no default content type, and any header size.
 */
import { request } from 'node:http';
import { connect } from 'node:net';

export interface RawAnswer {
  readonly status: number;
  readonly contentType: string | undefined;
  readonly text: string;
  /** The parsed body, `undefined` when it is not JSON. */
  readonly body: unknown;
}

/** `POST /plants` with `headers` exactly as listed (name, value pairs; repeats allowed). */
export function postRaw(
  url: string,
  headers: readonly (readonly [string, string])[],
  body: string,
): Promise<RawAnswer> {
  return requestRaw(url, 'POST', '/plants', headers, body);
}

/** `method path` with `headers` exactly as listed (name, value pairs; repeats allowed). */
export function requestRaw(
  url: string,
  method: string,
  path: string,
  headers: readonly (readonly [string, string])[],
  body: string,
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const outgoing = request(`${url}${path}`, {
      method,
      // Raw headers get no defaults: HTTP/1.1 needs a Host, and the body its length.
      headers: [
        'Host',
        new URL(url).host,
        ...headers.flat(),
        'Content-Length',
        String(Buffer.byteLength(body)),
      ],
      signal: AbortSignal.timeout(15_000),
    });
    outgoing.once('error', reject);
    outgoing.once('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.once('error', reject);
      response.once('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        resolve({
          status: response.statusCode ?? 0,
          contentType: response.headers['content-type'],
          text,
          body: parsed,
        });
      });
    });
    outgoing.end(body);
  });
}

/**
 * Writes `text` to the API's port as it is (any bytes, broken HTTP included) and returns the
 * status and body of what comes back before the server closes the connection.
 */
export function sendRawText(url: string, text: string): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.setTimeout(15_000, () => socket.destroy(new Error('No answer in 15 s')));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.once('error', reject);
    socket.once('end', () => {
      const response = Buffer.concat(chunks).toString('utf8');
      const [head = '', body = ''] = response.split('\r\n\r\n');
      const status = Number(head.split(' ')[1]);
      const contentType = /^content-type:\s*(.+)$/im.exec(head)?.[1]?.trim();
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        parsed = undefined;
      }
      resolve({ status, contentType, text: response, body: parsed });
    });
    socket.end(text);
  });
}
