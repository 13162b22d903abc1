/**
 * What the monitoring promises, held to the templates: every function logs JSON, and the alarm
 * table in the docs matches the synthesized alarms (name, comparison, threshold, periods).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { functionDisplayName } from '../../functions/shared/http/routes.ts';
import { functionSettings } from '../../infra/function-settings.ts';
import { repositoryRoot } from '../../infra/plant-store-function.ts';
import { stages } from '../../infra/stages.ts';
import { synthesizedStages } from './synthesized-stages.ts';

const synthesizedStage = synthesizedStages();

it.each(Object.keys(stages))(
  'has every function of the %s stage log JSON, the runtime’s own lines included',
  (stage) => {
    const functions = Object.values(
      synthesizedStage(stage).template.findResources('AWS::Lambda::Function') ?? {},
    );
    expect(functions.length).toBeGreaterThanOrEqual(8);
    for (const fn of functions) {
      // INFO system logs keep every invocation's platform.report (the InitDuration metric).
      expect(fn.Properties.LoggingConfig).toEqual({
        LogFormat: 'JSON',
        SystemLogLevel: 'INFO',
        LogGroup: expect.anything(),
      });
    }
  },
);

describe('the alarm table of docs/deploying.md', () => {
  interface Row {
    readonly names: readonly string[];
    readonly comparison: string;
    readonly threshold: string;
    readonly datapoints: number;
    readonly periods: number;
    readonly periodSeconds: number;
  }
  const page = readFileSync(path.join(repositoryRoot, 'docs', 'deploying.md'), 'utf8');
  const section = page.slice(page.indexOf('| alarm | metric | fires at | for |'));
  const tableLines = section.split('\n');
  const rows: Row[] = tableLines
    .slice(
      2,
      tableLines.findIndex((line) => !line.startsWith('|')),
    )
    .map((line) => {
      const [names = '', , firesAt = '', forText = ''] = line.split(' | ');
      const fires = /`([>≥]) ([^`]+)`/.exec(firesAt);
      const periods = /(\d+) of (\d+) × (\d+) min/.exec(forText);
      if (fires === null || periods === null) throw new Error(`Unreadable alarm row: ${line}`);
      return {
        names: [...names.matchAll(/`([^`]+)`/g)].map((match) => match[1] ?? ''),
        comparison: fires[1] === '>' ? 'GreaterThanThreshold' : 'GreaterThanOrEqualToThreshold',
        threshold: fires[2] ?? '',
        datapoints: Number(periods[1]),
        periods: Number(periods[2]),
        periodSeconds: Number(periods[3]) * 60,
      };
    });

  it.each(Object.keys(stages))(
    'says exactly what every alarm of the %s stage fires at',
    (stage) => {
      expect(rows.length).toBeGreaterThan(10);
      const alarms = Object.entries(
        synthesizedStage(stage).template.findResources('AWS::CloudWatch::Alarm') ?? {},
      );
      const covered = new Set<string>();
      for (const row of rows) {
        for (const name of row.names) {
          const pattern = new RegExp(
            `^(PlantStore-${stage}-)?${name.replace('<function>', '([a-z-]+)')}$`,
          );
          const matching = alarms.filter(([logicalId, alarm]) => {
            const alarmName = alarm.Properties.AlarmName as string | undefined;
            // Canary alarms have generated names: their construct id is in the logical id.
            return alarmName === undefined
              ? logicalId.includes(`GradualDeployment${name}`)
              : pattern.test(alarmName);
          });
          // A canary row matches only in production-like stages.
          if (
            matching.length === 0 &&
            name.startsWith('NewVersion') &&
            !stages[stage as 'dev']?.productionLike
          )
            continue;
          expect({ name, matching: matching.length > 0 }).toEqual({ name, matching: true });
          for (const [logicalId, alarm] of matching) {
            covered.add(logicalId);
            const properties = alarm.Properties;
            const functionName = pattern.exec(String(properties.AlarmName))?.[2];
            const percentOfTimeout = /^(\d+) % of the timeout$/.exec(row.threshold);
            const threshold =
              percentOfTimeout === null
                ? Number(row.threshold)
                : (Number(percentOfTimeout[1]) / 100) * timeoutSecondsOf(functionName ?? '') * 1000;
            const period =
              properties.Period ??
              Math.max(
                ...(properties.Metrics ?? []).map(
                  (metric: { MetricStat?: { Period?: number }; Period?: number }) =>
                    metric.MetricStat?.Period ?? metric.Period ?? 0,
                ),
              );
            expect({
              name: properties.AlarmName ?? logicalId,
              comparison: properties.ComparisonOperator,
              threshold: properties.Threshold,
              datapoints: properties.DatapointsToAlarm ?? properties.EvaluationPeriods,
              periods: properties.EvaluationPeriods,
              period,
            }).toEqual({
              name: properties.AlarmName ?? logicalId,
              comparison: row.comparison,
              threshold,
              datapoints: row.datapoints,
              periods: row.periods,
              period: row.periodSeconds,
            });
          }
        }
      }
      const undocumented = alarms
        .filter(([logicalId]) => !covered.has(logicalId))
        .map(([logicalId, alarm]) => alarm.Properties.AlarmName ?? logicalId);
      expect(undocumented).toEqual([]);
    },
  );
});

/** A function's timeout by its display name (`create-plant`). */
function timeoutSecondsOf(name: string): number {
  const entry = Object.entries(functionSettings).find(([key]) => functionDisplayName(key) === name);
  if (entry === undefined) throw new Error(`No settings for ${name}`);
  return entry[1].timeoutSeconds;
}
