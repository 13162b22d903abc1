import { CfnOutput, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { type RouteFunctionName, routes, scopeDescriptions } from '../functions/shared/routes.ts';
import { functionSettings } from './function-settings.ts';
import { PlantStoreFunction } from './plant-store-function.ts';
import { PlantWebhooks } from './plant-webhooks.ts';
import { PlantsApi } from './plants-api.ts';
import { PlantsTable } from './plants-table.ts';
import type { StageConfig } from './stages.ts';
import { TokenIssuer } from './token-issuer.ts';

export interface PlantStoreStackProps extends StackProps {
  readonly stage: StageConfig;
}

/** The stack name of a stage: `PlantStore-<stage>`. */
export function formatStackName(stageName: string): string {
  return `PlantStore-${stageName}`;
}

/**
 * One Plant Store stage: the plants table, the token issuer, one function per route of the route
 * table, the authorizer and the REST API in front of them. Outputs the API URL, the token URL, the client id and the issuer.
 */
export class PlantStoreStack extends Stack {
  readonly table: PlantsTable;
  readonly tokenIssuer: TokenIssuer;
  /** The function behind each route, by its name in the route table. */
  readonly routeFunctions: Readonly<Record<RouteFunctionName, PlantStoreFunction>>;
  readonly authorizerFunction: PlantStoreFunction;
  readonly api: PlantsApi;
  readonly webhooks: PlantWebhooks;

  constructor(scope: Construct, id: string, props: PlantStoreStackProps) {
    super(scope, id, props);
    const { stage } = props;
    // Logs are evidence: production-like stages keep them after the stack is gone.
    const logRemovalPolicy = stage.productionLike ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
    // StageConfig's retention values are CloudWatch's own day counts, which RetentionDays mirrors.
    const logRetention = stage.logRetentionDays as RetentionDays;

    this.table = new PlantsTable(this, 'Plants', { productionLike: stage.productionLike });
    this.tokenIssuer = new TokenIssuer(this, 'TokenIssuer', {
      config: stage.issuer,
      stageName: stage.name,
      scopes: scopeDescriptions,
      productionLike: stage.productionLike,
    });

    // Logical ids are the function names in PascalCase (`CreatePlant`), as SAM users call them.
    const routeFunction = (name: RouteFunctionName) => {
      const settings = functionSettings[name];
      const route = routes.find((candidate) => candidate.function === name);
      const fn = new PlantStoreFunction(this, name.charAt(0).toUpperCase() + name.slice(1), {
        settings,
        description: `Plant Store: ${route?.method} ${route?.path}.`,
        logRetention,
        logRemovalPolicy,
      });
      this.table.bindFunction(fn, settings.tableActions);
      return fn;
    };
    this.routeFunctions = {
      createPlant: routeFunction('createPlant'),
      listPlants: routeFunction('listPlants'),
      getPlant: routeFunction('getPlant'),
      deletePlant: routeFunction('deletePlant'),
    };

    this.authorizerFunction = new PlantStoreFunction(this, 'Authorizer', {
      settings: functionSettings.authorizer,
      description: 'Plant Store: TOKEN authorizer, verifies the bearer JWT and its scope.',
      environment: { ...this.tokenIssuer.authorizerEnvironment },
      logRetention,
      logRemovalPolicy,
    });

    this.api = new PlantsApi(this, 'Api', {
      stageName: stage.name,
      throttling: stage.throttling,
      routeFunctions: this.routeFunctions,
      authorizerFunction: this.authorizerFunction,
      logRetention,
      logRemovalPolicy,
      webAclArn: stage.webAclArn,
    });

    this.webhooks = new PlantWebhooks(this, 'Webhooks', {
      table: this.table.table,
      stageName: stage.name,
      subscribers: stage.webhookSubscribers ?? [],
      productionLike: stage.productionLike,
      logRetention,
      logRemovalPolicy,
    });
    new CfnOutput(this, 'WebhookDeadLetterQueueArn', {
      description: 'Webhook deliveries that used up their retries (redrive: README, Webhooks).',
      value: this.webhooks.deadLetterQueue.queueArn,
    });
    new CfnOutput(this, 'WebhookDeliveryQueueArn', {
      description: 'Where dead letters are redriven to.',
      value: this.webhooks.deliveryQueue.queueArn,
    });

    new CfnOutput(this, 'ApiUrl', {
      description: 'The plants collection: POST, GET (list), and GET or DELETE /{id} below it.',
      value: this.api.plantsUrl,
    });
    new CfnOutput(this, 'IssuerUrl', {
      description: 'The iss of accepted tokens (for a Cognito pool, its id is the last segment).',
      value: this.tokenIssuer.authorizerEnvironment.TOKEN_ISSUER,
    });
    if (this.tokenIssuer.tokenUrl !== undefined) {
      new CfnOutput(this, 'TokenUrl', {
        description: `OAuth 2.0 token endpoint (client-credentials grant, scopes ${Object.keys(scopeDescriptions).join(' ')}).`,
        value: this.tokenIssuer.tokenUrl,
      });
    }
    if (this.tokenIssuer.clientId !== undefined) {
      new CfnOutput(this, 'ClientId', {
        description: 'App client for the client-credentials grant; its secret is in Cognito.',
        value: this.tokenIssuer.clientId,
      });
    }
  }
}
