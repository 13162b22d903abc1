import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { capacityTable, limitsList, modelSize, sizes } from '../../bench/capacity.ts';
import { routes } from '../../functions/shared/http/routes.ts';
import { bundleLimits } from '../../functions/shared/webhooks/delivery-message.ts';
import { concurrentSendBatches } from '../../functions/shared/webhooks/delivery-queue.ts';
import { defaultWebhookDeliveries, stages } from '../../infra/stages.ts';
import { isEndpointRoute, plantsRouteShares } from '../../infra/throttling.ts';
import {
  fanoutStreamSettings,
  mappingMaximumConcurrency,
} from '../../infra/webhook-pipeline-settings.ts';

const figures = sizes.map(modelSize);

describe('npm run capacity', () => {
  it('is what docs/capacity.md shows it printing', () => {
    const doc = readFileSync('docs/capacity.md', 'utf8');
    expect(doc).toContain(
      `\`\`\`text\n${capacityTable(figures)}\n\n${limitsList(figures)}\n\`\`\``,
    );
  });

  it('gives every member the JSON form promises, numbers where they are figures', () => {
    const members = [
      'requestsPerSecond',
      'clients',
      'endpoints',
      'refusedShareUnderBudget',
      'eventsPerSecond',
      'fanoutEventsPerSecond',
      'webhooksLostPerSecond',
      'controlPlaneCallsPerSecondAfterDeploy',
      'kmsDecryptPerSecond',
      'hottestKeyShareOfPartition',
      'costPerMillionRequests',
      'costPerMillionDeliveries',
    ] as const;
    for (const size of figures) {
      expect(typeof size.name).toBe('string');
      for (const member of members)
        expect([member, typeof size[member]]).toEqual([member, 'number']);
    }
  });

  it('follows the stack’s own settings: a fan-out sending more batches at once admits more events', () => {
    const [, medium] = figures;
    // At M, a stream batch of 100 events to 2,000 endpoints is 2,000 × 10 bundles (`bundleLimits`),
    // 2,000 SendMessageBatch calls, `concurrentSendBatches` at a time, on each of a shard's
    // `parallelizationFactor` invocations.
    const perBatch = ((2_000 * 100) / bundleLimits.messages / 10 / concurrentSendBatches) * 0.02;
    expect(medium?.fanoutEventsPerSecond).toBeCloseTo(
      (fanoutStreamSettings.parallelizationFactor * fanoutStreamSettings.batchSize) / perBatch,
      5,
    );
    // Twice the event rate at least: every admitted event reaches every endpoint.
    expect(medium?.fanoutEventsPerSecond).toBeGreaterThanOrEqual(
      2 * (medium?.eventsPerSecond ?? 0),
    );
    expect(medium?.webhooksLostPerSecond).toBe(0);
    expect(medium?.deliveriesPerSecond).toBe((medium?.eventsPerSecond ?? 0) * 2_000);
  });
});

describe('what each size needs', () => {
  it('finds L losing webhooks on prod as configured, and says what lifts it: more first-attempt queues, and raises', () => {
    const large = figures[2];
    const configured = stages.prod.webhookDeliveries ?? defaultWebhookDeliveries;
    expect(large?.webhooksLostPerSecond).toBeGreaterThan(0);
    expect(large?.limitsHit.join('; ')).toContain(
      `${configured.concurrency} allowed on ${configured.queues} queue`,
    );
    const needs = large?.needs;
    // More functions than the deliveries need, on as many queues as one mapping's 1,000 asks.
    expect(needs?.webhookDeliveries.concurrency).toBeGreaterThan(large?.deliveryConcurrency ?? 0);
    expect(needs?.webhookDeliveries.queues).toBe(
      Math.ceil((needs?.webhookDeliveries.concurrency ?? 0) / mappingMaximumConcurrency),
    );
    // The account holds the deliveries and the rest.
    expect(needs?.lambdaConcurrency).toBeGreaterThan(needs?.webhookDeliveries.concurrency ?? 0);
    expect(needs?.tableWriteUnitsPerSecond).toBeGreaterThan(
      large?.logTableWriteUnitsPerSecond ?? 0,
    );
    expect(large?.limitsHitWithNeeds).toEqual([]);
  });

  it('needs nothing at S, and at M only the webhook log’s write units', () => {
    const [small, medium] = figures;
    expect(small?.needs).toBeNull();
    expect(small?.limitsHitWithNeeds).toEqual([]);
    expect(medium?.needs).toMatchObject({
      webhookDeliveries: stages.prod.webhookDeliveries ?? defaultWebhookDeliveries,
      lambdaConcurrency: 1_000,
      tableReadUnitsPerSecond: 40_000,
    });
    expect(medium?.needs?.tableWriteUnitsPerSecond).toBeGreaterThan(40_000);
    expect(medium?.limitsHitWithNeeds).toEqual([]);
  });
});

describe('the plants budget, split by a declared mix', () => {
  it('gives every plants route a share, together the whole budget', () => {
    const plants = routes.filter((route) => !isEndpointRoute(route));
    expect(Object.keys(plantsRouteShares).sort()).toEqual(
      plants.map((route) => `${route.method} ${route.path}`).sort(),
    );
    const total = Object.values(plantsRouteShares).reduce((sum, share) => sum + share, 0);
    expect(total).toBeCloseTo(1, 9);
  });

  it('refuses no method at S while the stage is under its budget', () => {
    expect(figures[0]?.refusedShareUnderBudget).toBe(0);
  });
});
