import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { capacityTable, limitsList, modelSize, sizes } from '../../bench/capacity.ts';
import { routes } from '../../functions/shared/http/routes.ts';
import { isEndpointRoute, plantsRouteShares } from '../../infra/throttling.ts';

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
    // At M, 2,000 endpoints take 200 batches; the fan-out's rate is the inverse of one event's time.
    expect(medium?.fanoutEventsPerSecond).toBeCloseTo(1 / ((200 / 10) * 0.02), 5);
    expect(medium?.deliveriesPerSecond).toBe((medium?.eventsPerSecond ?? 0) * 2_000);
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
