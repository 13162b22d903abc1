/**
 * Spans as OTLP/HTTP JSON: recorded below their parents with their links, attributes and errors,
 * sent once an invocation flushes them, only for sampled traces and only to a configured endpoint;
 * X-Ray's endpoint is called signed for its `xray` service; an SQS send carries its span's context.
 */

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { type OtlpRecorder, startOtlpRecorder } from '../../../../beds/otlp-recorder.ts';
import { errorCodes } from '../../../../functions/shared/errors/error-codes.ts';
import { ApiError } from '../../../../functions/shared/errors/errors.ts';
import { signedCalls } from '../../../../functions/shared/platform/signed-calls.ts';
import {
  activeSpan,
  flushSpans,
  inSpan,
  traceSignedCalls,
} from '../../../../functions/shared/platform/spans.ts';
import {
  parseTraceparent,
  type TraceContext,
} from '../../../../functions/shared/platform/trace-context.ts';
import { createSqsClient } from '../../../../functions/shared/webhooks/delivery-queue.ts';

let collector: OtlpRecorder;
const variables = [
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_TRACES_SAMPLER_ARG',
  'AWS_ENDPOINT_URL',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_REGION',
] as const;
const saved = Object.fromEntries(variables.map((name) => [name, process.env[name]]));

beforeAll(async () => {
  collector = await startOtlpRecorder();
});

afterEach(() => {
  for (const name of variables) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
  collector.spans.length = 0;
  collector.exports.length = 0;
});

afterAll(async () => {
  await collector.stop();
});

/**
 * A clock for the export warnings' minute, moved on by each test using it; near the epoch, so that
 * the real clock of the tests after is always more than a minute past it.
 */
const laterClock = { now: 0 };

const sampled: TraceContext = {
  traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
  spanId: '00f067aa0ba902b7',
  flags: '01',
};

describe('spans', () => {
  it('records a request, its children, links, attributes and errors, and sends them once', async () => {
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `${collector.endpoint}/`;
    const link = { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), flags: '01' };
    const options = {
      kind: 'server',
      service: 'create-plant',
      context: { ...sampled, parentSpanId: 'c'.repeat(16) },
      links: [link, undefined],
      attributes: { 'http.request.method': 'POST' },
    } as const;
    await inSpan('create-plant', options, async (request) => {
      expect(activeSpan()?.spanId).toBe(sampled.spanId);
      request?.set({ 'http.response.status_code': 201, cached: false });
      await inSpan('DynamoDB.PutItem', { kind: 'client' }, async () => undefined);
      await expect(
        inSpan('fails', {}, async () => {
          throw new Error('store down');
        }),
      ).rejects.toThrow('store down');
    });
    expect(activeSpan()).toBeUndefined();
    expect(collector.spans).toEqual([]);
    await flushSpans();
    await flushSpans();
    expect(collector.exports).toHaveLength(1);
    const [put, failed, request] = collector.spans;
    expect(request).toMatchObject({
      service: 'create-plant',
      traceId: sampled.traceId,
      spanId: sampled.spanId,
      parentSpanId: 'c'.repeat(16),
      name: 'create-plant',
      kind: 2,
      links: [{ traceId: link.traceId, spanId: link.spanId }],
      attributes: {
        'http.request.method': 'POST',
        'http.response.status_code': 201,
        cached: false,
      },
    });
    // OTel's rule: a span's status is left unset unless it failed.
    expect(request?.status).toBeUndefined();
    expect(put).toMatchObject({ traceId: sampled.traceId, parentSpanId: sampled.spanId, kind: 3 });
    expect(put?.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(put?.spanId).not.toBe(sampled.spanId);
    expect(failed).toMatchObject({ service: 'create-plant', kind: 1, status: { code: 2 } });
  });

  it("answers a server span's thrown error as its status code, an error only when it is a 5xx", async () => {
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = collector.endpoint;
    for (const code of [errorCodes.plantNotFound, errorCodes.storeUnavailable]) {
      const context = { ...sampled, spanId: `${code.statusCode}`.padStart(16, '0') };
      await expect(
        inSpan('get-plant', { kind: 'server', context }, async () => {
          throw new ApiError(code);
        }),
      ).rejects.toThrow(ApiError);
    }
    await flushSpans();
    const [missing, unavailable] = collector.spans;
    expect(missing?.attributes).toEqual({ 'http.response.status_code': 404 });
    expect(missing?.status).toBeUndefined();
    expect(unavailable?.attributes).toEqual({ 'http.response.status_code': 503 });
    expect(unavailable?.status).toMatchObject({ code: 2 });
  });

  it('runs work outside a trace as it is, and sends nothing without an endpoint', async () => {
    expect(await inSpan('alone', {}, async (span) => span)).toBeUndefined();
    expect(await inSpan('traced', { context: sampled }, async (span) => span?.traceId)).toBe(
      sampled.traceId,
    );
    // Not kept, a span is still active for its work: what that calls is below it, in its trace.
    const below = await inSpan('traced', { context: sampled }, () =>
      inSpan('below', {}, async (span) => [
        span?.traceId,
        span?.parentSpanId,
        activeSpan() === span,
      ]),
    );
    expect(below).toEqual([sampled.traceId, sampled.spanId, true]);
    expect(activeSpan()).toBeUndefined();
    await flushSpans();
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = collector.endpoint;
    await flushSpans();
    expect(collector.exports).toEqual([]);
  });

  it('keeps a trace not sampled by its flag, or past the sampled share of trace ids', async () => {
    process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = `${collector.endpoint}/v1/traces`;
    process.env.OTEL_TRACES_SAMPLER_ARG = '0.5';
    const traced = (traceId: string, flags: string) =>
      inSpan(traceId, { context: { traceId, spanId: sampled.spanId, flags } }, async () => 0);
    await traced(`${'1'.repeat(24)}7fffffff`, '01');
    await traced(`${'2'.repeat(24)}80000000`, '01');
    await traced(`${'3'.repeat(24)}00000000`, '00');
    // A ratio that is no number is the default's, every sampled trace.
    process.env.OTEL_TRACES_SAMPLER_ARG = 'half';
    await traced(`${'4'.repeat(24)}ffffffff`, '01');
    await flushSpans();
    expect(collector.spans.map((span) => span.traceId)).toEqual([
      `${'1'.repeat(24)}7fffffff`,
      `${'4'.repeat(24)}ffffffff`,
    ]);
  });

  it('drops an export it cannot make, never failing the work but saying so, and reads blank settings as unset', async () => {
    const lines: string[] = [];
    const write = jest.spyOn(process.stdout, 'write').mockImplementation((line) => {
      lines.push(String(line));
      return true;
    });
    // Not a URL, nothing listening, and a collector that refuses (a 404 here; X-Ray's 403).
    const endpoints = [
      '127.0.0.1:4318',
      'collector',
      'http://127.0.0.1:1',
      `${collector.endpoint}/x`,
    ];
    // A minute apart: a container says a failed export once a minute.
    const clock = jest.spyOn(Date, 'now').mockImplementation(() => laterClock.now);
    try {
      for (const endpoint of endpoints) {
        laterClock.now += 60_000;
        process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = endpoint;
        await inSpan('work', { context: sampled }, async () => 0);
        await expect(flushSpans()).resolves.toBeUndefined();
      }
    } finally {
      write.mockRestore();
      clock.mockRestore();
    }
    expect(lines.map((line) => JSON.parse(line))).toEqual(
      endpoints.map((url) =>
        expect.objectContaining({ level: 'warn', message: 'spans not exported', url, spans: 1 }),
      ),
    );
    expect(JSON.parse(lines[3] as string).error).toMatchObject({ message: 'answered HTTP 404' });
    process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = ' ';
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = collector.endpoint;
    process.env.OTEL_TRACES_SAMPLER_ARG = ' ';
    await inSpan('kept', { context: sampled, attributes: { share: 0.5, count: 2 } }, async () => 0);
    await flushSpans();
    expect(collector.spans.map((span) => [span.name, span.attributes])).toEqual([
      ['kept', { share: 0.5, count: 2 }],
    ]);
  });

  it('says a failing endpoint once a minute, with the spans dropped since, and never its credentials', async () => {
    const lines: string[] = [];
    const write = jest.spyOn(process.stdout, 'write').mockImplementation((line) => {
      lines.push(String(line));
      return true;
    });
    const start = laterClock.now + 60_000;
    const clock = jest.spyOn(Date, 'now').mockImplementation(() => laterClock.now);
    process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT =
      'http://user:secret@127.0.0.1:1/v1/traces?key=k';
    try {
      // Six failed exports of one span each, a second apart, then one a minute after the first.
      for (const second of [0, 1, 2, 3, 4, 5, 60]) {
        laterClock.now = start + second * 1_000;
        await inSpan('work', { context: sampled }, async () => 0);
        await flushSpans();
      }
      // Credentials before a host without a scheme are left out too.
      laterClock.now += 60_000;
      process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = 'user:secret@127.0.0.1:1';
      await inSpan('work', { context: sampled }, async () => 0);
      await flushSpans();
    } finally {
      write.mockRestore();
      clock.mockRestore();
    }
    expect(lines.map((line) => JSON.parse(line))).toEqual([
      expect.objectContaining({ url: 'http://127.0.0.1:1/v1/traces', spans: 1 }),
      expect.objectContaining({ url: 'http://127.0.0.1:1/v1/traces', spans: 6 }),
      expect.objectContaining({ url: '127.0.0.1:1', spans: 1 }),
    ]);
    expect(lines.join('')).not.toMatch(/secret|key=/);
  });

  it('sends to X-Ray signed for its xray service, at AWS_ENDPOINT_URL on an emulator', async () => {
    Object.assign(process.env, {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://xray.eu-west-1.amazonaws.com/v1/traces',
      AWS_ENDPOINT_URL: collector.endpoint,
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'example',
    });
    await inSpan('authorizer', { context: sampled, service: 'authorizer' }, async () => 0);
    await flushSpans();
    expect(collector.spans.map((span) => span.name)).toEqual(['authorizer']);
    expect(String(collector.exports[0]?.authorization)).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/xray\/aws4_request, /,
    );
  });

  it('times the calls a function signs itself (the authorizer’s) as client spans, named as the SDK’s', async () => {
    // Where no spans are sent, the calls are left as they are.
    const credentials = () => ({ accessKeyId: 'test', secretAccessKey: 'test' });
    const untraced = signedCalls('dynamodb', { region: 'us-east-1', credentials });
    expect(traceSignedCalls('DynamoDB', untraced)).toBe(untraced);
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = collector.endpoint;
    // DynamoDB answers; the control plane fails (a 500).
    const service = createServer((request, response) => {
      response.statusCode = request.url?.startsWith('/usageplans') ? 500 : 200;
      response.end('{}');
    });
    await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
    try {
      const settings = {
        region: 'us-east-1',
        endpoint: `http://127.0.0.1:${(service.address() as AddressInfo).port}`,
        credentials: () => ({ accessKeyId: 'test', secretAccessKey: 'test' }),
      };
      const target = { 'x-amz-target': 'DynamoDB_20120810.GetItem' };
      const dynamoDb = traceSignedCalls('DynamoDB', signedCalls('dynamodb', settings));
      const apiGateway = traceSignedCalls('APIGateway', signedCalls('apigateway', settings));
      await inSpan('authorizer', { context: sampled }, async () => {
        await dynamoDb('POST', '/', { body: {}, headers: target });
        await apiGateway('GET', '/usageplans/plan-1/keys');
      });
      // Outside a trace, a call is made without a span.
      await dynamoDb('POST', '/', { body: {}, headers: target });
    } finally {
      service.close();
    }
    await flushSpans();
    const [getItem, usagePlans, authorizer] = collector.spans;
    expect(collector.spans.map((span) => [span.name, span.kind, span.attributes])).toEqual([
      [
        'DynamoDB.GetItem',
        3,
        { 'rpc.system': 'aws-api', 'rpc.service': 'DynamoDB', 'http.response.status_code': 200 },
      ],
      [
        'APIGateway.GET /usageplans',
        3,
        { 'rpc.system': 'aws-api', 'rpc.service': 'APIGateway', 'http.response.status_code': 500 },
      ],
      ['authorizer', expect.any(Number), {}],
    ]);
    expect([getItem?.parentSpanId, usagePlans?.parentSpanId]).toEqual([
      authorizer?.spanId,
      authorizer?.spanId,
    ]);
    // A call that failed is an error of its span, as a thrown SDK call's is.
    expect([getItem?.status, usagePlans?.status]).toEqual([
      undefined,
      { code: 2, message: 'HTTP 500' },
    ]);
  });

  it('makes a client span an error when it was answered 4xx or 5xx, a server span only on a 5xx', async () => {
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = collector.endpoint;
    const cases = [
      ['client', 200],
      ['client', 404],
      ['client', 503],
      ['server', 404],
      ['server', 503],
    ] as const;
    for (const [kind, status] of cases) {
      await inSpan(`${kind} ${status}`, { kind, context: sampled }, async (span) => {
        span?.set({ 'http.response.status_code': status });
      });
    }
    // Answered, then failed: a throw after a 200 is the span's error all the same.
    await expect(
      inSpan('consumer 200, then a throw', { kind: 'consumer', context: sampled }, async (span) => {
        span?.set({ 'http.response.status_code': 200 });
        throw new Error('lost after the answer');
      }),
    ).rejects.toThrow('lost after the answer');
    await flushSpans();
    expect(collector.spans.map((span) => [span.name, span.status?.code])).toEqual([
      ['client 200', undefined],
      ['client 404', 2],
      ['client 503', 2],
      ['server 404', undefined],
      ['server 503', 2],
      ['consumer 200, then a throw', 2],
    ]);
  });

  it('sends attributes as OTLP/JSON does: an int64 as its decimal string, any other number a double', async () => {
    const bodies: string[] = [];
    const raw = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => {
        body += chunk;
      });
      request.on('end', () => {
        bodies.push(body);
        response.end('{}');
      });
    });
    await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${(raw.address() as AddressInfo).port}`;
    try {
      const attributes = { name: 'fern', kept: true, count: 2, share: 0.5, huge: 1e21 };
      await inSpan('typed', { context: sampled, attributes }, async () => 0);
      await flushSpans();
    } finally {
      raw.close();
    }
    const [span] = JSON.parse(bodies[0] as string).resourceSpans[0].scopeSpans[0].spans;
    expect(span.attributes).toEqual([
      { key: 'name', value: { stringValue: 'fern' } },
      { key: 'kept', value: { boolValue: true } },
      { key: 'count', value: { intValue: '2' } },
      { key: 'share', value: { doubleValue: 0.5 } },
      { key: 'huge', value: { doubleValue: 1e21 } },
    ]);
  });

  it('times each AWS call as a client span, and gives an SQS message its span’s context', async () => {
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = collector.endpoint;
    Object.assign(process.env, {
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
    });
    // The senders' client: its calls traced, as an endpoint is set.
    const sqs = createSqsClient();
    const sent: Record<string, unknown>[] = [];
    // In place of the network: what the command would send.
    sqs.middlewareStack.add(
      (_next, _context) => async (args) => {
        sent.push((args as unknown as { input: Record<string, unknown> }).input);
        return { output: { Failed: [], $metadata: {} }, response: {} };
      },
      { step: 'build' },
    );
    const command = () =>
      new SendMessageBatchCommand({
        QueueUrl: 'https://sqs.us-east-1.amazonaws.com/1/q',
        Entries: [{ Id: '0', MessageBody: '{}' }],
      });
    await sqs.send(command());
    expect(sent[0]?.Entries).toEqual([{ Id: '0', MessageBody: '{}' }]);
    const batch = command();
    await inSpan('fan-out', { context: sampled }, () => sqs.send(batch));
    await flushSpans();
    // The command's own input is left as it was.
    expect(batch.input.Entries).toEqual([{ Id: '0', MessageBody: '{}' }]);
    const call = collector.spans.find((span) => span.name === 'SQS.SendMessageBatch');
    expect(call).toMatchObject({ kind: 3, parentSpanId: sampled.spanId });
    const [entry] = (sent[1]?.Entries ?? []) as {
      MessageAttributes: Record<string, { StringValue: string }>;
    }[];
    expect(parseTraceparent(entry?.MessageAttributes.traceparent?.StringValue)).toEqual({
      ...sampled,
      spanId: call?.spanId,
    });
    // In a trace not sampled, the call goes as it is: no span, and no context on the message.
    await inSpan('fan-out', { context: { ...sampled, flags: '00' } }, () => sqs.send(command()));
    await flushSpans();
    expect(sent[2]?.Entries).toEqual([{ Id: '0', MessageBody: '{}' }]);
    expect(collector.spans.filter((span) => span.name === 'SQS.SendMessageBatch')).toHaveLength(1);
  });
});
