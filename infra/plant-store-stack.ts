import { CfnOutput, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { functionSettings } from './function-settings.ts';
import { PlantStoreFunction } from './plant-store-function.ts';
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
 * One Plant Store stage: the plants table, the token issuer, the two functions and the REST
 * API in front of them. Outputs the API URL, the token URL, the client id and the issuer.
 */
export class PlantStoreStack extends Stack {
  readonly table: PlantsTable;
  readonly tokenIssuer: TokenIssuer;
  readonly createPlantFunction: PlantStoreFunction;
  readonly authorizerFunction: PlantStoreFunction;
  readonly api: PlantsApi;

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
      requiredScope: stage.requiredScope,
      productionLike: stage.productionLike,
    });

    this.createPlantFunction = new PlantStoreFunction(this, 'CreatePlant', {
      settings: functionSettings.createPlant,
      description: 'Plant Store: POST /plants, stores a NewPlant in the plants table.',
      logRetention,
      logRemovalPolicy,
    });
    this.table.bindCreatePlant(this.createPlantFunction);

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
      createPlantFunction: this.createPlantFunction,
      authorizerFunction: this.authorizerFunction,
      logRetention,
      logRemovalPolicy,
      webAclArn: stage.webAclArn,
    });

    new CfnOutput(this, 'ApiUrl', {
      description: 'POST plants here.',
      value: this.api.plantsUrl,
    });
    new CfnOutput(this, 'IssuerUrl', {
      description: 'The iss of accepted tokens (for a Cognito pool, its id is the last segment).',
      value: this.tokenIssuer.authorizerEnvironment.TOKEN_ISSUER,
    });
    if (this.tokenIssuer.tokenUrl !== undefined) {
      new CfnOutput(this, 'TokenUrl', {
        description: `OAuth 2.0 token endpoint (client-credentials grant, scope ${stage.requiredScope}).`,
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
