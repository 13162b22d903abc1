/**
 * An OTLP/HTTP JSON receiver on 127.0.0.1 that keeps every span sent to `/v1/traces`, flattened
 * with its resource's `service.name`: what an OpenTelemetry collector would be given.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedSpan {
  readonly service: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  readonly kind: number;
  readonly links: readonly { traceId: string; spanId: string }[];
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly status?: { readonly code: number };
}

export interface OtlpRecorder {
  /** What `OTEL_EXPORTER_OTLP_ENDPOINT` is set to. */
  readonly endpoint: string;
  readonly spans: RecordedSpan[];
  /** Each export's headers, as sent. */
  readonly exports: Readonly<Record<string, string | string[] | undefined>>[];
  stop(): Promise<void>;
}

interface OtlpAttribute {
  key: string;
  value: Record<string, unknown>;
}

export async function startOtlpRecorder(): Promise<OtlpRecorder> {
  const spans: RecordedSpan[] = [];
  const exports: OtlpRecorder['exports'][number][] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const accepted = request.method === 'POST' && request.url === '/v1/traces';
      if (accepted) {
        exports.push(request.headers);
        const { resourceSpans = [] } = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        for (const { resource, scopeSpans = [] } of resourceSpans) {
          const named = (resource?.attributes ?? []) as OtlpAttribute[];
          const service = String(named.find((a) => a.key === 'service.name')?.value.stringValue);
          for (const { spans: sent = [] } of scopeSpans) {
            for (const span of sent) {
              const attributes = Object.fromEntries(
                // An int64 comes as its decimal string (protobuf's JSON), read as a number.
                ((span.attributes ?? []) as OtlpAttribute[]).map(({ key, value }) => [
                  key,
                  'intValue' in value ? Number(value.intValue) : Object.values(value)[0],
                ]),
              );
              spans.push({ ...span, service, attributes, links: span.links ?? [] });
            }
          }
        }
      }
      response.writeHead(accepted ? 200 : 404, { 'content-type': 'application/json' });
      response.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    exports,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
