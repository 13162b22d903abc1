import { describe, expect, it } from '@jest/globals';
import { defaultAssumptions, estimateCosts, estimateRetryCosts, prices } from '../../bench/cost.ts';
import { routes } from '../../functions/shared/http/routes.ts';
import { functionSettings } from '../../infra/function-settings.ts';

describe('npm run cost', () => {
  const byOperation = (assumptions = defaultAssumptions) =>
    Object.fromEntries(estimateCosts(assumptions).map((row) => [row.operation, row]));

  it('prices every operation of the API, each total the sum of its parts', () => {
    const rows = estimateCosts();
    expect(rows.map((row) => row.operation)).toEqual(
      routes.map((route) => `${route.method} ${route.path}`),
    );
    for (const row of rows) {
      const parts =
        row.apiGateway + row.authorizer + row.lambda + row.dynamoDb + row.logs + row.webhooks;
      expect(row.total).toBeCloseTo(parts, 10);
      expect(row.apiGateway).toBe(prices.apiGatewayRestPerMillion + prices.wafRequestsPerMillion);
    }
  });

  it('bills Lambda from the stack\u2019s memory settings: GB-seconds of the CPU time at that size plus the store round trip', () => {
    const getPlant = byOperation()['GET /plants/{id}'];
    const gb = functionSettings.getPlant.memorySizeMb / 1024;
    const cpu =
      (defaultAssumptions.cpuMillisecondsAtFullVcpu['GET /plants/{id}'] as number) /
      (functionSettings.getPlant.memorySizeMb / 1769);
    const milliseconds = Math.ceil(cpu + defaultAssumptions.dynamoRoundTripMilliseconds);
    expect(getPlant?.lambda).toBeCloseTo(
      prices.lambdaRequestsPerMillion +
        1e6 * milliseconds * 0.001 * gb * prices.lambdaArmPerGbSecond,
      10,
    );
  });

  it('charges the authorizer once per token per cache period, and webhooks per subscriber, on creates only', () => {
    const base = byOperation();
    const fewerRequestsPerToken = byOperation({
      ...defaultAssumptions,
      requestsPerTokenPerCacheTtl: 10,
    });
    expect(fewerRequestsPerToken['GET /plants/{id}']?.authorizer).toBeCloseTo(
      (base['GET /plants/{id}']?.authorizer ?? 0) * 10,
      10,
    );
    const twoSubscribers = byOperation({ ...defaultAssumptions, webhookSubscribers: 2 });
    expect(twoSubscribers['POST /plants']?.webhooks).toBeGreaterThan(
      (base['POST /plants']?.webhooks ?? 0) * 1.9,
    );
    for (const operation of ['GET /plants/{id}', 'PATCH /plants/{id}', 'DELETE /plants/{id}']) {
      expect(base[operation]?.webhooks).toBe(0);
    }
  });

  it('prices a dead subscriber\u2019s retries as hops of at most 15 minutes: 113 messages per delivery', () => {
    const costs = estimateRetryCosts();
    // 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h: 1 + 1 + 2 + 8 + 20 + 40 + 40 hops, and the first.
    expect(costs.messagesPerDeadDelivery).toBe(113);
    expect(costs.deadSqs).toBeCloseTo(113 * 3 * prices.sqsRequestsPerMillion, 10);
    expect(costs.dead).toBeCloseTo(costs.deadSqs + costs.deadLambda, 10);
    expect(costs.dead).toBeGreaterThan(costs.deliveredFirstTime * 40);
    // A schedule a day waits 24 hops of 15 minutes.
    expect(estimateRetryCosts(defaultAssumptions, [86_400]).messagesPerDeadDelivery).toBe(97);
  });
});
