/**
 * Alarms on one metric, written as plain metric alarms. cdk-monitoring-constructs labels every
 * metric, which renders an alarm as a metric-math query computing nothing: harder to read, and
 * refused by tools that take only plain alarms (MiniStack). `FILL(m, 0)` of one metric becomes
 * `TreatMissingData: notBreaching`. Alarms that compute keep their math.
 */
import { type IAspect, Stack } from 'aws-cdk-lib';
import { CfnAlarm } from 'aws-cdk-lib/aws-cloudwatch';
import type { IConstruct } from 'constructs';

/** The statistics CloudWatch takes as `Statistic`; any other (p99, tm90…) is `ExtendedStatistic`. */
const plainStatistics = new Set(['SampleCount', 'Average', 'Sum', 'Minimum', 'Maximum']);

/** A metric query as the L1 alarm holds it (the CDK's property names, camelCase). */
interface MetricQuery {
  readonly expression?: unknown;
  readonly metricStat?: {
    readonly metric: {
      readonly metricName: string;
      readonly namespace: string;
      readonly dimensions?: readonly { readonly name: string; readonly value: unknown }[];
    };
    readonly period: number;
    readonly stat: string;
    readonly unit?: string;
  };
}

/** Rewrites every single-metric `Metrics` alarm under the scope it is added to. */
export class PlainMetricAlarms implements IAspect {
  visit(node: IConstruct): void {
    if (!(node instanceof CfnAlarm) || node.metrics === undefined) return;
    const queries = Stack.of(node).resolve(node.metrics) as readonly (MetricQuery & {
      readonly id?: string;
    })[];
    const metrics = queries.filter((query) => query.metricStat !== undefined);
    const expressions = queries.filter((query) => query.expression !== undefined);
    const [query] = metrics;
    if (metrics.length !== 1 || query?.metricStat === undefined) return;
    const filled = expressions.length === 1 && isFillWithZero(expressions[0]?.expression, query.id);
    if (expressions.length > 0 && !filled) return;
    if (filled) node.addPropertyOverride('TreatMissingData', 'notBreaching');
    const { metric, period, stat, unit } = query.metricStat;
    // As template properties (resolved above), so the dimensions keep their references.
    node.addPropertyDeletionOverride('Metrics');
    node.addPropertyOverride('MetricName', metric.metricName);
    node.addPropertyOverride('Namespace', metric.namespace);
    if (metric.dimensions !== undefined) {
      node.addPropertyOverride(
        'Dimensions',
        metric.dimensions.map(({ name, value }) => ({ Name: name, Value: value })),
      );
    }
    node.addPropertyOverride('Period', period);
    node.addPropertyOverride(plainStatistics.has(stat) ? 'Statistic' : 'ExtendedStatistic', stat);
    if (unit !== undefined) node.addPropertyOverride('Unit', unit);
  }
}

/** Whether `expression` is `FILL(<id>, 0)` of the metric `id`. */
function isFillWithZero(expression: unknown, id: string | undefined): boolean {
  return (
    typeof expression === 'string' &&
    id !== undefined &&
    expression.replace(/\s/g, '') === `FILL(${id},0)`
  );
}
