/**
 * A PlantsApi in a bare stack with inline functions (nothing bundled), for the tests of options
 * the two synthesized stages do not use.
 */
import { RemovalPolicy, type Stack } from 'aws-cdk-lib';
import { Code, Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { type RouteFunctionName, routeFunctionNames } from '../../functions/shared/http/routes.ts';
import { PlantsApi, type PlantsApiProps } from '../../infra/plants-api.ts';

function createInlineFunction(stack: Stack, id: string): LambdaFunction {
  return new LambdaFunction(stack, id, {
    runtime: Runtime.NODEJS_24_X,
    handler: 'index.handler',
    code: Code.fromInline('export const handler = async () => ({});'),
  });
}

/** One inline function per function of the route table (`createPlant` → `CreatePlant`). */
function createInlineRouteFunctions(stack: Stack) {
  return Object.fromEntries(
    routeFunctionNames.map((name) => [
      name,
      createInlineFunction(stack, `${name[0]?.toUpperCase()}${name.slice(1)}`),
    ]),
  ) as Record<RouteFunctionName, LambdaFunction>;
}

/** A dev-stage PlantsApi with inline functions, its props changed by `props`. */
export function createPlantsApi(stack: Stack, props: Partial<PlantsApiProps> = {}): PlantsApi {
  return new PlantsApi(stack, 'Api', {
    stageName: 'dev',
    throttling: { rateLimit: 10, burstLimit: 20 },
    routeFunctions: createInlineRouteFunctions(stack),
    authorizerFunction: createInlineFunction(stack, 'Authorizer'),
    logRetention: RetentionDays.ONE_WEEK,
    logRemovalPolicy: RemovalPolicy.DESTROY,
    ...props,
  });
}
