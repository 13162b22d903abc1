import {
  Aspects,
  CfnOutput,
  RemovalPolicy,
  Stack,
  type StackProps,
  Validations,
} from 'aws-cdk-lib';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { checkAllowedOrigins } from '../functions/shared/http/cors.ts';
import {
  functionDisplayName,
  type RouteFunctionName,
  routeFunctionNames,
  routesOf,
  scopeDescriptions,
} from '../functions/shared/http/routes.ts';
import { type FunctionSettings, functionSettings } from './function-settings.ts';
import { PlantStoreFunction, type PlantStoreFunctionProps } from './plant-store-function.ts';
import { type MonitoredFunction, PlantStoreMonitoring } from './plant-store-monitoring.ts';
import { PlantWebhooks } from './plant-webhooks.ts';
import { PlantsApi, usagePlanName } from './plants-api.ts';
import { PlantsTable } from './plants-table.ts';
import { GradualDeployment } from './safe-deployment.ts';
import { SamResourceIds } from './sam-resource-ids.ts';
import {
  defaultInitDurationAlarmMilliseconds,
  defaultWebhookDeliveries,
  type StageConfig,
} from './stages.ts';
import { TokenIssuer } from './token-issuer.ts';
import { WebhookEndpointStores } from './webhook-endpoint-stores.ts';

export interface PlantStoreStackProps extends StackProps {
  readonly stage: StageConfig;
}

/** A stage's allowed origins: exact ones, `*` only where the stage is not production-like. */
function checkStageOrigins(stage: StageConfig): readonly string[] {
  try {
    return checkAllowedOrigins(stage.cors?.allowedOrigins ?? [], {
      anyOrigin: !stage.productionLike,
      anyPort: false,
    });
  } catch (error) {
    throw new Error(`Stage ${stage.name}, cors.allowedOrigins: ${(error as Error).message}.`);
  }
}

/** The stack name of a stage: `PlantStore-<stage>`. */
export function formatStackName(stageName: string): string {
  return `PlantStore-${stageName}`;
}

/** One stage: table, issuer, route functions, authorizer, API, webhooks and monitoring. */
export class PlantStoreStack extends Stack {
  readonly table: PlantsTable;
  readonly tokenIssuer: TokenIssuer;
  /** The function behind each route, by its name in the route table. */
  readonly routeFunctions: Readonly<Record<RouteFunctionName, PlantStoreFunction>>;
  readonly authorizerFunction: PlantStoreFunction;
  readonly api: PlantsApi;
  readonly webhooks: PlantWebhooks;
  readonly monitoring: PlantStoreMonitoring;
  readonly endpointStores: WebhookEndpointStores;
  /** Production-like stages: each API function's alias and deployment group, by name. */
  readonly gradualDeployments: ReadonlyMap<string, GradualDeployment>;

  private readonly stage: StageConfig;
  /** Logs are evidence: production-like stages keep them after the stack is gone. */
  private readonly logs: Pick<
    PlantStoreFunctionProps,
    'logRetention' | 'logRemovalPolicy' | 'traceSampleRatio'
  >;

  constructor(scope: Construct, id: string, props: PlantStoreStackProps) {
    super(scope, id, props);
    const { stage } = props;
    this.stage = stage;
    this.logs = {
      logRetention: stage.logRetentionDays as RetentionDays,
      logRemovalPolicy: stage.productionLike ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
      traceSampleRatio: stage.traceSampleRatio,
    };
    const allowedOrigins = checkStageOrigins(stage);

    this.table = new PlantsTable(this, 'Plants', { productionLike: stage.productionLike });
    this.tokenIssuer = new TokenIssuer(this, 'TokenIssuer', {
      config: stage.issuer,
      stageName: stage.name,
      scopes: scopeDescriptions,
      productionLike: stage.productionLike,
    });
    this.endpointStores = new WebhookEndpointStores(this, 'WebhookEndpoints', {
      productionLike: stage.productionLike,
    });
    this.webhooks = new PlantWebhooks(this, 'Webhooks', {
      table: this.table.table,
      endpointStores: this.endpointStores,
      stageName: stage.name,
      subscribers: stage.webhookSubscribers ?? [],
      productionLike: stage.productionLike,
      deliveries: stage.webhookDeliveries ?? defaultWebhookDeliveries,
      ...this.logs,
    });
    this.routeFunctions = this.createRouteFunctions(allowedOrigins);
    this.authorizerFunction = new PlantStoreFunction(this, 'Authorizer', {
      settings: functionSettings.authorizer,
      description: 'Plant Store: TOKEN authorizer, verifies the bearer JWT and its scope.',
      environment: {
        ...this.tokenIssuer.authorizerEnvironment,
        USAGE_PLAN_NAME: usagePlanName(stage.name),
        // AWS's own; `sam local` points it at an emulator.
        API_GATEWAY_ENDPOINT: '',
      },
      ...this.logs,
    });
    this.endpointStores.bind(
      this.authorizerFunction,
      functionSettings.authorizer.endpointAccess,
      this.webhooks.deliveryQueues,
    );
    this.gradualDeployments = this.createGradualDeployments();
    this.api = this.createApi(allowedOrigins);
    this.monitoring = this.createMonitoring();
    acknowledgeControlTowerFindings(this, stage);
    this.addOutputs();
    Aspects.of(this).add(new SamResourceIds());
  }

  /** One function per route function, logical ids in PascalCase (`CreatePlant`), as SAM's. */
  private createRouteFunctions(allowedOrigins: readonly string[]) {
    const routeFunction = (name: RouteFunctionName) => {
      const settings: FunctionSettings = functionSettings[name];
      const served = routesOf(name).map((route) => `${route.method} ${route.path}`);
      const fn = new PlantStoreFunction(this, name.charAt(0).toUpperCase() + name.slice(1), {
        settings,
        description: `Plant Store: ${served.join(', ')}.`,
        ...this.logs,
      });
      if (settings.endpointAccess === undefined) {
        this.table.bindFunction(fn, settings.tableActions ?? []);
      } else {
        this.endpointStores.bind(fn, settings.endpointAccess, this.webhooks.deliveryQueues);
      }
      // Declared in every stage, so that `sam local invoke --env-vars` can set it.
      fn.addEnvironment('CORS_ALLOWED_ORIGINS', allowedOrigins.join(','));
      return fn;
    };
    return Object.fromEntries(
      routeFunctionNames.map((name) => [name, routeFunction(name)]),
    ) as Record<RouteFunctionName, PlantStoreFunction>;
  }

  /** Production-like stages shift each function's new version gradually, behind alias `live`. */
  private createGradualDeployments(): ReadonlyMap<string, GradualDeployment> {
    const gradual = new Map<string, GradualDeployment>();
    if (!this.stage.productionLike) return gradual;
    const functions = { ...this.routeFunctions, authorizer: this.authorizerFunction };
    for (const [name, fn] of Object.entries(functions)) {
      const props = { function: fn, stageName: this.stage.name, logGroup: fn.logGroupOfFunction };
      gradual.set(name, new GradualDeployment(fn, 'GradualDeployment', props));
    }
    return gradual;
  }

  /** The REST API, calling each function (or its `live` alias) behind the authorizer. */
  private createApi(allowedOrigins: readonly string[]): PlantsApi {
    const { stage } = this;
    const target = (name: string, fn: PlantStoreFunction): IFunction =>
      this.gradualDeployments.get(name)?.alias ?? fn;
    const routeTargets = Object.fromEntries(
      Object.entries(this.routeFunctions).map(([name, fn]) => [name, target(name, fn)]),
    ) as Record<RouteFunctionName, IFunction>;
    return new PlantsApi(this, 'Api', {
      stageName: stage.name,
      throttling: stage.throttling,
      endpointThrottling: stage.webhookEndpointThrottling,
      routeFunctions: routeTargets,
      authorizerFunction: target('authorizer', this.authorizerFunction),
      ...this.logs,
      webAclArn: stage.webAclArn,
      allowedOrigins,
      customDomain: stage.customDomain,
      manageCloudWatchRole: stage.manageApiGatewayCloudWatchRole,
    });
  }

  /** Alarms, topic and dashboard; gradual deploys roll back on the new version's alarms. */
  private createMonitoring(): PlantStoreMonitoring {
    const { stage } = this;
    const monitoring = new PlantStoreMonitoring(this, 'Monitoring', {
      stageName: stage.name,
      api: this.api.restApi,
      table: this.table.table,
      webhooks: this.webhooks,
      endpointStores: this.endpointStores,
      notifications: stage.alarmNotifications ?? {},
      initDurationAlarmMilliseconds:
        stage.initDurationAlarmMilliseconds ?? defaultInitDurationAlarmMilliseconds,
      functions: [
        ...Object.values(this.routeFunctions).map((fn) => monitored(fn, 'api')),
        monitored(this.authorizerFunction, 'authorizer'),
        monitored(this.webhooks.fanoutFunction, 'stream'),
        monitored(this.webhooks.deliverFunction, 'queue'),
        monitored(this.webhooks.replayFunction, 'scheduled'),
      ],
    });
    const notify = new SnsAction(monitoring.topic);
    for (const [name, deployment] of this.gradualDeployments) {
      deployment.rollBackOn(
        name === 'authorizer'
          ? deployment.createAuthorizerRollbackAlarms(notify)
          : deployment.createRollbackAlarms(notify),
      );
    }
    return monitoring;
  }

  /** Everything a client, an operator or the smoke command reads from `DescribeStacks`. */
  private addOutputs(): void {
    const output = (id: string, description: string, value: string | undefined) => {
      if (value !== undefined) new CfnOutput(this, id, { description, value });
    };
    output(
      'ApiUrl',
      'The plants collection: POST, GET (list), and GET, PUT, PATCH or DELETE /{id} below it.',
      this.api.plantsUrl,
    );
    output(
      'IssuerUrl',
      'The iss of accepted tokens (for a Cognito pool, its id is the last segment).',
      this.tokenIssuer.authorizerEnvironment.TOKEN_ISSUER,
    );
    output(
      'TokenUrl',
      `OAuth 2.0 token endpoint (client-credentials grant, scopes ${Object.keys(scopeDescriptions).join(' ')}).`,
      this.tokenIssuer.tokenUrl,
    );
    output(
      'ClientId',
      'App client for the client-credentials grant; its secret is in Cognito.',
      this.tokenIssuer.clientId,
    );
    output(
      'AlarmTopicArn',
      'Every alarm of the stage notifies this topic: subscribe to it.',
      this.monitoring.topic.topicArn,
    );
    output(
      'WebhookDeadLetterQueueArn',
      'Webhook deliveries that used up their retries (redrive: docs/webhooks.md).',
      this.webhooks.deadLetterQueue.queueArn,
    );
    output(
      'WebhookDeliveryQueueArn',
      'Where dead letters are redriven to.',
      this.webhooks.deliveryQueue.queueArn,
    );
    output(
      'ReplayStreamFailuresFunctionName',
      'Invoke it to queue the webhooks of kept stream failures (docs/webhooks.md).',
      this.webhooks.replayFunction.functionName,
    );
  }
}

/** A function as the alarms and dashboard name it: `deliverWebhook` → `deliver-webhook`. */
function monitored(fn: PlantStoreFunction, role: MonitoredFunction['role']): MonitoredFunction {
  const name = functionDisplayName(fn.node.id);
  return { name, function: fn, logGroup: fn.logGroupOfFunction, role };
}

/** The Control Tower rules (cfn-guard) this stack does not follow, each with its reason. */
function acknowledgeControlTowerFindings(stack: PlantStoreStack, stage: StageConfig): void {
  Validations.of(stack).acknowledge(
    {
      id: 'cdk-validator-cfnguard::lambda_inside_vpc_check',
      reason:
        'The functions reach only AWS public endpoints (DynamoDB, SQS, Secrets Manager, over TLS ' +
        'with IAM) and subscribers on the internet; no private resource needs a VPC, which would ' +
        'add NAT gateways to pay for and a slower cold start.',
    },
    {
      id: 'cdk-validator-cfnguard::cloudwatch_log_group_encrypted_check',
      reason:
        'CloudWatch Logs encrypts every log group at rest with service keys; these logs hold no ' +
        'token, body or secret (tested), so a customer-managed KMS key would add cost and key ' +
        'policy to manage without protecting anything more.',
    },
  );
  // CDK joins API Gateway's SourceArn (Fn::Join), which the rule cannot read: a false positive.
  for (const scope of [stack.api.restApi, stack.authorizerFunction]) {
    Validations.of(scope).acknowledge({
      id: 'cdk-validator-cfnguard::lambda_function_public_access_prohibited_check',
      reason:
        'Each permission names API Gateway as principal and its method or authorizer ARN as ' +
        'SourceArn; the rule cannot read a SourceArn built with Fn::Join (a false positive).',
    });
  }
  if (stage.logRetentionDays < 365) {
    Validations.of(stack).acknowledge({
      id: 'cdk-validator-cfnguard::cloudwatch_log_group_retention_period_check',
      reason: `The ${stage.name} stage is not production-like: its logs are kept ${stage.logRetentionDays} days, production-like stages keep them a year.`,
    });
  }
}
