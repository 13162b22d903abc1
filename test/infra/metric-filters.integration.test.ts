/**
 * Every metric filter of the stack matched against the real log line of the real function (run
 * here against DynamoDB Local, with the writer captured: `log-line-bed.ts`), its value and
 * dimension fields present.
 *
 * @services dynamodb-local
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { functionDisplayName } from '../../functions/shared/http/routes.ts';
import { createLogger, type Logger } from '../../functions/shared/platform/logger.ts';
import { functionSettings } from '../../infra/function-settings.ts';
import { stages } from '../../infra/stages.ts';
import { matchesFilterPattern } from '../support/metric-filter-pattern.ts';
import { createTestTable, type TestTable } from '../support/test-store.ts';
import { writeEveryLogLine } from './log-line-bed.ts';
import { synthesizedStages } from './synthesized-stages.ts';

const synthesizedStage = synthesizedStages();

describe('metric filters, against the real log lines', () => {
  /** Log lines by the function that wrote them (display name), each parsed once. */
  const lines = new Map<string, string[]>();
  const loggerOf = (name: string): Logger =>
    createLogger({ service: name }, (line) => {
      lines.set(name, [...(lines.get(name) ?? []), line]);
    });
  let table: TestTable;
  let subscriber: Server;
  let subscriberAnswer = 204;

  beforeAll(async () => {
    // As Lambda sets it in a published version: every line names its version.
    process.env.AWS_LAMBDA_FUNCTION_VERSION = '7';
    // As the runtime sets it when the function is traced.
    process.env._X_AMZN_TRACE_ID = 'Root=1-67891233-abcdef012345678912345678;Sampled=1';
    table = await createTestTable();
    subscriber = createServer((request, response) => {
      request.resume().on('end', () => response.writeHead(subscriberAnswer).end());
    });
    await new Promise<void>((resolve) => subscriber.listen(0, '127.0.0.1', resolve));
    const subscriberUrl = `http://127.0.0.1:${(subscriber.address() as AddressInfo).port}/`;

    await writeEveryLogLine({
      table,
      subscriberUrl,
      failSubscriber: () => {
        subscriberAnswer = 500;
      },
      loggerOf,
    });
  }, 180_000);

  afterAll(async () => {
    delete process.env.AWS_LAMBDA_FUNCTION_VERSION;
    delete process.env._X_AMZN_TRACE_ID;
    await table?.remove();
    subscriber?.close();
  });

  it('names the invocation on every line of every function, in the same fields', () => {
    expect([...lines.keys()].sort()).toEqual(
      Object.keys(functionSettings).map(functionDisplayName).sort(),
    );
    for (const [name, written] of lines) {
      for (const line of written) {
        expect({ name, entry: JSON.parse(line) }).toEqual({
          name,
          entry: expect.objectContaining({
            service: name,
            awsRequestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
            // X-Ray's trace in W3C form, as a route function's answer names it.
            traceId: '67891233abcdef012345678912345678',
            coldStart: expect.any(Boolean),
            functionVersion: '7',
          }),
        });
      }
    }
  });

  /** The function whose log group a filter reads: `CreatePlantLogGroup…` → `create-plant`. */
  const functionOf = (filter: { [key: string]: { LogGroupName: { Ref: string } } }) =>
    functionDisplayName(String(filter.Properties?.LogGroupName.Ref).replace(/LogGroup.*$/, ''));

  /**
   * The runtime's own report of an invocation in the JSON log format, in every function's log
   * group: with `initDurationMs` when the invocation started the instance, without it otherwise
   * (Lambda developer guide, "Configuring JSON and plain text log formats").
   */
  const platformReports = [true, false].map((cold) =>
    JSON.stringify({
      time: '2026-11-25T10:00:02.000Z',
      type: 'platform.report',
      record: {
        requestId: '6f7f0961-f834-4211-8a7a-f6fe80b88d56',
        metrics: {
          durationMs: 41.2,
          billedDurationMs: 42,
          memorySizeMB: 1024,
          maxMemoryUsedMB: 88,
          ...(cold ? { initDurationMs: 171.4 } : {}),
        },
        status: 'success',
      },
    }),
  );

  /** What each metric must count: a line it must match, and lines it must not. */
  const expectations: Record<string, { matches: RegExp; never?: RegExp }> = {
    PlantsCreated: { matches: /"newPlants":1/ },
    PlantConflicts: { matches: /"errorCode":40009/, never: /"statusCode":200/ },
    WebhooksDelivered: { matches: /webhook delivered/, never: /retrying|dead-lettered/ },
    WebhookRetries: { matches: /retrying/, never: /delivered"|dead-lettered/ },
    WebhookWaitAtNextAttempt: { matches: /retrying/, never: /delivered"|dead-lettered/ },
    WebhooksDeadLettered: { matches: /dead-lettered/, never: /retrying|delivered"/ },
    ItemsNotPlants: { matches: /"itemsNotPlants":1/, never: /"newPlants"|"statusCode"/ },
    AuthorizerFailures: {
      matches: /failing closed/,
      never: /Rejected the bearer token|Could not add the client/,
    },
    ClientKeysNotAdded: { matches: /Could not add the client/, never: /failing closed/ },
    AuthorizerRefusals: { matches: /Rejected the bearer token/ },
    ServerErrors: { matches: /"statusCode":50[03]/, never: /"statusCode":200/ },
    EndpointDeliveries: {
      matches: /"subscriber":"endpoint:.*"outcome":"retrying"/,
      never: /"subscriber":"audit"/,
    },
    EndpointsDisabled: { matches: /webhook endpoint disabled/, never: /retrying/ },
    OldestKeptStreamBatchMinutes: { matches: /replayed kept stream failures/ },
    WebhookEventsRefused: {
      matches: /set aside: its webhooks are not queued/,
      never: /"newPlants"/,
    },
    InitDuration: { matches: /"initDurationMs":171\.4/, never: /"maxMemoryUsedMB":88}/ },
  };

  it.each(Object.keys(stages))(
    'reads, in the %s stage, exactly what the functions log',
    (stage) => {
      const filters = Object.values(
        synthesizedStage(stage).template.findResources('AWS::Logs::MetricFilter') ?? {},
      );
      expect(filters.length).toBeGreaterThan(8);
      for (const filter of filters) {
        const [transformation] = filter.Properties.MetricTransformations;
        const metricName = String(transformation.MetricName);
        // The InitDuration metrics are named after their function, in a namespace of their own.
        const key = String(transformation.MetricNamespace).endsWith('/InitDuration')
          ? 'InitDuration'
          : Object.keys(expectations).find(
              (name) => metricName === name || metricName.endsWith(name),
            );
        if (key === undefined) throw new Error(`No real log line is checked for ${metricName}`);
        const expected = expectations[key] ?? { matches: /$^/ };
        const written = [...(lines.get(functionOf(filter)) ?? []), ...platformReports];
        const pattern = String(filter.Properties.FilterPattern);
        const matched = written.filter((line) => matchesFilterPattern(pattern, line));
        expect({
          metricName,
          matched: matched.some((line) => expected.matches.test(line)),
        }).toEqual({
          metricName,
          matched: true,
        });
        if (expected.never !== undefined) {
          const wrong = matched.filter((line) => expected.never?.test(line));
          expect({ metricName, wrong }).toEqual({ metricName, wrong: [] });
        }
        // The value and every dimension are fields of each matched line.
        const fields = [
          transformation.MetricValue,
          ...(transformation.Dimensions ?? []).map(
            (dimension: { Value: string }) => dimension.Value,
          ),
        ].filter((value: string) => value.startsWith('$.'));
        for (const line of matched) {
          const event = JSON.parse(line) as Record<string, unknown>;
          for (const field of fields)
            expect({ metricName, field, value: valueAt(event, field) }).toEqual({
              metricName,
              field,
              value: expect.anything(),
            });
        }
      }
    },
  );
});

/** The value a JSON selector (`$.a.b`) names in a log event. */
function valueAt(event: Record<string, unknown>, selector: string): unknown {
  return selector
    .slice(2)
    .split('.')
    .reduce<unknown>((value, key) => (value as Record<string, unknown> | undefined)?.[key], event);
}
